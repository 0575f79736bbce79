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
simulator="$astra/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Aware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ASTRA-sim's own HGX H100 settings (astra-sim/astra-sim cb9c7d3,
# examples/network/analytical/HGX-H100-validated.yml and
# examples/system/native_collectives/HGX-H100-validated.json).
cat > "$tmp/network.yml" <<'YML'
topology: [ Switch ]
npus_count: [ 8 ]
bandwidth: [ 400.0 ]
latency: [ 936.25 ]
YML
cat > "$tmp/system.json" <<'JSON'
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
 "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
 "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
 "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
 "local-mem-bw": 3350, "boost-mode": 0}
JSON
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > "$tmp/memory.json"

printf '%-22s %14s %14s %9s %12s %12s %s\n' layout clustersim_ms astra_sim_ms diff clustersim_s astra_sim_s ranks_done
for layout in "8 1 1 8" "8 1 1 16" "2 4 1 16" "4 1 2 16" "2 2 2 16"; do
  set -- $layout
  name="tp$1-pp$2-dp$3-gb$4"
  dir="$tmp/$name"
  start=$(date +%s.%N)
  "$bin" run validation/astra-sim/llama-3-8b-8xh100.yaml --format json --export-chakra "$dir" \
    --set "workload.parallelism={tp: $1, pp: $2, dp: $3}" --set "workload.global_batch=$4" > "$tmp/$name.json" 2> "$tmp/$name.err"
  end=$(date +%s.%N)
  python3 validation/astra-sim/ctrl_to_data.py "$dir"/step.*.et
  astra_start=$(date +%s.%N)
  # ASTRA-sim writes its log/ folder into the working directory: run it in the scratch folder.
  (cd "$tmp" && "$simulator" --workload-configuration="$dir/step" --comm-group-configuration="$dir/step.groups.json" \
    --system-configuration="$tmp/system.json" --remote-memory-configuration="$tmp/memory.json" \
    --network-configuration="$tmp/network.yml" > "$tmp/$name.log" 2>&1) || true
  astra_end=$(date +%s.%N)
  python3 - "$tmp/$name.json" "$tmp/$name.log" "$name" "$start" "$end" "$astra_start" "$astra_end" "$(($1 * $2 * $3))" <<'PY'
import json, re, sys
result, log, name = sys.argv[1], sys.argv[2], sys.argv[3]
start, end, astra_start, astra_end = map(float, sys.argv[4:8])
ranks = int(sys.argv[8])
run = json.load(open(result))
step_ms = run["training"]["step_time_s"] * 1e3
cycles = [int(m.group(1)) for m in re.finditer(r"sys\[\d+\] finished, (\d+) cycles", open(log).read())]
astra = max(cycles) / 1e6 if cycles else float("nan")  # cycles are nanoseconds
diff = f"{(astra - step_ms) / step_ms * 100:+.1f} %" if len(cycles) == ranks else "-"
print(f"{name:<22} {step_ms:14.1f} {astra:14.1f} {diff:>9} {end - start:12.2f} {astra_end - astra_start:12.2f} {len(cycles)}/{ranks}")
PY
done
