#pragma once
/// Which fused-attention (FlashAttention-style) kernel family runs: it decides the matrix
/// path the kernel uses and whether its softmax overlaps the matrix math (attention_cost.hpp).
#include <string_view>

namespace clustersim::models {

/// Fused-attention kernel family.
enum class AttentionKernelFamily {
  /// FlashAttention-2 style: warp-level MMA (mma.sync on NVIDIA; MFMA on AMD, its only
  /// path), softmax between the two GEMMs of a warp with no explicit overlap: time = matmul
  /// + softmax, where the exponentials and the fp32 operations of the softmax run in
  /// separate pipes and overlap each other (max).
  fa2,
  /// FlashAttention-3 / cuDNN fused attention on Hopper and later: asynchronous
  /// warpgroup MMA at the full matrix rate, softmax overlapped with the GEMMs (warp
  /// specialisation, ping-pong scheduling): time = max(matmul, exponentials, fp32 ops).
  fa3,
};

/// "fa2" or "fa3".
std::string_view attention_kernel_family_name(AttentionKernelFamily family);
/// Parses "fa2" or "fa3"; throws ConfigError listing the valid names.
AttentionKernelFamily parse_attention_kernel_family(std::string_view name);

}  // namespace clustersim::models
