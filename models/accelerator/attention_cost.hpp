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

/// FMA-pipe operations of one exponential emulated in software by FlashAttention-4 (Zadouri et
/// al., arXiv:2603.05451, sec. 3): Cody-Waite range reduction (a floor and a subtraction) and a
/// degree-3 polynomial by Horner's rule (3 FMAs); the exponent is inserted by an integer add on
/// another pipe. ESTIMATE from that description (5 slots, no instruction count is published).
inline constexpr double kEmulatedExpFmaOps = 5.0;

/// Fraction of the exponentials FlashAttention-4 emulates on the FMA pipe so that the
/// special-function unit (MUFU, `exp_rate` results/s) and the FMA pipe (`fma_rate` ops/s, which
/// also carries `fp32_ops` operations per score element) finish together:
/// f = (fma_rate - exp_rate x fp32_ops) / (fma_rate + exp_rate x kEmulatedExpFmaOps), clamped
/// to [0, 1] (0 when the FMA pipe is already the longer one). The softmax then takes
/// (1 - f) / exp_rate per element.
double emulated_exp_fraction(double exp_rate, double fma_rate, double fp32_ops);

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
/// fa2 uses spec.warp_mma_fraction of the matrix peak, the others the full peak; all scale it
/// by spec.matmul_efficiency_for(dtype). Serial families (fa2; cudnn on mma_sync and wgmma)
/// add matmul and softmax; the overlapping ones (fa3; cudnn on tcgen05; fa4, fused_sdpa,
/// pallas) hide spec.attention_softmax_overlap of the shorter of the two under the longer.
/// fa4's softmax is (1 - f) / exp rate with f = emulated_exp_fraction() (its exp_s part stays
/// the MUFU-only time, for reports). Throws ConfigError (naming the accelerator) when the
/// family does not run on spec.matrix_path (listing the families that do), when the
/// spec has no special-function rate or no vector peak, and for head_dim <= 0.
AttentionScoreCost attention_score_cost(const AcceleratorSpec& spec, AttentionKernelFamily family,
                                        std::int64_t head_dim, Dtype dtype, bool backward);

}  // namespace clustersim::models
