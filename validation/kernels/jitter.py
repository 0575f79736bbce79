#!/usr/bin/env python3
"""How much does one kernel's time vary from call to call? Per-op-class jitter on this GPU.

Each op runs back to back many times on one stream with a CUDA event recorded between calls,
so the time between two events is one call's GPU time (the host enqueues far ahead: every op
here takes tens of microseconds or more, longer than its launch). The first fifth of the calls
are dropped (boost clocks, caches); the rest give the mean, the percentiles, the coefficient of
variation (std / mean) and the standard deviation of log(time), which is the sigma of a
lognormal with that spread: what the simulator's per-op-class jitter setting takes.

The ops are the classes the simulator costs separately: bf16 GEMMs of a large, a
tensor-parallel and a small-model shape, fused causal attention (SDPA, FlashAttention
backend), an elementwise add and a LayerNorm (memory-bound). Host/OS noise is measured too:
a fixed CPU busy loop of about 1 ms timed 3,000 times on this machine's host, whose tail is
what an unlucky rank's host adds to a step.

    python3 validation/kernels/jitter.py --out jitter.csv [--quick]
"""

import argparse
import math
import statistics
import subprocess
import sys
import time

from gpt_block import torch_on_gpu


def summarise(times_us):
    kept = sorted(times_us[len(times_us) // 5:])
    n = len(kept)
    mean = statistics.fmean(kept)
    logs = [math.log(t) for t in kept]

    def pct(p):
        return kept[min(n - 1, int(round(p / 100.0 * (n - 1))))]

    return {
        "n": n, "mean_us": mean, "p50_us": pct(50), "p90_us": pct(90), "p99_us": pct(99),
        "p999_us": pct(99.9), "max_us": kept[-1], "cv": statistics.pstdev(kept) / mean,
        "log_sigma": statistics.pstdev(logs),
    }


def time_op(torch, fn, calls):
    stream = torch.cuda.current_stream()
    for _ in range(20):
        fn()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(calls + 1)]
    torch.cuda.synchronize()
    events[0].record(stream)
    for i in range(calls):
        fn()
        events[i + 1].record(stream)
    torch.cuda.synchronize()
    return [events[i].elapsed_time(events[i + 1]) * 1000.0 for i in range(calls)]


def host_noise(calls):
    """A busy loop of about 1 ms, timed with the monotonic clock: the host's own jitter."""
    def spin(n):
        x = 0
        for i in range(n):
            x += i
        return x

    n = 1000
    while True:  # size the loop to about 1 ms
        t0 = time.perf_counter_ns()
        spin(n)
        if time.perf_counter_ns() - t0 > 1_000_000:
            break
        n *= 2
    times = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        spin(n)
        times.append((time.perf_counter_ns() - t0) / 1000.0)
    return times


def smi():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "nvidia-smi unavailable"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch = torch_on_gpu("jitter.py")
    if torch is None:
        return 3
    F = torch.nn.functional
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    scale = 0.2 if args.quick else 1.0

    def gemm(m, n, k):
        a, b = torch.randn(m, k, **bf16), torch.randn(k, n, **bf16)
        return lambda: torch.matmul(a, b), 2.0 * m * n * k

    def attention(b, h, s, d):
        q, k, v = (torch.randn(b, h, s, d, **bf16) for _ in range(3))

        def run():
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return run, 4.0 * b * h * s * s * d / 2.0

    def add(elements):
        x, y = torch.randn(elements, **bf16), torch.randn(elements, **bf16)
        out = torch.empty_like(x)
        return lambda: torch.add(x, y, out=out), 0.0

    def layer_norm(rows, cols):
        x = torch.randn(rows, cols, **bf16)
        w, b = torch.ones(cols, **bf16), torch.zeros(cols, **bf16)
        return lambda: F.layer_norm(x, (cols,), w, b), 0.0

    ops = [
        # op class, label, (fn, flops), calls
        ("gemm", "8192x8192x8192", gemm(8192, 8192, 8192), 1500),
        ("gemm", "8192x3584x8192 (70B TP8 MLP)", gemm(8192, 3584, 8192), 3000),
        ("gemm", "4096x2048x2048 (1.7B attn proj)", gemm(4096, 2048, 2048), 6000),
        ("attention", "b1 h32 s4096 d128 causal fwd", attention(1, 32, 4096, 128), 3000),
        ("attention", "b1 h16 s2048 d128 causal fwd", attention(1, 16, 2048, 128), 6000),
        ("elementwise", "add 128M bf16", add(128 << 20), 3000),
        ("elementwise", "layer_norm 16384x8192 bf16", layer_norm(16384, 8192), 3000),
    ]
    rows = []
    for op_class, label, (fn, flops), calls in ops:
        calls = max(200, int(calls * scale))
        stats = summarise(time_op(torch, fn, calls))
        stats["tflops"] = flops / (stats["p50_us"] * 1e-6) / 1e12 if flops else 0.0
        rows.append((op_class, label, stats, smi()))
        print(f"jitter.py: {op_class:11} {label:34} p50 {stats['p50_us']:9.1f} us  "
              f"cv {stats['cv'] * 100:5.2f} %  p99/p50 {stats['p99_us'] / stats['p50_us']:.4f}",
              file=sys.stderr)
    host = summarise(host_noise(max(500, int(3000 * scale))))
    host["tflops"] = 0.0
    rows.append(("host", "python busy loop ~1 ms", host, ""))

    with open(args.out, "w") as f:
        f.write(f"# gpu: {torch.cuda.get_device_name(0)}\n# torch: {torch.__version__}\n")
        f.write("# per-call GPU time between CUDA events, first fifth of the calls dropped\n")
        f.write("op_class,shape,calls,mean_us,p50_us,p90_us,p99_us,p999_us,max_us,cv,log_sigma,"
                "tflops_at_p50,smi_after(clock,power,temp)\n")
        for op_class, label, s, after in rows:
            f.write(f"{op_class},{label},{s['n']},{s['mean_us']:.2f},{s['p50_us']:.2f},"
                    f"{s['p90_us']:.2f},{s['p99_us']:.2f},{s['p999_us']:.2f},{s['max_us']:.2f},"
                    f"{s['cv']:.5f},{s['log_sigma']:.5f},{s['tflops']:.1f},\"{after}\"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
