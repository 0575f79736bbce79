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

/// A device scratch buffer of max(256 MiB, 4 x L2) bytes whose zeroing evicts the L2 cache:
/// the "cold cache" of decode kernels, whose weights or KV cache a decode step streams from HBM
/// once per layer (what triton.testing.do_bench does with its 256 MB buffer).
class L2Flush {
 public:
  explicit L2Flush(std::size_t l2_bytes);
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  /// Enqueues cudaMemsetAsync of the whole buffer on `stream`.
  void enqueue(cudaStream_t stream) const;
  std::size_t bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Like time_repeats, for short kernels with cold operands: `warmup` untimed executions, then
/// per repeat the flush (untimed), a start event, one execution and a stop event, with no host
/// synchronization until the last repeat. The flush evicts L2 and keeps the GPU busy while the
/// host enqueues the op, so the host's launch latency is not timed (time_repeats times it: its
/// start event fires while the host is still launching). Returns seconds per repeat.
std::vector<double> time_repeats_cold(const std::function<void()>& launch, int warmup, int repeats,
                                      cudaStream_t stream, const L2Flush& flush);

/// time_repeats_cold followed by summarize().
TimingSummary time_op_cold(const std::function<void()>& launch, int warmup, int repeats,
                           cudaStream_t stream, const L2Flush& flush);

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
/// calibration CSV (metadata from --meta plus `cuda`, `tool` and, for a shape set other than
/// "default", `shapes`). Returns the process exit status: 0 on success, 1 on errors, 2 when no
/// CUDA device was found, 64 on bad arguments (also a --shapes set not in `shape_sets`).
int run_benchmark(int argc, char** argv, const std::string& tool,
                  const std::function<std::vector<CalibrationRow>(const BenchArgs&,
                                                                  const std::string& source)>&
                      measure,
                  const std::vector<std::string>& shape_sets = {"default"});

}  // namespace clustersim::kernels
