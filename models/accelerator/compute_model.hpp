#pragma once
/// Time of compute ops on one accelerator: roofline with tile and wave quantization for
/// GEMMs, FlashAttention-style counts for attention, bandwidth-bound elementwise ops.
///
/// Every estimate states its provenance. In order of preference it comes from
///   1. a measured calibration table for the accelerator (MeasuredTable: log-space
///      interpolation of measured / reference time, reference = the fit (2) or else the
///      roofline (3); only inside the measured range and near a measured point),
///   2. a least-squares fit over the measured points (LinearTimeFit, per op kind and dtype),
///   3. the analytical roofline below.
/// Roofline:
///   GEMM: the cheapest kernel configuration of gemm_schedule.hpp (tile shape, waves or
///         stream-K; max(main-loop math, operand traffic) + exposed epilogue store), at
///         matmul_efficiency_for(dtype), + kernel_launch_s;
///   attention: max(score elements x attention_score_cost() (the kernel family's physics:
///         matrix path, exponentials, fp32 softmax operations), bytes / HBM);
///   bandwidth ops: max(bytes / serving bandwidth, flops / vector peak) + kernel_launch_s,
///         where the serving level is L2 when the op's working set (bytes read + written)
///         fits in L2 and the preset gives an L2 bandwidth (MemoryHierarchy reuse rule), else
///         HBM at hbm_bytes_per_s x memory_efficiency.
#include <cstdint>
#include <string>
#include <string_view>

#include <map>
#include <unordered_map>
#include <optional>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/attention_cost.hpp"
#include "models/accelerator/calibration_table.hpp"
#include "models/accelerator/fitted_model.hpp"
#include "models/accelerator/gemm_schedule.hpp"
#include "models/accelerator/measured_table.hpp"
#include "models/accelerator/op_class.hpp"
#include "models/accelerator/provenance.hpp"
#include "models/memory/memory_hierarchy.hpp"

namespace clustersim::models {

/// Result of estimating one op.
struct OpEstimate {
  double time_s = 0;      ///< wall time of the op including launch overhead
  double flops = 0;       ///< floating-point operations the op performs
  double bytes = 0;       ///< bytes moved to/from HBM
  bool compute_bound = false;
  Provenance provenance = Provenance::roofline;  ///< never collective_model
};

/// Fused attention (FlashAttention-style): no s x s matrix in HBM. `unfused` describes the
/// pre-FlashAttention path (score GEMM, softmax over s x s in HBM, context GEMM).
struct AttentionShape {
  std::int64_t batch = 1;        ///< sequences
  std::int64_t q_heads = 1;      ///< query heads on this device
  std::int64_t kv_heads = 1;     ///< key/value heads on this device (GQA when < q_heads)
  std::int64_t seq_q = 0;        ///< query length
  std::int64_t seq_kv = 0;       ///< key length
  std::int64_t head_dim = 0;
  bool causal = true;
  bool backward = false;         ///< the backward pass (dQ, dK, dV)
  bool fused = true;             ///< FlashAttention-style kernel
  Dtype dtype = Dtype::bf16;
  /// Fused-kernel family; unset: the accelerator's default (AcceleratorSpec::attention_kernel).
  std::optional<AttentionKernelFamily> kernel{};
  /// > 0: MLA's absorbed decode attention over the shared latent cache (FlashMLA): K is the
  /// cached latent and RoPE key of `head_dim` elements per token (one, kv_heads 1), V its first
  /// `latent_value_dim` elements; costed by ComputeModel::latent_attention.
  std::int64_t latent_value_dim = 0;
};

/// FlashMLA, DeepSeek's MLA decode kernel (deepseek-ai/FlashMLA README, release of 2025-04-22):
/// "up to 3000 GB/s in memory-bound configuration and 660 TFLOPS in computation-bound
/// configuration on H800 SXM5, using CUDA 12.8". H800 SXM5: H100 SXM's 989.4 TFLOP/s dense bf16
/// and 3.35 TB/s HBM3. The fractions of those peaks latent_attention runs at on every part.
inline constexpr double kFlashMlaComputeFraction = 660.0 / 989.4;
inline constexpr double kFlashMlaMemoryFraction = 3000.0 / 3350.0;

/// A memory-bound op that reads and writes the given bytes and does `flops` vector math.
struct ElementwiseShape {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
};

/// Layer norm (or RMSNorm) over `rows` vectors of `hidden` elements: reads x and the weights,
/// writes y and the fp32 mean and reciprocal standard deviation per row (kept for backward).
/// Bytes = rows x hidden x (dtype_bytes + output_dtype_bytes) + 2 hidden dtype_bytes +
/// 8 rows; vector flops = 8 per element.
struct LayerNormShape {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  Dtype dtype = Dtype::bf16;
};

/// Row softmax over a [rows, cols] matrix: bytes = rows x cols x (dtype_bytes +
/// output_dtype_bytes); vector flops = 5 per element (max, subtract, exp, sum, divide).
struct SoftmaxShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  Dtype dtype = Dtype::bf16;
};

