#!/usr/bin/env python3
"""Does the host gate a small model's training step? Eager PyTorch against CUDA graphs.

Runs the forward and backward of a stack of GPT layers (pre-LayerNorm, fused QKV, PyTorch SDPA
causal attention, 4h tanh-GeLU MLP, bf16, one micro-batch, one GPU, no tensor-parallel
communication) for the per-rank shapes of the Megatron-Core README's small models, three ways:

* eager: wall time of one step with the GPU synchronised at its end, and the host time the
  Python loop took to enqueue it (CPU time before the synchronisation);
* graph: the same step captured once in a CUDA graph and replayed (no per-op host work);
* kernels: the sum of the step's GPU kernel durations (torch.profiler), i.e. GPU busy time.

eager - graph is what per-op host dispatch costs the step when the host cannot run ahead of the
GPU; if the enqueue time is below the graph time the GPU is the bottleneck.
This is plain PyTorch, not Megatron-Core with Transformer Engine (whose modules fuse some ops and
add Python of their own); it measures the hardware and the framework floor, not MCore's figure.

    python3 validation/kernels/host_gating.py --out host_gating.csv
"""

import argparse
import csv
import statistics
import sys
import time

from gpt_block import gpt_block_class, torch_on_gpu

SHAPES = [
    # label, hidden, heads on this rank, head dim, ffn on this rank, layers, seq, micro-batch
    ("gpt-1.7b tp1", 2048, 16, 128, 8192, 24, 4096, 1),
    ("gpt-7.1b tp2", 4096, 16, 128, 8192, 30, 4096, 1),
    ("gpt-1.7b tp1 s2048", 2048, 16, 128, 8192, 24, 2048, 1),
]


def build(torch, hidden, heads, head_dim, ffn, layers):
    block = gpt_block_class(torch, hidden, heads, head_dim, ffn)
    return torch.nn.Sequential(*[block() for _ in range(layers)]).cuda().to(torch.bfloat16)


def model_flops(hidden, heads, head_dim, ffn, layers, seq, batch):
    """Megatron convention: matmuls x 3 (forward + backward), attention counted non-causal."""
    tokens = seq * batch
    width = heads * head_dim
    gemm = 2 * tokens * (hidden * 3 * width + width * hidden + 2 * hidden * ffn)
    attention = 2 * 2 * batch * heads * seq * seq * head_dim
    return 3 * layers * (gemm + attention)


def measure(torch, shape, repeats):
    label, hidden, heads, head_dim, ffn, layers, seq, batch = shape
    model = build(torch, hidden, heads, head_dim, ffn, layers)
    x = torch.randn(batch, seq, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def step():
        out = model(x)
        out.float().pow(2).mean().backward()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    walls, enqueues = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        enqueued = time.perf_counter()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - start)
        enqueues.append(enqueued - start)

    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernel_us = sum(e.self_device_time_total for e in prof.key_averages())
    kernels = sum(e.count for e in prof.key_averages() if e.self_device_time_total > 0)

    # The same step as one CUDA graph (warm-up on a side stream, as the PyTorch docs require).
    graphs = [float("nan")]
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
        graphs = []
        for _ in range(repeats):
            start = time.perf_counter()
            graph.replay()
            torch.cuda.synchronize()
            graphs.append(time.perf_counter() - start)
        del graph
    except RuntimeError as error:  # capture refused: report the eager figures alone
        print(f"host_gating.py: {label}: CUDA graph capture failed: {error}", file=sys.stderr)

    flops = model_flops(hidden, heads, head_dim, ffn, layers, seq, batch)
    row = {
        "shape": label, "hidden": hidden, "heads": heads, "head_dim": head_dim, "ffn": ffn,
        "layers": layers, "seq": seq, "batch": batch,
        "eager_ms": statistics.median(walls) * 1e3,
        "enqueue_ms": statistics.median(enqueues) * 1e3,
        "graph_ms": statistics.median(graphs) * 1e3,
        "kernel_ms": kernel_us / 1e3,
        "kernels": kernels,
        "eager_tflops": flops / statistics.median(walls) / 1e12,
        "graph_tflops": flops / statistics.median(graphs) / 1e12,
    }
    del model, x
    torch.cuda.empty_cache()
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    torch = torch_on_gpu("host_gating.py")
    if torch is None:
        return 3
    rows = []
    for shape in SHAPES:
        row = measure(torch, shape, args.repeats)
        print("host_gating.py: " + ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()), file=sys.stderr)
        rows.append(row)
    with open(args.out, "w", newline="") as f:
        f.write(f"# gpu: {torch.cuda.get_device_name()}\n# torch: {torch.__version__}\n")
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
