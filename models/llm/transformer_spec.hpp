#pragma once
/// Architecture of a decoder-only transformer, with Hugging Face-style field names: dense
/// (GPT, Llama) or mixture-of-experts (Mixtral, DeepSeek-V3), with MHA/GQA or multi-head
/// latent attention (MLA).
#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

#include "sim/config/name_table.hpp"

#include "models/llm/mla_spec.hpp"
#include "models/llm/moe_spec.hpp"

namespace clustersim::models {

/// MLP activation: "gelu" (two matrices, 4h typical), "swiglu" (gate, up, down) or "relu2"
/// (squared ReLU, max(x, 0)^2, as Nemotron-4 uses: two matrices like gelu, one elementwise
/// pass over the up-projection like gelu).
enum class Activation { gelu, swiglu, relu2 };

/// The Hugging Face `hidden_act` names: "gelu" (also "gelu_new", "gelu_pytorch_tanh") -> gelu;
/// "swiglu" or "silu" -> swiglu (Llama's gated MLP); "relu2" (Hugging Face's Nemotron name,
/// also "squared_relu" and NeMo's "squared-relu") -> relu2.
const config::NameTable<Activation>& activation_names();
/// "gelu", "swiglu" or "relu2".
std::string_view activation_name(Activation activation);
/// Parses a `hidden_act` (activation_names()). Throws ConfigError listing valid names.
Activation parse_activation(std::string_view name);

/// A decoder-only transformer. Field names follow Hugging Face configs. A default `moe`
/// (num_experts 0) and `attention` mha make the dense GPT/Llama model of earlier issues; every
/// count below is then unchanged.
///
/// Parameter counts ignore biases. All functions that count validate first (ConfigError).
struct TransformerSpec {
  std::string name;          ///< registry name, e.g. "llama-3-70b"
  std::string display_name;  ///< human-readable name (for reports; optional)
  std::string source;        ///< where the figures come from
  /// Other names the model goes by (Hugging Face ids, release names), for resolving a name a
  /// measurement gives (`clustersim validate`); compared as model names are.
  std::vector<std::string> aliases;
  std::int64_t hidden_size = 0;
  std::int64_t num_hidden_layers = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;  ///< == num_attention_heads for MHA; unused by MLA
  std::int64_t intermediate_size = 0;    ///< MLP width of the dense layers
  /// Hugging Face `head_dim` where a config states one that is not hidden_size /
  /// num_attention_heads (Qwen3, Gemma, Mistral-Nemo: 64 heads of 128 over a 5,120-wide model);
  /// 0: hidden_size / num_attention_heads. MHA/GQA only.
  std::int64_t explicit_head_dim = 0;
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  /// Rotary position embedding base (Hugging Face rope_theta); > 0: every layer rotates its
  /// queries and keys (a fused elementwise pass over them each way); 0: no RoPE (learned or
  /// no position embedding, which adds nothing per layer).
  double rope_theta = 0;
  /// Linear layers and norms carry bias vectors (GPT-2 / Megatron GPT: add_bias_linear and
  /// LayerNorm). Parameter counts ignore biases; this only tells how many parameter tensors a
  /// layer has (per-tensor ZeRO-3 collectives).
  bool linear_bias = false;
  Activation hidden_act = Activation::gelu;
  bool tie_word_embeddings = false;
  /// Dropout probabilities the model was trained with (Hugging Face hidden_dropout /
  /// attention_dropout; Megatron-LM --hidden-dropout / --attention-dropout). Only the training
  /// memory depends on them (stored dropout masks, docs/models.md "Memory"); 0: none.
  double hidden_dropout = 0;
  double attention_dropout = 0;
  AttentionKind attention = AttentionKind::mha;
  MlaSpec mla;  ///< used when attention == mla; all zero otherwise
  MoeSpec moe;  ///< moe.num_experts == 0: dense model

  /// Per-head width of MHA/GQA: explicit_head_dim, else hidden_size / num_attention_heads.
  /// Throws ConfigError for an MLA model, whose query/key and value heads differ
  /// (mla.qk_head_dim(), mla.v_head_dim).
  std::int64_t head_dim() const;
  /// Width of all query heads (num_attention_heads x head_dim(); hidden_size unless the config
  /// states another head_dim). MHA/GQA only.
  std::int64_t attention_width() const { return num_attention_heads * head_dim(); }
  /// True for a mixture-of-experts model.
  bool is_moe() const { return moe.enabled(); }
  /// Kind of layer `layer` (0-based): moe when is_moe(), layer >= moe.first_k_dense_replace and
  /// layer % moe.moe_layer_freq == 0 (Hugging Face's rule), else dense. Throws ConfigError for
  /// a layer outside [0, num_hidden_layers).
  LayerKind layer_kind(std::int64_t layer) const;
  /// Layers of kind moe (0 for a dense model).
  std::int64_t moe_layer_count() const;
  /// Layers of kind dense (num_hidden_layers for a dense model).
  std::int64_t dense_layer_count() const { return num_hidden_layers - moe_layer_count(); }

