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
/// Exponentials per score element of the forward.
inline constexpr double kAttentionExpPerScore = 1.0;
/// Matrix FLOPs per score element and head-dimension unit of the forward: 4 (QK^T and PV, 2 each).
inline constexpr double kAttentionForwardMatmulFlopsPerScoreDim = 4.0;
/// Backward FLOPs / forward FLOPs of attention: FlashAttention-2's backward runs 5 matmuls
/// (S = QK^T recomputed, dV, dP, dQ, dK) against the forward's 2, i.e. 2.5x.
inline constexpr double kAttentionBackwardFlopsRatio = 2.5;
/// Backward FLOP rate / forward FLOP rate of a fused attention kernel on the same shape:
/// FlashAttention-2 reaches up to 73 % of A100 peak forward and 63 % backward (Dao,
/// arXiv:2307.08691, abstract): 0.63 / 0.73 = 0.863. Checked out of sample on H100 SXM5 (the
/// FlashAttention-3 paper's Figures 5 and 6, head dim 128, non-causal, 8k-16k tokens): FA2
/// 0.86-0.87, cuDNN 0.86-0.87, FA3 0.87 (validation/data/attention-*). The backward of a score
/// element therefore costs 2.5 / 0.863 = 2.9 forward elements: its three more GEMMs, its
/// recomputed softmax and what the element count leaves out (the fp32 dQ accumulation,
/// D = rowsum(dO x O), more shared-memory traffic per FLOP) together.
inline constexpr double kAttentionBackwardRateRatio = 0.63 / 0.73;

/// Tile side of a fused attention kernel, query rows and key columns: each thread block
/// (CTA) owns one tile of query rows and walks the key tiles (the backward walks the
/// transposed way; the count of tile pairs is the same). 128 x 128 is FlashAttention-3's
/// forward tile at head dim 128 (Shah et al., arXiv:2407.08608, sec. 4); FA2 and cuDNN use
/// 128-row tiles with 64-128 keys (ESTIMATE: one size for every family).
inline constexpr std::int64_t kAttentionTile = 128;
/// Fixed work of one CTA in key tiles: loading its query tile, filling the load pipeline,
/// normalising and storing its output tile. ESTIMATE from the forward's rise with sequence
/// length at a constant token count (FA3 paper Figure 5, head dim 128, non-causal: 467, 565,
/// 625, 638, 646, 648 TFLOP/s from 512 to 16k keys fit n / (n + 1) for n key tiles within 2 %
/// from 1k; FA2's curve points to about half a tile).
inline constexpr double kAttentionCtaOverheadTiles = 1.0;

/// Time of one score element (one query-key pair of one head) of a fused attention kernel,
/// seconds, and its parts. Each part is the work of one element divided by the whole chip's
/// rate for it.
struct AttentionScoreCost {
  double matmul_s = 0;     ///< forward matmul FLOPs / (peak x matmul efficiency x MMA-path fraction)
  double exp_s = 0;        ///< forward exponentials / special-function rate
  double fp32_s = 0;       ///< forward fp32 operations / (vector_flops_per_s / 2): one FMA slot each
  /// The family's combination of the three forward parts; backward: that x 2.5 (FLOPs) /
  /// kAttentionBackwardRateRatio.
  double time_s = 0;
  bool matmul_bound = false;  ///< the matmul part sets the time (fa3) or exceeds the softmax (fa2)
};

/// Per-score-element cost of a fused attention kernel of `family` on `spec` for `head_dim`
/// and `dtype`, forward or backward (see AttentionKernelFamily and the constants above). The
/// parts are the forward's in both directions.
/// fa2 uses spec.warp_mma_fraction of the matrix peak, fa3 and cudnn the full peak; all scale
/// it by spec.matmul_efficiency_for(dtype). fa3 hides spec.attention_softmax_overlap of the
/// shorter of matmul and softmax under the longer; fa2 and cudnn add them. Throws ConfigError
/// (naming the accelerator) when the spec has no special-function rate or no vector peak, for
/// head_dim <= 0, and for fa3 or cudnn on an accelerator whose attention_kernel is fa2 (the
/// preset names a family the chip runs; warpgroup MMA is Hopper and later).
AttentionScoreCost attention_score_cost(const AcceleratorSpec& spec, AttentionKernelFamily family,
                                        std::int64_t head_dim, Dtype dtype, bool backward);

}  // namespace clustersim::models
