#include "models/accelerator/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::models {

namespace {

void require_positive(std::int64_t value, const char* op, const char* dimension) {
  if (value <= 0) {
    throw ConfigError(std::string(op) + " dimension " + dimension + " must be positive, got " +
                      std::to_string(value));
  }
}

void require_spec(bool ok, const AcceleratorSpec& spec, const std::string& what) {
  if (!ok) throw ConfigError("accelerator '" + spec.name + "': " + what);
}

void require_attention_shape(const AttentionShape& shape) {
  require_positive(shape.batch, "attention", "batch");
  require_positive(shape.q_heads, "attention", "q_heads");
  require_positive(shape.kv_heads, "attention", "kv_heads");
  require_positive(shape.seq_q, "attention", "seq_q");
  require_positive(shape.seq_kv, "attention", "seq_kv");
  require_positive(shape.head_dim, "attention", "head_dim");
  if (shape.q_heads % shape.kv_heads != 0) {
    throw ConfigError("attention q_heads (" + std::to_string(shape.q_heads) +
                      ") must be a multiple of kv_heads (" + std::to_string(shape.kv_heads) + ")");
  }
  if (shape.causal && shape.seq_q > shape.seq_kv) {
    throw ConfigError("causal attention needs seq_q <= seq_kv, got seq_q " +
                      std::to_string(shape.seq_q) + " > seq_kv " + std::to_string(shape.seq_kv));
  }
}


AttentionShape to_attention_shape(const KernelShape& shape) {
  AttentionShape attention;
  attention.batch = shape.batch;
  attention.q_heads = shape.heads;
  attention.kv_heads = shape.kv_heads > 0 ? shape.kv_heads : shape.heads;
  attention.seq_q = shape.seq_q;
  attention.seq_kv = shape.seq_kv > 0 ? shape.seq_kv : shape.seq_q;
  attention.head_dim = shape.head_dim;
  attention.causal = shape.causal;
  attention.backward = shape.backward;
  attention.fused = true;
  attention.dtype = shape.dtype;
  attention.kernel = shape.attention_kernel;
  return attention;
}

GemmShape to_gemm_shape(const KernelShape& shape) {
  GemmShape gemm;
  gemm.m = shape.m;
  gemm.n = shape.n;
  gemm.k = shape.k;
  gemm.batch = shape.batch;
  gemm.dtype = shape.dtype;
  return gemm;
}

/// Sums the estimates of an op made of several kernels run back to back.
void accumulate(OpEstimate& total, const OpEstimate& part, double& compute_bound_time_s) {
  total.time_s += part.time_s;
  total.flops += part.flops;
  total.bytes += part.bytes;
  total.provenance = least_trusted(total.provenance, part.provenance);
  if (part.compute_bound) compute_bound_time_s += part.time_s;
}

}  // namespace

double attention_score_pairs(const AttentionShape& shape) {
  require_attention_shape(shape);
  const double seq_q = static_cast<double>(shape.seq_q);
  const double seq_kv = static_cast<double>(shape.seq_kv);
  if (!shape.causal) return seq_q * seq_kv;
  return seq_q * (seq_kv - seq_q) + seq_q * seq_q / 2.0;
}

double attention_tile_elements(const AttentionShape& shape) {
  attention_score_pairs(shape);  // validates
  const std::int64_t tile = kAttentionTile;
  const std::int64_t q_tiles = (shape.seq_q + tile - 1) / tile;
  const std::int64_t kv_tiles = (shape.seq_kv + tile - 1) / tile;
  const std::int64_t offset = shape.seq_kv - shape.seq_q;  // causal: queries end-aligned
  double elements = 0;
  for (std::int64_t i = 0; i < q_tiles; ++i) {
    const std::int64_t row_end = std::min((i + 1) * tile, shape.seq_q);
    const std::int64_t rows = row_end - i * tile;
    const std::int64_t reached = shape.causal ? (offset + row_end + tile - 1) / tile : kv_tiles;
    elements += static_cast<double>(rows) * static_cast<double>(tile) *
                (static_cast<double>(reached) + kAttentionCtaOverheadTiles);
  }
  return elements;
}

