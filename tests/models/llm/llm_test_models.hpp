#pragma once
// Published architectures (Hugging Face config.json values) shared by the models/llm tests.
#include "models/llm/transformer_spec.hpp"

namespace clustersim::models::testing {

/// Llama-3-8B: GQA (32 query heads, 8 key/value heads of 128), SwiGLU 14336, RoPE.
inline TransformerSpec llama3_8b() {
  TransformerSpec spec;
  spec.name = "llama-3-8b";
  spec.hidden_size = 4096;
  spec.num_hidden_layers = 32;
  spec.num_attention_heads = 32;
  spec.num_key_value_heads = 8;
  spec.intermediate_size = 14336;
  spec.vocab_size = 128256;
  spec.rope_theta = 500000;
  spec.hidden_act = Activation::swiglu;
  return spec;
}

/// Mixtral-8x7B: Llama-like attention, 8 experts of 14336, top-2, in every layer.
inline TransformerSpec mixtral_8x7b() {
  TransformerSpec spec;
  spec.name = "mixtral-8x7b";
  spec.hidden_size = 4096;
  spec.num_hidden_layers = 32;
  spec.num_attention_heads = 32;
  spec.num_key_value_heads = 8;
  spec.intermediate_size = 14336;
  spec.vocab_size = 32000;
  spec.rope_theta = 1000000;
  spec.hidden_act = Activation::swiglu;
  spec.moe.num_experts = 8;
  spec.moe.num_experts_per_tok = 2;
  spec.moe.moe_intermediate_size = 14336;
  return spec;
}

/// DeepSeek-V3: MLA, 256 routed experts of 2048 (top-8) and one shared, the first 3 layers dense.
inline TransformerSpec deepseek_v3() {
  TransformerSpec spec;
  spec.name = "deepseek-v3";
  spec.hidden_size = 7168;
  spec.num_hidden_layers = 61;
  spec.num_attention_heads = 128;
  spec.num_key_value_heads = 128;
  spec.intermediate_size = 18432;
  spec.vocab_size = 129280;
  spec.rope_theta = 10000;
  spec.hidden_act = Activation::swiglu;
  spec.attention = AttentionKind::mla;
  spec.mla = {1536, 512, 128, 64, 128};
  spec.moe.num_experts = 256;
  spec.moe.num_experts_per_tok = 8;
  spec.moe.n_shared_experts = 1;
  spec.moe.moe_intermediate_size = 2048;
  spec.moe.first_k_dense_replace = 3;
  return spec;
}

}  // namespace clustersim::models::testing
