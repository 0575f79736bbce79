#!/usr/bin/env python3
"""Small-message NCCL all-reduce latency and bus bandwidth across the visible GPUs of this node
(docs/validation.md, "Kernel suite"): what a tensor-parallel decode step pays twice per layer
for messages of tokens x hidden x 2 bytes (8 KiB .. 4 MiB for Llama-3-8B/70B at 1..256 tokens).

It measures only where it can, and never writes a number it did not measure:
  * fewer than 2 GPUs visible: no all-reduce across GPUs exists here; writes OUT's skip file
    (OUT with .skipped in place of .csv) holding one line with the reason, and exits 3;
  * nccl-tests' all_reduce_perf found (--nccl-tests PATH, $NCCL_TESTS_DIR/build/, or PATH): runs
    it single-process over all visible GPUs (-g N), bf16, in-place columns;
  * else torch with NCCL: one process per GPU (torch.distributed), in-place all_reduce, the
    mean time of back-to-back calls between CUDA events, the slowest rank's;
  * else: the skip file with the reason, exit 3.
Sizes 1 KiB .. 64 MiB, doubling (--quick: 1 KiB .. 4 MiB, x4).

OUT is written in the columns of validation/data/ground_truth_kernels.csv (id, source, gpu_type,
kernel, ..., num_gpus, message_bytes, metric, value, unit, notes): per size one `busbw` row (GB/s,
size / time x 2(n-1)/n, as nccl-tests) and one `time_us` row, so `clustersim collective
--compare OUT` reads it as it reads the public nccl-tests rows.
"""
import argparse
import csv
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

COLUMNS = ["id", "source", "gpu_type", "kernel", "dtype", "m", "n", "k", "seq_len", "head_dim", "batch",
           "num_gpus", "message_bytes", "metric", "value", "unit", "notes"]


def message_sizes(quick):
    """Bytes per all-reduce: 1 KiB .. 64 MiB doubling; quick 1 KiB .. 4 MiB, x4."""
    if quick:
        return [1024 << (2 * i) for i in range(7)]
    return [1024 << i for i in range(17)]


def bus_bandwidth(size_bytes, time_s, ranks):
    """nccl-tests' all-reduce busbw, bytes/s: algbw x 2(n-1)/n."""
    return size_bytes / time_s * 2.0 * (ranks - 1) / ranks


def parse_nccl_tests(text):
    """(size bytes, in-place time us) per data line of all_reduce_perf's table: size, count, type,
    redop, root, then out-of-place time, algbw, busbw, #wrong and in-place time, algbw, busbw, #wrong."""
    points = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 13 or line.lstrip().startswith("#") or not fields[0].isdigit():
            continue
        try:
            points.append((int(fields[0]), float(fields[9])))
        except ValueError:
            continue
    return points


def visible_gpus():
    """(count, names) of the GPUs this process may use, or (0, reason)."""
    try:
        import torch
        if torch.cuda.is_available():
            count = torch.cuda.device_count()
            return count, [torch.cuda.get_device_name(i) for i in range(count)]
    except ImportError:
        pass
    if shutil.which("nvidia-smi") is None:
        return 0, "nvidia-smi is not installed"
    listing = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        return 0, "nvidia-smi lists no GPU"
    gpus = [[cell.strip() for cell in line.split(",", 2)] for line in listing.stdout.splitlines() if line.strip()]
    chosen = os.environ.get("CUDA_VISIBLE_DEVICES")
    if chosen is not None:
        wanted = [item.strip() for item in chosen.split(",") if item.strip()]
        gpus = [gpu for gpu in gpus if gpu[0] in wanted or any(gpu[1].startswith(w) for w in wanted)]
    return len(gpus), [gpu[2] for gpu in gpus]


def find_nccl_tests(explicit):
    candidates = [explicit] if explicit else []
    if os.environ.get("NCCL_TESTS_DIR"):
        candidates.append(os.path.join(os.environ["NCCL_TESTS_DIR"], "build", "all_reduce_perf"))
    found = shutil.which("all_reduce_perf")
    if found:
        candidates.append(found)
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def run_nccl_tests(binary, ranks, quick):
    sizes = message_sizes(quick)
    command = [binary, "-b", str(sizes[0]), "-e", str(sizes[-1]), "-f", "4" if quick else "2",
               "-g", str(ranks), "-d", "bfloat16", "-o", "sum", "-w", "20", "-n", "20" if quick else "100",
               "-c", "0"]
    print("allreduce_bench.py: " + " ".join(command), file=sys.stderr)
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    sys.stderr.write(result.stdout[-4000:])
    if result.returncode != 0:
        raise RuntimeError(f"all_reduce_perf exited {result.returncode}: {result.stderr[-2000:]}")
    version = next((line.split("NCCL version", 1)[1].split()[0] for line in result.stdout.splitlines()
                    if "NCCL version" in line), "?")
    points = parse_nccl_tests(result.stdout)
    if not points:
        raise RuntimeError("all_reduce_perf printed no result table")
    return points, f"nccl-tests all_reduce_perf ({os.path.basename(binary)}), NCCL {version}", \
        "all-reduce (nccl-tests, in-place)"