double attention_flops(const AttentionShape& shape) {
  const double pairs = attention_score_pairs(shape);  // validates
  const double forward_flops = 4.0 * static_cast<double>(shape.batch) *
                               static_cast<double>(shape.q_heads) * pairs *
                               static_cast<double>(shape.head_dim);
  return shape.backward ? kAttentionBackwardFlopsRatio * forward_flops : forward_flops;
}

ComputeModel::ComputeModel(AcceleratorSpec spec) : spec_(std::move(spec)) {
  require_spec(spec_.hbm_bytes_per_s > 0, spec_, "hbm_bytes_per_s must be positive");
  require_spec(spec_.compute_units > 0, spec_, "compute_units must be positive");
  require_spec(spec_.gemm_tile_m > 0 && spec_.gemm_tile_n > 0, spec_,
               "gemm_tile m and n must be positive");
  require_spec(spec_.matmul_efficiency > 0 && spec_.matmul_efficiency <= 1, spec_,
               "matmul_efficiency must be in (0, 1]");
  require_spec(spec_.memory_efficiency > 0 && spec_.memory_efficiency <= 1, spec_,
               "memory_efficiency must be in (0, 1]");
  require_spec(spec_.kernel_launch_s >= 0, spec_, "kernel_launch_s must not be negative");
  require_spec(spec_.vector_flops_per_s >= 0, spec_, "vector_flops_per_s must not be negative");
  require_spec(spec_.fp8_promotion_interval >= 0, spec_, "fp8_promotion_interval must not be negative");
  require_spec(spec_.fp8_promotion_interval == 0 || spec_.vector_flops_per_s > 0, spec_,
               "fp8_promotion_interval needs the vector fp32 peak (vector_fp32) that drains the accumulator");
  require_spec(spec_.warp_mma_fraction > 0 && spec_.warp_mma_fraction <= 1, spec_,
               "attention warp_mma_fraction must be in (0, 1]");
  require_spec(spec_.attention_softmax_overlap >= 0 && spec_.attention_softmax_overlap <= 1, spec_,
               "attention softmax_overlap must be in [0, 1]");
  require_spec(runs_on(spec_.attention_kernel, spec_.matrix_path), spec_,
               "attention kernel " + std::string(attention_kernel_family_name(spec_.attention_kernel)) +
                   " does not run on its matrix path " + std::string(matrix_path_name(spec_.matrix_path)) +
                   " (families that run there: " + families_on_text(spec_.matrix_path) + ")");
  require_spec(spec_.special_function_ops_per_s >= 0 && std::isfinite(spec_.special_function_ops_per_s), spec_,
               "attention special_function rate must not be negative");
  for (const auto& [dtype, peak] : spec_.peak_flops_per_s) {
    if (!(peak > 0)) {
      throw ConfigError("accelerator '" + spec_.name + "': peak for " +
                        std::string(dtype_name(dtype)) + " must be positive");
    }
  }
  for (const auto& [dtype, efficiency] : spec_.matmul_efficiency_by_dtype) {
    if (!(efficiency > 0 && efficiency <= 1)) {
      throw ConfigError("accelerator '" + spec_.name + "': matmul efficiency for " +
                        std::string(dtype_name(dtype)) + " must be in (0, 1]");
    }
  }
  require_spec(spec_.l2_bytes >= 0 && spec_.l2_bytes_per_s >= 0, spec_,
               "l2 size and bandwidth must not be negative");
  if (spec_.l2_bytes > 0 && spec_.l2_bytes_per_s > 0) {
    // The compute model only asks which level serves a working set; an unknown HBM capacity
    // (0 in a bare spec) is taken as unbounded.
    const double hbm_capacity = spec_.hbm_capacity_bytes > 0
                                    ? spec_.hbm_capacity_bytes
                                    : std::numeric_limits<double>::infinity();
    memory_.emplace(std::vector<MemoryLevel>{
        {MemoryLevelKind::hbm, hbm_capacity, spec_.hbm_bytes_per_s, 0.0},
        {MemoryLevelKind::l2, spec_.l2_bytes, spec_.l2_bytes_per_s, 0.0}});
  }
}

