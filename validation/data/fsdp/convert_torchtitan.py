#!/usr/bin/env python3
"""Converts torchtitan's A100 FSDP2 rows of validation/data/ground_truth_fsdp.csv into the training
validation format (docs/validation.md, "Validating your own measurements"):

    python3 validation/data/fsdp/convert_torchtitan.py
    build/release/clustersim validate --dataset validation/data/fsdp/torchtitan_a100.csv

Kept: the `tokens_per_s_per_gpu` rows (torchtitan's WPS: per-GPU tokens per second, no FLOP
convention involved). Left out: the `mfu_pct` rows (torchtitan's PaLM FLOP count is not the
validator's Megatron count) and the "selective layer" rows (checkpointing every N-th layer, N not
stated). What the source states is written as the row's own columns: the model (library
presets of the named Llama models), sequence length, global and local (micro) batch, 64 GPUs,
FSDP2 full sharding of every layer (tp = pp = 1, zero 3), the activation checkpointing ("selective
op" is torchtitan's per-op policy, `recompute: op`). torchtitan's own defaults of that time fill
what the rows leave unstated (train_configs/*.toml and the FSDP2 code at 3faaa1a0): bf16
parameters with fp32 gradient reduction (`mixed_precision_reduce = "float32"`), the reduce-scatter
and the next layer's all-gather overlapped with compute, and its memory conventions (`framework:
torchtitan`). Not stated anywhere, so left to the validator's defaults and said in
docs/validation.md: the interconnect (the rows' gpu_type maps to a DGX A100 node, 8 x 200 Gb/s),
the torch version and whether attention ran FlashAttention-2 (SDPA's default on A100)."""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "ground_truth_fsdp.csv")
OUT = os.path.join(HERE, "torchtitan_a100.csv")
MODELS = {"Llama 3 8B": "llama-3-8b", "Llama 3 70B": "llama-3-70b", "Llama 2 13B": "llama-2-13b",
          "Llama 2 70B": "llama-2-70b"}
RECOMPUTE = {"selective op": "op", "full": "full", "none": "none"}
COLUMNS = ["id", "source", "model", "seq_len", "global_batch", "gpus", "gpu_type", "tp", "pp", "dp", "precision",
           "metric", "value", "unit", "micro_batch", "recompute", "zero", "framework", "overlap_grad_reduce",
           "gradient_reduce_dtype", "notes"]


def main():
    kept = 0
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in csv.DictReader(open(SOURCE, newline="")):
            if not r["id"].startswith("tt_a100") or r["metric"] != "tokens_per_s_per_gpu":
                continue
            if r["activation_checkpointing"] not in RECOMPUTE:
                continue
            w.writerow([r["id"], r["source"], MODELS[r["model"]], r["seq_len"], r["global_batch"], r["gpus"],
                        "A100-SXM4-80GB", 1, 1, r["gpus"], "bf16", r["metric"], r["value"], "tokens/s/GPU",
                        r["micro_batch"], RECOMPUTE[r["activation_checkpointing"]], 3, "torchtitan", "true", "fp32",
                        r["notes"]])
            kept += 1
    print(f"wrote {kept} rows to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
