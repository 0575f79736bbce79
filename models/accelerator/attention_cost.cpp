#include "models/accelerator/attention_cost.hpp"

#include <algorithm>
#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

double emulated_exp_fraction(double exp_rate, double fma_rate, double fp32_ops) {
  if (!(exp_rate > 0) || !(fma_rate > 0)) return 0.0;
  const double fraction = (fma_rate - exp_rate * fp32_ops) / (fma_rate + exp_rate * kEmulatedExpFmaOps);
  return std::clamp(fraction, 0.0, 1.0);
}

AttentionScoreCost attention_score_cost(const AcceleratorSpec& spec, AttentionKernelFamily family,
                                        std::int64_t head_dim, Dtype dtype, bool backward) {
  if (head_dim <= 0) {
    throw ConfigError("attention dimension head_dim must be positive, got " + std::to_string(head_dim));
  }
  if (!runs_on(family, spec.matrix_path)) {
    throw ConfigError("attention kernel family " + std::string(attention_kernel_family_name(family)) +
                      " does not run on accelerator '" + spec.name + "' (matrix path " +
                      std::string(matrix_path_name(spec.matrix_path)) +
                      "); families that run there: " + families_on_text(spec.matrix_path));
  }
  if (!(spec.special_function_ops_per_s > 0)) {
    throw ConfigError("accelerator '" + spec.name +
                      "' gives no special-function (exp) rate (preset attention.special_function); the "
                      "fused-attention model needs it (or use workload.attention: unfused)");
  }
  if (!(spec.vector_flops_per_s > 0)) {
    throw ConfigError("accelerator '" + spec.name +
                      "' gives no vector fp32 peak (vector_fp32); the fused-attention model needs it");
  }
  const double matmul_flops = kAttentionForwardMatmulFlopsPerScoreDim * static_cast<double>(head_dim);
  const double fp32_ops = kAttentionForwardFp32OpsPerScore;
  const double path_fraction = family == AttentionKernelFamily::fa2 ? spec.warp_mma_fraction : 1.0;
  const double matmul_rate = spec.peak_for(dtype) * spec.matmul_efficiency_for(dtype) * path_fraction;

  AttentionScoreCost cost;
  cost.matmul_s = matmul_flops / matmul_rate;
  cost.exp_s = kAttentionExpPerScore / spec.special_function_ops_per_s;
  // vector_flops_per_s counts an FMA as two FLOPs; each softmax operation takes one FMA slot.
  cost.fp32_s = fp32_ops / (spec.vector_flops_per_s / 2.0);
  double softmax_s = std::max(cost.exp_s, cost.fp32_s);
  if (family == AttentionKernelFamily::fa4) {
    const double fma_rate = spec.vector_flops_per_s / 2.0;
    const double emulated = emulated_exp_fraction(spec.special_function_ops_per_s, fma_rate, fp32_ops);
    softmax_s = std::max((1.0 - emulated) * cost.exp_s, (fp32_ops + emulated * kEmulatedExpFmaOps) / fma_rate);
  }
  // Serial families: the softmax after the matmuls. Overlapping ones: the longer of the two,
  // plus the part of the shorter one the kernel does not hide.
  const double combined_s =
      !overlaps_softmax(family, spec.matrix_path)
          ? cost.matmul_s + softmax_s
             : std::max(cost.matmul_s, softmax_s) +
                   (1.0 - spec.attention_softmax_overlap) * std::min(cost.matmul_s, softmax_s);
  cost.matmul_bound = cost.matmul_s >= softmax_s;
  cost.time_s = backward ? kAttentionBackwardFlopsRatio * combined_s / kAttentionBackwardRateRatio : combined_s;
  return cost;
}

}  // namespace clustersim::models
