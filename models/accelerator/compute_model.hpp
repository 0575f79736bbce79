#pragma once
/// Time of compute ops on one accelerator: roofline with tile and wave quantization for
/// GEMMs, FlashAttention-style counts for attention, bandwidth-bound elementwise ops.
#include <cstdint>
#include <string>

#include "models/accelerator/accelerator_spec.hpp"

namespace clustersim::models {

/// Which estimator produced a number (see ARCHITECTURE "provenance").
enum class Provenance { measured_table, fitted, roofline };
std::string_view provenance_name(Provenance provenance);

/// Result of estimating one op.
struct OpEstimate {
  double time_s = 0;      ///< wall time of the op including launch overhead
  double flops = 0;       ///< floating-point operations the op performs
  double bytes = 0;       ///< bytes moved to/from HBM
  bool compute_bound = false;
  Provenance provenance = Provenance::roofline;
};

/// C[m,n] = A[m,k] x B[k,n], repeated `batch` times (batched GEMM).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  Dtype dtype = Dtype::bf16;
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
};

/// A memory-bound op that reads and writes the given bytes and does `flops` vector math.
struct ElementwiseShape {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
};

/// Analytical compute model for one accelerator (issue 4 adds calibrated tables on top).
class ComputeModel {
 public:
  explicit ComputeModel(AcceleratorSpec spec);

  OpEstimate gemm(const GemmShape& shape) const;
  OpEstimate attention(const AttentionShape& shape) const;
  OpEstimate elementwise(const ElementwiseShape& shape) const;

  const AcceleratorSpec& spec() const { return spec_; }

 private:
  AcceleratorSpec spec_;
};

}  // namespace clustersim::models