/// Gather of `tokens` embedding rows of `hidden` elements: bytes = tokens x hidden x
/// (dtype_bytes + output_dtype_bytes) + 8 tokens (int64 indices).
struct EmbeddingShape {
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  Dtype dtype = Dtype::bf16;
};

/// Fused optimizer step over `parameters` parameters. The defaults describe mixed-precision
/// Adam: read fp32 master weight, fp32 gradient, fp32 m and v (16 B); write master, m, v
/// (12 B) and the bf16 model copy (2 B) = 30 B per parameter; about 12 vector flops.
struct OptimizerShape {
  double parameters = 0;
  double bytes_per_parameter = 30;
  double flops_per_parameter = 12;
};

/// Query-key pairs the attention actually evaluates per (sequence, head).
/// Non-causal: seq_q x seq_kv. Causal (queries aligned to the end of the keys, as in
/// FlashAttention): seq_q x (seq_kv - seq_q) + seq_q^2 / 2, i.e. exactly half when
/// seq_q == seq_kv (the FlashAttention benchmark convention; the diagonal is not counted
/// separately). Throws ConfigError for non-positive lengths or causal seq_q > seq_kv.
double attention_score_pairs(const AttentionShape& shape);

/// FLOPs of the attention math (QK^T and PV and, for backward, their gradients), independent
/// of fusion: forward 4 x batch x q_heads x pairs x head_dim, backward 2.5x that.
/// GQA (kv_heads < q_heads) does not change it. Throws ConfigError on an invalid shape.
double attention_flops(const AttentionShape& shape);

/// Score elements a fused attention kernel spends time on per (sequence, head): it works in
/// kAttentionTile x kAttentionTile tiles (attention_cost.hpp), so a causal kernel evaluates the
/// diagonal tiles whole, and each query tile (one CTA) pays kAttentionCtaOverheadTiles key
/// tiles of fixed work. For query tile i with r_i rows, reaching key tile k_i (all of them
/// non-causal; causal: the tile holding its last row's last visible key, queries aligned to
/// the end of the keys): sum_i r_i x kAttentionTile x (k_i + kAttentionCtaOverheadTiles).
/// At least attention_score_pairs(). Throws like attention_score_pairs().
double attention_tile_elements(const AttentionShape& shape);

/// Compute model for one accelerator: measured table, fitted model, roofline (see top).
class ComputeModel {
 public:
  /// Validates the spec (positive bandwidths, compute units, tile sizes; efficiencies in
  /// (0, 1]); throws ConfigError naming the accelerator and the field. Roofline only.
  explicit ComputeModel(AcceleratorSpec spec);

  /// Same, calibrated by the rows of `calibration` whose accelerator is spec.name (others are
  /// ignored; layer_fwd/layer_bwd rows are not used). Builds the MeasuredTable and one
  /// LinearTimeFit per fit group. Every fit scales the roofline (fitted_model.hpp):
  /// time = kernel_launch_s + c x (roofline - kernel_launch_s) + overhead.
  /// Groups: "gemm" pools gemm and batched_gemm of every dtype, with one scale c per dtype
  /// and a shared extra overhead (the shape terms are physical, only the achievable
  /// fraction differs by format, so a dtype with one or two points still gets the overhead
  /// its siblings show); attention per dtype and direction; each bandwidth op class on its
  /// own, and a pooled "streaming" group (hbm_read/write/copy/triad, memcpy, elementwise) that
  /// bandwidth classes without points of their own (other than l2_read) fall back to.
  ComputeModel(AcceleratorSpec spec, const CalibrationTable& calibration);

