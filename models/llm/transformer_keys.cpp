#include "models/llm/transformer_keys.hpp"

#include <algorithm>
#include <array>

namespace clustersim::models {
namespace {

using config::ConfigNode;
using config::Declarations;
using config::Problems;

/// Position of `key`'s value in a model entry, or of the entry when the key is absent.
config::Position entry_position(const ConfigNode& entry, const char* key) {
  const ConfigNode* value = entry.find(key);
  return value != nullptr ? value->position : entry.position;
}

bool written(const ConfigNode& entry, const char* key) {
  const ConfigNode* value = entry.find(key);
  return value != nullptr && !value->is_null();
}

/// The mixture-of-experts keys, with the checks between them.
void complete_moe(const ConfigNode& entry, const std::string& path, TransformerSpec& spec, Problems& problems) {
  auto report = [&](const char* key, const std::string& message) {
    const std::string key_path = path + "." + key;
    if (!problems.bad(key_path)) problems.add(entry_position(entry, key), key_path, message);
  };
  const bool mixtral_key = written(entry, "num_local_experts");
  const bool deepseek_key = written(entry, "n_routed_experts");
  const char* experts_key = deepseek_key ? "n_routed_experts" : "num_local_experts";
  if (mixtral_key && deepseek_key) {
    report("n_routed_experts", "set num_local_experts (Mixtral's key) or n_routed_experts (DeepSeek's), not both");
    return;
  }
  if (!mixtral_key && !deepseek_key) {
    for (const char* key : {"num_experts_per_tok", "n_shared_experts", "moe_intermediate_size",
                            "first_k_dense_replace", "moe_layer_freq"}) {
      if (written(entry, key)) {
        report(key, std::string(key) + " needs num_local_experts or n_routed_experts (model '" + spec.name +
                        "' has no experts)");
      }
    }
    spec.moe = MoeSpec{};
    return;
  }
  MoeSpec& moe = spec.moe;
  // Mixtral's experts are intermediate_size wide (its config has no moe_intermediate_size).
  if (!written(entry, "moe_intermediate_size")) moe.moe_intermediate_size = spec.intermediate_size;
  if (!written(entry, "num_experts_per_tok")) {
    report(experts_key, std::string(experts_key) + " needs num_experts_per_tok (routed experts per token, top-k)");
  } else if (moe.num_experts > 0 && moe.num_experts_per_tok > moe.num_experts) {
    report("num_experts_per_tok", "num_experts_per_tok " + std::to_string(moe.num_experts_per_tok) +
                                      " exceeds the " + std::to_string(moe.num_experts) + " experts (" + experts_key +
                                      ")");
  }
  if (moe.num_experts > 0 && spec.num_hidden_layers > 0 && moe.moe_layer_freq > 0 && spec.moe_layer_count() == 0) {
    const char* key = written(entry, "first_k_dense_replace") ? "first_k_dense_replace" : "moe_layer_freq";
    report(key, "first_k_dense_replace " + std::to_string(moe.first_k_dense_replace) + " and moe_layer_freq " +
                    std::to_string(moe.moe_layer_freq) + " leave no MoE layer among the " +
                    std::to_string(spec.num_hidden_layers) + " layers");
  }
}

/// The multi-head latent attention keys: any of them makes the attention MLA, which then needs
/// all but q_lora_rank.
void complete_mla(const ConfigNode& entry, const std::string& path, TransformerSpec& spec, Problems& problems) {
  constexpr std::array<const char*, 5> kKeys{"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                             "v_head_dim"};
  if (std::none_of(kKeys.begin(), kKeys.end(), [&](const char* key) { return written(entry, key); })) return;
  spec.attention = AttentionKind::mla;
  for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
    const std::string key_path = path + "." + key;
    if (!written(entry, key) && !problems.bad(key_path)) {
      problems.add(entry.position, key_path,
                   std::string("multi-head latent attention needs ") + key +
                       " (an MLA model sets kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim; "
                       "q_lora_rank is optional)");
    }
  }
  if (written(entry, "qk_nope_head_dim") && written(entry, "qk_rope_head_dim") && spec.mla.qk_head_dim() == 0) {
    const std::string key_path = path + ".qk_nope_head_dim";
    if (!problems.bad(key_path)) {
      problems.add(entry_position(entry, "qk_nope_head_dim"), key_path,
                   "qk_nope_head_dim + qk_rope_head_dim must be positive (the query/key width per head)");
    }
  }
}

void declare_moe_and_mla(Declarations<TransformerSpec>& k) {
  const auto moe = [&k](const char* key, std::int64_t MoeSpec::*field, double min, double max,
                        const char* help) -> config::Field& {
    return k.integer(key, config::member(&TransformerSpec::moe, field), help).range(min, max);
  };
  const auto mla = [&k](const char* key, std::int64_t MlaSpec::*field, double min, const char* help) {
    k.integer(key, config::member(&TransformerSpec::mla, field), help).range(min, 1e12).optional();
  };
  moe("num_local_experts", &MoeSpec::num_experts, 1, 1e6,
      "mixture of experts: routed experts per MoE layer (Mixtral's key; DeepSeek's is n_routed_experts); unset: a "
      "dense model")
      .optional();
  moe("n_routed_experts", &MoeSpec::num_experts, 1, 1e6,
      "mixture of experts: routed experts per MoE layer (DeepSeek's key)")
      .optional();
  moe("num_experts_per_tok", &MoeSpec::num_experts_per_tok, 1, 1e6,
      "routed experts each token goes to (top-k); MoE models only")
      .optional();
  moe("n_shared_experts", &MoeSpec::n_shared_experts, 0, 1e6,
      "experts every token goes to, each moe_intermediate_size wide; MoE only");
  moe("moe_intermediate_size", &MoeSpec::moe_intermediate_size, 1, 1e12,
      "FFN width of one expert; unset: intermediate_size (Mixtral)")
      .optional();
  moe("first_k_dense_replace", &MoeSpec::first_k_dense_replace, 0, 1e12,
      "dense layers before the first MoE layer (DeepSeek-V3: 3)");
  moe("moe_layer_freq", &MoeSpec::moe_layer_freq, 1, 1e12,
      "layer l is MoE when l >= first_k_dense_replace and l % moe_layer_freq == 0 (Hugging Face)");
  mla("q_lora_rank", &MlaSpec::q_lora_rank, 0,
      "multi-head latent attention (MLA): query latent width; unset or 0: queries not compressed");
  mla("kv_lora_rank", &MlaSpec::kv_lora_rank, 1,
      "MLA key/value latent width (what the KV cache stores); setting the MLA keys makes the attention MLA");
  mla("qk_nope_head_dim", &MlaSpec::qk_nope_head_dim, 0, "MLA per-head query/key width without RoPE");
  mla("qk_rope_head_dim", &MlaSpec::qk_rope_head_dim, 0, "MLA per-head RoPE width (one RoPE key shared by all heads)");
  mla("v_head_dim", &MlaSpec::v_head_dim, 1, "MLA per-head value width");
}

}  // namespace

const Declarations<TransformerSpec>& transformer_keys() {
  static const Declarations<TransformerSpec> keys = [] {
    using T = TransformerSpec;
    Declarations<T> k;
    k.string("display_name", &T::display_name, "human-readable name");
    k.string("source", &T::source, "where the figures come from (e.g. the config.json)");
    k.string_list("aliases", &T::aliases, "an alias",
                  "other names of the model (Hugging Face ids, release names) that `clustersim validate` resolves "
                  "a measurement's model name by");
    k.integer("hidden_size", &T::hidden_size, "model width").range(1, 1e12).need();
    k.integer("num_hidden_layers", &T::num_hidden_layers, "transformer layers").range(1, 1e12).need();
    k.integer("num_attention_heads", &T::num_attention_heads, "query heads").range(1, 1e12).need();
    k.integer("num_key_value_heads", &T::num_key_value_heads, "key/value heads (GQA); unset: num_attention_heads")
        .range(1, 1e12)
        .optional();
    k.integer("head_dim", &T::explicit_head_dim,
              "width of one attention head where the config states one (Qwen3, Gemma); unset: hidden_size / "
              "num_attention_heads")
        .range(1, 1e12)
        .optional();
    k.integer("intermediate_size", &T::intermediate_size, "MLP width; unset: 4 x hidden_size (gelu only)")
        .range(1, 1e12)
        .optional();
    k.integer("vocab_size", &T::vocab_size, "vocabulary size").range(1, 1e12).need();
    k.integer("max_position_embeddings", &T::max_position_embeddings, "longest supported sequence")
        .range(1, 1e12)
        .optional();
    k.boolean("linear_bias", &T::linear_bias,
              "linear layers and norms carry biases (GPT-2, Megatron GPT); only the count of parameter tensors "
              "depends on it (per-tensor ZeRO-3 collectives)");
    k.number("rope_theta", &T::rope_theta,
             "rotary position embedding base; set: every layer rotates queries and keys (a fused elementwise pass "
             "each way); unset: no RoPE")
        .positive()
        .optional();
    k.enumeration("hidden_act", &T::hidden_act, activation_names(),
                  "MLP activation: silu/swiglu = gated 3-matrix MLP, gelu (gelu_new, gelu_pytorch_tanh) = 2-matrix "
                  "MLP, relu2 (squared_relu, squared-relu) = squared-ReLU 2-matrix MLP (Nemotron-4)");
    k.boolean("tie_word_embeddings", &T::tie_word_embeddings, "LM head shares the embedding matrix");
    k.number("hidden_dropout", &T::hidden_dropout,
             "dropout after attention, MLP and embedding in training (Megatron-LM default 0.1; Llama-style "
             "configs 0); > 0: their 1-byte masks are stored for the backward")
        .range(0, 0.999);
    k.number("attention_dropout", &T::attention_dropout,
             "dropout on the attention scores in training; > 0: unfused attention stores its mask and the "
             "dropped-out scores")
        .range(0, 0.999);
    declare_moe_and_mla(k);
    return k;
  }();
  return keys;
}

void complete_transformer(const ConfigNode& entry, const std::string& path, TransformerSpec& spec,
                          Problems& problems) {
  if (!written(entry, "num_key_value_heads")) spec.num_key_value_heads = spec.num_attention_heads;
  if (!written(entry, "intermediate_size")) {
    if (spec.hidden_act == Activation::gelu) {
      spec.intermediate_size = 4 * spec.hidden_size;
    } else if (!problems.bad(path)) {
      problems.add(entry.position, path + ".intermediate_size",
                   "intermediate_size is required for hidden_act '" + entry.find("hidden_act")->text +
                       "' (only gelu defaults to 4 x hidden_size)");
    }
  }
  complete_moe(entry, path, spec, problems);
  complete_mla(entry, path, spec, problems);
}

}  // namespace clustersim::models
