#include "models/llm/flop_count.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/error.hpp"
#include "tests/models/llm/llm_test_models.hpp"

namespace flop_count_test {

using namespace clustersim;
using namespace clustersim::models;
using namespace clustersim::models::testing;

namespace {

/// A Megatron SC21 GPT: MHA, 4h gelu MLP, vocabulary 51200.
TransformerSpec megatron_gpt(std::int64_t hidden, std::int64_t layers, std::int64_t heads) {
  TransformerSpec spec;
  spec.name = "megatron-gpt";
  spec.hidden_size = hidden;
  spec.num_hidden_layers = layers;
  spec.num_attention_heads = heads;
  spec.num_key_value_heads = heads;
  spec.intermediate_size = 4 * hidden;
  spec.vocab_size = 51200;
  spec.hidden_act = Activation::gelu;
  spec.tie_word_embeddings = true;
  return spec;
}

}  // namespace

TEST_CASE("model FLOPs reproduce Megatron's 72 s L h^2 (1 + s/6h + V/12Lh)") {
  for (const TransformerSpec& spec :
       {megatron_gpt(2304, 24, 24), megatron_gpt(12288, 80, 96), megatron_gpt(25600, 128, 160)}) {
    for (std::int64_t seq : {2048, 4096}) {
      const double s = static_cast<double>(seq);
      const double h = static_cast<double>(spec.hidden_size);
      const double layers = static_cast<double>(spec.num_hidden_layers);
      const double vocab = static_cast<double>(spec.vocab_size);
      const double megatron_model =
          72.0 * s * layers * h * h * (1.0 + s / (6.0 * h) + vocab / (12.0 * layers * h));
      const double megatron_hardware =
          96.0 * s * layers * h * h * (1.0 + s / (6.0 * h) + vocab / (16.0 * layers * h));
      CHECK(s * model_flops_per_token_training(spec, seq) ==
            doctest::Approx(megatron_model).epsilon(1e-12));
      CHECK(s * hardware_flops_per_token_full_recompute(spec, seq) ==
            doctest::Approx(megatron_hardware).epsilon(1e-12));
    }
  }
}

TEST_CASE("Llama-3-8B forward FLOPs per token, hand-computed (GQA + SwiGLU)") {
  const TransformerSpec spec = llama3_8b();
  // matmul params/layer: 2*4096^2 + 2*4096*1024 + 3*4096*14336 = 218103808
  // layers: 32 * (2*218103808 + 4*8192*4096) = 18253611008; LM head 2*128256*4096 = 1050673152
  CHECK(layers_flops_per_token_fwd(spec, 8192) == 18253611008.0);
  CHECK(lm_head_flops_per_token_fwd(spec) == 1050673152.0);
  CHECK(model_flops_per_token_fwd(spec, 8192) == 19304284160.0);
  CHECK(model_flops_per_token_training(spec, 8192) == 57912852480.0);
}

TEST_CASE("model FLOPs match NeMo's reported model TFLOP/s for Llama-2-7B") {
  // NeMo 24.07 on DGX-H100 (shared validation README 2c): seq 4096, 16934 tokens/s/GPU,
  // reported 780 model TFLOP/s/GPU.
  TransformerSpec spec;
  spec.name = "llama-2-7b";
  spec.hidden_size = 4096;
  spec.num_hidden_layers = 32;
  spec.num_attention_heads = 32;
  spec.num_key_value_heads = 32;
  spec.intermediate_size = 11008;
  spec.vocab_size = 32000;
  spec.hidden_act = Activation::swiglu;
  const double tflops = 16934.0 * model_flops_per_token_training(spec, 4096) / 1e12;
  CHECK(tflops == doctest::Approx(780.0).epsilon(0.005));
}

TEST_CASE("FLOP counting rejects a bad sequence length or spec") {
  TransformerSpec spec = megatron_gpt(2304, 24, 24);
  std::string message;
  try {
    model_flops_per_token_fwd(spec, 0);
  } catch (const ConfigError& error) {
    message = error.what();
  }
  CHECK(message == "model 'megatron-gpt': seq_len must be positive, got 0");
  spec.num_hidden_layers = 0;
  CHECK_THROWS_WITH_AS(lm_head_flops_per_token_fwd(spec),
                       "model 'megatron-gpt': num_hidden_layers must be positive, got 0",
                       ConfigError);
}

TEST_CASE("Mixtral-8x7B forward FLOPs per token count the router and the top-2 experts only") {
  const TransformerSpec spec = mixtral_8x7b();
  // Per layer: 2 x (attention 41943040 + router 32768 + 2 experts x 176160768) + 4 x 4096 x 4096.
  CHECK(layer_flops_per_token_fwd(spec, 4096, LayerKind::moe) == 2.0 * 394297344 + 67108864);
  CHECK(layers_flops_per_token_fwd(spec, 4096) == 32.0 * 855703552);
  CHECK(model_flops_per_token_fwd(spec, 4096) == 27382513664.0 + 262144000.0);
  // All 8 experts would cost 4x the expert FLOPs: the count is not the dense-equivalent one.
  TransformerSpec all_experts = spec;
  all_experts.moe.num_experts_per_tok = 8;
  CHECK(layers_flops_per_token_fwd(all_experts, 4096) - layers_flops_per_token_fwd(spec, 4096) ==
        32.0 * 2.0 * 6 * 176160768);
  CHECK_THROWS_WITH_AS(layer_flops_per_token_fwd(megatron_gpt(2304, 24, 24), 2048, LayerKind::moe),
                       "model 'megatron-gpt': has no MoE layers (num_experts 0)", ConfigError);
}

TEST_CASE("DeepSeek-V3 forward FLOPs per token: MLA projections and score/value products, 3 dense layers") {
  const TransformerSpec spec = deepseek_v3();
  // QK^T over 128 heads x 192 and PV over 128 heads x 128, full (non-causal), s = 4096.
  CHECK(attention_core_flops_per_token_fwd(spec, 4096) == 2.0 * 4096 * 128 * 192 + 2.0 * 4096 * 128 * 128);
  // Dense: 2 x (MLA 187105280 + MLP 3 x 7168 x 18432) + core.
  CHECK(layer_flops_per_token_fwd(spec, 4096, LayerKind::dense) == 2.0 * (187105280.0 + 396361728.0) + 335544320.0);
  // MoE: 2 x (MLA + router 7168 x 256 + (8 routed + 1 shared) x 3 x 7168 x 2048) + core.
  CHECK(layer_flops_per_token_fwd(spec, 4096, LayerKind::moe) ==
        2.0 * (187105280.0 + 1835008.0 + 9 * 44040192.0) + 335544320.0);
  CHECK(layers_flops_per_token_fwd(spec, 4096) == 3.0 * 1502478336.0 + 58.0 * 1506148352.0);
  // Roughly 6 x 37e9 active parameters per token for training, plus attention.
  CHECK(model_flops_per_token_training(spec, 4096) == 3.0 * (91864039424.0 + 2.0 * 129280 * 7168));
  CHECK(hardware_flops_per_token_full_recompute(spec, 4096) ==
        model_flops_per_token_training(spec, 4096) + 91864039424.0);
}

}  // namespace flop_count_test
