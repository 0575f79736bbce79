#pragma once
/// Architecture of a decoder-only transformer, with Hugging Face-style field names.
#include <cstdint>
#include <string>
#include <string_view>

namespace clustersim::models {

/// MLP activation: "gelu" (two matrices, 4h typical) or "swiglu" (gate, up, down).
enum class Activation { gelu, swiglu };

/// "gelu" or "swiglu".
std::string_view activation_name(Activation activation);
/// Parses a Hugging Face `hidden_act`: "gelu" (also "gelu_new", "gelu_pytorch_tanh") -> gelu;
/// "silu" or "swiglu" -> swiglu (Llama's gated MLP). Throws ConfigError listing valid names.
Activation parse_activation(std::string_view name);

/// A dense decoder-only transformer (GPT, Llama). Field names follow Hugging Face configs.
struct TransformerSpec {
  std::string name;    ///< registry name, e.g. "llama-3-70b"
  std::string source;  ///< where the figures come from
  std::int64_t hidden_size = 0;
  std::int64_t num_hidden_layers = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;  ///< == num_attention_heads for MHA
  std::int64_t intermediate_size = 0;    ///< MLP width
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  Activation hidden_act = Activation::gelu;
  bool tie_word_embeddings = false;

  std::int64_t head_dim() const { return hidden_size / num_attention_heads; }

  /// Throws ConfigError naming the model and the field if a size is not positive,
  /// hidden_size is not a multiple of num_attention_heads, or num_attention_heads is not a
  /// multiple of num_key_value_heads. max_position_embeddings may be 0 (unknown).
  void validate() const;

  /// Weight parameters of the attention and MLP matrices of one layer (what GEMMs multiply):
  /// Q and O h x h each, K and V h x (kv_heads x head_dim) each, MLP 2 h x ffn (gelu) or
  /// 3 h x ffn (swiglu). Biases ignored. Validates first.
  double layer_matmul_parameters() const;
  /// Parameters of one transformer layer: layer_matmul_parameters() + two norm weight vectors
  /// (2 h). Biases ignored. Validates first.
  double layer_parameters() const;
  /// Total parameters: layers x layer_parameters + vocab x h (embedding) + vocab x h (LM head,
  /// unless tied) + h (final norm). Learned position embeddings are not counted (GPT-3 and
  /// Megatron GPT have s x h of them: 25e6 for GPT-3, 0.014% of its size). Validates first.
  double total_parameters() const;
};

}  // namespace clustersim::models