  /// Best available estimate for a kernel: measured(), else fitted(), else roofline().
  /// Throws ConfigError for an invalid shape or a layer_fwd/layer_bwd op (not costed here).
  OpEstimate estimate(const KernelShape& shape) const;
  /// Interpolated measured-table estimate, or nullopt when the table does not apply.
  std::optional<OpEstimate> measured(const KernelShape& shape) const;
  /// Fitted-model estimate, or nullopt when no fit exists for the op's group.
  std::optional<OpEstimate> fitted(const KernelShape& shape) const;
  /// Pure analytical roofline (matrix ops as gemm()/attention() describe; bandwidth ops:
  /// max(bytes / memory_bytes_per_s(op, bytes), flops / vector peak) + launch).
  OpEstimate roofline(const KernelShape& shape) const;
  /// Bandwidth a bandwidth-bound op of class `op` moving `bytes` (read + written) sees,
  /// bytes/s: l2_bytes_per_s when its working set fits in L2 (MemoryHierarchy reuse rule;
  /// needs l2_bytes and l2_bytes_per_s), else hbm_bytes_per_s x memory_efficiency.
  /// hbm_read/write/copy/triad are HBM by definition and l2_read is L2 by definition (HBM
  /// figures when the preset gives no L2 bandwidth).
  double memory_bytes_per_s(OpClass op, double bytes) const;
  /// Calibration points of this accelerator in use.
  std::size_t calibration_point_count() const { return measured_points_; }
  /// The fit of each group ("gemm", "attention/bf16/fwd", "bandwidth/hbm_copy",
  /// "bandwidth/streaming", ...), for reports. The "gemm" fit has one coefficient per Dtype
  /// (enum order), then the overhead.
  const std::map<std::string, LinearTimeFit>& fits() const { return fits_; }

  /// Batched GEMM. flops = 2 m n k batch; bytes = A and B once and C (see GemmShape).
  /// Roofline: gemm_schedule() + kernel_launch_s. An accumulating GEMM
  /// (shape.accumulate_bytes > 0) adds, to whichever estimate the plain GEMM gets, the extra
  /// epilogue traffic m n batch (2 accumulate_bytes - output_dtype_bytes) at the HBM rate: the
  /// epilogue runs after the k-loop (gemm_schedule.hpp), so it is not hidden by the math.
  /// An fp8 GEMM with shape.split_accumulation on an accelerator with an
  /// fp8_promotion_interval I adds m n batch ceil(k / I) fp32 adds on the vector cores
  /// (vector_flops_per_s / 2 adds per second: the vector peak counts an FMA as two FLOPs),
  /// serialised with the MMAs of the tile they drain. Throws ConfigError naming a non-positive
  /// dimension or a dtype the accelerator lacks.
  OpEstimate gemm(const GemmShape& shape) const;

  /// The kernel configuration the roofline picks for `shape` and its cost terms (without the
  /// launch). Throws like gemm().
  GemmSchedule gemm_schedule(const GemmShape& shape) const;

  /// Attention, forward or backward.
  /// Fused (FlashAttention-style): flops from attention_flops(); compute time = evaluated
  /// score elements (batch x q_heads x attention_tile_elements()) x attention_score_cost() of
  /// the shape's kernel family (else the accelerator's); bytes = Q, K, V read and O
  /// written once plus the fp32 log-sum-exp per query row (forward); backward reads Q, K, V,
  /// O, dO, LSE and writes dQ, dK, dV. K and V are sized by kv_heads. Throws ConfigError when
  /// the accelerator lacks the rates the family's model needs. Not modelled: wave
  /// quantization over query blocks, the masking work and load imbalance of causal kernels
  /// beyond their whole diagonal tiles, the backward's separate dQ-conversion and
  /// rowsum(dO x O) passes (inside kAttentionBackwardRateRatio).
  /// Unfused (Megatron before FlashAttention): gemm() for QK^T ([seq_q x head_dim] x
  /// [head_dim x seq_kv] per q head) and PV, plus elementwise passes over the
  /// batch x q_heads x seq_q x seq_kv score matrix stored in the output format
  /// (output_dtype_bytes): forward = fused scale+mask+softmax (Megatron's
  /// FusedScaleMaskSoftmax, default since 2020), dropout (each read + write once; dropout
  /// also writes its 1-byte mask); backward = 4 GEMMs (dV, dP, dQ, dK) and dropout-grad
  /// (read the gradient and the mask, write), fused softmax-grad
  /// with the scale folded in (read P and dP, write dS). Causal masking is applied
  /// elementwise, so the GEMMs compute the full matrices; K/V are expanded to q_heads
  /// (repeat_kv) so GQA does not save unfused traffic.
  OpEstimate attention(const AttentionShape& shape) const;

