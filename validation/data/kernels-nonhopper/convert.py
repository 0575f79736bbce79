#!/usr/bin/env python3
"""Converts validation/data/ground_truth_kernels_nonhopper.csv into calibration-format folders
(docs/calibration-format.md) for out-of-sample checks of the compute model on Blackwell and AMD:

    python3 validation/data/kernels-nonhopper/convert.py
    build/release/clustersim validate kernels validation/data/kernels-nonhopper/gemm
    build/release/clustersim validate kernels validation/data/kernels-nonhopper/attention-fa2 --attention-kernel fa2
    build/release/clustersim validate kernels validation/data/kernels-nonhopper/bandwidth
    build/release/clustersim validate kernels validation/data/kernels-nonhopper/gemm-l2-resident
    build/release/clustersim validate kernels validation/data/kernels-nonhopper/gemm-sustained --clock sustained

The rows are not in the default calibration tables (models/data/calibration): the `roofline`
column of `validate kernels` is the model they check. Choices, each written in the row's source:
time_s = FLOPs / achieved (GEMM 2mnk; attention 4 b h s^2 d forward, x 2.5 backward, halved when
causal: FlashAttention's convention, which the AITER table follows: its causal and non-causal
rates meet at long sequences); block-scaled mxfp8 GEMMs as fp8; fp4 rows and accelerators without
a preset (MI355X, the XLA table's unnamed sm_100 part is read as B200) are left out, as are
latency-only rows; attention rows whose mode is not stated are read as forward, non-causal (as
the default tables read Azure's FlashAttention-2 row). Elementwise GPU times (`gpu_time_us`, bytes
moved in `message_bytes`) go to `bandwidth`. The vLLM decode GEMMs (`nh_b200_vllm_*`) go to their own
folder, `gemm-l2-resident`: vLLM's bench_fp8_gemm.py replays each GEMM in a CUDA graph
(triton.testing.do_bench_cudagraph) on the same tensors without flushing L2, and every one of their
operand sets (at most 50 MB of bf16 weights) fits the B200's 126 MB L2, so they time GEMMs fed from
L2 with no launch between them, which the model's HBM roofline and per-kernel launch do not
describe; they stay runnable, apart from the HBM-fed GEMMs. GEMMs timed after 10,000 warm-up
iterations (the Azure GB200 rerun, the tmoreau89 B200 harness) go to `gemm-sustained`: their clock
has settled under the board power limit, which `validate kernels --clock sustained` models."""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "ground_truth_kernels_nonhopper.csv")
HEADER = ("accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,bytes,"
          "time_s,spread_s,repeats,source").split(",")


def accelerator(gpu_type):
    g = gpu_type.lower()
    if "gb200" in g:
        return "gb200"
    if "b200" in g or "sm_100" in g:
        return "b200"
    if "mi300x" in g:
        return "mi300x"
    if "mi325x" in g:
        return "mi325x"
    return None


def dtype(text):
    t = text.lower()
    if "fp4" in t:
        return None
    if "fp8" in t:
        return "fp8"
    for d in ("bf16", "fp16"):
        if t.startswith(d):
            return d
    if t.startswith("not stated") or t.startswith("fp16/bf16"):
        return "bf16"
    return None


def attention_shape(row):
    notes = row["notes"]
    backward = "backward" in row["kernel"].lower() or ", backward;" in notes
    causal = "causal=yes" in notes
    if "q_nheads=64" in notes:
        heads, kv = 64, 8
    elif "--n-heads 16" in notes:
        heads, kv = 16, 16
    else:  # the FlashAttention benchmark script: hidden 2048
        heads = kv = 2048 // int(row["head_dim"])
    return heads, kv, causal, backward


def main():
    rows = {"gemm": {}, "attention-fa2": {}, "bandwidth": {}, "gemm-l2-resident": {}, "gemm-sustained": {}}
    left_out = []
    for r in csv.DictReader(open(SOURCE, newline="")):
        acc, dt = accelerator(r["gpu_type"]), dtype(r["dtype"])
        if acc is not None and r["metric"] == "gpu_time_us" and "elementwise" in r["kernel"]:
            row = dict(accelerator=acc, op="elementwise", dtype=dt or "", bytes=r["message_bytes"],
                       time_s=f'{float(r["value"]) * 1e-6:.6g}', spread_s=0, repeats=0,
                       source=f'validation/data/ground_truth_kernels_nonhopper.csv {r["id"]}: {r["source"]}; '
                              "bytes = read + written, time_s = the GPU time")
            rows["bandwidth"].setdefault(acc, []).append(row)
            continue
        if acc is None or dt is None or "tflops" not in r["metric"]:
            left_out.append(r["id"])
            continue
        source = f'validation/data/ground_truth_kernels_nonhopper.csv {r["id"]}: {r["source"]}'
        rate = float(r["value"]) * 1e12
        if "attention" in r["kernel"].lower() or "mha" in r["kernel"].lower():
            b, s, d = int(r["batch"]), int(r["seq_len"]), int(r["head_dim"])
            heads, kv, causal, backward = attention_shape(r)
            flops = 4.0 * b * heads * s * s * d * (0.5 if causal else 1.0) * (2.5 if backward else 1.0)
            row = dict(accelerator=acc, op="attention", dtype=dt, batch=b, heads=heads, kv_heads=kv, seq_q=s, seq_kv=s,
                       head_dim=d, causal=int(causal), backward=int(backward))
            folder = "attention-fa2"
            source += "; time_s = 4 b h s^2 d" + (" x 0.5 (causal)" if causal else "") + \
                      (" x 2.5 (backward)" if backward else "") + " / achieved"
        else:
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            flops = 2.0 * m * n * k
            row = dict(accelerator=acc, op="gemm", dtype=dt, m=m, n=n, k=k)
            if r["id"].startswith("nh_b200_vllm_"):
                folder = "gemm-l2-resident"
            elif any(w in r["notes"] for w in ("10k warmup", "10,000 warmup")):
                folder = "gemm-sustained"
            else:
                folder = "gemm"
            source += "; time_s = 2mnk / achieved"
        row.update(time_s=f"{flops / rate:.6g}", spread_s=0, repeats=0, source=source)
        rows[folder].setdefault(acc, []).append(row)
    for folder, by_acc in rows.items():
        os.makedirs(os.path.join(HERE, folder), exist_ok=True)
        for stale in os.listdir(os.path.join(HERE, folder)):  # a part whose rows moved elsewhere
            if stale.endswith(".csv"):
                os.remove(os.path.join(HERE, folder, stale))
        for acc, items in by_acc.items():
            with open(os.path.join(HERE, folder, acc + ".csv"), "w", newline="") as f:
                f.write(f"# {acc}: out-of-sample kernel measurements, converted by validation/data/kernels-nonhopper/convert.py\n")
                w = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
                w.writeheader()
                for item in items:
                    w.writerow(item)
    print(f"left out {len(left_out)} rows (fp4, no preset, collectives, latency-only): {' '.join(left_out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
