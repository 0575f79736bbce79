#!/usr/bin/env bash
# Rewrites every scenarios/**/*.golden.json from the current build, then shows what changed.
# Review the diff and state the reason for each change in the commit message.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build --preset release --target test_scenarios -j "${CLUSTERSIM_JOBS:-2}"
CLUSTERSIM_UPDATE_GOLDENS=1 ./build/release/test_scenarios --test-suite=golden >/dev/null
git --no-pager diff --stat -- scenarios/
