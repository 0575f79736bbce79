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

--shapes decode: LLM decode instead, forward only: one query token per sequence (seq_q 1, not
causal) against a bf16 KV cache, the per-rank GQA heads of Llama-3-8B and -70B at tp 1, 2, 4, 8,
batch 1..256 x seq_kv 128..32768 up to 1 GiB of K and V (the sweep of common/decode_attention.cpp,
which attention_bench's fallback decode kernel runs; keep the two in step). The L2 cache is
flushed before each timed execution, as a decode step reads each layer's cache from HBM once.
With --backend flash_attn it times flash_attn_with_kvcache of the flash-attn package (the
FlashAttention-2 decode entry with split-KV that serving engines call) instead of SDPA.
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


def decode_attention_sweep(quick):
    """(label, batch, heads, kv_heads, seq_kv) of the decode sweep: as decode_attention_sweep() in
    common/decode_attention.cpp (580 shapes; quick 14), head dim 128, K+V <= 1 GiB bf16."""
    shapes = []
    for model, heads, kv_heads in (("llama-3-8b", 32, 8), ("llama-3-70b", 64, 8)):
        for tp in (1, 2, 4, 8):
            if quick and tp != (1 if heads == 32 else 8):
                continue
            for batch in (1, 2, 4, 8, 16, 32, 64, 128, 256):
                if quick and batch not in (1, 16, 256):
                    continue
                for seq_kv in (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768):
                    if quick and seq_kv not in (128, 2048, 32768):
                        continue
                    if 2 * 2 * batch * (kv_heads // tp) * seq_kv * 128 <= MAX_DECODE_KV_BYTES:
                        shapes.append((f"{model} tp{tp}", batch, heads // tp, kv_heads // tp, seq_kv))
    return shapes


MAX_DECODE_KV_BYTES = 1 << 30  # kMaxDecodeKvBytes


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, help="CSV file to write")
    parser.add_argument("--accelerator", required=True, help="library accelerator name, e.g. h200-sxm")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a small subset of shapes")
    parser.add_argument("--source", default="")
    parser.add_argument("--backend", choices=["default", "flash", "cudnn", "flash_attn"], default="default",
                        help="SDPA kernel: flash (FlashAttention-2), cudnn, or SDPA's own choice; "
                             "flash_attn (--shapes decode only): flash_attn_with_kvcache")
    parser.add_argument("--shapes", choices=["default", "decode"], default="default",
                        help="default: training shapes, forward and backward; decode: one query token "
                             "per sequence against a KV cache, forward")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error("--repeats must be >= 3")
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    for item in args.meta:
        if "=" not in item or item.startswith("="):
            parser.error(f"--meta: expected KEY=VALUE, got '{item}'")
    if args.backend == "flash_attn" and args.shapes != "decode":
        parser.error("--backend flash_attn needs --shapes decode")
    return args


def write_csv(path, metadata, rows):
    with open(path, "w") as out_file:
        for key, value in metadata:
            out_file.write(f"# {key}: {value}\n")
        out_file.write(HEADER + "\n")
        for row in rows:
            out_file.write(",".join(csv_field(field) for field in row) + "\n")
    print(f"attention_sdpa.py: wrote {len(rows)} rows to {path}", file=sys.stderr)


def run_decode(args, torch, F, device, metadata, source):
    """--shapes decode: times one decode attention per shape (forward, L2 flushed before each)."""
    head_dim = 128
    shapes = decode_attention_sweep(args.quick)
    if args.backend == "flash_attn":
        try:
            import flash_attn
            from flash_attn import flash_attn_with_kvcache
        except ImportError as error:
            print(f"attention_sdpa.py: backend 'flash_attn' is not available here ({error})", file=sys.stderr)
            return 3
        source += f"; flash_attn {getattr(flash_attn, '__version__', '?')} flash_attn_with_kvcache"
        layout = "bshd"  # q [b, 1, h, d], cache [b, s, h_kv, d]
        backend_context = None
        try:
            probe_q = torch.randn(2, 1, 8, head_dim, device=device, dtype=torch.bfloat16)
            probe_kv = torch.randn(2, 256, 2, head_dim, device=device, dtype=torch.bfloat16)
            result = flash_attn_with_kvcache(probe_q, probe_kv, probe_kv, causal=False)
            expanded = probe_kv.transpose(1, 2).repeat_interleave(4, 1).float()
            reference = F.scaled_dot_product_attention(probe_q.transpose(1, 2).float(), expanded, expanded)
            torch.cuda.synchronize()
        except RuntimeError as error:
            print(f"attention_sdpa.py: flash_attn_with_kvcache cannot run here ({error})", file=sys.stderr)
            return 3
        if not torch.allclose(result.transpose(1, 2).float(), reference, atol=2e-2, rtol=0):
            print("attention_sdpa.py: flash_attn_with_kvcache disagrees with the reference", file=sys.stderr)
            return 1
    else:
        source += f"; torch {torch.__version__} scaled_dot_product_attention, {args.backend} backend"
        layout = "bhsd"
        backend_context = None
        if args.backend != "default":
            try:
                from torch.nn.attention import SDPBackend, sdpa_kernel
                chosen = SDPBackend.FLASH_ATTENTION if args.backend == "flash" else SDPBackend.CUDNN_ATTENTION
                backend_context = lambda: sdpa_kernel(chosen)
            except (ImportError, AttributeError) as error:
                print(f"attention_sdpa.py: backend '{args.backend}' is not available here ({error})", file=sys.stderr)
                return 3

    def sdpa_call(q, k, v, mode):
        """One decode attention; q [b, h, 1, d], k and v [b, h_kv, s, d]. "grouped" returns
        [b, h_kv, h / h_kv, d] (the same numbers; no reshape copy inside the timed call)."""
        if mode == "enable_gqa":
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        if mode == "grouped":  # the group's query heads as group query rows: exact for one token
            b, h, _, d = q.shape
            h_kv = k.shape[1]
            return F.scaled_dot_product_attention(q.view(b, h_kv, h // h_kv, d), k, v)
        return F.scaled_dot_product_attention(q, k, v)

    gqa_mode = None
    if layout == "bhsd":  # which GQA form this torch and backend run, probed on a decode shape
        probe_q = torch.randn(2, 8, 1, head_dim, device=device, dtype=torch.bfloat16)
        probe_kv = torch.randn(2, 2, 256, head_dim, device=device, dtype=torch.bfloat16)
        reference = None
        for mode in ("enable_gqa", "grouped"):
            try:
                if backend_context is not None:
                    with backend_context():
                        result = sdpa_call(probe_q, probe_kv, probe_kv, mode)
                else:
                    result = sdpa_call(probe_q, probe_kv, probe_kv, mode)
                torch.cuda.synchronize()
            except (TypeError, RuntimeError) as error:
                print(f"attention_sdpa.py: decode GQA as {mode} unavailable ({error})", file=sys.stderr)
                continue
            expanded = probe_kv.repeat_interleave(4, 1)
            reference = F.scaled_dot_product_attention(probe_q.float(), expanded.float(), expanded.float())
            if not torch.allclose(result.reshape(reference.shape).float(), reference, atol=2e-2, rtol=0):
                print(f"attention_sdpa.py: decode GQA as {mode} disagrees with the reference", file=sys.stderr)
                return 1
            gqa_mode = mode
            break
        if gqa_mode is None:
            print(f"attention_sdpa.py: backend '{args.backend}' cannot run decode attention here", file=sys.stderr)
            return 3

    kv_elements = max(batch * kv_heads * seq_kv * head_dim for _, batch, _, kv_heads, seq_kv in shapes)
    q_elements = max(batch * heads * head_dim for _, batch, heads, _, _ in shapes)
    torch.manual_seed(0)
    k_pool = torch.randn(kv_elements, device=device, dtype=torch.bfloat16)
    v_pool = torch.randn(kv_elements, device=device, dtype=torch.bfloat16)
    q_pool = torch.randn(q_elements, device=device, dtype=torch.bfloat16)
    l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    flush = torch.empty(max(256 << 20, 4 * l2_bytes), device=device, dtype=torch.uint8)
    sleep = getattr(torch.cuda, "_sleep", None)

    def time_cold(launch):
        """Per repeat: zero the flush buffer (evicts L2), spin ~50 us so the host runs ahead of the
        GPU (its launch latency is not timed), then events around one launch; one sync at the end."""
        for _ in range(args.warmup):
            launch()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(args.repeats)]
        for start, stop in events:
            flush.zero_()
            if sleep is not None:
                sleep(100_000)
            start.record()
            launch()
            stop.record()
        torch.cuda.synchronize()
        samples = [start.elapsed_time(stop) * 1e-3 for start, stop in events]
        return (quantile(samples, 0.5), 0.5 * (quantile(samples, 0.75) - quantile(samples, 0.25)),
                len(samples))

    rows = []
    note = "flash_attn_with_kvcache, full cache" if layout == "bshd" else f"GQA {gqa_mode}"
    context = backend_context() if backend_context is not None else None
    if context is not None:
        context.__enter__()
    try:
        for label, batch, heads, kv_heads, seq_kv in shapes:
            kv_count = batch * kv_heads * seq_kv * head_dim
            if layout == "bshd":
                q = q_pool[:batch * heads * head_dim].view(batch, 1, heads, head_dim)
                k = k_pool[:kv_count].view(batch, seq_kv, kv_heads, head_dim)
                v = v_pool[:kv_count].view(batch, seq_kv, kv_heads, head_dim)
                launch = lambda q=q, k=k, v=v: flash_attn_with_kvcache(q, k, v, causal=False)
            else:
                q = q_pool[:batch * heads * head_dim].view(batch, heads, 1, head_dim)
                k = k_pool[:kv_count].view(batch, kv_heads, seq_kv, head_dim)
                v = v_pool[:kv_count].view(batch, kv_heads, seq_kv, head_dim)
                launch = lambda q=q, k=k, v=v: sdpa_call(q, k, v, gqa_mode)
            with torch.no_grad():
                median, spread, repeats = time_cold(launch)
            rows.append([args.accelerator, "attention", "bf16", "", "", "", batch, heads, kv_heads, 1, seq_kv,
                         head_dim, 0, 0, "", repr(median), repr(spread), repeats,
                         f"{source}; L2 flushed; {label} decode; {note}"])
            kv_bytes = 2 * 2 * kv_count
            print(f"attention_sdpa.py: decode {label:15s} batch {batch:3d} heads {heads:2d}/{kv_heads} "
                  f"seq_kv {seq_kv:5d} {median * 1e3:9.4f} ms {kv_bytes / median * 1e-9:7.0f} GB/s",
                  file=sys.stderr)
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    if "shapes" not in dict(metadata):
        metadata = metadata + [("shapes", "decode")]
    write_csv(args.out, metadata, rows)
    return 0


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
    if args.shapes == "decode":
        return run_decode(args, torch, F, device, metadata, source)
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

    sleep = getattr(torch.cuda, "_sleep", None)

    def time_op(launch):
        """Events around one launch per repeat, the GPU kept busy by a ~0.5 ms spin before the
        start event so that the host's dispatch (SDPA's Python, autograd's backward: 20-60 us)
        runs ahead and is not timed. Without the spin an idle GPU records the start event at once
        and then waits for the host: short kernels read up to 2x slow (2026-12-04 H200, s1024)."""
        for _ in range(args.warmup):
            launch()
        torch.cuda.synchronize()
        samples = []
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        for _ in range(args.repeats):
            if sleep is not None:
                sleep(1_000_000)
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

    write_csv(args.out, metadata, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
