#!/usr/bin/env python3
"""report.html in a real headless Chromium (registered by CMakeLists.txt when chromium is found).

Writes the reports of one training run, one serving run and one sweep (tests/data/report/), then
for each: loads it with --dump-dom and asserts that its script ran (the page marks
<body data-report-ready="1"> last) and printed nothing to the console (any console message,
"Uncaught ..." included, fails), that every expected chart id is in the DOM, and that a
screenshot is not blank (distinct colours and non-white pixels counted from the PNG, decoded
here with zlib). A copy of the training report with a script error injected must fail the
same checks, so the checks can fail. Standard library only.

Usage: report_browser_test.py --clustersim BIN --chromium BIN --source DIR --work DIR
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

EXPECTED = {
    "training": ["chart-timeline", "chart-breakdown", "chart-memory", "chart-hbm", "chart-network",
                 "chart-network-time", "chart-power", "table-estimators", "table-metrics"],
    "serving": ["chart-ttft-cdf", "chart-tpot-cdf", "chart-e2e-cdf", "chart-throughput", "chart-queue",
                "chart-kv", "chart-pools", "table-pools", "table-metrics"],
    "sweep": ["chart-pareto", "table-points"],
}
READY = 'data-report-ready="1"'
MIN_COLOURS = 12          # a blank or single-colour page has 1-3
MIN_NON_WHITE = 0.02      # fraction of pixels that are not (near) white


def run(command, timeout=240):
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stdout}\n{result.stderr}")
    return result


def chromium(args, browser, page, extra):
    """Runs headless Chromium on `page` with a fresh profile; returns (stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="clustersim-chromium-") as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                   "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
                   "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", *extra,
                   "file://" + os.path.abspath(page)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        if result.returncode != 0:
            raise SystemExit(f"chromium failed ({result.returncode}) on {page}:\n{result.stderr[-4000:]}")
        return result.stdout, result.stderr


def png_pixels(path):
    """(width, height, rows of RGB(A) byte strings) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path} is not a PNG")
    at, idat, width, height, channels = 8, b"", 0, 0, 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour_type not in (2, 6):
                raise SystemExit(f"{path}: unsupported PNG (bit depth {depth}, colour type {colour_type})")
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def screenshot_problems(path):
    width, height, channels, rows = png_pixels(path)
    colours, non_white, total = set(), 0, 0
    for row in rows[::2]:  # every other row and pixel: plenty for the counts, 4x faster
        for x in range(0, width * channels, 2 * channels):
            pixel = row[x:x + 3]
            colours.add(pixel)
            total += 1
            if min(pixel) < 235:
                non_white += 1
    problems = []
    if len(colours) < MIN_COLOURS:
        problems.append(f"screenshot {path} has {len(colours)} distinct colours (< {MIN_COLOURS}): blank?")
    if non_white < MIN_NON_WHITE * total:
        problems.append(f"screenshot {path}: only {non_white} of {total} sampled pixels are not white")
    return problems


def page_problems(args, page, kind, shot):
    """Every problem of one report in the browser (empty: it passed)."""
    # One browser start does both: the DOM after the scripts ran, and the screenshot.
    dom, log = chromium(args, args.chromium, page, ["--dump-dom", f"--screenshot={shot}", "--window-size=1280,2000"])
    problems = []
    if READY not in dom:
        problems.append(f"{page}: the page's script did not finish ({READY} missing from the DOM)")
    console = [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    if console:
        problems.append(f"{page}: console messages:\n  " + "\n  ".join(console))
    for chart in EXPECTED[kind]:
        if f'id="{chart}"' not in dom:
            problems.append(f"{page}: no element id=\"{chart}\" in the DOM")
    if not os.path.exists(shot):
        problems.append(f"{page}: chromium wrote no screenshot {shot}")
    else:
        problems += screenshot_problems(shot)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clustersim", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--timeout", type=int, default=120)
    args = parser.parse_args()
    data = os.path.join(args.source, "tests", "data", "report")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    out = {kind: os.path.join(args.work, kind) for kind in EXPECTED}
    run([args.clustersim, "run", os.path.join(data, "training.yaml"), "--out", out["training"]])
    run([args.clustersim, "run", os.path.join(data, "serving.yaml"), "--out", out["serving"]])
    run([args.clustersim, "sweep", os.path.join(data, "sweep.yaml"), "-j", "2", "--out", out["sweep"]])

    failures = []
    for kind, folder in out.items():
        page = os.path.join(folder, "report.html")
        problems = page_problems(args, page, kind, os.path.join(args.work, f"{kind}.png"))
        print(f"{kind}: {'ok' if not problems else 'FAILED'} ({page})")
        failures += problems

    # The checks must catch a script error: the same training page, its script broken.
    broken = os.path.join(args.work, "broken.html")
    html = open(os.path.join(out["training"], "report.html"), encoding="utf-8").read()
    marker = "(function () {"
    if marker not in html:
        failures.append("the training report's script does not start with " + marker)
    open(broken, "w", encoding="utf-8").write(html.replace(marker, marker + " undefinedReportFunction();", 1))
    caught = page_problems(args, broken, "training", os.path.join(args.work, "broken.png"))
    if not any("did not finish" in p for p in caught) or not any("console" in p for p in caught):
        failures.append(f"an injected script error was not caught: {caught}")
    else:
        print("injected script error: caught")

    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
