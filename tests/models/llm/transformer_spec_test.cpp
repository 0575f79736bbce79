#include "models/llm/transformer_spec.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/error.hpp"

using namespace clustersim;
using namespace clustersim::models;

namespace {

TransformerSpec llama_3_70b() {
  TransformerSpec spec;
  spec.name = "llama-3-70b";
  spec.hidden_size = 8192;
  spec.num_hidden_layers = 80;
  spec.num_attention_heads = 64;
  spec.num_key_value_heads = 8;
  spec.intermediate_size = 28672;
  spec.vocab_size = 128256;
  spec.max_position_embeddings = 8192;
  spec.hidden_act = Activation::swiglu;
  spec.tie_word_embeddings = false;
  return spec;
}

TransformerSpec llama_2_7b() {
  TransformerSpec spec;
  spec.name = "llama-2-7b";
  spec.hidden_size = 4096;
  spec.num_hidden_layers = 32;
  spec.num_attention_heads = 32;
  spec.num_key_value_heads = 32;
  spec.intermediate_size = 11008;
  spec.vocab_size = 32000;
  spec.hidden_act = Activation::swiglu;
  return spec;
}

TransformerSpec gpt3_175b() {
  TransformerSpec spec;
  spec.name = "gpt3-175b";
  spec.hidden_size = 12288;
  spec.num_hidden_layers = 96;
  spec.num_attention_heads = 96;
  spec.num_key_value_heads = 96;
  spec.intermediate_size = 4 * 12288;
  spec.vocab_size = 50257;
  spec.hidden_act = Activation::gelu;
  spec.tie_word_embeddings = true;
  return spec;
}

std::string message_of(const auto& call) {
  try {
    call();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "<no ConfigError>";
}

}  // namespace

TEST_CASE("Llama-3-70B parameter count (GQA, SwiGLU, untied)") {
  const TransformerSpec spec = llama_3_70b();
  CHECK(spec.head_dim() == 128);
  // Q, O: 8192^2 each; K, V: 8192 x 1024 each; MLP 3 x 8192 x 28672; norms 2 x 8192.
  CHECK(spec.layer_parameters() == 855654400.0);
  // 80 layers + 2 x 128256 x 8192 (embedding and LM head) + 8192 final norm.
  CHECK(spec.total_parameters() == 70553706496.0);
  CHECK(spec.total_parameters() == doctest::Approx(70.6e9).epsilon(0.005));
}

TEST_CASE("Llama-2-7B and GPT-3 175B parameter counts") {
  CHECK(llama_2_7b().total_parameters() == 6738415616.0);  // HF reports 6,738,415,616
  // GPT-3: 96 x (12 h^2 + 2h) + 50257 h (tied) + h
  CHECK(gpt3_175b().total_parameters() == 174566105088.0);
  CHECK(gpt3_175b().total_parameters() == doctest::Approx(174.6e9).epsilon(0.001));
  // Untying adds exactly one vocab x hidden matrix.
  TransformerSpec untied = gpt3_175b();
  untied.tie_word_embeddings = false;
  CHECK(untied.total_parameters() - gpt3_175b().total_parameters() == 50257.0 * 12288.0);
}

TEST_CASE("activation names follow Hugging Face hidden_act") {
  CHECK(parse_activation("silu") == Activation::swiglu);
  CHECK(parse_activation("gelu_new") == Activation::gelu);
  CHECK(activation_name(Activation::swiglu) == "swiglu");
  CHECK(message_of([] { parse_activation("relu"); }).find("unknown hidden_act 'relu'; valid: gelu") ==
        0);
}

TEST_CASE("invalid transformer specs are rejected with the field named") {
  TransformerSpec spec = llama_3_70b();
  spec.num_key_value_heads = 6;
  CHECK(message_of([&] { spec.total_parameters(); }) ==
        "model 'llama-3-70b': num_attention_heads 64 is not a multiple of num_key_value_heads 6");
  spec = llama_3_70b();
  spec.hidden_size = 8100;
  CHECK(message_of([&] { spec.layer_parameters(); }) ==
        "model 'llama-3-70b': hidden_size 8100 is not a multiple of num_attention_heads 64");
  spec = llama_3_70b();
  spec.num_attention_heads = 0;
  CHECK(message_of([&] { spec.validate(); }) ==
        "model 'llama-3-70b': num_attention_heads must be positive, got 0");
  spec = llama_3_70b();
  spec.vocab_size = -1;
  CHECK(message_of([&] { spec.total_parameters(); }) ==
        "model 'llama-3-70b': vocab_size must be positive, got -1");
}
