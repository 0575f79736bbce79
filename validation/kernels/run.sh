#!/usr/bin/env bash
# Runs the CUDA kernel suite on this machine's GPU (about 5 minutes on an H200: 199 s measured 2026-12-04 before the 60 s whole-step run; 2 of them
# the sustained GEMM loop; --quick about 2.5) and writes calibration CSVs (docs/validation.md,
# "Kernel suite") plus the setup they were measured on.
#
#   validation/kernels/run.sh [--quick] [OUT_DIR]
#
# OUT_DIR defaults to validation/kernels/results/<date>-<gpu>/. Environment:
#   ACCELERATOR  library accelerator name (default: derived from the GPU name)
#   BUILD_DIR    where the benchmarks are (default: build/kernels if built, else build/kernels-run)
#   CUDA_VISIBLE_DEVICES  pick the GPU (the suite uses the first visible one)
# Attention comes from attention_sdpa.py (PyTorch SDPA, forward and backward) when torch
# imports and sees the GPU, else from attention_bench (a simple tiled forward kernel). SDPA runs
# twice: its FlashAttention-2 backend into attention.csv (family fa2, with the other CSVs) and
# its cuDNN backend into attention-cudnn/attention.csv (family cudnn: validate that folder with
# --attention-kernel cudnn), skipped where this torch has no cuDNN attention. Last, sustained_bench
# runs one bf16 8192^3 GEMM back to back for 120 s (15 with --quick) into sustained/gemm.csv (the
# settled rate) while nvidia-smi logs clocks, power and temperature every second into
# sustained/smi.csv: what a GPU keeps at its power limit, against the short runs above.
# LLM decode (about 30 s) goes to decode/: skinny GEMMs (gemm_bench --shapes decode) into
# decode/gemm.csv and one-query attention over a KV cache into decode/attention.csv
# (attention_sdpa.py --shapes decode: flash_attn_with_kvcache when flash-attn imports, else SDPA's
# FlashAttention-2 backend; attention_bench --shapes decode without torch). The NCCL all-reduce
# across this node's GPUs (allreduce_bench.py) goes to collectives/allreduce.csv, or, with fewer
# than 2 GPUs or no nccl-tests/torch, collectives/allreduce.skipped says why.
# host_gating.py (about 30 s) times a stack of small-model GPT layers eager, as one CUDA graph
# and by its kernels' durations into host/host_gating.csv: whether per-op host dispatch gates
# the step. small_model_step.py (60 s, 10 with --quick) runs a whole GPT-1.7B training step back to
# back into step/small_model_step.csv, with nvidia-smi clocks and power in its comments.
# jitter.py (about 20 s, 5 with --quick) times each of seven kernels of the op classes thousands of
# times back to back and a 1 ms host busy loop into jitter/jitter.csv: the per-call spread
# (CV, lognormal sigma, p99/p50) the simulator's variability settings take.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

quick=()
out_dir=""
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option '$arg' (valid: --quick)" >&2; exit 64 ;;
    *) [[ -z "$out_dir" ]] || { echo "run.sh: more than one OUT_DIR" >&2; exit 64; }; out_dir=$arg ;;
  esac
done

# --- the GPU and its setup ---------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "run.sh: no CUDA device found (nvidia-smi is not installed)" >&2
  exit 2
fi
if ! query=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null) \
    || [[ -z "$query" ]]; then
  echo "run.sh: no CUDA device found (nvidia-smi lists no GPU)" >&2
  exit 2
fi
first_visible=${CUDA_VISIBLE_DEVICES:-0}
first_visible=${first_visible%%,*}
if [[ "$first_visible" =~ ^[0-9]+$ ]]; then
  query=$(nvidia-smi -i "$first_visible" --query-gpu=name,driver_version,clocks.sm,clocks.mem \
            --format=csv,noheader)
else
  query=$(head -n1 <<<"$query")
fi
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }
IFS=',' read -r gpu_name driver clock_sm clock_mem <<<"$query"
gpu_name=$(trim "$gpu_name"); driver=$(trim "$driver")
clock_sm=$(trim "$clock_sm"); clock_mem=$(trim "$clock_mem")
clocks="sm $clock_sm, mem $clock_mem"
date_iso=$(date -u +%Y-%m-%dT%H:%M:%SZ)

