#pragma once
/// Which fused-attention (FlashAttention-style) kernel family runs: it decides the matrix
/// path the kernel uses and whether its softmax overlaps the matrix math (attention_cost.hpp).
#include <string_view>

#include "sim/config/name_table.hpp"

namespace clustersim::models {

/// Fused-attention kernel family.
enum class AttentionKernelFamily {
  /// FlashAttention-2 style: warp-level MMA (mma.sync on NVIDIA; MFMA on AMD, its only
  /// path), softmax between the two GEMMs of a warp with no explicit overlap: time = matmul
  /// + softmax, where the exponentials and the fp32 operations of the softmax run in
  /// separate pipes and overlap each other (max).
  fa2,
  /// FlashAttention-3 on Hopper and later: asynchronous warpgroup MMA at the full matrix
  /// rate, softmax overlapped with the GEMMs (warp specialisation, ping-pong scheduling) by
  /// the accelerator's attention_softmax_overlap.
  fa3,
  /// cuDNN fused attention (cudnn-frontend SDPA) on Hopper and later, what Transformer Engine
  /// (Megatron-Core, NeMo) selects on compute capability 9.0: warpgroup MMA at the full rate,
  /// softmax not hidden under it: time = matmul + max(exponentials, fp32 ops). Measured: the
  /// FA3 paper's cuDNN curves (H100, head dim 128) fit this form causal (docs/models.md).
  cudnn,
};

/// Whether the family needs asynchronous warpgroup MMA (fa3, cudnn: Hopper and later).
bool needs_warpgroup_mma(AttentionKernelFamily family);

/// The names of the families: "fa2", "fa3", "cudnn".
const config::NameTable<AttentionKernelFamily>& attention_kernel_family_names();
/// "fa2", "fa3" or "cudnn".
std::string_view attention_kernel_family_name(AttentionKernelFamily family);
/// Parses "fa2", "fa3" or "cudnn"; throws ConfigError listing the valid names.
AttentionKernelFamily parse_attention_kernel_family(std::string_view name);

}  // namespace clustersim::models