def torch_worker(rank, ranks, port, sizes, iterations, result_path):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=ranks)
    points = []
    for size in sizes:
        tensor = torch.ones(size // 2, device="cuda", dtype=torch.bfloat16)
        for _ in range(20):
            dist.all_reduce(tensor)
        torch.cuda.synchronize()
        dist.barrier()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            dist.all_reduce(tensor)
        stop.record()
        stop.synchronize()
        slowest = torch.tensor([start.elapsed_time(stop) * 1e3 / iterations], device="cuda")
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        points.append((size, slowest.item()))
    if rank == 0:
        with open(result_path, "w") as out:
            version = torch.cuda.nccl.version()  # a tuple in recent torch, an int before
            version = ".".join(str(v) for v in version) if isinstance(version, tuple) else str(version)
            json.dump({"points": points, "nccl": version}, out)
    dist.destroy_process_group()


def run_torch(ranks, quick):
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available() or not dist.is_nccl_available():
        raise LookupError("torch has no NCCL backend")
    with socket.socket() as probe:  # a free local port for the rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as scratch:
        result_path = os.path.join(scratch, "result.json")
        mp.spawn(torch_worker, args=(ranks, port, message_sizes(quick), 20 if quick else 100, result_path),
                 nprocs=ranks, join=True)
        with open(result_path) as result:
            data = json.load(result)
    return [tuple(point) for point in data["points"]], \
        f"torch {torch.__version__} torch.distributed all_reduce (NCCL {data['nccl']}), one process per GPU", \
        "all-reduce (torch.distributed NCCL, in-place)"


def skip(args, reason):
    path = skip_path(args.out)
    with open(path, "w") as out:
        out.write(f"skipped: {reason}\n")
    print(f"allreduce_bench.py: skipped: {reason} (wrote {path})", file=sys.stderr)
    return 3


def skip_path(out):
    return (out[:-4] if out.endswith(".csv") else out) + ".skipped"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="CSV file to write (columns of ground_truth_kernels.csv)")
    parser.add_argument("--accelerator", required=True, help="library accelerator name, e.g. h200-sxm")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and iterations")
    parser.add_argument("--nccl-tests", default="", help="path of nccl-tests' all_reduce_perf")
    parser.add_argument("--source", default="")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    for item in args.meta:
        if "=" not in item or item.startswith("="):
            parser.error(f"--meta: expected KEY=VALUE, got '{item}'")
    for stale in (args.out, skip_path(args.out)):  # one outcome per run
        if os.path.exists(stale):
            os.remove(stale)

    ranks, names = visible_gpus()
    if ranks < 2:
        what = names if isinstance(names, str) else f"{ranks} GPU{'s' if ranks != 1 else ''} visible"
        return skip(args, f"all-reduce across GPUs needs >= 2 visible GPUs; {what}")
    binary = find_nccl_tests(args.nccl_tests)
    try:
        if binary:
            points, tool, kernel = run_nccl_tests(binary, ranks, args.quick)
        else:
            points, tool, kernel = run_torch(ranks, args.quick)
    except ImportError:
        return skip(args, f"{ranks} GPUs, but neither nccl-tests' all_reduce_perf (--nccl-tests, "
                          "$NCCL_TESTS_DIR/build, PATH) nor torch is installed")
    except LookupError as error:
        return skip(args, f"{ranks} GPUs, no nccl-tests all_reduce_perf, and {error}")

    metadata = dict(item.split("=", 1) for item in args.meta)
    date = metadata.get("date", datetime.datetime.now(datetime.timezone.utc).isoformat())[:10]
    source = (args.source or f"validation/kernels/allreduce_bench.py {date}") + f"; {tool}"
    gpu = names[0]
    gpu_type = gpu[len("NVIDIA "):] if gpu.startswith("NVIDIA ") else gpu
    if len(set(names)) > 1:
        gpu_type += " (mixed: " + ", ".join(sorted(set(names))) + ")"
    notes = "; ".join([f"accelerator {args.accelerator}", "bf16 sum, in-place"] +
                      [f"{key} {value}" for key, value in metadata.items() if key != "gpu"])
    slug = "".join(c if c.isalnum() else "-" for c in gpu_type.lower()).strip("-")
    rows = []
    for size, time_us in points:
        if not time_us > 0:
            continue
        base = {"source": source, "gpu_type": gpu_type, "kernel": kernel, "dtype": "bf16",
                "num_gpus": ranks, "message_bytes": size, "notes": notes}
        busbw = bus_bandwidth(size, time_us * 1e-6, ranks) * 1e-9
        rows.append(dict(base, id=f"allreduce_{slug}_{ranks}gpu_{size}_busbw", metric="busbw",
                         value=f"{busbw:.4g}", unit="GB/s"))
        rows.append(dict(base, id=f"allreduce_{slug}_{ranks}gpu_{size}_time", metric="time_us",
                         value=f"{time_us:.4g}", unit="us"))
        print(f"allreduce_bench.py: {ranks} x {gpu_type} {size:>10d} B {time_us:9.2f} us busbw {busbw:8.2f} GB/s",
              file=sys.stderr)
    if not rows:
        raise RuntimeError("no all-reduce time was measured")
    with open(args.out, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"allreduce_bench.py: wrote {len(rows)} rows to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
