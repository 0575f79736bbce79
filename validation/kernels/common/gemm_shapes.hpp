#pragma once
// The GEMM shapes the kernel suite sweeps: square sizes and the per-rank GEMMs a transformer
// layer of the library models produces under tensor parallelism (forward, dgrad, wgrad).
//
// Convention (shared with the calibration CSV): C[m x n] = A[m x k] * B[k x n], so one GEMM
// is 2*m*n*k flops and a batched GEMM is batch times that.

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::kernels {

/// One GEMM (or a batch of equal GEMMs) to time.
struct GemmShape {
  std::string label;        ///< human-readable origin, e.g. "llama-3-70b tp8 s8192 qkv fwd"
  std::int64_t m = 0;       ///< rows of C
  std::int64_t n = 0;       ///< columns of C
  std::int64_t k = 0;       ///< reduction dimension
  std::int64_t batch = 1;   ///< independent GEMMs of this shape (batched_gemm when > 1)
};

/// One tensor-parallel rank's slice of a dense transformer layer.
struct TransformerShard {
  std::string model;             ///< library model name, e.g. "llama-3-70b"
  std::int64_t hidden_size = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t intermediate_size = 0;
  bool gated_mlp = false;        ///< SwiGLU: the up projection is two matrices (gate and up)
  std::int64_t tp = 1;           ///< tensor-parallel degree
  std::int64_t seq_len = 0;      ///< tokens per sequence
  std::int64_t micro_batch = 1;  ///< sequences per micro-batch
};

/// Checks the shard (positive sizes, heads divisible by tp and kv heads, hidden divisible by
/// heads, intermediate divisible by tp). Throws std::invalid_argument naming the field.
void validate_shard(const TransformerShard& shard);

/// The 12 GEMMs of one layer on one rank: QKV, attention output, MLP up (gate+up fused when
/// gated) and MLP down, each forward, dgrad and wgrad, with tokens = seq_len * micro_batch.
std::vector<GemmShape> transformer_layer_gemms(const TransformerShard& shard);

/// The two batched GEMMs of unfused attention on one rank (scores Q K^T and context P V):
/// batch = micro_batch * heads / tp.
std::vector<GemmShape> attention_batched_gemms(const TransformerShard& shard);

/// Square GEMMs m = n = k = size for each size.
std::vector<GemmShape> square_gemms(const std::vector<std::int64_t>& sizes);

/// Llama-3-70B at tp 8, sequence 8192, micro-batch 1 (models/data/llms/llama-3-70b.yaml).
TransformerShard llama3_70b_tp8();
/// GPT-3 175B at tp 8, sequence 2048, micro-batch 1 (models/data/llms/gpt3-175b.yaml).
TransformerShard gpt3_175b_tp8();
/// The Megatron-Core weak-scaling GPTs that the training validation over-predicts most
/// (docs/validation.md, "What the H100 rows say"): 1.7B (hidden 2048, 16 heads) at tp 1 and
/// 7.1B (hidden 4096, 32 heads) at tp 2, sequence 4096, micro-batch 1, 4h GeLU MLP.
TransformerShard mcore_gpt_1_7b_tp1();
TransformerShard mcore_gpt_7_1b_tp2();

/// Llama-3-8B (hidden 4096, 32 heads, 8 kv heads, SwiGLU 14336) and Llama-3-70B (8192, 64/8,
/// 28672) at tensor-parallel degree `tp`, one decode step of `tokens` sequences: seq_len 1,
/// micro_batch = tokens (models/data/llms/llama-3-8b.yaml, llama-3-70b.yaml).
TransformerShard llama3_8b_decode(std::int64_t tp, std::int64_t tokens);
TransformerShard llama3_70b_decode(std::int64_t tp, std::int64_t tokens);

/// The 4 forward GEMMs of one layer on one rank in a decode step (QKV, attention output, MLP
/// up with gate+up fused when gated, MLP down): m = tokens (seq_len * micro_batch), n = output
/// features, k = input features. Labels read "<model> tp<tp> decode m<tokens> <linear>".
std::vector<GemmShape> decode_layer_gemms(const TransformerShard& shard);

/// Tokens per decode step the decode sweep measures: 1, 2, 4, ..., 256; `quick`: 1, 16, 256.
std::vector<std::int64_t> decode_token_counts(bool quick);
/// Tensor-parallel degrees of the decode sweep: 1, 2, 4, 8; `quick`: 1, 8.
std::vector<std::int64_t> decode_tp_degrees(bool quick);

/// The decode sweep (gemm_bench --shapes decode): decode_layer_gemms of Llama-3-8B and
/// Llama-3-70B for every tp degree and token count above (2 x 4 x 9 x 4 = 288 GEMMs; quick
/// 2 x 2 x 3 x 4 = 48), ordered model, tp, tokens, linear.
std::vector<GemmShape> decode_gemm_sweep(bool quick);

/// The suite's default sweep: squares 1024..16384, the four shards' layer GEMMs and GPT-3's
/// attention batched GEMMs. `quick` keeps squares 1024 and 4096 and GPT-3's forward GEMMs.
std::vector<GemmShape> default_gemm_sweep(bool quick);

}  // namespace clustersim::kernels
