#!/usr/bin/env python3
"""Times PyTorch's scaled_dot_product_attention (forward and backward, bf16, causal and not,
with and without GQA) and writes calibration CSV rows (docs/validation.md, "Kernel suite").

run.sh uses this instead of attention_bench when `import torch` works and a GPU is visible.
Shapes match attention_bench: Llama-3-70B and GPT-3 175B at tp 8, plus a sequence sweep.

--backend picks SDPA's kernel, so that a folder of rows is one kernel family (the calibration
CSV has no family column; `clustersim validate kernels DIR --attention-kernel FAMILY` says it):
flash = PyTorch's FlashAttention-2 (family fa2), cudnn = cuDNN fused attention (family cudnn,
what Transformer Engine runs on Hopper), default = whatever SDPA picks (not recorded by torch).
A backend this torch or GPU cannot run exits with status 3 and writes nothing.
"""
import argparse
import datetime
import socket
import sys

HEADER = ("accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,"
          "bytes,time_s,spread_s,repeats,source")


def quantile(samples, q):
    """Type-7 quantile (numpy's default), as in common/timing_stats.cpp."""
    ordered = sorted(samples)
    position = q * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (position - lower) * (ordered[upper] - ordered[lower])


def csv_field(text):
    text = str(text)
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, help="CSV file to write")
    parser.add_argument("--accelerator", required=True, help="library accelerator name, e.g. h200-sxm")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a small subset of shapes")
    parser.add_argument("--source", default="")
    parser.add_argument("--backend", choices=["default", "flash", "cudnn"], default="default",
                        help="SDPA kernel: flash (FlashAttention-2), cudnn, or SDPA's own choice")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error("--repeats must be >= 3")
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    for item in args.meta:
        if "=" not in item or item.startswith("="):
            parser.error(f"--meta: expected KEY=VALUE, got '{item}'")
    return args


def main(argv):
    args = parse_args(argv)
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("attention_sdpa.py: no CUDA device found", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    metadata = [tuple(item.split("=", 1)) for item in args.meta]
    keys = {key for key, _ in metadata}
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    defaults = [("gpu", torch.cuda.get_device_name()), ("date", today), ("cuda", torch.version.cuda),
                ("host", socket.gethostname()), ("tool", f"validation/kernels/attention_sdpa.py (torch {torch.__version__})")]
    metadata += [(key, value) for key, value in defaults if key not in keys]
    date = dict(metadata)["date"][:10]
    source = args.source or f"validation/kernels/attention_sdpa.py {date}"
    source += f"; torch {torch.__version__} scaled_dot_product_attention, {args.backend} backend"
    backend_context = None
    if args.backend != "default":
        try:  # torch.nn.attention arrived in torch 2.3, its CUDNN_ATTENTION backend in 2.2-2.3
            from torch.nn.attention import SDPBackend, sdpa_kernel
            chosen = SDPBackend.FLASH_ATTENTION if args.backend == "flash" else SDPBackend.CUDNN_ATTENTION
            backend_context = lambda: sdpa_kernel(chosen)
            probe = torch.zeros(1, 2, 128, 128, device=device, dtype=torch.bfloat16)
            with backend_context():
                F.scaled_dot_product_attention(probe, probe, probe, is_causal=True)
        except (ImportError, AttributeError, RuntimeError) as error:
            print(f"attention_sdpa.py: backend '{args.backend}' is not available here ({error})", file=sys.stderr)
            return 3

    try:  # enable_gqa arrived in torch 2.5
        probe = torch.zeros(1, 2, 64, 64, device=device, dtype=torch.bfloat16)
        F.scaled_dot_product_attention(probe, probe[:, :1], probe[:, :1], enable_gqa=True)
        gqa_native = True
    except (TypeError, RuntimeError):
        gqa_native = False
    head_dim = 128
    shapes = [("llama-3-70b tp8 s8192 mb1", 1, 8, 1, 8192, True),
              ("gpt3-175b tp8 s2048 mb1", 1, 12, 12, 2048, True)]
    for seq in ([2048] if args.quick else [1024, 2048, 4096, 8192, 16384]):
        shapes.append(("sweep 16 heads", 1, 16, 16, seq, False))
        shapes.append(("sweep 16 heads", 1, 16, 16, seq, True))

    def time_op(launch):
        for _ in range(args.warmup):
            launch()
        torch.cuda.synchronize()
        samples = []
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        for _ in range(args.repeats):
            start.record()
            launch()
            stop.record()
            stop.synchronize()
            samples.append(start.elapsed_time(stop) * 1e-3)
        median = quantile(samples, 0.5)
        return median, 0.5 * (quantile(samples, 0.75) - quantile(samples, 0.25)), len(samples)

    rows = []
    torch.manual_seed(0)
    for label, batch, heads, kv_heads, seq, causal in shapes:
        q = torch.randn(batch, heads, seq, head_dim, device=device, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(batch, kv_heads, seq, head_dim, device=device, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(batch, kv_heads, seq, head_dim, device=device, dtype=torch.bfloat16, requires_grad=True)
        note = label
        if kv_heads != heads:
            if gqa_native:
                attend = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
                note += "; enable_gqa"
            else:
                group = heads // kv_heads
                attend = lambda: F.scaled_dot_product_attention(
                    q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), is_causal=causal)
                note += "; GQA by repeat_interleave (torch without enable_gqa)"
        else:
            attend = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        if backend_context is not None:
            unpinned = attend
            def attend(unpinned=unpinned):
                with backend_context():
                    return unpinned()

        def forward():
            with torch.no_grad():
                attend()

        out = attend()
        grad = torch.randn_like(out)

        def backward():
            with backend_context() if backend_context is not None else torch.enable_grad():
                torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

        flops = 4.0 * batch * heads * seq * seq * head_dim * (0.5 if causal else 1.0)
        for is_backward, launch in ((False, forward), (True, backward)):
            median, spread, repeats = time_op(launch)
            rows.append([args.accelerator, "attention", "bf16", "", "", "", batch, heads, kv_heads, seq, seq,
                         head_dim, int(causal), int(is_backward), "", repr(median), repr(spread), repeats,
                         f"{source}; {note}"])
            print(f"attention_sdpa.py: {label:28s} seq {seq:5d} causal {int(causal)} backward {int(is_backward)} "
                  f"{median * 1e3:9.3f} ms {flops * (2.5 if is_backward else 1.0) / median * 1e-12:7.1f} TFLOP/s",
                  file=sys.stderr)
        del q, k, v, out, grad
        torch.cuda.empty_cache()

    with open(args.out, "w") as out_file:
        for key, value in metadata:
            out_file.write(f"# {key}: {value}\n")
        out_file.write(HEADER + "\n")
        for row in rows:
            out_file.write(",".join(csv_field(field) for field in row) + "\n")
    print(f"attention_sdpa.py: wrote {len(rows)} rows to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
