#pragma once
/// Architecture of a decoder-only transformer, with Hugging Face-style field names.
#include <cstdint>
#include <string>

namespace clustersim::models {

/// MLP activation: "gelu" (two matrices, 4h typical) or "swiglu" (gate, up, down).
enum class Activation { gelu, swiglu };

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
  /// Parameters of one transformer layer (attention + MLP + norms), biases ignored.
  double layer_parameters() const;
  /// Total parameters including embeddings (and the LM head unless tied).
  double total_parameters() const;
};

}  // namespace clustersim::models
