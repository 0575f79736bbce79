#pragma once
/// What one simulated training step produced.
#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::training {

/// Where the step's wall time went, on the critical (slowest) pipeline stage.
/// The parts add up to the step time.
struct StepBreakdown {
  double compute_s = 0;       ///< forward, backward and recompute kernels
  double exposed_tp_s = 0;    ///< tensor-parallel collectives not hidden behind compute
  double exposed_cp_s = 0;    ///< context-parallel exchanges not hidden
  double exposed_pp_s = 0;    ///< pipeline send/recv time the stage waited on
  double exposed_dp_s = 0;    ///< gradient reduction left after the last backward
  double bubble_s = 0;        ///< pipeline fill/drain idle time
  double optimizer_s = 0;     ///< optimizer step
};

/// Summary of one training step.
struct TrainingResult {
  double step_time_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     ///< model FLOPs (no recompute), whole job
  double hardware_flops_per_step = 0;  ///< FLOPs actually executed (with recompute), whole job
  double model_tflops_per_gpu = 0;     ///< model FLOPs / step time / GPUs, in TFLOP/s
  double hardware_tflops_per_gpu = 0;  ///< hardware FLOPs / step time / GPUs, in TFLOP/s
  double mfu = 0;                      ///< model TFLOP/s per GPU / peak (fraction)
  double hfu = 0;                      ///< hardware TFLOP/s per GPU / peak (fraction)
  double peak_tflops_per_gpu = 0;      ///< the peak MFU and HFU are measured against
  std::int64_t microbatches = 0;       ///< per pipeline
  int gpus = 0;
  StepBreakdown breakdown;
  std::uint64_t fingerprint = 0;       ///< engine event fingerprint
  std::uint64_t events = 0;            ///< events fired
  std::vector<std::string> notes;      ///< assumptions the run made (shown in reports)
};

}  // namespace clustersim::training
