#include "models/llm/transformer_spec.hpp"

#include <string>
#include <utility>

#include "sim/engine/error.hpp"

namespace clustersim::models {

const config::NameTable<Activation>& activation_names() {
  static const config::NameTable<Activation> names("hidden_act", {{"gelu", Activation::gelu},
                                                                   {"swiglu", Activation::swiglu},
                                                                   {"relu2", Activation::relu2},
                                                                   {"gelu_new", Activation::gelu},
                                                                   {"gelu_pytorch_tanh", Activation::gelu},
                                                                   {"silu", Activation::swiglu},
                                                                   {"squared_relu", Activation::relu2},
                                                                   {"squared-relu", Activation::relu2}});
  return names;
}

std::string_view activation_name(Activation activation) { return activation_names().name(activation); }

Activation parse_activation(std::string_view name) { return activation_names().parse(name); }

namespace {

double mlp_matrices(Activation activation) { return activation == Activation::swiglu ? 3.0 : 2.0; }

}  // namespace

std::int64_t TransformerSpec::head_dim() const {
  if (attention == AttentionKind::mla) {
    throw ConfigError("model '" + name +
                      "': head_dim() is for MHA/GQA; an MLA model has mla.qk_head_dim() = " +
                      std::to_string(mla.qk_head_dim()) + " and mla.v_head_dim = " +
                      std::to_string(mla.v_head_dim));
  }
  return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_attention_heads;
}

std::int64_t TransformerSpec::moe_layer_count() const {
  if (!is_moe() || moe.moe_layer_freq <= 0) return 0;
  const std::int64_t first = moe.first_k_dense_replace < 0 ? 0 : moe.first_k_dense_replace;
  const std::int64_t last = num_hidden_layers - 1;
  if (first > last) return 0;
  // Multiples of moe_layer_freq in [first, last].
  const std::int64_t f = moe.moe_layer_freq;
  return last / f - (first + f - 1) / f + 1;
}

LayerKind TransformerSpec::layer_kind(std::int64_t layer) const {
  if (layer < 0 || layer >= num_hidden_layers) {
    throw ConfigError("model '" + name + "': layer " + std::to_string(layer) + " is outside [0, " +
                      std::to_string(num_hidden_layers) + ")");
  }
  const bool moe_layer =
      is_moe() && layer >= moe.first_k_dense_replace && layer % moe.moe_layer_freq == 0;
  return moe_layer ? LayerKind::moe : LayerKind::dense;
}

void TransformerSpec::validate() const {
  auto fail = [this](const std::string& what) {
    throw ConfigError("model '" + name + "': " + what);
  };
  auto positive = [&fail](std::int64_t value, const std::string& field) {
    if (value <= 0) fail(field + " must be positive, got " + std::to_string(value));
  };
  auto not_negative = [&fail](std::int64_t value, const std::string& field) {
    if (value < 0) fail(field + " must not be negative, got " + std::to_string(value));
  };
  positive(hidden_size, "hidden_size");
  positive(num_hidden_layers, "num_hidden_layers");
  positive(num_attention_heads, "num_attention_heads");
  positive(num_key_value_heads, "num_key_value_heads");
  positive(intermediate_size, "intermediate_size");
  positive(vocab_size, "vocab_size");
  if (max_position_embeddings < 0) fail("max_position_embeddings must not be negative");
  not_negative(explicit_head_dim, "head_dim");
  if (attention == AttentionKind::mla && explicit_head_dim > 0) {
    fail("head_dim is for MHA/GQA models; an MLA model's heads are qk_nope_head_dim + qk_rope_head_dim and v_head_dim");
  }
  if (attention == AttentionKind::mha && explicit_head_dim == 0 && hidden_size % num_attention_heads != 0) {
    fail("hidden_size " + std::to_string(hidden_size) + " is not a multiple of " +
         "num_attention_heads " + std::to_string(num_attention_heads));
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    fail("num_attention_heads " + std::to_string(num_attention_heads) +
         " is not a multiple of num_key_value_heads " + std::to_string(num_key_value_heads));
  }

  if (attention == AttentionKind::mla) {
    not_negative(mla.q_lora_rank, "q_lora_rank");
    positive(mla.kv_lora_rank, "kv_lora_rank");
    not_negative(mla.qk_nope_head_dim, "qk_nope_head_dim");
    not_negative(mla.qk_rope_head_dim, "qk_rope_head_dim");
    positive(mla.qk_head_dim(), "qk_nope_head_dim + qk_rope_head_dim");
    positive(mla.v_head_dim, "v_head_dim");
  } else {
    const std::pair<std::int64_t, const char*> mla_fields[] = {{mla.q_lora_rank, "q_lora_rank"},
                                                               {mla.kv_lora_rank, "kv_lora_rank"},
                                                               {mla.qk_nope_head_dim, "qk_nope_head_dim"},
                                                               {mla.qk_rope_head_dim, "qk_rope_head_dim"},
                                                               {mla.v_head_dim, "v_head_dim"}};
    for (const auto& [value, field] : mla_fields) {
      if (value != 0) fail(std::string(field) + " is an MLA size, but the model's attention is MHA/GQA");
    }
  }

  not_negative(moe.num_experts, "num_experts");
  if (!is_moe()) {
    const std::pair<bool, const char*> moe_fields[] = {
        {moe.num_experts_per_tok != 0, "num_experts_per_tok"},
        {moe.n_shared_experts != 0, "n_shared_experts"},
        {moe.moe_intermediate_size != 0, "moe_intermediate_size"},
        {moe.first_k_dense_replace != 0, "first_k_dense_replace"},
        {moe.moe_layer_freq != 1, "moe_layer_freq"}};
    for (const auto& [set, field] : moe_fields) {
      if (set) fail(std::string(field) + " is set, but the model has no experts (num_experts 0)");
    }
    return;
  }
  if (moe.num_experts_per_tok < 1 || moe.num_experts_per_tok > moe.num_experts) {
    fail("num_experts_per_tok " + std::to_string(moe.num_experts_per_tok) + " must be between 1 and " +
         "the " + std::to_string(moe.num_experts) + " experts");
  }
  not_negative(moe.n_shared_experts, "n_shared_experts");
  positive(moe.moe_intermediate_size, "moe_intermediate_size");
  positive(moe.moe_layer_freq, "moe_layer_freq");
  not_negative(moe.first_k_dense_replace, "first_k_dense_replace");
  if (moe_layer_count() == 0) {
    fail("no layer is an MoE layer: first_k_dense_replace " + std::to_string(moe.first_k_dense_replace) +
         " and moe_layer_freq " + std::to_string(moe.moe_layer_freq) + " leave none of the " +
         std::to_string(num_hidden_layers) + " layers");
  }
}

double TransformerSpec::attention_matmul_parameters() const {
  validate();
  if (attention == AttentionKind::mla) return mla_projections().matmul();
  const double h = static_cast<double>(hidden_size);
  const double kv_width = static_cast<double>(num_key_value_heads * head_dim());
  return 2.0 * h * static_cast<double>(attention_width()) + 2.0 * h * kv_width;  // Q, O + K, V
}

double TransformerSpec::attention_norm_parameters() const {
  validate();
  return attention == AttentionKind::mla ? mla_projections().norms : 0.0;
}

MlaProjectionParameters TransformerSpec::mla_projections() const {
  if (attention != AttentionKind::mla) {
    throw ConfigError("model '" + name + "': mla_projections() needs an MLA model; its attention is MHA/GQA");
  }
  return mla_projection_parameters(mla, hidden_size, num_attention_heads);
}

double TransformerSpec::dense_mlp_parameters() const {
  validate();
  return mlp_matrices(hidden_act) * static_cast<double>(hidden_size) * static_cast<double>(intermediate_size);
}

double TransformerSpec::expert_parameters() const {
  validate();
  return mlp_matrices(hidden_act) * static_cast<double>(hidden_size) *
         static_cast<double>(moe.moe_intermediate_size);
}

double TransformerSpec::router_parameters() const {
  validate();
  return static_cast<double>(hidden_size) * static_cast<double>(moe.num_experts);
}

double TransformerSpec::shared_expert_parameters() const {
  return static_cast<double>(moe.n_shared_experts) * expert_parameters();
}

double TransformerSpec::routed_expert_parameters() const {
  return static_cast<double>(moe.num_experts) * expert_parameters();
}

double TransformerSpec::dense_layer_parameters() const {
  return attention_matmul_parameters() + dense_mlp_parameters() + 2.0 * static_cast<double>(hidden_size) +
         attention_norm_parameters();
}

namespace {

void require_moe(const TransformerSpec& spec, const char* function) {
  spec.validate();
  if (!spec.is_moe()) {
    throw ConfigError("model '" + spec.name + "': " + function + " needs a mixture-of-experts model (num_experts 0)");
  }
}

void require_uniform_layers(const TransformerSpec& spec, const char* function) {
  spec.validate();
  if (spec.is_moe()) {
    throw ConfigError("model '" + spec.name + "': " + function +
                      " assumes identical layers, but a mixture-of-experts model has dense and MoE layers "
                      "(dense_layer_parameters, moe_layer_parameters)");
  }
}

}  // namespace

double TransformerSpec::moe_layer_parameters() const {
  require_moe(*this, "moe_layer_parameters()");
  return attention_matmul_parameters() + attention_norm_parameters() + 2.0 * static_cast<double>(hidden_size) +
         router_parameters() + shared_expert_parameters() + routed_expert_parameters();
}

double TransformerSpec::moe_layer_active_parameters() const {
  require_moe(*this, "moe_layer_active_parameters()");
  return attention_matmul_parameters() + attention_norm_parameters() + 2.0 * static_cast<double>(hidden_size) +
         router_parameters() + shared_expert_parameters() +
         static_cast<double>(moe.num_experts_per_tok) * expert_parameters();
}

double TransformerSpec::layer_matmul_parameters() const {
  require_uniform_layers(*this, "layer_matmul_parameters()");
  return attention_matmul_parameters() + dense_mlp_parameters();
}

double TransformerSpec::layer_parameters() const {
  require_uniform_layers(*this, "layer_parameters()");
  const double norms = 2.0 * static_cast<double>(hidden_size);
  if (attention == AttentionKind::mla) return layer_matmul_parameters() + norms + attention_norm_parameters();
  return layer_matmul_parameters() + norms;
}

namespace {

/// Embedding + LM head (unless tied) + final norm.
double embedding_head_parameters(const TransformerSpec& spec) {
  const double h = static_cast<double>(spec.hidden_size);
  const double embedding = static_cast<double>(spec.vocab_size) * h;
  return embedding + (spec.tie_word_embeddings ? 0.0 : embedding) + h;
}

}  // namespace

double TransformerSpec::total_parameters() const {
  validate();
  if (!is_moe()) {
    const double h = static_cast<double>(hidden_size);
    const double embedding = static_cast<double>(vocab_size) * h;
    return static_cast<double>(num_hidden_layers) * layer_parameters() + embedding +
           (tie_word_embeddings ? 0.0 : embedding) + h;
  }
  return static_cast<double>(dense_layer_count()) * dense_layer_parameters() +
         static_cast<double>(moe_layer_count()) * moe_layer_parameters() + embedding_head_parameters(*this);
}

double TransformerSpec::active_parameters() const {
  validate();
  if (!is_moe()) return total_parameters();
  return static_cast<double>(dense_layer_count()) * dense_layer_parameters() +
         static_cast<double>(moe_layer_count()) * moe_layer_active_parameters() + embedding_head_parameters(*this);
}

double TransformerSpec::expert_parallel_parameters() const {
  validate();
  return is_moe() ? static_cast<double>(moe_layer_count()) * routed_expert_parameters() : 0.0;
}

}  // namespace clustersim::models
