"""Turns InferenceX's measured single-node runs (inferencex_runs.csv, extracted from the InferenceX
app's API snapshot, see validation/data/README.md) into validation rows in the
ground_truth_inference.csv format: validation/data/inferencex_dsr1_serving.csv.

Kept: DeepSeek-R1 FP8 on SGLang 0.5 (the framework and release from the run's container image)
and on TensorRT-LLM (trtllm-serve: 1.2.0rc6.post2 on B200; 1.1.0rc2.post2 with --ep_size 8 on B200
and H200), without attention data parallelism or speculative decoding, on the parts ClusterSim
has presets for. Each run's launch flags come from its benchmark script at the run's
date (SemiAnalysisAI/InferenceX, commits below) and go into the row's notes, as
`clustersim validate` reads them: max_sequences (--max-running-requests), max_batched_tokens
(--chunked-prefill-size), memory_utilisation (--mem-fraction-static), recv_interval
(--scheduler-recv-interval), kv_cache (--kv-cache-dtype fp8_e4m3; SGLang's default otherwise is the
model's bf16). Not modelled: --stream-interval, --num-continuous-decode-steps.

Usage: python3 validation/data/inferencex/convert.py
"""
import csv
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "inferencex_dsr1_serving.csv"

GPU = {"h200": "H200", "b200": "B200", "mi300x": "MI300X", "mi325x": "MI325X"}
SNAPSHOT = ("SemiAnalysisAI/InferenceX-app packages/app/cypress/fixtures/api/benchmarks.json "
            "(commit a369c398)")


def flags(hw, tp, isl, osl, conc):
    """The launch flags of InferenceX's dsr1_fp8_<hw>.sh (SGLang) for one run, and the script."""
    if hw == "h200":  # benchmarks/single_node/dsr1_fp8_h200.sh @ 41aff0afc (2026-03-06)
        running = 512 if (isl, osl) == (1024, 1024) else 256
        return ({"max_sequences": running, "max_batched_tokens": 32768, "memory_utilisation": 0.82},
                "benchmarks/single_node/dsr1_fp8_h200.sh @ 41aff0afc")
    if hw == "b200":  # benchmarks/single_node/dsr1_fp8_b200.sh @ 64c20b6b5 (2026-03-11); the same
        # flags for tp 8 in benchmarks/dsr1_fp8_b200_docker.sh @ d22bf9ca9 (2025-11-21)
        # --scheduler-recv-interval: 30 from 16 clients at tp 8, else 10
        if tp == 8:
            f = {"max_sequences": 128, "max_batched_tokens": 32768, "memory_utilisation": 0.82,
                 "recv_interval": 30 if conc >= 16 else 10}
        else:
            f = {"max_sequences": 32, "max_batched_tokens": 8192, "memory_utilisation": 0.95, "recv_interval": 10}
        f["kv_cache"] = "fp8"
        return f, "benchmarks/single_node/dsr1_fp8_b200.sh @ 64c20b6b5"
    # mi300x, mi325x: benchmarks/single_node/dsr1_fp8_<hw>.sh @ 8d81e0bf4 (2026-02-19); also
    # --num-continuous-decode-steps 4 (not modelled)
    return ({"max_batched_tokens": 131072, "memory_utilisation": 0.8, "kv_cache": "fp8"},
            f"benchmarks/single_node/dsr1_fp8_{hw}.sh @ 8d81e0bf4")


