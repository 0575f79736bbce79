#!/usr/bin/env python3
"""Converts the team's public kernel measurements into calibration CSVs (one per accelerator).

Run once by hand; the build and tests never read the shared folder, only the CSVs it writes:
    python3 models/data/calibration/convert_public.py /work/shared/validation models/data/calibration
Conversions (each row's `source` says which applied):
  * achieved TFLOP/s -> time_s = flops / achieved, flops = 2 m n k (GEMM) or FlashAttention's
    4 batch heads seq^2 head_dim (non-causal forward);
  * achieved TB/s    -> time_s = bytes / achieved.
See docs/calibration-format.md for the format and for what was left out and why.
"""
import csv
import os
import sys

HEADER = ("accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,"
          "bytes,time_s,spread_s,repeats,source")

# gpu_type prefix in the shared CSVs -> library accelerator name (GH200 (no shared row of the
# presets' 96/144 GB parts), B300, Gaudi 2, MI355X and A100 PCIe have no library preset and are
# skipped; GB200 and MI325X were added 2026-12-04 with their presets).
GPU_NAMES = [
    ("A100-SXM4-80GB", "a100-sxm-80gb"), ("NVIDIA A100 SXM", "a100-sxm-80gb"),
    ("H100 80GB HBM3", "h100-sxm"), ("NVIDIA H100 SXM", "h100-sxm"),
    ("H200 141GB", "h200-sxm"), ("NVIDIA H200 SXM", "h200-sxm"), ("H200-SXM-141GB", "h200-sxm"),
    ("AMD Instinct MI300X", "mi300x"), ("AMD MI300X", "mi300x"),
    ("NVIDIA B200 SXM", "b200"), ("Intel Gaudi 3", "gaudi3"),
    ("GB200 185GB", "gb200"), ("NVIDIA GB200 SXM", "gb200"), ("AMD MI325X", "mi325x"),
]

# BabelStream-style kernel -> op class and arrays moved (read + written). The results files do
# not state the array size; a nominal 2^28 fp64 elements per array is assumed (large-transfer
# asymptote), so bytes = arrays x 2^31.
STREAM = {"Copy": ("hbm_copy", 2), "Mul": ("elementwise", 2), "Add": ("elementwise", 3),
          "Triad": ("hbm_triad", 3), "Dot": ("hbm_read", 2)}
STREAM_ARRAY_BYTES = 2 ** 31


def library_name(gpu_type):
    for prefix, name in GPU_NAMES:
        if gpu_type.startswith(prefix):
            return name
    return None


def dtype_of(text):
    text = text.lower()
    for name in ("fp8", "bf16", "fp16", "tf32", "fp32"):
        if text.startswith(name):
            return name
    return None


def row(acc, op, dtype="", m="", n="", k="", batch="", heads="", kv_heads="", seq="",
        head_dim="", causal="", backward="", nbytes="", time_s=0.0, source=""):
    return [acc, op, dtype, m, n, k, batch, heads, kv_heads, seq, seq, head_dim, causal, backward,
            nbytes, "%.6g" % time_s, "0", "0", source]


def convert(shared):
    rows = {}
    with open(os.path.join(shared, "ground_truth_kernels.csv"), newline="") as f:
        for r in csv.DictReader(f):
            acc = library_name(r["gpu_type"])
            if acc is None:
                continue
            kernel, value = r["kernel"], float(r["value"].split("-")[0]) if r["value"] else 0
            src = "%s; %s (id %s)" % (r["source"], r["kernel"], r["id"])
            if r["metric"] in ("achieved_tflops", "max_achievable_matmul_tflops") and "GEMM" in kernel or \
               r["metric"] == "max_achievable_matmul_tflops":
                m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
                flops = 2.0 * m * n * k
                rows.setdefault(acc, []).append(row(
                    acc, "gemm", dtype_of(r["dtype"]), m, n, k, time_s=flops / (value * 1e12),
                    source=src + "; time_s = 2mnk / %s TFLOP/s" % r["value"]))
            elif r["kernel"] == "FlashAttention-2" and r["metric"] == "achieved_tflops":
                seq, head_dim, batch = int(r["seq_len"]), int(r["head_dim"]), int(r["batch"])
                heads = 2048 // head_dim  # FlashAttention benchmark convention: hidden 2048
                flops = 4.0 * batch * heads * seq * seq * head_dim
                rows.setdefault(acc, []).append(row(
                    acc, "attention", "bf16", batch=batch, heads=heads, kv_heads=heads, seq=seq,
                    head_dim=head_dim, causal=0, backward=0, time_s=flops / (value * 1e12),
                    source=src + "; mode not stated, taken as forward non-causal with hidden 2048 "
                    "(heads = 2048/head_dim) and dtype bf16; time_s = 4 b h s^2 d / %s TFLOP/s"
                    % r["value"]))
            elif r["metric"] == "achieved_bandwidth" and r["kernel"].startswith("STREAM"):
                name = r["id"].split("_")[-1]
                op, arrays = STREAM[name]
                nbytes = arrays * STREAM_ARRAY_BYTES
                rows.setdefault(acc, []).append(row(
                    acc, op, nbytes=nbytes, time_s=nbytes / (value * 1e12),
                    source=src + "; %s; array size not stated, nominal %d arrays x 2^31 B; "
                    "time_s = bytes / %s TB/s" % (name, arrays, r["value"])))
    with open(os.path.join(shared, "measured_h200.csv"), newline="") as f:
        for r in csv.DictReader(f):
            src = "%s; %s (measured_h200.csv id %s)" % (r["source"], r["kernel"], r["id"])
            if r["id"] in ("h200_gemm_8192_random", "h200_gemm_8192_random_b"):
                lo_hi = [float(x) for x in r["value"].split("-")]
                value = sum(lo_hi) / len(lo_hi)
                m = n = k = int(r["m"])
                rows["h200-sxm"].append(row(
                    "h200-sxm", "gemm", "bf16", m, n, k, time_s=2.0 * m * n * k / (value * 1e12),
                    source=src + "; time_s = 2mnk / %g TFLOP/s%s" %
                    (value, " (middle of the range)" if len(lo_hi) > 1 else "")))
            elif r["id"] == "h200_d2d_copy":
                nbytes = 8.6e9
                rows["h200-sxm"].append(row(
                    "h200-sxm", "memcpy", nbytes="%.6g" % nbytes, time_s=2.0e-3,
                    source=src + "; 8.6 GB read plus written in 2.0 ms"))
    return rows


def main():
    shared, out_dir = sys.argv[1], sys.argv[2]
    for acc, acc_rows in sorted(convert(shared).items()):
        with open(os.path.join(out_dir, acc + ".csv"), "w", newline="") as f:
            f.write("# Default calibration of %s, converted from public measurements by\n" % acc)
            f.write("# models/data/calibration/convert_public.py (see docs/calibration-format.md).\n")
            f.write("# tool: convert_public.py\n# date: 2026-12-02\n")
            f.write(HEADER + "\n")
            writer = csv.writer(f, lineterminator="\n")
            for r in acc_rows:
                writer.writerow(r)


if __name__ == "__main__":
    main()
