#include "models/llm/transformer_spec.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/error.hpp"
#include "tests/models/llm/llm_test_models.hpp"

namespace transformer_spec_test {

using namespace clustersim;
using namespace clustersim::models;
using namespace clustersim::models::testing;

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

TEST_CASE("Qwen3-32B: a stated head_dim wider than hidden_size / heads (64 x 128 over 5,120)") {
  TransformerSpec spec = llama_3_70b();
  spec.name = "qwen3-32b";
  spec.hidden_size = 5120;
  spec.num_hidden_layers = 64;
  spec.explicit_head_dim = 128;
  spec.intermediate_size = 25600;
  spec.vocab_size = 151936;
  CHECK(spec.head_dim() == 128);
  CHECK(spec.attention_width() == 8192);
  // Q, O: 5120 x 8192 each; K, V: 5120 x 1024 each; MLP 3 x 5120 x 25600; norms 2 x 5120.
  CHECK(spec.attention_matmul_parameters() == 2.0 * 5120 * 8192 + 2.0 * 5120 * 1024);
  CHECK(spec.layer_parameters() == 487598080.0);
  // 64 layers + 2 x 151936 x 5120 + 5120: the model card's 32.8B (31.2B without embeddings).
  CHECK(spec.total_parameters() == 32762106880.0);
  // Unset, the head is hidden_size / heads (80 here), and 5,120 must divide by the heads.
  spec.explicit_head_dim = 0;
  CHECK(spec.head_dim() == 80);
  spec.num_attention_heads = 48;
  spec.num_key_value_heads = 8;
  CHECK(message_of([&] { spec.validate(); }) == "model 'qwen3-32b': hidden_size 5120 is not a multiple of num_attention_heads 48");
  spec.explicit_head_dim = 128;
  CHECK_NOTHROW(spec.validate());
  spec.explicit_head_dim = -1;
  CHECK(message_of([&] { spec.validate(); }) == "model 'qwen3-32b': head_dim must not be negative, got -1");
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

TEST_CASE("relu2 (squared ReLU, Nemotron-4) is a 2-matrix MLP like gelu") {
  CHECK(parse_activation("relu2") == Activation::relu2);          // Hugging Face Nemotron config
  CHECK(parse_activation("squared-relu") == Activation::relu2);   // NeMo's `activation`
  CHECK(parse_activation("squared_relu") == Activation::relu2);
  CHECK(activation_name(Activation::relu2) == "relu2");
  // Nemotron-4 340B shape (NeMo-Framework-Launcher conf/training/nemotron/nemotron_340b.yaml):
  // ffn 4h = 73728, GQA with 8 groups.
  TransformerSpec spec;
  spec.name = "nemotron-4-340b";
  spec.hidden_size = 18432;
  spec.num_hidden_layers = 96;
  spec.num_attention_heads = 96;
  spec.num_key_value_heads = 8;
  spec.intermediate_size = 73728;
  spec.vocab_size = 256000;
  spec.hidden_act = Activation::relu2;
  CHECK(spec.dense_mlp_parameters() == 2.0 * 18432.0 * 73728.0);
  // 96 x (attention 2 h^2 (1 + 8/96) + 2 h ffn + 2 h) + untied 2 V h + h = 341.0 B; Nemotron-4
  // 340B technical report (arXiv:2406.11704): 341B parameters.
  CHECK(spec.total_parameters() == doctest::Approx(341.0e9).epsilon(0.002));
  TransformerSpec gelu = spec;
  gelu.hidden_act = Activation::gelu;
  CHECK(gelu.total_parameters() == spec.total_parameters());
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

TEST_CASE("Mixtral-8x7B: per-layer parts and 46.7 B total / 12.9 B active (published)") {
  const TransformerSpec spec = mixtral_8x7b();
  CHECK(spec.is_moe());
  CHECK(spec.moe_layer_count() == 32);
  CHECK(spec.dense_layer_count() == 0);
  CHECK(spec.attention_matmul_parameters() == 41943040.0);  // 2 x 4096^2 + 2 x 4096 x 1024
  CHECK(spec.expert_parameters() == 176160768.0);           // 3 x 4096 x 14336
  CHECK(spec.router_parameters() == 32768.0);               // 4096 x 8
  CHECK(spec.routed_expert_parameters() == 8 * 176160768.0);
  CHECK(spec.shared_expert_parameters() == 0.0);
  CHECK(spec.moe_layer_parameters() == 41943040.0 + 8192.0 + 32768.0 + 8 * 176160768.0);
  CHECK(spec.moe_layer_active_parameters() == 41943040.0 + 8192.0 + 32768.0 + 2 * 176160768.0);
  // 32 layers + 2 x 32000 x 4096 + 4096 = 46,702,792,704: Hugging Face's count of the checkpoint.
  CHECK(spec.total_parameters() == 46702792704.0);
  // Mistral AI, "Mixtral of experts" (arXiv:2401.04088): 46.7B total, 12.9B active (13B).
  CHECK(spec.total_parameters() == doctest::Approx(46.7e9).epsilon(0.001));
  CHECK(spec.active_parameters() == 12879925248.0);
  CHECK(spec.active_parameters() == doctest::Approx(12.9e9).epsilon(0.002));
  CHECK(spec.expert_parallel_parameters() == 32 * 8 * 176160768.0);
}

TEST_CASE("DeepSeek-V3: MLA projections, dense and MoE layers, 671 B total / 37 B active (published)") {
  const TransformerSpec spec = deepseek_v3();
  const MlaProjectionParameters p = spec.mla_projections();
  CHECK(p.w_dq == 7168.0 * 1536);
  CHECK(p.w_uq == 1536.0 * 128 * 192);
  CHECK(p.w_dkv == 7168.0 * 512);
  CHECK(p.w_kr == 7168.0 * 64);
  CHECK(p.w_uk == 512.0 * 128 * 128);
  CHECK(p.w_uv == 512.0 * 128 * 128);
  CHECK(p.w_o == 128.0 * 128 * 7168);
  CHECK(p.norms == 1536.0 + 512);
  CHECK(spec.attention_matmul_parameters() == 187105280.0);
  CHECK(spec.attention_norm_parameters() == 2048.0);
  CHECK(spec.dense_layer_count() == 3);
  CHECK(spec.moe_layer_count() == 58);
  CHECK(spec.layer_kind(2) == LayerKind::dense);
  CHECK(spec.layer_kind(3) == LayerKind::moe);
  CHECK(spec.layer_kind(60) == LayerKind::moe);
  // Attention + 3 x 7168 x 18432 + 2 x 7168 + latent norms.
  CHECK(spec.dense_layer_parameters() == 583483392.0);
  // Attention + norms + router 7168 x 256 + (1 shared + 256 routed) x 3 x 7168 x 2048.
  CHECK(spec.moe_layer_parameters() == 11507286016.0);
  CHECK(spec.total_parameters() == 671026404352.0);
  // DeepSeek-AI, DeepSeek-V3 Technical Report (arXiv:2412.19437): 671B total, 37B activated
  // per token (the MTP module's 14B are not part of either).
  CHECK(spec.total_parameters() == doctest::Approx(671e9).epsilon(0.001));
  CHECK(spec.active_parameters() == 37552282624.0);
  CHECK(spec.active_parameters() == doctest::Approx(37e9).epsilon(0.02));
}

TEST_CASE("layer-uniform counts are refused for MoE models; dense counts are unchanged") {
  const TransformerSpec dense = llama_3_70b();
  CHECK(dense.dense_layer_parameters() == dense.layer_parameters());
  CHECK(dense.active_parameters() == dense.total_parameters());
  CHECK(dense.moe_layer_count() == 0);
  CHECK(dense.expert_parallel_parameters() == 0.0);
  CHECK(dense.layer_kind(79) == LayerKind::dense);
  CHECK(message_of([&] { dense.layer_kind(80); }) == "model 'llama-3-70b': layer 80 is outside [0, 80)");
  CHECK(message_of([&] { dense.moe_layer_parameters(); }) ==
        "model 'llama-3-70b': moe_layer_parameters() needs a mixture-of-experts model (num_experts 0)");
  CHECK(message_of([&] { mixtral_8x7b().layer_parameters(); }) ==
        "model 'mixtral-8x7b': layer_parameters() assumes identical layers, but a mixture-of-experts model has "
        "dense and MoE layers (dense_layer_parameters, moe_layer_parameters)");
  CHECK(message_of([&] { deepseek_v3().head_dim(); }) ==
        "model 'deepseek-v3': head_dim() is for MHA/GQA; an MLA model has mla.qk_head_dim() = 192 and "
        "mla.v_head_dim = 128");
  CHECK(message_of([&] { dense.mla_projections(); }) ==
        "model 'llama-3-70b': mla_projections() needs an MLA model; its attention is MHA/GQA");
}

TEST_CASE("a dense MLA model and a strided MoE layout (moe_layer_freq)") {
  TransformerSpec mla = deepseek_v3();
  mla.moe = MoeSpec{};
  CHECK(mla.layer_parameters() == 583483392.0);  // every layer is DeepSeek-V3's dense layer
  CHECK(mla.total_parameters() == 61 * 583483392.0 + 2 * 129280.0 * 7168 + 7168);
  TransformerSpec strided = mixtral_8x7b();
  strided.moe.first_k_dense_replace = 1;
  strided.moe.moe_layer_freq = 2;  // MoE layers 2, 4, ..., 30
  CHECK(strided.moe_layer_count() == 15);
  CHECK(strided.layer_kind(1) == LayerKind::dense);
  CHECK(strided.layer_kind(2) == LayerKind::moe);
  CHECK(strided.layer_kind(3) == LayerKind::dense);
  strided.moe.first_k_dense_replace = 3;  // 4, 6, ..., 30
  CHECK(strided.moe_layer_count() == 14);
}

TEST_CASE("invalid MoE and MLA specs are rejected with the field named") {
  TransformerSpec spec = mixtral_8x7b();
  spec.moe.num_experts_per_tok = 9;
  CHECK(message_of([&] { spec.validate(); }) ==
        "model 'mixtral-8x7b': num_experts_per_tok 9 must be between 1 and the 8 experts");
  spec = mixtral_8x7b();
  spec.moe.num_experts_per_tok = 0;
  CHECK(message_of([&] { spec.total_parameters(); }) ==
        "model 'mixtral-8x7b': num_experts_per_tok 0 must be between 1 and the 8 experts");
  spec = mixtral_8x7b();
  spec.moe.moe_intermediate_size = 0;
  CHECK(message_of([&] { spec.validate(); }) == "model 'mixtral-8x7b': moe_intermediate_size must be positive, got 0");
  spec = mixtral_8x7b();
  spec.moe.first_k_dense_replace = 32;
  CHECK(message_of([&] { spec.validate(); }) ==
        "model 'mixtral-8x7b': no layer is an MoE layer: first_k_dense_replace 32 and moe_layer_freq 1 leave none "
        "of the 32 layers");
  spec = mixtral_8x7b();
  spec.moe.n_shared_experts = -1;
  CHECK(message_of([&] { spec.validate(); }) == "model 'mixtral-8x7b': n_shared_experts must not be negative, got -1");
  spec = llama_3_70b();
  spec.moe.num_experts_per_tok = 2;
  CHECK(message_of([&] { spec.validate(); }) ==
        "model 'llama-3-70b': num_experts_per_tok is set, but the model has no experts (num_experts 0)");
  spec = llama_3_70b();
  spec.mla.kv_lora_rank = 512;
  CHECK(message_of([&] { spec.validate(); }) ==
        "model 'llama-3-70b': kv_lora_rank is an MLA size, but the model's attention is MHA/GQA");
  spec = deepseek_v3();
  spec.mla.kv_lora_rank = 0;
  CHECK(message_of([&] { spec.validate(); }) == "model 'deepseek-v3': kv_lora_rank must be positive, got 0");
  spec = deepseek_v3();
  spec.mla.v_head_dim = 0;
  CHECK(message_of([&] { spec.validate(); }) == "model 'deepseek-v3': v_head_dim must be positive, got 0");
  // MLA does not need hidden_size to be a multiple of the heads.
  spec = deepseek_v3();
  spec.hidden_size = 7000;
  CHECK_NOTHROW(spec.validate());
}

}  // namespace transformer_spec_test
