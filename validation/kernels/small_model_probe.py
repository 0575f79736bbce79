"""Probe behind docs/validation.md "Why the small Megatron-Core rows read fast" (issue 16 part 6).

Run on one Hopper GPU with PyTorch: `python3 validation/kernels/small_model_probe.py`.
Prints (1) the bf16 TFLOP/s of the Megatron-Core 1.7B / 7.1B layer GEMM shapes (mean of 50
back-to-back products after one warm-up, random operands), (2) the host time of PyTorch eager
dispatch + launch per op (a 16-element add_, an nn.LayerNorm(2048) module call) and the
LayerNorm kernel's GPU time, (3) an 8192^3 GEMM launched back to back for --seconds (default
50), one line per window of 40 products, with nvidia-smi's SM clock, power and temperature
logged every 2 s beside it: the rate a GPU settles at under its power limit.
"""
import argparse
import subprocess
import time

import torch

SHAPES = [  # m x k x n
    (4096, 2048, 6144), (4096, 2048, 2048), (4096, 2048, 8192), (4096, 8192, 2048),  # 1.7B, TP 1
    (2048, 4096, 6144), (6144, 4096, 2048),                                          # 7.1B, TP 2
    (4096, 4096, 6144), (4096, 4096, 8192), (4096, 8192, 4096), (8192, 8192, 8192),
]


def mean_time(fn, reps):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / reps


def host_time(fn, reps):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / reps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=50.0)
    args = parser.parse_args()
    dev, dt = "cuda", torch.bfloat16
    for m, k, n in SHAPES:
        a = torch.randn(m, k, device=dev, dtype=dt)
        b = torch.randn(k, n, device=dev, dtype=dt)
        s = mean_time(lambda: a @ b, 50)
        print(f"gemm {m}x{k}x{n} {s * 1e6:.1f} us {2 * m * k * n / s / 1e12:.1f} TFLOP/s", flush=True)
    x = torch.randn(16, device=dev)
    print(f"eager add_ host {host_time(lambda: x.add_(1.0), 20000) * 1e6:.2f} us/op", flush=True)
    ln = torch.nn.LayerNorm(2048, device=dev, dtype=dt)
    y = torch.randn(4096, 2048, device=dev, dtype=dt)
    print(f"LayerNorm module host {host_time(lambda: ln(y), 5000) * 1e6:.2f} us/call, "
          f"kernel {mean_time(lambda: ln(y), 200) * 1e6:.1f} us", flush=True)
    a = torch.randn(8192, 8192, device=dev, dtype=dt)
    b = torch.randn(8192, 8192, device=dev, dtype=dt)
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader", "-lms", "2000"])
    try:
        begin = time.time()
        while time.time() - begin < args.seconds:
            s = mean_time(lambda: a @ b, 40)
            print(f"sustained t={time.time() - begin:.0f} s {2 * 8192 ** 3 / s / 1e12:.1f} TFLOP/s", flush=True)
    finally:
        smi.terminate()
        smi.wait()


if __name__ == "__main__":
    main()
