#include "models/llm/transformer_spec.hpp"

#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

std::string_view activation_name(Activation activation) {
  switch (activation) {
    case Activation::gelu:
      return "gelu";
    case Activation::swiglu:
      return "swiglu";
  }
  throw ConfigError("activation_name: invalid Activation value");
}

Activation parse_activation(std::string_view name) {
  if (name == "gelu" || name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu;
  if (name == "silu" || name == "swiglu") return Activation::swiglu;
  throw ConfigError("unknown hidden_act '" + std::string(name) +
                    "'; valid: gelu, gelu_new, gelu_pytorch_tanh (2-matrix MLP), silu, swiglu "
                    "(gated 3-matrix MLP)");
}

void TransformerSpec::validate() const {
  auto fail = [this](const std::string& what) {
    throw ConfigError("model '" + name + "': " + what);
  };
  auto positive = [&fail](std::int64_t value, const char* field) {
    if (value <= 0) fail(std::string(field) + " must be positive, got " + std::to_string(value));
  };
  positive(hidden_size, "hidden_size");
  positive(num_hidden_layers, "num_hidden_layers");
  positive(num_attention_heads, "num_attention_heads");
  positive(num_key_value_heads, "num_key_value_heads");
  positive(intermediate_size, "intermediate_size");
  positive(vocab_size, "vocab_size");
  if (max_position_embeddings < 0) fail("max_position_embeddings must not be negative");
  if (hidden_size % num_attention_heads != 0) {
    fail("hidden_size " + std::to_string(hidden_size) + " is not a multiple of " +
         "num_attention_heads " + std::to_string(num_attention_heads));
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    fail("num_attention_heads " + std::to_string(num_attention_heads) +
         " is not a multiple of num_key_value_heads " + std::to_string(num_key_value_heads));
  }
}

double TransformerSpec::layer_matmul_parameters() const {
  validate();
  const double h = static_cast<double>(hidden_size);
  const double kv_width = static_cast<double>(num_key_value_heads * head_dim());
  const double ffn = static_cast<double>(intermediate_size);
  const double attention = 2.0 * h * h + 2.0 * h * kv_width;  // Q, O + K, V
  const double mlp_matrices = hidden_act == Activation::swiglu ? 3.0 : 2.0;
  return attention + mlp_matrices * h * ffn;
}

double TransformerSpec::layer_parameters() const {
  return layer_matmul_parameters() + 2.0 * static_cast<double>(hidden_size);
}

double TransformerSpec::total_parameters() const {
  const double h = static_cast<double>(hidden_size);
  const double embedding = static_cast<double>(vocab_size) * h;
  return static_cast<double>(num_hidden_layers) * layer_parameters() + embedding +
         (tie_word_embeddings ? 0.0 : embedding) + h;
}

}  // namespace clustersim::models