  /// MLA's absorbed decode attention (shape.latent_value_dim > 0): per sequence the latent cache
  /// is read once for all heads (seq_kv x head_dim elements in `dtype`), Q read and O written
  /// per head; FLOPs 2 x batch x q_heads x seq_q x seq_kv x (head_dim + latent_value_dim);
  /// time = max(FLOPs / (bf16 peak x kFlashMlaComputeFraction), bytes / (HBM x
  /// kFlashMlaMemoryFraction)) + launch. Roofline provenance: no table covers it.
  OpEstimate latent_attention(const AttentionShape& shape) const;

  /// time = max((read + written) / memory_bytes_per_s(elementwise, read + written),
  ///            flops / vector_flops_per_s) + kernel_launch_s. Throws ConfigError on negative
  /// or non-finite inputs, or flops > 0 on an accelerator without a vector peak.
  OpEstimate elementwise(const ElementwiseShape& shape) const;

  /// Layer norm; calibrated by op class "layernorm" (see LayerNormShape for bytes).
  OpEstimate layernorm(const LayerNormShape& shape) const;
  /// Softmax; op class "softmax".
  OpEstimate softmax(const SoftmaxShape& shape) const;
  /// Embedding gather; op class "embedding".
  OpEstimate embedding(const EmbeddingShape& shape) const;
  /// Optimizer step; op class "optimizer".
  OpEstimate optimizer_step(const OptimizerShape& shape) const;
  /// Device-to-device copy of `bytes_copied` bytes (moves 2 x bytes_copied); op "memcpy".
  OpEstimate memcpy(double bytes_copied) const;

  const AcceleratorSpec& spec() const { return spec_; }

 private:
  OpEstimate fused_attention(const AttentionShape& shape) const;
  OpEstimate unfused_attention(const AttentionShape& shape) const;
  OpEstimate gemm_roofline(const GemmShape& shape) const;
  OpEstimate gemm_uncached(const GemmShape& shape) const;
  OpEstimate bandwidth_roofline(OpClass op, double bytes, double flops) const;
  /// Fit features of a kernel (see fitted_model.hpp).
  std::vector<double> fit_features(const KernelShape& shape) const;
  /// Fit group name of a kernel, and the fallback group ("" if none).
  std::string fit_group(const KernelShape& shape) const;
  OpEstimate bandwidth_op(OpClass op, double bytes, double flops) const;
  /// What the table's ratios are relative to: fitted() where a fit exists, else roofline().
  double reference_time_s(const KernelShape& shape) const;

  /// A GEMM shape as the memo key: every field of GemmShape.
  struct GemmKey {
    std::int64_t m, n, k, batch;
    int dtype;
    double accumulate_bytes;
    bool split_accumulation;
    double weight_bytes;
    bool operator==(const GemmKey&) const = default;
  };
  struct GemmKeyHash {
    std::size_t operator()(const GemmKey& key) const;
  };

  AcceleratorSpec spec_;
  /// gemm() results by shape: a training step costs the same few shapes for every layer and
  /// every candidate of a search. Never iterated. This makes ComputeModel, like
  /// CollectiveModel, one per simulation or thread.
  mutable std::unordered_map<GemmKey, OpEstimate, GemmKeyHash> gemm_memo_;
  /// HBM and, when the preset gives both its size and bandwidth, L2 (for the reuse rule).
  std::optional<MemoryHierarchy> memory_;
  MeasuredTable table_;
  std::map<std::string, LinearTimeFit> fits_;
  std::size_t measured_points_ = 0;
};

}  // namespace clustersim::models
