#include "models/accelerator/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sim/engine/error.hpp"

namespace clustersim::models {

namespace {

void require_positive(std::int64_t value, const char* op, const char* dimension) {
  if (value <= 0) {
    throw ConfigError(std::string(op) + " dimension " + dimension + " must be positive, got " +
                      std::to_string(value));
  }
}

void require_spec(bool ok, const AcceleratorSpec& spec, const char* what) {
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

/// Sums the estimates of an op made of several kernels run back to back.
void accumulate(OpEstimate& total, const OpEstimate& part, double& compute_bound_time_s) {
  total.time_s += part.time_s;
  total.flops += part.flops;
  total.bytes += part.bytes;
  if (part.compute_bound) compute_bound_time_s += part.time_s;
}

}  // namespace

std::string_view provenance_name(Provenance provenance) {
  switch (provenance) {
    case Provenance::measured_table:
      return "measured_table";
    case Provenance::fitted:
      return "fitted";
    case Provenance::roofline:
      return "roofline";
  }
  throw ConfigError("provenance_name: invalid Provenance value");
}

double attention_score_pairs(const AttentionShape& shape) {
  require_attention_shape(shape);
  const double seq_q = static_cast<double>(shape.seq_q);
  const double seq_kv = static_cast<double>(shape.seq_kv);
  if (!shape.causal) return seq_q * seq_kv;
  return seq_q * (seq_kv - seq_q) + seq_q * seq_q / 2.0;
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
  for (const auto& [dtype, peak] : spec_.peak_flops_per_s) {
    if (!(peak > 0)) {
      throw ConfigError("accelerator '" + spec_.name + "': peak for " +
                        std::string(dtype_name(dtype)) + " must be positive");
    }
  }
}

double ComputeModel::wave_quantization_efficiency(const GemmShape& shape) const {
  require_positive(shape.m, "GEMM", "m");
  require_positive(shape.n, "GEMM", "n");
  require_positive(shape.batch, "GEMM", "batch");
  const std::int64_t tiles_m = (shape.m + spec_.gemm_tile_m - 1) / spec_.gemm_tile_m;
  const std::int64_t tiles_n = (shape.n + spec_.gemm_tile_n - 1) / spec_.gemm_tile_n;
  const double tiles = static_cast<double>(tiles_m) * static_cast<double>(tiles_n) *
                       static_cast<double>(shape.batch);
  const double units = static_cast<double>(spec_.compute_units);
  const double waves = std::ceil(tiles / units);
  return tiles / (waves * units);
}

OpEstimate ComputeModel::gemm(const GemmShape& shape) const {
  require_positive(shape.m, "GEMM", "m");
  require_positive(shape.n, "GEMM", "n");
  require_positive(shape.k, "GEMM", "k");
  require_positive(shape.batch, "GEMM", "batch");
  const double m = static_cast<double>(shape.m);
  const double n = static_cast<double>(shape.n);
  const double k = static_cast<double>(shape.k);
  const double batch = static_cast<double>(shape.batch);

  const double flops = 2.0 * m * n * k * batch;
  const double bytes =
      ((m * k + k * n) * dtype_bytes(shape.dtype) + m * n * output_dtype_bytes(shape.dtype)) *
      batch;
  const double efficiency = spec_.matmul_efficiency * wave_quantization_efficiency(shape) *
                            (k / (k + kGemmTileKOverheadElements));
  const double compute_s = flops / (spec_.peak_for(shape.dtype) * efficiency);
  const double memory_s = bytes / (spec_.hbm_bytes_per_s * spec_.memory_efficiency);

  OpEstimate estimate;
  estimate.time_s = std::max(compute_s, memory_s) + spec_.kernel_launch_s;
  estimate.flops = flops;
  estimate.bytes = bytes;
  estimate.compute_bound = compute_s >= memory_s;
  estimate.provenance = Provenance::roofline;
  return estimate;
}

OpEstimate ComputeModel::attention(const AttentionShape& shape) const {
  require_attention_shape(shape);
  return shape.fused ? fused_attention(shape) : unfused_attention(shape);
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
  double pass_efficiency = 0;
  if (!shape.backward) {
    // read Q, K, V; write O, LSE
    bytes = q_elements * in_bytes + 2.0 * kv_elements * in_bytes + q_elements * out_bytes +
            lse_bytes;
    pass_efficiency = kAttentionForwardEfficiency;
  } else {
    // read Q, K, V, O, dO, LSE; write dQ, dK, dV (gradients in the activation format)
    bytes = q_elements * in_bytes + 2.0 * kv_elements * in_bytes + 2.0 * q_elements * out_bytes +
            lse_bytes + q_elements * out_bytes + 2.0 * kv_elements * out_bytes;
    pass_efficiency = kAttentionBackwardEfficiency;
  }
  const double compute_s =
      flops / (spec_.peak_for(shape.dtype) * spec_.matmul_efficiency * pass_efficiency);
  const double memory_s = bytes / (spec_.hbm_bytes_per_s * spec_.memory_efficiency);

  OpEstimate estimate;
  estimate.time_s = std::max(compute_s, memory_s) + spec_.kernel_launch_s;
  estimate.flops = flops;
  estimate.bytes = bytes;
  estimate.compute_bound = compute_s >= memory_s;
  estimate.provenance = Provenance::roofline;
  return estimate;
}

OpEstimate ComputeModel::unfused_attention(const AttentionShape& shape) const {
  const std::int64_t heads_batch = shape.batch * shape.q_heads;
  const double score_elements = static_cast<double>(heads_batch) *
                                static_cast<double>(shape.seq_q) *
                                static_cast<double>(shape.seq_kv);
  const double score_bytes = score_elements * output_dtype_bytes(shape.dtype);

  // Elementwise pass over the score matrix: reads `reads` and writes one score-sized tensor,
  // doing `flops_per_element` vector operations per score.
  auto score_pass = [&](double reads, double flops_per_element) {
    ElementwiseShape pass;
    pass.bytes_read = reads * score_bytes;
    pass.bytes_written = score_bytes;
    pass.flops = flops_per_element * score_elements;
    return elementwise(pass);
  };
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
  total.provenance = Provenance::roofline;
  double compute_bound_time_s = 0;
  if (!shape.backward) {
    accumulate(total, batched_gemm(shape.seq_q, shape.seq_kv, shape.head_dim),  // S = Q K^T
               compute_bound_time_s);
    accumulate(total, score_pass(1, 2), compute_bound_time_s);  // scale + mask
    accumulate(total, score_pass(1, 5), compute_bound_time_s);  // softmax: max, sub, exp, sum, div
    accumulate(total, score_pass(1, 2), compute_bound_time_s);  // dropout: rng compare, scale
    accumulate(total, batched_gemm(shape.seq_q, shape.head_dim, shape.seq_kv),  // O = P V
               compute_bound_time_s);
  } else {
    accumulate(total, batched_gemm(shape.seq_kv, shape.head_dim, shape.seq_q),  // dV = P^T dO
               compute_bound_time_s);
    accumulate(total, batched_gemm(shape.seq_q, shape.seq_kv, shape.head_dim),  // dP = dO V^T
               compute_bound_time_s);
    accumulate(total, score_pass(1, 1), compute_bound_time_s);  // dropout grad
    accumulate(total, score_pass(2, 4), compute_bound_time_s);  // softmax grad: P, dP -> dS
    accumulate(total, score_pass(1, 1), compute_bound_time_s);  // scale grad
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
  const double bytes = shape.bytes_read + shape.bytes_written;
  const double memory_s = bytes / (spec_.hbm_bytes_per_s * spec_.memory_efficiency);
  const double compute_s = shape.flops > 0 ? shape.flops / spec_.vector_flops_per_s : 0.0;

  OpEstimate estimate;
  estimate.time_s = std::max(compute_s, memory_s) + spec_.kernel_launch_s;
  estimate.flops = shape.flops;
  estimate.bytes = bytes;
  estimate.compute_bound = compute_s > memory_s;
  estimate.provenance = Provenance::roofline;
  return estimate;
}

}  // namespace clustersim::models