std::size_t ComputeModel::GemmKeyHash::operator()(const GemmKey& key) const {
  std::uint64_t hash = 0;
  const auto mix = [&hash](std::uint64_t value) { hash = engine::splitmix64(hash ^ value); };
  mix(static_cast<std::uint64_t>(key.m));
  mix(static_cast<std::uint64_t>(key.n));
  mix(static_cast<std::uint64_t>(key.k));
  mix(static_cast<std::uint64_t>(key.batch));
  mix(static_cast<std::uint64_t>(key.dtype) * 2 + (key.split_accumulation ? 1 : 0));
  mix(static_cast<std::uint64_t>(std::llround(key.accumulate_bytes * 1024.0)));
  mix(static_cast<std::uint64_t>(std::llround(key.weight_bytes * 1024.0)));
  return static_cast<std::size_t>(hash);
}

OpEstimate ComputeModel::gemm(const GemmShape& shape) const {
  (void)shape.b_bytes();  // validates weight_bytes
  const GemmKey key{shape.m, shape.n, shape.k, shape.batch, static_cast<int>(shape.dtype), shape.accumulate_bytes,
                    shape.split_accumulation, shape.weight_bytes};
  if (const auto it = gemm_memo_.find(key); it != gemm_memo_.end()) return it->second;
  OpEstimate result = gemm_uncached(shape);
  gemm_memo_.emplace(key, result);
  return result;
}

OpEstimate ComputeModel::gemm_uncached(const GemmShape& shape) const {
  // Weight-only quantised GEMMs: no measured table covers them; the roofline over the packed
  // weight's bytes.
  if (shape.weight_bytes > 0 && shape.weight_bytes != dtype_bytes(shape.dtype)) return gemm_roofline(shape);
  KernelShape kernel;
  kernel.op = shape.batch > 1 ? OpClass::batched_gemm : OpClass::gemm;
  kernel.dtype = shape.dtype;
  kernel.m = shape.m;
  kernel.n = shape.n;
  kernel.k = shape.k;
  kernel.batch = shape.batch;
  OpEstimate result = estimate(kernel);
  if (shape.accumulate_bytes > 0) {
    const double elements = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                            static_cast<double>(shape.batch);
    const double extra_bytes =
        std::max(0.0, elements * (2.0 * shape.accumulate_bytes - output_dtype_bytes(shape.dtype)));
    result.time_s += extra_bytes / (spec_.hbm_bytes_per_s * spec_.memory_efficiency);
    result.bytes += extra_bytes;
  }
  if (shape.split_accumulation && shape.dtype == Dtype::fp8 && spec_.fp8_promotion_interval > 0) {
    const double promotions = std::ceil(static_cast<double>(shape.k) / spec_.fp8_promotion_interval);
    const double adds = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                        static_cast<double>(shape.batch) * promotions;
    result.time_s += adds / (spec_.vector_flops_per_s / 2.0);
  }
  return result;
}

GemmSchedule ComputeModel::gemm_schedule(const GemmShape& shape) const {
  return fastest_gemm_schedule(shape, spec_, spec_.matmul_efficiency_for(shape.dtype));
}

OpEstimate ComputeModel::gemm_roofline(const GemmShape& shape) const {
  const GemmSchedule schedule = gemm_schedule(shape);  // validates
  const double m = static_cast<double>(shape.m);
  const double n = static_cast<double>(shape.n);
  const double k = static_cast<double>(shape.k);
  const double batch = static_cast<double>(shape.batch);
  OpEstimate estimate;
  estimate.time_s = schedule.time_s + spec_.kernel_launch_s;
  estimate.flops = 2.0 * m * n * k * batch;
  estimate.bytes =
      (m * k * dtype_bytes(shape.dtype) + k * n * shape.b_bytes() + m * n * output_dtype_bytes(shape.dtype)) *
      batch;
  estimate.compute_bound = schedule.compute_bound();
  estimate.provenance = Provenance::roofline;
  return estimate;
}