  /// Throws ConfigError naming the model and the field if a size is not positive,
  /// hidden_size is not a multiple of num_attention_heads (MHA/GQA), num_attention_heads is not
  /// a multiple of num_key_value_heads, an MLA size is out of range (or set on an MHA model), or
  /// an MoE field is out of range (top-k not in 1..experts, no MoE layer left, a field set on a
  /// dense model). max_position_embeddings may be 0 (unknown).
  void validate() const;

  // --- parameter counts of one layer's parts ---

  /// Attention matrices of one layer. MHA/GQA: Q and O h x attention_width() each, K and V h x
  /// (kv_heads x head_dim) each. MLA: the seven projections of mla_projection_parameters().
  double attention_matmul_parameters() const;
  /// Norm weights inside the attention: MLA's latent RMSNorms (q_lora_rank + kv_lora_rank);
  /// 0 for MHA/GQA.
  double attention_norm_parameters() const;
  /// Projections of one MLA layer. Throws ConfigError for an MHA/GQA model.
  MlaProjectionParameters mla_projections() const;
  /// MLP matrices of a dense layer: 2 h x intermediate_size (gelu, relu2) or 3 (swiglu).
  double dense_mlp_parameters() const;
  /// Matrices of one expert (routed or shared): 2 or 3 x h x moe_intermediate_size. 0 when dense.
  double expert_parameters() const;
  /// Router (gate) of one MoE layer: h x num_experts. 0 when dense.
  double router_parameters() const;
  /// Shared experts of one MoE layer: n_shared_experts x expert_parameters().
  double shared_expert_parameters() const;
  /// Routed experts of one MoE layer: num_experts x expert_parameters(). This is the part expert
  /// parallelism shards.
  double routed_expert_parameters() const;

  // --- parameter counts of one layer ---

  /// Every weight of a dense layer: attention matrices + attention norms + dense MLP + the two
  /// layer norms (2 h).
  double dense_layer_parameters() const;
  /// Every weight of an MoE layer: attention matrices + attention norms + 2 h norms + router +
  /// shared experts + all routed experts. Throws ConfigError for a dense model.
  double moe_layer_parameters() const;
  /// Weights of an MoE layer one token uses: as moe_layer_parameters() but with
  /// num_experts_per_tok routed experts instead of all. Throws ConfigError for a dense model.
  double moe_layer_active_parameters() const;
  /// Weight parameters of the matrices of one layer of a model whose layers are all alike (what
  /// GEMMs multiply): attention_matmul_parameters() + dense_mlp_parameters(). Throws ConfigError
  /// for an MoE model (its dense and MoE layers differ).
  double layer_matmul_parameters() const;
  /// Parameters of one layer of a model whose layers are all alike: layer_matmul_parameters()
  /// + two norm weight vectors (2 h) + attention norms (MLA). Throws ConfigError for an MoE
  /// model (use dense_layer_parameters() / moe_layer_parameters()).
  double layer_parameters() const;

  // --- whole model ---

  /// Total parameters: the layers (dense_layer_count x dense_layer_parameters + moe_layer_count
  /// x moe_layer_parameters) + vocab x h (embedding) + vocab x h (LM head, unless tied) + h
  /// (final norm). Learned position embeddings are not counted (GPT-3 and Megatron GPT have
  /// s x h of them: 25e6 for GPT-3, 0.014% of its size). DeepSeek-V3's multi-token-prediction
  /// module is not part of the model here.
  double total_parameters() const;
  /// Parameters one token's forward pass uses: as total_parameters() with
  /// moe_layer_active_parameters() for the MoE layers (embedding and LM head counted; the
  /// embedding is a lookup, but published "active" counts include it). == total_parameters()
  /// for a dense model.
  double active_parameters() const;
  /// Routed-expert parameters of the whole model (moe_layer_count x routed_expert_parameters):
  /// what expert parallelism shards. 0 for a dense model.
  double expert_parallel_parameters() const;
};

}  // namespace clustersim::models