if [[ -z "${ACCELERATOR:-}" ]]; then
  case "$gpu_name" in
    *H200*) ACCELERATOR=h200-sxm ;;
    *H100*PCIe*|*H100*NVL*) ;;
    *H100*) ACCELERATOR=h100-sxm ;;
    *A100*PCIe*|*A100*40GB*) ;;
    *A100*) ACCELERATOR=a100-sxm-80gb ;;
    *B200*) ACCELERATOR=b200 ;;
  esac
  if [[ -z "${ACCELERATOR:-}" ]]; then
    echo "run.sh: no library accelerator matches GPU '$gpu_name'; set ACCELERATOR=<name>" \
         "(see models/data/accelerators/)" >&2
    exit 64
  fi
fi

slug=$(tr 'A-Z' 'a-z' <<<"$gpu_name" | tr -cs 'a-z0-9' '-' | sed 's/^-*//; s/-*$//')
out_dir=${out_dir:-$here/results/${date_iso%%T*}-$slug}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
# Logs and setup.md name paths relative to the repository when they are inside it.
[[ -n "${BUILD_DIR:-}" && "$BUILD_DIR" != /* ]] && BUILD_DIR=$PWD/$BUILD_DIR
cd "$repo"
out_dir=${out_dir#"$repo/"}
log=$out_dir/run.log
: >"$log"
say() { echo "$@" | tee -a "$log" >&2; }
say "run.sh: $gpu_name (driver $driver, $clocks) as $ACCELERATOR -> $out_dir"

# --- build (if needed) -------------------------------------------------------------------------
benches=(gemm_bench memory_bench attention_bench layer_bench sustained_bench)
have_all() { for b in "${benches[@]}"; do [[ -x "$1/$b" ]] || return 1; done; }
if [[ -z "${BUILD_DIR:-}" ]]; then
  if have_all build/kernels; then BUILD_DIR=build/kernels; else BUILD_DIR=build/kernels-run; fi
fi
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! have_all "$BUILD_DIR"; then
  say "run.sh: building the suite in $BUILD_DIR"
  mkdir -p "$BUILD_DIR"
  if command -v cmake >/dev/null 2>&1 &&
     cmake -S "$here" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
           -DCMAKE_CUDA_ARCHITECTURES=native >>"$log" 2>&1 &&
     cmake --build "$BUILD_DIR" --target kernels -j "$(nproc)" >>"$log" 2>&1; then
    :
  else
    # No (new enough) CMake: compile directly for the GPU that is present.
    say "run.sh: CMake build unavailable or failed (see $log); compiling with $nvcc directly"
    common=("$here"/common/*.cpp "$here"/common/*.cu)
    pids=()
    for b in "${benches[@]}"; do
      "$nvcc" -O3 -std=c++17 -arch=native -I"$here" "$here/$b.cu" "${common[@]}" -lcublasLt \
        -o "$BUILD_DIR/$b" >>"$log" 2>&1 &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || { say "run.sh: build failed (see $log)"; exit 1; }; done
  fi
fi

# --- setup record ------------------------------------------------------------------------------
{
  echo "# Kernel-suite run $date_iso"
  echo
  echo "- command: validation/kernels/run.sh ${quick[*]} $out_dir"
  echo "- gpu: $gpu_name; driver $driver; clocks at start: $clocks; accelerator: $ACCELERATOR"
  echo "- host: $(hostname); git: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- nvcc: $("$nvcc" --version 2>/dev/null | tail -n1 || echo unknown)"
  echo "- torch: $(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null || echo 'not installed')"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total,power.limit,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,temperature.gpu,persistence_mode,mig.mode.current --format=csv 2>&1 || true
  echo '```'
} >"$out_dir/setup.md"

meta=(--meta "gpu=$gpu_name" --meta "driver=$driver" --meta "clocks=$clocks" --meta "date=$date_iso"
      --meta "host=$(hostname)")
common_args=(--accelerator "$ACCELERATOR" "${quick[@]}" "${meta[@]}")
status=0
last_rc=0  # exit status of the latest run_one
run_one() {  # name command...
  local name=$1; shift
  say "run.sh: $name"
  local started=$SECONDS
  last_rc=0
  if "$@" 2> >(tee -a "$log" >&2); then
    say "run.sh: $name done in $((SECONDS - started)) s"
  else
    local rc=$?
    last_rc=$rc
    [[ $rc -eq 3 ]] && { say "run.sh: $name skipped (not available here)"; return 0; }
    say "run.sh: $name FAILED (exit $rc)"
    [[ $rc -eq 2 ]] && exit 2  # no device
    status=1
  fi
}

run_one gemm "$BUILD_DIR/gemm_bench" --out "$out_dir/gemm.csv" "${common_args[@]}"
run_one memory "$BUILD_DIR/memory_bench" --out "$out_dir/memory.csv" "${common_args[@]}"
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  run_one attention python3 "$here/attention_sdpa.py" --backend flash --out "$out_dir/attention.csv" "${common_args[@]}"
  mkdir -p "$out_dir/attention-cudnn"
  run_one attention-cudnn python3 "$here/attention_sdpa.py" --backend cudnn \
    --out "$out_dir/attention-cudnn/attention.csv" "${common_args[@]}"
else
  say "run.sh: torch unavailable; attention from attention_bench (forward only)"
  run_one attention "$BUILD_DIR/attention_bench" --out "$out_dir/attention.csv" "${common_args[@]}"
fi
run_one layer "$BUILD_DIR/layer_bench" --out "$out_dir/layer.csv" "${common_args[@]}"

# --- LLM decode: skinny GEMMs, one-query attention, small all-reduce ------------------------------
mkdir -p "$out_dir/decode" "$out_dir/collectives"
run_one decode-gemm "$BUILD_DIR/gemm_bench" --shapes decode --out "$out_dir/decode/gemm.csv" "${common_args[@]}"
last_rc=3
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  decode_backend=flash
  python3 -c "import flash_attn" >/dev/null 2>&1 && decode_backend=flash_attn
  run_one decode-attention python3 "$here/attention_sdpa.py" --shapes decode --backend "$decode_backend" \
    --out "$out_dir/decode/attention.csv" "${common_args[@]}"
fi
if [[ $last_rc -eq 3 ]]; then
  say "run.sh: decode attention from attention_bench (torch or its decode backend unavailable)"
  run_one decode-attention "$BUILD_DIR/attention_bench" --shapes decode --out "$out_dir/decode/attention.csv" \
    "${common_args[@]}"
fi
if command -v python3 >/dev/null 2>&1; then
  run_one allreduce python3 "$here/allreduce_bench.py" --out "$out_dir/collectives/allreduce.csv" "${common_args[@]}"
else
  echo "skipped: python3 is not installed (allreduce_bench.py needs it)" >"$out_dir/collectives/allreduce.skipped"
  say "run.sh: allreduce skipped (python3 is not installed)"
fi

# --- does the host gate a small model's step? (eager PyTorch against a CUDA graph) --------------
mkdir -p "$out_dir/host"
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  run_one host-gating python3 "$here/host_gating.py" --out "$out_dir/host/host_gating.csv"
  mkdir -p "$out_dir/step"
  step_seconds=60
  [[ ${#quick[@]} -gt 0 ]] && step_seconds=10
  run_one small-model-step python3 "$here/small_model_step.py" --out "$out_dir/step/small_model_step.csv" \
    --seconds "$step_seconds"
  mkdir -p "$out_dir/jitter"
  run_one jitter python3 "$here/jitter.py" --out "$out_dir/jitter/jitter.csv" "${quick[@]}"
else
  echo "skipped: torch is not installed or sees no GPU (host_gating.py needs it)" >"$out_dir/host/host_gating.skipped"
  say "run.sh: host gating skipped (torch unavailable)"
fi

mkdir -p "$out_dir/sustained"
smi_target=()
[[ "$first_visible" =~ ^[0-9]+$ ]] && smi_target=(-i "$first_visible")
nvidia-smi "${smi_target[@]}" --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv -lms 1000 >"$out_dir/sustained/smi.csv" 2>>"$log" &
smi_pid=$!
run_one sustained "$BUILD_DIR/sustained_bench" --out "$out_dir/sustained/gemm.csv" "${common_args[@]}"
kill "$smi_pid" 2>/dev/null || true
wait "$smi_pid" 2>/dev/null || true

say "run.sh: results in $out_dir (total $SECONDS s)"
exit "$status"