namespace {

/// A fused attention kernel's roofline: the slower of its compute and memory time plus one
/// launch (compute-bound on a tie).
OpEstimate attention_roofline(double compute_s, double memory_s, double flops, double bytes, double launch_s) {
  OpEstimate estimate;
  estimate.time_s = std::max(compute_s, memory_s) + launch_s;
  estimate.flops = flops;
  estimate.bytes = bytes;
  estimate.compute_bound = compute_s >= memory_s;
  estimate.provenance = Provenance::roofline;
  return estimate;
}

}  // namespace

OpEstimate ComputeModel::attention(const AttentionShape& shape) const {
  require_attention_shape(shape);
  if (shape.latent_value_dim > 0) return latent_attention(shape);
  if (!shape.fused) return unfused_attention(shape);
  KernelShape kernel;
  kernel.op = OpClass::attention;
  kernel.dtype = shape.dtype;
  kernel.batch = shape.batch;
  kernel.heads = shape.q_heads;
  kernel.kv_heads = shape.kv_heads;
  kernel.seq_q = shape.seq_q;
  kernel.seq_kv = shape.seq_kv;
  kernel.head_dim = shape.head_dim;
  kernel.causal = shape.causal;
  kernel.backward = shape.backward;
  kernel.attention_kernel = shape.kernel;
  return estimate(kernel);
}

OpEstimate ComputeModel::latent_attention(const AttentionShape& shape) const {
  require_attention_shape(shape);
  if (shape.latent_value_dim > shape.head_dim || shape.kv_heads != 1) {
    throw ConfigError("latent attention needs one KV head and latent_value_dim <= head_dim, got kv_heads " +
                      std::to_string(shape.kv_heads) + ", latent_value_dim " + std::to_string(shape.latent_value_dim));
  }
  const double batch = static_cast<double>(shape.batch);
  const double queries = batch * static_cast<double>(shape.q_heads) * static_cast<double>(shape.seq_q);
  const double scores = queries * static_cast<double>(shape.seq_kv);
  const double flops = 2.0 * scores * static_cast<double>(shape.head_dim + shape.latent_value_dim);
  const double bytes = batch * static_cast<double>(shape.seq_kv * shape.head_dim) * dtype_bytes(shape.dtype) +
                       queries * static_cast<double>(shape.head_dim) * dtype_bytes(shape.dtype) +
                       queries * static_cast<double>(shape.latent_value_dim) * output_dtype_bytes(shape.dtype) +
                       4.0 * queries;  // fp32 log-sum-exp
  const double compute_s = flops / (spec_.peak_for(Dtype::bf16) * kFlashMlaComputeFraction);
  const double memory_s = bytes / (spec_.hbm_bytes_per_s * kFlashMlaMemoryFraction);
  return attention_roofline(compute_s, memory_s, flops, bytes, spec_.kernel_launch_s);
}

