#pragma once
// Decode attention shapes (one query token per sequence against a KV cache) and the split-KV
// plan of attention_bench's fallback decode kernel. Host-only: unit-tested without a GPU.
// attention_sdpa.py --shapes decode builds the same sweep (keep the two in step).

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::kernels {

/// One decode-attention problem on one rank: `batch` sequences, each one query token (seq_q 1,
/// not causal: the token sees the whole cache) against `seq_kv` cached keys and values.
struct DecodeAttentionShape {
  std::string label;         ///< origin, e.g. "llama-3-70b tp8"
  std::int64_t batch = 0;    ///< sequences (one query token each)
  std::int64_t heads = 0;    ///< query heads on this rank
  std::int64_t kv_heads = 0; ///< key/value heads on this rank (GQA: heads / kv_heads queries each)
  std::int64_t seq_kv = 0;   ///< cached tokens per sequence
  std::int64_t head_dim = 128;
};

/// Bytes of the bf16 K and V cache the problem reads: 2 x 2 x batch x kv_heads x seq_kv x head_dim.
std::int64_t decode_kv_bytes(const DecodeAttentionShape& shape);

/// The sweep's largest cache of one layer on one rank: 1 GiB of bf16 K and V (a serving GPU
/// holds the cache of every layer at once: 32 GiB for Llama-3-8B, 80 GiB for Llama-3-70B at
/// this size). Larger batch x seq_kv pairs are left out.
inline constexpr std::int64_t kMaxDecodeKvBytes = std::int64_t{1} << 30;

/// The decode-attention sweep: the per-rank heads of Llama-3-8B (32 q / 8 kv heads) and
/// Llama-3-70B (64 / 8) at tp 1, 2, 4, 8, head dim 128, batch 1, 2, 4, ..., 256 x seq_kv 128,
/// 256, ..., 32768, without pairs above kMaxDecodeKvBytes (580 shapes). `quick`: Llama-3-8B
/// tp 1 and Llama-3-70B tp 8, batch 1, 16, 256 x seq_kv 128, 2048, 32768 (14 shapes).
/// Ordered model, tp, batch, seq_kv.
std::vector<DecodeAttentionShape> decode_attention_sweep(bool quick);

/// How the fallback decode kernel splits one (sequence, kv head)'s cache across thread blocks
/// (flash-decoding): `splits` blocks of `keys_per_split` keys (the last may hold fewer).
struct DecodeSplitPlan {
  std::int64_t splits = 1;
  std::int64_t keys_per_split = 0;
};

/// Enough blocks for two waves on `sm_count` SMs: splits = ceil(2 sm_count / (batch kv_heads)),
/// at most one split per `min_keys` keys, keys rounded up to a multiple of 64; every split
/// non-empty. Throws std::invalid_argument for non-positive arguments.
DecodeSplitPlan plan_decode_splits(std::int64_t batch, std::int64_t kv_heads, std::int64_t seq_kv,
                                   int sm_count, std::int64_t min_keys = 128);

}  // namespace clustersim::kernels
