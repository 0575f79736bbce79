#!/usr/bin/env python3
"""Writes the request-length profiles of models/data/datasets from the traces Microsoft's Vidur
ships (github.com/microsoft/vidur, data/processed_traces, MIT licence): for each trace, the
exact empirical distribution of its prompt and output lengths as `length,count` rows, one file
per side (NAME.input.csv, NAME.output.csv), with the source in the header comments.

Usage: derive_from_vidur.py VIDUR_CHECKOUT [COMMIT]
"""
import collections
import csv
import pathlib
import statistics
import sys

# name -> (trace file, what it is)
TRACES = {
    "azure-conv-2023": (
        "splitwise_conv.csv",
        "Azure LLM inference trace 2023, conversation (Splitwise, ISCA 2024; AzurePublicDataset "
        "AzureLLMInferenceTrace_conv), as processed by Vidur"),
    "azure-code-2023": (
        "splitwise_code.csv",
        "Azure LLM inference trace 2023, code completion (Splitwise, ISCA 2024; AzurePublicDataset "
        "AzureLLMInferenceTrace_code), as processed by Vidur"),
    "arxiv-summarization-4k": (
        "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
        "arXiv summarization (Vidur's Arxiv-Summarization-4K: Llama-2 tokenizer, prompt + output <= 4096)"),
}
SIDES = {"input": "num_prefill_tokens", "output": "num_decode_tokens"}


def main() -> None:
    root = pathlib.Path(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    out_dir = pathlib.Path(__file__).resolve().parent
    for name, (trace, what) in TRACES.items():
        with open(root / "data" / "processed_traces" / trace, newline="") as f:
            rows = list(csv.DictReader(f))
        for side, column in SIDES.items():
            lengths = [int(float(r[column])) for r in rows]
            counts = collections.Counter(lengths)
            ordered = sorted(lengths)
            with open(out_dir / f"{name}.{side}.csv", "w") as out:
                out.write(f"# {name}: {side} lengths (tokens) of {what}.\n")
                out.write(f"# Source: microsoft/vidur @ {commit}, data/processed_traces/{trace}, column {column}; "
                          f"written by models/data/datasets/derive_from_vidur.py.\n")
                out.write(f"# {len(lengths)} requests; mean {statistics.mean(lengths):.1f}, median "
                          f"{ordered[len(ordered) // 2]}, min {ordered[0]}, max {ordered[-1]}. Rows: length,count.\n")
                for length in sorted(counts):
                    out.write(f"{length},{counts[length]}\n")


if __name__ == "__main__":
    main()
