#!/usr/bin/env bash
# ClusterSim against ASTRA-sim's analytical backend on the same Chakra traces (issue 32's
# cross-check; docs/validation.md "Against other simulators: ASTRA-sim on the same Chakra trace").
# Each layout of validation/astra-sim/llama-3-8b-8xh100.yaml is simulated by ClusterSim, which
# exports its step (`run --export-chakra`); ASTRA-sim replays the exported traces with its own
# HGX-H100-validated network and system configuration. Both step times and both run times are
# printed; nothing is compared with a measurement.
#
# Needs a built ASTRA-sim analytical backend: ASTRA_SIM=ASTRA_SIM_CHECKOUT, the checkout (the one
# recorded in docs/validation.md is astra-sim/astra-sim f66c1da with its submodules at their
# pinned commits, spdlog at v1.13, built by build/astra_analytical/build.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${CLUSTERSIM:-build/release/clustersim}
astra=${ASTRA_SIM:?set ASTRA_SIM to a built astra-sim checkout}
backends="$astra/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ASTRA-sim's own HGX H100 settings (astra-sim/astra-sim cb9c7d3,
# examples/network/analytical/HGX-H100-validated.yml and
# examples/system/native_collectives/HGX-H100-validated.json) for one node; for two and four
# nodes its inputs/network/hgx_h100_16gpu.yml and hgx_h100_32gpu.yml (astra-sim f2fed65: a
# second dimension of 2 or 4 nodes, a ring at 50 GB/s and 1,000 ns) with the same system file,
# ring collectives on both dimensions.
network() {  # NODES
  if (($1 == 1)); then
    printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]\nlatency: [ 936.25 ]\n'
  else
    printf 'topology: [ Switch, Ring ]\nnpus_count: [ 8, %d ]\nbandwidth: [ 400.0, 50.0 ]\nlatency: [ 936.25, 1000.0 ]\n' "$1"
  fi
}
system() {  # DIMENSIONS
  local ring='"ring"'
  (($1 == 2)) && ring='"ring", "ring"'
  cat <<JSON
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
 "preferred-dataset-splits": 4, "all-reduce-implementation": [$ring],
 "all-gather-implementation": [$ring], "reduce-scatter-implementation": [$ring],
 "all-to-all-implementation": [$ring], "collective-optimization": "localBWAware",
 "local-mem-bw": 3350, "boost-mode": 0}
JSON
}
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > "$tmp/memory.json"

# One layout: NODES TP PP DP GLOBAL_BATCH BACKEND (ASTRA-sim's analytical backend: Aware, the
# congestion-aware one, takes one-dimensional networks only at f66c1da; Unaware takes several).
# One node: the collectives' process groups (step.groups.json, ASTRA-sim's communicator groups).
# Several: no communicator group; every collective spans whole network dimensions and carries
# involved_dim (the export says how many do), which ASTRA-sim f66c1da reads when it is given no
# group file ("empty").
run_layout() {
  local nodes=$1 tp=$2 pp=$3 dp=$4 batch=$5 backend=$6
  local simulator="${backends}_$backend"
  local name="n$nodes-tp$tp-pp$pp-dp$dp-gb$batch-$backend" dims=1
  local dir="$tmp/$name" groups
  ((nodes > 1)) && dims=2
  network "$nodes" > "$tmp/$name.network.yml"
  system "$dims" > "$tmp/$name.system.json"
  local start end astra_start astra_end
  start=$(date +%s.%N)
  "$bin" run validation/astra-sim/llama-3-8b-8xh100.yaml --format json --export-chakra "$dir" \
    --set "cluster.nodes=$nodes" --set "workload.parallelism={tp: $tp, pp: $pp, dp: $dp}" \
    --set "workload.global_batch=$batch" > "$tmp/$name.json" 2> "$tmp/$name.err"
  end=$(date +%s.%N)
  groups="$dir/step.groups.json"
  if ((nodes > 1)); then
    groups=empty
    if ! grep -qE "involved_dim on ([0-9]+) of \1 collectives" "$tmp/$name.err"; then
      echo "$name: not every collective spans whole network dimensions:" >&2
      cat "$tmp/$name.err" >&2
      return 1
    fi
  fi
  python3 validation/astra-sim/ctrl_to_data.py "$dir"/step.*.et
  astra_start=$(date +%s.%N)
  # ASTRA-sim writes its log/ folder into the working directory: run it in the scratch folder.
  (cd "$tmp" && "$simulator" --workload-configuration="$dir/step" --comm-group-configuration="$groups" \
    --system-configuration="$tmp/$name.system.json" --remote-memory-configuration="$tmp/memory.json" \
    --network-configuration="$tmp/$name.network.yml" > "$tmp/$name.log" 2>&1) || true
  astra_end=$(date +%s.%N)
  python3 - "$tmp/$name.json" "$tmp/$name.log" "$name" "$start" "$end" "$astra_start" "$astra_end" "$((tp * pp * dp))" <<'PY'
import json, re, sys
result, log, name = sys.argv[1], sys.argv[2], sys.argv[3]
start, end, astra_start, astra_end = map(float, sys.argv[4:8])
ranks = int(sys.argv[8])
run = json.load(open(result))
step_ms = run["training"]["step_time_s"] * 1e3
cycles = [int(m.group(1)) for m in re.finditer(r"sys\[\d+\] finished, (\d+) cycles", open(log).read())]
astra = max(cycles) / 1e6 if cycles else float("nan")  # cycles are nanoseconds
diff = f"{(astra - step_ms) / step_ms * 100:+.1f} %" if len(cycles) == ranks else "-"
print(f"{name:<34} {step_ms:14.1f} {astra:14.1f} {diff:>9} {end - start:12.2f} {astra_end - astra_start:12.2f} {len(cycles)}/{ranks}")
PY
}

printf '%-34s %14s %14s %9s %12s %12s %s\n' layout clustersim_ms astra_sim_ms diff clustersim_s astra_sim_s ranks_done
for layout in "1 8 1 1 8 Aware" "1 8 1 1 16 Aware" "1 2 4 1 16 Aware" "1 4 1 2 16 Aware" "1 2 2 2 16 Aware" \
              "1 8 1 1 8 Unaware" "1 2 4 1 16 Unaware" \
              "2 8 1 2 16 Unaware" "2 8 2 1 8 Unaware" "4 8 1 4 32 Unaware" "4 8 4 1 32 Unaware"; do
  run_layout $layout
done
