#!/usr/bin/env python3
"""A whole small-model training step, sustained: how fast plain PyTorch runs GPT-1.7B on one GPU.

The model of the Megatron-Core README's 1.7B row (24 layers, hidden 2048, 16 heads, 4h tanh-GeLU
MLP with biases, vocabulary 131,072, untied embedding, sequence 4,096) in bf16 on one GPU: a
step is 4 micro-batches of one sequence (the row's 192 sequences over 48 GPUs), each forward
through the embedding, the layers, the final LayerNorm and the LM head, cross-entropy on fp32
logits, backward, then one fused AdamW step. No data parallelism (no gradient reduction), no
data loader. Steps run back to back for --seconds while nvidia-smi logs clocks and power, so
the first steps (boost clocks) and the settled ones (at the power limit) can be told apart.

    python3 validation/kernels/small_model_step.py --out step.csv --seconds 60
"""

import argparse
import statistics
import subprocess
import sys
import time

from gpt_block import gpt_block_class, torch_on_gpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    torch = torch_on_gpu("small_model_step.py")
    if torch is None:
        return 3
    F = torch.nn.functional
    hidden, heads, head_dim, ffn, layers, vocab, seq, micro_batches = 2048, 16, 128, 8192, 24, 131072, 4096, 4

    Block = gpt_block_class(torch, hidden, heads, head_dim, ffn)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, hidden)
            self.blocks = torch.nn.Sequential(*[Block() for _ in range(layers)])
            self.norm = torch.nn.LayerNorm(hidden)
            self.head = torch.nn.Linear(hidden, vocab, bias=False)

        def forward(self, tokens):
            return self.head(self.norm(self.blocks(self.embed(tokens))))

    model = Model().cuda().to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    tokens = torch.randint(0, vocab, (micro_batches, 1, seq), device="cuda")
    labels = torch.randint(0, vocab, (micro_batches, 1, seq), device="cuda")

    def step():
        for i in range(micro_batches):
            logits = model(tokens[i])
            loss = F.cross_entropy(logits.float().view(-1, vocab), labels[i].view(-1))
            del logits
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader",
         "-lms", "500"], stdout=subprocess.PIPE, text=True)
    times, started = [], time.perf_counter()
    while time.perf_counter() - started < args.seconds:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((t0 - started, time.perf_counter() - t0))
    smi.terminate()
    samples = [line.strip() for line in smi.communicate()[0].splitlines() if line.strip()]

    params = sum(p.numel() for p in model.parameters())
    tokens_per_step = micro_batches * seq
    flops = 6 * tokens_per_step * (params - vocab * hidden) + 12 * layers * hidden * seq * tokens_per_step
    first = statistics.median(t for _, t in times[:5])
    settled = statistics.median(t for at, t in times if at >= args.seconds / 2)
    with open(args.out, "w") as f:
        f.write(f"# gpu: {torch.cuda.get_device_name()}\n# torch: {torch.__version__}\n")
        f.write(f"# parameters: {params}; model FLOPs per step (Megatron convention): {flops:.6g}\n")
        f.write(f"# first 5 steps median: {first * 1e3:.2f} ms ({flops / first / 1e12:.1f} TFLOP/s); "
                f"second half median: {settled * 1e3:.2f} ms ({flops / settled / 1e12:.1f} TFLOP/s); "
                f"{len(times)} steps\n")
        for line in samples:
            f.write(f"# smi: {line}\n")
        f.write("elapsed_s,step_s\n")
        for at, t in times:
            f.write(f"{at:.4f},{t:.6f}\n")
    print(f"small_model_step.py: first {first * 1e3:.2f} ms ({flops / first / 1e12:.1f} TFLOP/s), settled "
          f"{settled * 1e3:.2f} ms ({flops / settled / 1e12:.1f} TFLOP/s), {len(times)} steps", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
