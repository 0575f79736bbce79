#pragma once
/// Multi-head latent attention (MLA) of DeepSeek-V2/V3 (DeepSeek-AI, arXiv:2405.04434 Sec. 2.1;
/// arXiv:2412.19437 Sec. 2.1.1), with Hugging Face `DeepseekV3Config` field names.
///
/// Per token and layer, with h the hidden size and a the heads:
///   queries   x -> c_q = W_DQ x (q_lora_rank, then RMSNorm) -> q = W_UQ c_q (a x qk_head_dim);
///             without query compression (q_lora_rank 0) q = W_Q x directly;
///   keys/vals x -> c_kv = W_DKV x (kv_lora_rank, then RMSNorm) and k_rope = W_KR x
///             (qk_rope_head_dim, one RoPE key shared by all heads; HF fuses W_DKV and W_KR into
///             kv_a_proj_with_mqa), then k_nope = W_UK c_kv (a x qk_nope_head_dim) and
///             v = W_UV c_kv (a x v_head_dim) (HF fuses W_UK and W_UV into kv_b_proj);
///   attention over qk_head_dim = qk_nope_head_dim + qk_rope_head_dim per head, values of
///             v_head_dim; output o = W_O (a x v_head_dim -> h).
/// ClusterSim costs MLA by these FLOP and byte counts (docs/models.md, "Mixture of experts and
/// MLA"): training computes W_UK and W_UV explicitly (no absorbed-matrix inference trick).
#include <cstdint>

namespace clustersim::models {

/// Which attention a model's layers use.
enum class AttentionKind {
  mha,  ///< multi-head / grouped-query attention: Q, K, V, O projections of head_dim each
  mla,  ///< multi-head latent attention (MlaSpec)
};

/// MLA sizes (Hugging Face names). All widths are in elements per token.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;       ///< query latent width; 0: queries are not compressed
  std::int64_t kv_lora_rank = 0;      ///< key/value latent width (what an MLA KV cache stores)
  std::int64_t qk_nope_head_dim = 0;  ///< per-head query/key width without RoPE
  std::int64_t qk_rope_head_dim = 0;  ///< per-head RoPE width (queries per head; one shared key)
  std::int64_t v_head_dim = 0;        ///< per-head value width

  /// Per-head width of queries and keys: qk_nope_head_dim + qk_rope_head_dim.
  std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

/// Weight parameters of each MLA projection of one layer (biases: none in DeepSeek-V3).
struct MlaProjectionParameters {
  double w_dq = 0;   ///< h x q_lora_rank (0 without query compression)
  double w_uq = 0;   ///< q_lora_rank x a x qk_head_dim (without compression: W_Q, h x a x qk_head_dim)
  double w_dkv = 0;  ///< h x kv_lora_rank
  double w_kr = 0;   ///< h x qk_rope_head_dim: the RoPE key shared by all heads
  double w_uk = 0;   ///< kv_lora_rank x a x qk_nope_head_dim
  double w_uv = 0;   ///< kv_lora_rank x a x v_head_dim
  double w_o = 0;    ///< a x v_head_dim x h
  double norms = 0;  ///< RMSNorm weights of the latents: q_lora_rank + kv_lora_rank

  /// Sum of the seven projection matrices (what the GEMMs multiply), parameters.
  double matmul() const { return w_dq + w_uq + w_dkv + w_kr + w_uk + w_uv + w_o; }
};

/// The projections of one MLA layer of width `hidden_size` with `heads` attention heads.
/// Does not validate (TransformerSpec::validate does).
MlaProjectionParameters mla_projection_parameters(const MlaSpec& mla, std::int64_t hidden_size,
                                                  std::int64_t heads);

}  // namespace clustersim::models
