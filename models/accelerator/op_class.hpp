#pragma once
/// Op classes of the compute model and the shape of one kernel as the calibration tables
/// describe it (docs/calibration-format.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "models/accelerator/attention_kernel_family.hpp"
#include "models/accelerator/dtype.hpp"

namespace clustersim::models {

/// Kind of kernel. GEMM-like classes are costed by FLOPs, the others by bytes moved.
enum class OpClass {
  gemm,          ///< C[m,n] = A[m,k] B[k,n]
  batched_gemm,  ///< `batch` independent GEMMs of one shape
  attention,     ///< fused (FlashAttention-style) attention, forward or backward
  layernorm,     ///< layer norm / RMSNorm over rows
  softmax,       ///< row softmax
  elementwise,   ///< other streaming vector ops (activation, residual add, dropout)
  embedding,     ///< gather of embedding rows
  optimizer,     ///< fused optimizer step (Adam)
  memcpy,        ///< device-to-device copy
  hbm_read,      ///< microbenchmark: streaming read
  hbm_write,     ///< microbenchmark: streaming write
  hbm_copy,      ///< microbenchmark: STREAM copy
  hbm_triad,     ///< microbenchmark: STREAM triad
  l2_read,       ///< microbenchmark: read of an L2-resident buffer
  layer_fwd,     ///< a whole transformer layer forward (end-to-end check, not costed here)
  layer_bwd,     ///< a whole transformer layer backward (end-to-end check, not costed here)
};

/// Lower-case name as in the calibration CSV ("gemm", "batched_gemm", ...).
std::string_view op_class_name(OpClass op);
/// Parses a name; throws ConfigError listing the valid names.
OpClass parse_op_class(std::string_view name);
/// True for gemm and batched_gemm: the classes a GEMM schedule and the GEMM tables cost.
inline bool is_gemm_op(OpClass op) { return op == OpClass::gemm || op == OpClass::batched_gemm; }
/// True for gemm, batched_gemm and attention: costed by FLOPs on the matrix units.
bool is_matrix_op(OpClass op);
/// True for the classes costed by bytes moved (everything but matrix ops and layer_*).
bool is_bandwidth_op(OpClass op);

/// The shape of one kernel. Unused fields stay 0 (`bytes` stays 0 for matrix ops).
/// GEMM: m, n, k, batch. Attention: batch, heads (query heads), kv_heads, seq_q, seq_kv,
/// head_dim, causal, backward. Bandwidth ops: bytes (read + written, bytes).
struct KernelShape {
  OpClass op = OpClass::gemm;
  Dtype dtype = Dtype::bf16;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  std::int64_t heads = 0, kv_heads = 0;
  std::int64_t seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = false;
  bool backward = false;
  double bytes = 0;  ///< bytes moved (bandwidth ops), bytes
  double flops = 0;  ///< vector FLOPs of a bandwidth op (roofline only; not a table key)
  /// Attention: the fused-kernel family (not a CSV column; `validate kernels
  /// --attention-kernel` sets it); unset: the accelerator's default (AcceleratorSpec).
  std::optional<AttentionKernelFamily> attention_kernel{};
};

/// One-line human description, e.g. "gemm bf16 8192x8192x8192" or "hbm_copy 4.29e+09 B".
std::string describe_kernel(const KernelShape& shape);

}  // namespace clustersim::models