OpEstimate ComputeModel::fused_attention(const AttentionShape& shape) const {
  const double flops = attention_flops(shape);
  const double batch = static_cast<double>(shape.batch);
  const double head_dim = static_cast<double>(shape.head_dim);
  const double in_bytes = dtype_bytes(shape.dtype);
  const double out_bytes = output_dtype_bytes(shape.dtype);
  // Elements of one [batch, heads, seq, head_dim] tensor.
  const double q_elements = batch * static_cast<double>(shape.q_heads) *
                            static_cast<double>(shape.seq_q) * head_dim;
  const double kv_elements = batch * static_cast<double>(shape.kv_heads) *
                             static_cast<double>(shape.seq_kv) * head_dim;
  // fp32 log-sum-exp of each query row, saved by the forward for the backward.
  const double lse_bytes =
      4.0 * batch * static_cast<double>(shape.q_heads) * static_cast<double>(shape.seq_q);

  double bytes = 0;
  if (!shape.backward) {
    // read Q, K, V; write O, LSE
    bytes = q_elements * in_bytes + 2.0 * kv_elements * in_bytes + q_elements * out_bytes +
            lse_bytes;
  } else {
    // read Q, K, V, O, dO, LSE; write dQ, dK, dV (gradients in the activation format)
    bytes = q_elements * in_bytes + 2.0 * kv_elements * in_bytes + 2.0 * q_elements * out_bytes +
            lse_bytes + q_elements * out_bytes + 2.0 * kv_elements * out_bytes;
  }
  const AttentionScoreCost per_score = attention_score_cost(
      spec_, shape.kernel.value_or(spec_.attention_kernel), shape.head_dim, shape.dtype, shape.backward);
  const double score_elements =
      batch * static_cast<double>(shape.q_heads) * attention_tile_elements(shape);
  const double compute_s = score_elements * per_score.time_s;
  const double memory_s = bytes / (spec_.hbm_bytes_per_s * spec_.memory_efficiency);
  return attention_roofline(compute_s, memory_s, flops, bytes, spec_.kernel_launch_s);
}

OpEstimate ComputeModel::unfused_attention(const AttentionShape& shape) const {
  const std::int64_t heads_batch = shape.batch * shape.q_heads;
  const double score_elements = static_cast<double>(heads_batch) *
                                static_cast<double>(shape.seq_q) *
                                static_cast<double>(shape.seq_kv);
  const double score_bytes = score_elements * output_dtype_bytes(shape.dtype);

  // Elementwise pass over the score matrix: reads `reads` and writes one score-sized tensor,
  // doing `flops_per_element` vector operations per score, plus `mask_read` / `mask_written`
  // bytes per score of the dropout mask.
  auto score_pass = [&](double reads, double flops_per_element, double mask_read = 0, double mask_written = 0) {
    ElementwiseShape pass;
    pass.bytes_read = reads * score_bytes + mask_read * score_elements;
    pass.bytes_written = score_bytes + mask_written * score_elements;
    pass.flops = flops_per_element * score_elements;
    return elementwise(pass);
  };
  // PyTorch's dropout keeps its mask for the backward, one byte per element (uint8 / bool).
  constexpr double kDropoutMaskBytes = 1.0;
  auto batched_gemm = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    GemmShape gemm_shape;
    gemm_shape.m = m;
    gemm_shape.n = n;
    gemm_shape.k = k;
    gemm_shape.batch = heads_batch;
    gemm_shape.dtype = shape.dtype;
    return gemm(gemm_shape);
  };

  OpEstimate total;
  total.provenance = Provenance::measured_table;
  double compute_bound_time_s = 0;
  if (!shape.backward) {
    accumulate(total, batched_gemm(shape.seq_q, shape.seq_kv, shape.head_dim),  // S = Q K^T
               compute_bound_time_s);
    // Megatron's FusedScaleMaskSoftmax: scale, mask and softmax (max, sub, exp, sum, div) in
    // one pass over the scores.
    accumulate(total, score_pass(1, 7), compute_bound_time_s);
    // dropout: rng compare, scale; writes its mask
    accumulate(total, score_pass(1, 2, 0, kDropoutMaskBytes), compute_bound_time_s);
    accumulate(total, batched_gemm(shape.seq_q, shape.head_dim, shape.seq_kv),  // O = P V
               compute_bound_time_s);
  } else {
    accumulate(total, batched_gemm(shape.seq_kv, shape.head_dim, shape.seq_q),  // dV = P^T dO
               compute_bound_time_s);
    accumulate(total, batched_gemm(shape.seq_q, shape.seq_kv, shape.head_dim),  // dP = dO V^T
               compute_bound_time_s);
    accumulate(total, score_pass(1, 1, kDropoutMaskBytes, 0), compute_bound_time_s);  // dropout grad: reads the mask
    // Fused softmax backward with the scale folded in: P, dP -> dS.
    accumulate(total, score_pass(2, 4), compute_bound_time_s);
    accumulate(total, batched_gemm(shape.seq_q, shape.head_dim, shape.seq_kv),  // dQ = dS K
               compute_bound_time_s);
    accumulate(total, batched_gemm(shape.seq_kv, shape.head_dim, shape.seq_q),  // dK = dS^T Q
               compute_bound_time_s);
  }
  total.compute_bound = compute_bound_time_s >= total.time_s - compute_bound_time_s;
  return total;
}

