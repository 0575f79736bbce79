#include "models/accelerator/attention_cost.hpp"

#include <algorithm>
#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

AttentionScoreCost attention_score_cost(const AcceleratorSpec& spec, AttentionKernelFamily family,
                                        std::int64_t head_dim, Dtype dtype, bool backward) {
  if (head_dim <= 0) {
    throw ConfigError("attention dimension head_dim must be positive, got " + std::to_string(head_dim));
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
  if (needs_warpgroup_mma(family) && !needs_warpgroup_mma(spec.attention_kernel)) {
    throw ConfigError("accelerator '" + spec.name + "' runs fused attention as fa2 (preset attention.kernel); " +
                      std::string(attention_kernel_family_name(family)) +
                      " needs asynchronous warpgroup MMA (Hopper and later)");
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
  const double softmax_s = std::max(cost.exp_s, cost.fp32_s);
  // fa2 and cudnn: the softmax after the matmuls. fa3: the longer of the two, plus the part
  // of the shorter one the kernel does not hide.
  const double combined_s =
      family != AttentionKernelFamily::fa3
          ? cost.matmul_s + softmax_s
          : std::max(cost.matmul_s, softmax_s) +
                (1.0 - spec.attention_softmax_overlap) * std::min(cost.matmul_s, softmax_s);
  cost.matmul_bound = cost.matmul_s >= softmax_s;
  cost.time_s = backward ? kAttentionBackwardFlopsRatio * combined_s / kAttentionBackwardRateRatio : combined_s;
  return cost;
}

}  // namespace clustersim::models
