#pragma once
/// The physics of a fused (FlashAttention-style) attention kernel: time per score element
/// from the accelerator's own instruction throughputs (matrix unit, special-function unit,
/// fp32 vector units) and the kernel family's overlap of softmax with the matrix math.
/// See docs/models.md ("Fused attention") for the derivation and every assumption.
#include <cstdint>
#include <string_view>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/attention_kernel_family.hpp"
#include "models/accelerator/dtype.hpp"

namespace clustersim::models {

/// Forward non-matmul fp32 operations per score element: row max, the scaled subtraction
/// (one FFMA folding the softmax scale into exp2's argument), row sum, and the bf16 packing
/// of P together with the amortised rescale of the output accumulator (about one).
inline constexpr double kAttentionForwardFp32OpsPerScore = 4.0;
/// Backward non-matmul fp32 operations per score element: the scaled subtraction of the
/// saved log-sum-exp, dS = P x (dP - D) (a subtraction and a multiplication), and the bf16
/// packing of P and dS (half an operation each).
inline constexpr double kAttentionBackwardFp32OpsPerScore = 4.0;
/// Exponentials per score element: one in the forward, one recomputed in the backward.
inline constexpr double kAttentionExpPerScore = 1.0;
/// Matrix FLOPs per score element and head-dimension unit: forward 4 (QK^T and PV, 2 each),
/// backward 10 (S recomputed, dV, dP, dQ, dK), i.e. 2.5x.
inline constexpr double kAttentionForwardMatmulFlopsPerScoreDim = 4.0;
/// Backward FLOPs / forward FLOPs of attention: FlashAttention-2's backward runs 5 matmuls
/// (S = QK^T recomputed, dV, dP, dQ, dK) against the forward's 2, i.e. 2.5x.
inline constexpr double kAttentionBackwardFlopsRatio = 2.5;
/// Backward pipeline efficiency relative to the forward's per-element model: FlashAttention-2
/// reaches up to 73 % of A100 peak forward and 63 % backward (Dao, arXiv:2307.08691,
/// abstract): 0.63 / 0.73 = 0.863. It stands for the backward work the per-element count
/// leaves out (the fp32 dQ accumulation through L2, D = rowsum(dO x O), more shared-memory
/// traffic per FLOP) and is taken to hold for every family (assumption).
inline constexpr double kAttentionBackwardPipelineEfficiency = 0.63 / 0.73;

/// Time of one score element (one query-key pair of one head) of a fused attention kernel,
/// seconds, and its parts. Each part is the work of one element divided by the whole chip's
/// rate for it.
struct AttentionScoreCost {
  double matmul_s = 0;     ///< matmul FLOPs / (peak x matmul efficiency x MMA-path fraction)
  double exp_s = 0;        ///< exponentials / special-function rate
  double fp32_s = 0;       ///< fp32 operations / (vector_flops_per_s / 2): one FMA slot each
  double time_s = 0;       ///< the family's combination, / backward pipeline efficiency
  bool matmul_bound = false;  ///< the matmul part sets the time (fa3) or exceeds the softmax (fa2)
};

/// Per-score-element cost of a fused attention kernel of `family` on `spec` for `head_dim`
/// and `dtype`, forward or backward (see AttentionKernelFamily and the constants above).
/// fa2 uses spec.warp_mma_fraction of the matrix peak, fa3 the full peak; both scale it by
/// spec.matmul_efficiency_for(dtype). fa3 hides spec.attention_softmax_overlap of the shorter
/// of matmul and softmax under the longer. Throws ConfigError (naming the accelerator) when the
/// spec has no special-function rate or no vector peak, for head_dim <= 0, and for fa3 on
/// an accelerator whose attention_kernel is fa2 (the preset names the most capable family
/// the chip runs; FA3-style overlap needs asynchronous warpgroup MMA).
AttentionScoreCost attention_score_cost(const AcceleratorSpec& spec, AttentionKernelFamily family,
                                        std::int64_t head_dim, Dtype dtype, bool backward);

}  // namespace clustersim::models
