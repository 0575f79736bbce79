#!/usr/bin/env bash
# Installs what ClusterSim needs on Debian 12 (as root), configures and builds.
#   scripts/setup.sh            install + build (release preset)
#   scripts/setup.sh run        ... then run the default scenario
#   scripts/setup.sh test       ... then run the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          libboost-graph-dev libeigen3-dev libyaml-cpp-dev libtbb-dev
          libbenchmark-dev doctest-dev libcli11-dev nlohmann-json3-dev libfmt-dev
          libopenmpi-dev openmpi-bin   # `clustersim sweep --mpi` and its mpirun test
          python3-dev pybind11-dev     # the Python module, `import clustersim` (docs/python.md)
          libprotobuf-dev protobuf-compiler)  # Chakra execution traces (docs/chakra.md)
# The browser test of report.html (tests/browser) needs Chromium and Python; only `test` runs
# it, and it must be installed before cmake configures (which looks for it).
[[ "${1:-}" == test ]] && packages+=(chromium python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=${CLUSTERSIM_JOBS:-2}
# With MPI, so that CI builds `sweep --mpi` and runs its mpirun test, with the Python module and
# its tests, and with Chakra traces (a build without OpenMPI, pybind11 or protobuf leaves them
# OFF: `cmake --preset release`).
cmake --preset release -DCLUSTERSIM_WITH_MPI=ON -DCLUSTERSIM_BUILD_PYTHON=ON -DCLUSTERSIM_WITH_CHAKRA=ON >/dev/null
cmake --build --preset release -j "$jobs"

# The CUDA kernel suite (validation/kernels) is compiled, never run, where nvcc exists, so CI
# catches a broken kernel without a GPU. Only its own targets are built (about a minute), before
# the main suite so that ctest's closing summary is the whole suite's.
build_kernels() {
  local nvcc=/usr/local/cuda/bin/nvcc
  [[ -x "$nvcc" ]] || { echo "setup: no $nvcc, kernel suite not built"; return 0; }
  cmake -S . -B build/kernels -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLUSTERSIM_BUILD_KERNELS=ON \
        -DCLUSTERSIM_BUILD_BENCH=OFF -DCMAKE_CUDA_COMPILER="$nvcc" >/dev/null
  cmake --build build/kernels --target kernels -j "$jobs"
  ctest --test-dir build/kernels -R '^kernels_host_test$' --output-on-failure
}

# The whole suite again with AddressSanitizer and UBSan (the `asan` preset: -O1, asserts on,
# -fno-sanitize-recover, so a sanitizer report fails its test), the fuzz corpus replays included.
# Built without MPI (an MPI library's own allocations are not ours to check), so test_mpi runs in
# the release suite only. Its executables link at a fixed address (-no-pie): as position-independent
# executables they carried 1.4 M relocations (33 MB) that each of the suite's hundreds of CLI
# processes applied at start (0.33 s against 0.19 s a process). Before the release suite, so that
# ctest's closing summary is the whole suite's. Both suites run two tests at a time, the longest first.
test_asan() {
  cmake --preset asan -DCLUSTERSIM_WITH_CHAKRA=ON >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs"
}

case "${1:-}" in
  run)  ./build/release/clustersim run scenarios/default.yaml ;;
  test) build_kernels; test_asan; ctest --preset release -j "$jobs" ;;
  "")   ;;
  *)    echo "setup: unknown action '$1' (valid: run, test)" >&2; exit 2 ;;
esac