OpEstimate ComputeModel::elementwise(const ElementwiseShape& shape) const {
  auto require_amount = [](double value, const char* field) {
    if (!std::isfinite(value) || value < 0) {
      throw ConfigError(std::string("elementwise ") + field +
                        " must be finite and non-negative, got " + std::to_string(value));
    }
  };
  require_amount(shape.bytes_read, "bytes_read");
  require_amount(shape.bytes_written, "bytes_written");
  require_amount(shape.flops, "flops");
  if (shape.flops > 0 && !(spec_.vector_flops_per_s > 0)) {
    throw ConfigError("accelerator '" + spec_.name +
                      "' has no vector_flops_per_s for an elementwise op with flops");
  }
  return bandwidth_op(OpClass::elementwise, shape.bytes_read + shape.bytes_written, shape.flops);
}

double ComputeModel::memory_bytes_per_s(OpClass op, double bytes) const {
  const double hbm_bytes_per_s = spec_.hbm_bytes_per_s * spec_.memory_efficiency;
  switch (op) {
    case OpClass::hbm_read:
    case OpClass::hbm_write:
    case OpClass::hbm_copy:
    case OpClass::hbm_triad:
      return hbm_bytes_per_s;
    case OpClass::l2_read:
      return memory_ ? spec_.l2_bytes_per_s : hbm_bytes_per_s;
    default:
      break;
  }
  if (memory_ && memory_->serving_level(bytes) == MemoryLevelKind::l2) {
    return memory_->effective_read_bytes_per_s(bytes);
  }
  return hbm_bytes_per_s;
}

OpEstimate ComputeModel::bandwidth_roofline(OpClass op, double bytes, double flops) const {
  if (flops > 0 && !(spec_.vector_flops_per_s > 0)) {
    throw ConfigError("accelerator '" + spec_.name +
                      "' has no vector_flops_per_s for an elementwise op with flops");
  }
  const double memory_s = bytes / memory_bytes_per_s(op, bytes);
  const double compute_s = flops > 0 ? flops / spec_.vector_flops_per_s : 0.0;
  OpEstimate estimate;
  estimate.time_s = std::max(compute_s, memory_s) + spec_.kernel_launch_s;
  estimate.flops = flops;
  estimate.bytes = bytes;
  estimate.compute_bound = compute_s > memory_s;
  estimate.provenance = Provenance::roofline;
  return estimate;
}

OpEstimate ComputeModel::bandwidth_op(OpClass op, double bytes, double flops) const {
  KernelShape kernel;
  kernel.op = op;
  kernel.bytes = bytes;
  kernel.flops = flops;
  return estimate(kernel);
}

OpEstimate ComputeModel::layernorm(const LayerNormShape& shape) const {
  require_positive(shape.rows, "layernorm", "rows");
  require_positive(shape.hidden, "layernorm", "hidden");
  const double elements = static_cast<double>(shape.rows) * static_cast<double>(shape.hidden);
  const double bytes = elements * (dtype_bytes(shape.dtype) + output_dtype_bytes(shape.dtype)) +
                       2.0 * static_cast<double>(shape.hidden) * dtype_bytes(shape.dtype) +
                       8.0 * static_cast<double>(shape.rows);
  return bandwidth_op(OpClass::layernorm, bytes, 8.0 * elements);
}

OpEstimate ComputeModel::softmax(const SoftmaxShape& shape) const {
  require_positive(shape.rows, "softmax", "rows");
  require_positive(shape.cols, "softmax", "cols");
  const double elements = static_cast<double>(shape.rows) * static_cast<double>(shape.cols);
  return bandwidth_op(OpClass::softmax,
                      elements * (dtype_bytes(shape.dtype) + output_dtype_bytes(shape.dtype)),
                      5.0 * elements);
}

