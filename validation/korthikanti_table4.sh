#!/usr/bin/env bash
# One transformer layer of the 22B GPT (hidden 6144, 64 heads, sequence 2048, micro-batch 4,
# tensor parallelism 8 on one DGX A100), forward + backward, against Korthikanti et al. 2022
# (arXiv:2205.05198) Table 4: validation/data/korthikanti_table4_layer.csv (see
# docs/validation.md "Layer times vs Korthikanti Table 4").
#
# The layer time is the step of a 2-layer model minus the step of a 1-layer model (one
# micro-batch, no data parallelism), less the difference of their optimizer steps. The scenario
# is the one `clustersim validate` builds for the korth5full_22b row.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CLUSTERSIM:-build/release/clustersim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" validate --dataset validation/data/ground_truth_training.csv --scenario korth5full_22b > "$tmp/base.yaml"
printf '%-10s %-6s %10s %10s %8s\n' recompute sp model_ms paper_ms error
tail -n +2 validation/data/korthikanti_table4_layer.csv | cut -d, -f1,2,5 | tr , ' ' | while read -r recompute sp paper; do
  set -- "$recompute" "$sp" "$paper"
  for layers in 1 2; do
    sed -e "s/recompute: full/recompute: $1/" -e "s/sequence_parallel: false/sequence_parallel: $2/" \
        -e "s/num_hidden_layers: 48/num_hidden_layers: $layers/" "$tmp/base.yaml" > "$tmp/l$layers.yaml"
    "$bin" run "$tmp/l$layers.yaml" --format json > "$tmp/l$layers.json"
  done
  python3 - "$tmp" "$@" <<'PY'
import json, sys
tmp, recompute, sp, paper = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
def find(node, key):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                return v
            found = find(v, key)
            if found is not None:
                return found
    return None
one, two = (json.load(open(f"{tmp}/l{n}.json")) for n in (1, 2))
layer_ms = 1e3 * ((find(two, "step_time_s") - find(one, "step_time_s")) - (find(two, "optimizer_s") - find(one, "optimizer_s")))
print(f"{recompute:<10} {sp:<6} {layer_ms:10.2f} {paper:10.1f} {100 * (layer_ms / paper - 1):+7.1f}%")
PY
done
