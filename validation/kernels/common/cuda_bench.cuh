#pragma once
// CUDA-side helpers shared by the suite's benchmarks: error checks, event timing of repeated
// executions, device metadata, and the common main() wrapper that writes the calibration CSV.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "calibration_csv.hpp"
#include "timing_stats.hpp"

namespace clustersim::kernels {

/// Raised when no CUDA device can be used; main() prints it and exits with status 2.
class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws std::runtime_error with `what` and the CUDA error string when `status` is an error.
void check_cuda(cudaError_t status, const char* what);
/// Throws std::runtime_error with `what` and the cuBLAS status when `status` is an error.
void check_cublas(cublasStatus_t status, const char* what);

/// Throws NoDeviceError("no CUDA device found ...") when the runtime sees no device.
void require_cuda_device();

/// Times `launch` (which enqueues one op execution on `stream`) with CUDA events: `warmup`
/// untimed executions, then `repeats` timed ones. Returns one sample per repeat, seconds.
std::vector<double> time_repeats(const std::function<void()>& launch, int warmup, int repeats,
                                 cudaStream_t stream);

/// time_repeats followed by summarize().
TimingSummary time_op(const std::function<void()>& launch, int warmup, int repeats,
                      cudaStream_t stream);

/// Name, SM count, L2 size and memory of the current device.
struct DeviceInfo {
  std::string name;
  int sm_count = 0;
  int compute_capability = 0;  ///< major * 10 + minor, e.g. 90
  std::size_t l2_bytes = 0;
  std::size_t global_memory_bytes = 0;
};
/// Queries the current device.
DeviceInfo current_device_info();

/// Runs a benchmark: parses the arguments, checks for a device, calls `measure` with the
/// arguments and the default row source ("validation/kernels/<tool> <date>"), then writes the
/// calibration CSV (metadata from --meta plus `cuda` and `tool`). Returns the process exit
/// status: 0 on success, 1 on errors, 2 when no CUDA device was found, 64 on bad arguments.
int run_benchmark(int argc, char** argv, const std::string& tool,
                  const std::function<std::vector<CalibrationRow>(const BenchArgs&,
                                                                  const std::string& source)>&
                      measure);

}  // namespace clustersim::kernels