OpEstimate ComputeModel::embedding(const EmbeddingShape& shape) const {
  require_positive(shape.tokens, "embedding", "tokens");
  require_positive(shape.hidden, "embedding", "hidden");
  const double elements = static_cast<double>(shape.tokens) * static_cast<double>(shape.hidden);
  return bandwidth_op(OpClass::embedding,
                      elements * (dtype_bytes(shape.dtype) + output_dtype_bytes(shape.dtype)) +
                          8.0 * static_cast<double>(shape.tokens),
                      0.0);
}

OpEstimate ComputeModel::optimizer_step(const OptimizerShape& shape) const {
  if (!(shape.parameters > 0) || !std::isfinite(shape.parameters)) {
    throw ConfigError("optimizer step needs a positive parameter count, got " +
                      std::to_string(shape.parameters));
  }
  if (!(shape.bytes_per_parameter > 0) || shape.flops_per_parameter < 0) {
    throw ConfigError("optimizer step needs bytes_per_parameter > 0 and flops_per_parameter >= 0");
  }
  return bandwidth_op(OpClass::optimizer, shape.parameters * shape.bytes_per_parameter,
                      shape.parameters * shape.flops_per_parameter);
}

OpEstimate ComputeModel::memcpy(double bytes_copied) const {
  if (!(bytes_copied > 0) || !std::isfinite(bytes_copied)) {
    throw ConfigError("memcpy needs a positive byte count, got " + std::to_string(bytes_copied));
  }
  return bandwidth_op(OpClass::memcpy, 2.0 * bytes_copied, 0.0);
}

ComputeModel::ComputeModel(AcceleratorSpec spec, const CalibrationTable& calibration)
    : ComputeModel(std::move(spec)) {
  std::vector<const CalibrationRow*> used;
  std::map<std::string, std::vector<FitSample>> samples;
  for (const auto& row : calibration.rows) {
    if (row.accelerator != spec_.name) continue;
    if (row.shape.op == OpClass::layer_fwd || row.shape.op == OpClass::layer_bwd) continue;
    // A measurement of a dtype the accelerator lacks is a broken table, not a fallback.
    if (is_matrix_op(row.shape.op)) (void)spec_.peak_for(row.shape.dtype);
    used.push_back(&row);
    samples[fit_group(row.shape)].push_back({fit_features(row.shape), row.time_s});
    if (is_bandwidth_op(row.shape.op) && row.shape.op != OpClass::l2_read &&
        row.shape.op != OpClass::layernorm && row.shape.op != OpClass::softmax &&
        row.shape.op != OpClass::embedding && row.shape.op != OpClass::optimizer) {
      samples["bandwidth/streaming"].push_back({fit_features(row.shape), row.time_s});
    }
  }
  for (auto& [group, group_samples] : samples) {
    // Every prediction carries the launch time; an extra overhead (the last feature) is
    // fitted only when the group's roofline times span kMinOverheadSpan (fitted_model.hpp).
    double smallest = std::numeric_limits<double>::infinity(), largest = 0;
    for (const auto& sample : group_samples) {
      double roofline_s = 0;
      for (std::size_t j = 0; j + 1 < sample.features.size(); ++j) roofline_s += sample.features[j];
      smallest = std::min(smallest, roofline_s);
      largest = std::max(largest, roofline_s);
    }
    if (!(largest >= kMinOverheadSpan * smallest)) {
      for (auto& sample : group_samples) sample.features.back() = 0;
    }
    if (auto fit = LinearTimeFit::fit(group_samples, spec_.kernel_launch_s)) {
      fits_.emplace(group, *fit);
    }
  }
  // The table interpolates each point's residual against the fit (or the roofline where no
  // fit exists): the fit carries the global trend, the table corrects it locally.
  std::vector<MeasuredPoint> points;
  for (const CalibrationRow* row : used) {
    points.push_back({row->shape, row->time_s, reference_time_s(row->shape)});
  }
  measured_points_ = points.size();
  table_ = MeasuredTable(std::move(points));
}