def trt_flags(tp, isl, osl, conc):
    """trtllm-serve's flags in InferenceX's benchmarks/dsr1_fp8_b200_trt.sh @ ec7bafaae
    (2026-01-29, the runs' date): --max_num_tokens, kv_cache_config (fp8, free_gpu_memory_fraction)."""
    tokens = max(8192, (conc + isl + 64 + 63) // 64 * 64)
    fraction = 0.8
    if (isl, osl) == (1024, 8192) and conc >= 256:
        fraction = 0.7
    elif (isl, osl) == (8192, 1024) and tp == 4:
        fraction = 0.75
    f = {"max_batched_tokens": tokens, "memory_utilisation": fraction, "kv_cache": "fp8"}
    return f, "benchmarks/dsr1_fp8_b200_trt.sh @ ec7bafaae"


def trt_ep_flags(hw, isl, conc):
    """trtllm-serve's flags in InferenceX's benchmarks/dsr1_fp8_<hw>_trt_slurm.sh @ d22bf9ca9
    (2025-11-21, the scripts the 2025-12-15 runs of TensorRT-LLM 1.1.0rc2.post2 used):
    --max_num_tokens without a floor, the fp8 KV cache's free_gpu_memory_fraction, --ep_size."""
    f = {"ep": 8, "max_batched_tokens": (conc + isl + 64 + 63) // 64 * 64,
         "memory_utilisation": 0.8 if hw == "b200" else 0.75, "kv_cache": "fp8"}
    return f, f"benchmarks/dsr1_fp8_{hw}_trt_slurm.sh @ d22bf9ca9"


def main():
    runs = list(csv.DictReader(open(HERE / "inferencex_runs.csv")))
    header = ["id", "source", "model", "params_b", "gpus", "gpu_type", "tp", "pp", "precision", "framework",
              "scenario", "input_len", "output_len", "batch", "metric", "value", "unit", "notes"]
    out = []
    for r in runs:
        if (r["model"], r["precision"]) != ("dsr1", "fp8") or r["framework"] not in ("sglang", "trt"):
            continue
        if r["hardware"] not in GPU or r["dp_attention"] != "false":
            continue
        expert = r["ep"] != "1"
        if expert and not (r["framework"] == "trt" and r["ep"] == r["tp"] == "8"
                           and "1.1.0rc2.post2" in r["image"]):
            continue  # expert parallelism: only the TensorRT-LLM runs whose script is read
        hw, tp, isl, osl, conc = r["hardware"], int(r["tp"]), int(r["isl"]), int(r["osl"]), int(r["conc"])
        if r["framework"] == "sglang":
            release = re.search(r"sglang:v(\d+\.\d+\.\d+)", r["image"])
            engine = f"SGLang {release.group(1)}" if release else ""
        elif expert:  # TensorRT-LLM 1.1.0rc2.post2 with --ep_size 8 (B200, H200)
            release = re.search(r"tensorrt-llm/release:(1\.1\.0rc2\.post2)", r["image"])
            engine = f"TensorRT-LLM {release.group(1)} (trtllm-serve)" if release else ""
        else:  # TensorRT-LLM without expert parallelism: only B200's runs of the release read
            release = re.search(r"tensorrt-llm/release:(1\.2\.0rc6\.post2)", r["image"])
            engine = f"TensorRT-LLM {release.group(1)} (trtllm-serve)" if release and hw == "b200" else ""
        if not engine:
            continue  # no image recorded (the release is unknown), or no script read for it
        if r["framework"] == "sglang":
            f, script = flags(hw, tp, isl, osl, conc)
        elif expert:
            f, script = trt_ep_flags(hw, isl, conc)
        else:
            f, script = trt_flags(tp, isl, osl, conc)
        notes = "; ".join(f"{k}={v}" for k, v in f.items())
        notes += f"; run {r['date']}, image {r['image']}; launch flags: {script}"
        layout = f"tp{tp}" + (f"ep{r['ep']}" if expert else "")
        base = f"ix_dsr1_{hw}_{r['framework']}_{layout}_{isl // 1024}k{osl // 1024}k_c{conc}_{r['date'].replace('-', '')}"
        source = f"InferenceX run {r['run_url']}, as {SNAPSHOT} lists it"
        scenario = (f"InferenceX benchmark_serving.py: random dataset, random range ratio 0.8, request rate inf, "
                    f"max concurrency {conc}, {10 * conc} requests (after {2 * conc} warm-up ones), ignore-eos")
        common = [source, "deepseek-ai/DeepSeek-R1-0528", "671", str(tp), GPU[hw], str(tp), "1", "FP8",
                  engine, scenario, str(isl), str(osl), ""]
        metrics = [("total_tokens_per_s", r["tput_per_gpu"], "tok/s per GPU"),
                   ("ttft_p50_ms", r["median_ttft_s"], "ms"),
                   ("tpot_p50_ms", r["median_tpot_s"], "ms")]
        for name, value, unit in metrics:
            if not value:
                continue
            v = float(value) * (1e3 if unit == "ms" else 1.0)
            out.append([f"{base}_{name}"] + common + [name, f"{v:.5g}", unit, notes])
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(sorted(out))
    print(f"wrote {len(out)} rows to {OUT}")


if __name__ == "__main__":
    main()