double ComputeModel::reference_time_s(const KernelShape& shape) const {
  if (auto from_fit = fitted(shape)) return from_fit->time_s;
  return roofline(shape).time_s;
}

std::string ComputeModel::fit_group(const KernelShape& shape) const {
  if (is_gemm_op(shape.op)) return "gemm";
  if (shape.op == OpClass::attention) {
    return "attention/" + std::string(dtype_name(shape.dtype)) +
           (shape.backward ? "/bwd" : "/fwd");
  }
  return "bandwidth/" + std::string(op_class_name(shape.op));
}

std::vector<double> ComputeModel::fit_features(const KernelShape& shape) const {
  // The roofline's time above the launch overhead, scaled by the fit (fitted_model.hpp).
  const double roofline_s = roofline(shape).time_s - spec_.kernel_launch_s;
  if (!is_gemm_op(shape.op)) return {roofline_s, 1.0};
  // GEMMs: one column per dtype (enum order), so each format gets its own scale while the
  // overhead is shared.
  std::vector<double> features(kDtypeCount + 1, 0.0);
  features[static_cast<std::size_t>(shape.dtype)] = roofline_s;
  features[kDtypeCount] = 1.0;
  return features;
}

OpEstimate ComputeModel::roofline(const KernelShape& shape) const {
  if (is_gemm_op(shape.op)) return gemm_roofline(to_gemm_shape(shape));
  if (shape.op == OpClass::attention) {
    const AttentionShape attention = to_attention_shape(shape);
    require_attention_shape(attention);
    return fused_attention(attention);
  }
  if (shape.op == OpClass::layer_fwd || shape.op == OpClass::layer_bwd) {
    throw ConfigError("op " + std::string(op_class_name(shape.op)) +
                      " (a whole layer) is not costed by the compute model");
  }
  if (!(shape.bytes > 0) || !std::isfinite(shape.bytes)) {
    throw ConfigError(std::string(op_class_name(shape.op)) +
                      " needs a positive byte count, got " + std::to_string(shape.bytes));
  }
  return bandwidth_roofline(shape.op, shape.bytes, shape.flops);
}

std::optional<OpEstimate> ComputeModel::measured(const KernelShape& shape) const {
  if (table_.empty()) return std::nullopt;
  const auto ratio = table_.time_ratio(shape);
  if (!ratio) return std::nullopt;
  OpEstimate estimate = roofline(shape);
  estimate.time_s = reference_time_s(shape) * *ratio;
  estimate.provenance = Provenance::measured_table;
  return estimate;
}

std::optional<OpEstimate> ComputeModel::fitted(const KernelShape& shape) const {
  if (fits_.empty()) return std::nullopt;
  auto fit = fits_.find(fit_group(shape));
  if (fit == fits_.end() && is_bandwidth_op(shape.op) && shape.op != OpClass::l2_read) {
    fit = fits_.find("bandwidth/streaming");
  }
  if (fit == fits_.end()) return std::nullopt;
  const std::vector<double> features = fit_features(shape);
  // A fit only speaks for the formats it saw: a GEMM dtype whose scale was not fitted (no
  // points, or dropped) has no fitted estimate.
  const std::vector<double>& coefficients = fit->second.coefficients();
  for (std::size_t j = 0; j + 1 < features.size(); ++j) {
    if (features[j] != 0 && !(coefficients[j] > 0)) return std::nullopt;
  }
  OpEstimate estimate = roofline(shape);
  estimate.time_s = fit->second.predict_s(features);
  estimate.provenance = Provenance::fitted;
  return estimate;
}

OpEstimate ComputeModel::estimate(const KernelShape& shape) const {
  if (auto from_table = measured(shape)) return *from_table;
  if (auto from_fit = fitted(shape)) return *from_fit;
  return roofline(shape);
}

}  // namespace clustersim::models
