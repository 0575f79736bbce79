#include "models/llm/memory_footprint.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/config/units.hpp"

namespace memory_footprint_test {

using clustersim::config::kGiB;

using namespace clustersim;
using namespace clustersim::models;

namespace {

/// GPT with MHA and a 4h GELU MLP (Korthikanti's setting).
TransformerSpec gpt(std::int64_t h, std::int64_t layers, std::int64_t heads, std::int64_t vocab) {
  TransformerSpec m;
  m.name = "gpt-test";
  m.hidden_size = h;
  m.num_hidden_layers = layers;
  m.num_attention_heads = heads;
  m.num_key_value_heads = heads;
  m.intermediate_size = 4 * h;
  m.vocab_size = vocab;
  m.hidden_act = Activation::gelu;
  return m;
}

/// Korthikanti et al. Table 3 / Figure 1 "Megatron 22B": s 2048, b 4, t 8, p 1.
FootprintInputs megatron_22b() {
  FootprintInputs in;
  in.model = gpt(6144, 48, 64, 51200);
  in.seq_len = 2048;
  in.micro_batch = 4;
  in.microbatches = 8;
  in.tp = 8;
  in.flash_attention = false;
  return in;
}

/// A tiny model for hand-computed parameter bytes: 4 layers of 12,584,960 parameters
/// (4 h^2 + 2 h x 4h + 2 h with h = 1024), embedding and LM head of 1000 x 1024, final norm
/// 1024: 52,388,864 parameters.
FootprintInputs tiny() {
  FootprintInputs in;
  in.model = gpt(1024, 4, 8, 1000);
  in.seq_len = 512;
  in.micro_batch = 1;
  in.microbatches = 4;
  in.dp = 4;
  in.workspace_bytes = 0;
  in.fragmentation = 1.0;
  return in;
}

}  // namespace

TEST_CASE("Korthikanti 22B per-layer activations for each recompute and SP setting") {
  FootprintInputs in = megatron_22b();
  const double sbh = 2048.0 * 4 * 6144;  // 50,331,648
  in.sequence_parallel = false;
  in.recompute = RecomputePolicy::none;
  // s b h (10 + 24/t + 5 a s / (h t)) = sbh (10 + 3 + 13.333)
  CHECK(layer_activation_bytes(in) == doctest::Approx(sbh * (13.0 + 5.0 * 64 * 2048 / (6144.0 * 8))));
  in.sequence_parallel = true;
  CHECK(layer_activation_bytes(in) == doctest::Approx(sbh / 8 * (34.0 + 5.0 * 64 * 2048 / 6144.0)));
  in.recompute = RecomputePolicy::selective;
  CHECK(layer_activation_bytes(in) == doctest::Approx(213909504.0));  // 34 sbh / t
  in.sequence_parallel = false;
  CHECK(layer_activation_bytes(in) == doctest::Approx(sbh * 13.0));
  in.recompute = RecomputePolicy::full;
  CHECK(layer_activation_bytes(in) == doctest::Approx(2.0 * sbh));
  in.sequence_parallel = true;
  CHECK(layer_activation_bytes(in) == doctest::Approx(2.0 * sbh / 8));
  // FlashAttention drops the 5as/h term even without recompute.
  in.recompute = RecomputePolicy::none;
  in.flash_attention = true;
  CHECK(layer_activation_bytes(in) == doctest::Approx(213909504.0));
}

TEST_CASE("Korthikanti Figure 1 activation totals per GPU (first stage)") {
  FootprintInputs in = megatron_22b();
  in.sequence_parallel = false;
  in.recompute = RecomputePolicy::none;
  StageFootprint fp = stage_footprint(in, 0);
  CHECK(fp.activations_bytes / kGiB == doctest::Approx(59.25));
  in.sequence_parallel = true;
  in.recompute = RecomputePolicy::selective;
  fp = stage_footprint(in, 0);
  CHECK(fp.activations_bytes / kGiB == doctest::Approx(9.5625));

  // GPT-3 175B, t 8, p 8, interleaved with 3 chunks: 31 chunk sets of 4 layers on stage 0
  // = 96 x (1 + 7/24) layer sets.
  FootprintInputs big;
  big.model = gpt(12288, 96, 96, 51200);
  big.seq_len = 2048;
  big.micro_batch = 1;
  big.microbatches = 64;
  big.tp = 8;
  big.pp = 8;
  big.vp = 3;
  big.schedule = ScheduleKind::interleaved;
  big.flash_attention = false;
  fp = stage_footprint(big, 0);
  CHECK(fp.inflight_microbatches == 31);
  CHECK(fp.activations_bytes / kGiB == doctest::Approx(12.3515625));

  // Turing-NLG 530B (p 35, interleaved x 3) and the 1T model (p 64, 1F1B).
  big.model = gpt(20480, 105, 128, 51200);
  big.pp = 35;
  fp = stage_footprint(big, 0);
  CHECK(fp.inflight_microbatches == 139);
  CHECK(fp.activations_bytes / kGiB == doctest::Approx(23.076171875));
  big.model = gpt(25600, 128, 160, 51200);
  big.pp = 64;
  big.vp = 1;
  big.schedule = ScheduleKind::one_f_one_b;
  big.sequence_parallel = false;
  big.recompute = RecomputePolicy::none;
  fp = stage_footprint(big, 0);
  CHECK(fp.activations_bytes / kGiB == doctest::Approx(131.25));
}

TEST_CASE("in-flight micro-batches per schedule") {
  FootprintInputs in = tiny();
  in.pp = 4;
  in.microbatches = 8;
  CHECK(inflight_microbatches(in, 0) == 4);
  CHECK(inflight_microbatches(in, 3) == 1);
  in.microbatches = 2;
  CHECK(inflight_microbatches(in, 0) == 2);
  in.microbatches = 8;
  in.schedule = ScheduleKind::gpipe;
  CHECK(inflight_microbatches(in, 3) == 8);
  in.schedule = ScheduleKind::interleaved;
  in.vp = 2;
  in.model.num_hidden_layers = 8;
  CHECK(inflight_microbatches(in, 0) == 11);  // 2 x 3 + 1 x 4 + 1
  CHECK(inflight_microbatches(in, 3) == 5);
  CHECK_THROWS_WITH(inflight_microbatches(in, 4), doctest::Contains("stage 4 is outside [0, 4)"));
  // m == pp: Megatron-Core runs every forward first only where the warm-up reaches all m vp
  // forwards (stage 0: 2 x 3 + 4 = 10 >= 8); stage 3 warms up with 4 and then runs 1F1B.
  // (Megatron-LM before microbatch_group_size_per_vp_stage held m vp chunks on every stage.)
  in.microbatches = 4;
  CHECK(inflight_microbatches(in, 0) == 8);
  CHECK(inflight_microbatches(in, 3) == 5);
}

TEST_CASE("in-flight micro-batches per virtual chunk walk Megatron's interleaved order") {
  FootprintInputs in = tiny();
  in.pp = 4;
  in.microbatches = 8;
  // 1F1B and GPipe: one chunk, the stage's count.
  CHECK(inflight_microbatches_of_chunk(in, 0, 0) == 4);
  CHECK(inflight_microbatches_of_chunk(in, 3, 0) == 1);
  CHECK_THROWS_WITH(inflight_microbatches_of_chunk(in, 0, 1), doctest::Contains("virtual chunk 1 is outside [0, 1)"));
  in.schedule = ScheduleKind::interleaved;
  in.vp = 2;
  in.model.num_hidden_layers = 8;
  // Forwards run chunks 0000 1111 0000 1111, backwards 1111 0000 1111 0000 (groups of pp).
  // Stage 0: warm-up 2 x 3 + 4 = 10 forwards (chunk 0: 6, chunk 1: 4); then F10 (c0 7), B0
  // (c1 3), F11 (c0 8), B1 (c1 2), F12..F15 (c1) each undone by B2, B3 (c1) and B4, B5 (c0).
  CHECK(inflight_microbatches_of_chunk(in, 0, 0) == 8);
  CHECK(inflight_microbatches_of_chunk(in, 0, 1) == 4);
  // Stage 3: warm-up of 4 forwards of chunk 0, then each chunk-1 forward is followed by its
  // own backward: the last chunk (the LM head's) holds one micro-batch at a time.
  CHECK(inflight_microbatches_of_chunk(in, 3, 0) == 5);
  CHECK(inflight_microbatches_of_chunk(in, 3, 1) == 1);
  CHECK_THROWS_WITH(inflight_microbatches_of_chunk(in, 3, 2), doctest::Contains("virtual chunk 2 is outside [0, 2)"));
  // m == pp: stage 0 runs all forwards first (its warm-up reaches all 8), so each of its
  // chunks holds all 4 micro-batches; the last stage's last chunk still holds one at a time.
  in.microbatches = 4;
  CHECK(inflight_microbatches_of_chunk(in, 0, 0) == 4);
  CHECK(inflight_microbatches_of_chunk(in, 0, 1) == 4);
  CHECK(inflight_microbatches_of_chunk(in, 3, 0) == 4);
  CHECK(inflight_microbatches_of_chunk(in, 3, 1) == 1);
}

TEST_CASE("weights, gradients and optimizer state under ZeRO 0-3") {
  FootprintInputs in = tiny();
  const double params = 52388864.0;
  in.zero = 0;
  StageFootprint fp = stage_footprint(in, 0);
  CHECK(fp.weights_bytes == doctest::Approx(2 * params));
  CHECK(fp.gradients_bytes == doctest::Approx(4 * params));
  CHECK(fp.optimizer_bytes == doctest::Approx(12 * params));
  in.zero = 1;
  fp = stage_footprint(in, 0);
  CHECK(fp.gradients_bytes == doctest::Approx(4 * params));
  CHECK(fp.optimizer_bytes == doctest::Approx(3 * params));
  in.zero = 2;
  fp = stage_footprint(in, 0);
  CHECK(fp.weights_bytes == doctest::Approx(2 * params));
  CHECK(fp.gradients_bytes == doctest::Approx(params));
  CHECK(fp.zero3_gathered_bytes == 0);
  in.zero = 3;
  fp = stage_footprint(in, 0);
  CHECK(fp.weights_bytes == doctest::Approx(params / 2));
  // DeepSpeed ZeRO-3 defaults: the largest module is fc1 (1024 x 4096 = 4,194,304); with the
  // 5e8 prefetch bucket and the 1e9 live cap the whole (small) model is live at once; plus
  // fc1's whole gradient and the 5e8-element reduce bucket, all 2 B.
  CHECK(fp.zero3_gathered_bytes == doctest::Approx((params + 4194304.0 + 5e8) * 2));
  CHECK(fp.total_bytes == doctest::Approx(fp.weights_bytes + fp.gradients_bytes + fp.optimizer_bytes +
                                          fp.activations_bytes + fp.embedding_head_bytes +
                                          fp.recompute_buffer_bytes + fp.moe_dispatch_bytes +
                                          fp.zero3_gathered_bytes));
  // Optimizer offload empties the device's optimizer state.
  in.offload_optimizer = true;
  CHECK(stage_footprint(in, 0).optimizer_bytes == 0);
}

TEST_CASE("stage totals: embedding on the first stage, logits on the last, fragmentation, workspace") {
  FootprintInputs in = tiny();
  in.pp = 2;
  in.zero = 0;
  in.microbatches = 4;
  const StageFootprint first = stage_footprint(in, 0);
  const StageFootprint last = stage_footprint(in, 1);
  // First: 2 layers + embedding; last: 2 layers + LM head + final norm.
  CHECK(first.weights_bytes == doctest::Approx(2 * (2 * 12584960.0 + 1024000.0)));
  CHECK(last.weights_bytes == doctest::Approx(2 * (2 * 12584960.0 + 1024000.0 + 1024.0)));
  // Embedding dropout mask 1 B per token x h / t(SP) for 2 in-flight micro-batches.
  CHECK(first.embedding_head_bytes == doctest::Approx(2 * 512.0 * 1024));
  // Final norm + LM-head inputs 4 s b h and the saved fp32 softmax 4 s b v for the 1 micro-batch
  // in flight on the last stage, plus the bf16 logits (2 s b v) of the micro-batch in its loss.
  CHECK(last.embedding_head_bytes == doctest::Approx(4 * 512.0 * 1024 + 4 * 512.0 * 1000 + 2 * 512.0 * 1000));
  // Selective with flash: the stored set is the full set, no recompute buffer.
  CHECK(first.recompute_buffer_bytes == 0);
  in.fragmentation = 1.25;
  in.workspace_bytes = 1000;
  const double allocated = first.total_bytes;
  // Megatron's persistent state (weights, gradients, optimizer, fp8 weight cache) sits in
  // buffers allocated once: only the rest is fragmented.
  const double persistent =
      first.weights_bytes + first.gradients_bytes + first.optimizer_bytes + first.fp8_weight_cache_bytes;
  REQUIRE(persistent > 0);
  REQUIRE(allocated - persistent > 0);
  const StageFootprint buffered = stage_footprint(in, 0);
  CHECK(buffered.fragmentation_bytes == doctest::Approx(0.25 * (allocated - persistent)));
  CHECK(buffered.total_bytes == doctest::Approx(allocated + 0.25 * (allocated - persistent) + 1000));
  // torchtitan's FSDP2 frees its gradients every step: every term is fragmented.
  in.persistent_state_unfragmented = false;
  const StageFootprint padded = stage_footprint(in, 0);
  CHECK(padded.fragmentation_bytes == doctest::Approx(0.25 * allocated));
  CHECK(padded.total_bytes == doctest::Approx(1.25 * allocated + 1000));
}

TEST_CASE("interleaved 1F1B holds the logits of one micro-batch on the last stage") {
  FootprintInputs in = tiny();
  in.model.num_hidden_layers = 8;
  in.pp = 2;
  in.vp = 2;
  in.zero = 0;
  in.microbatches = 8;
  in.schedule = ScheduleKind::interleaved;
  // Stage 1 holds 2 x 0 + 1 x 2 + 1 = 3 chunk activation sets, but only one of the last chunk.
  const StageFootprint last = stage_footprint(in, 1);
  CHECK(last.inflight_microbatches == 3);
  CHECK(last.embedding_head_bytes == doctest::Approx(4 * 512.0 * 1024 + 6 * 512.0 * 1000));
  // Stage 0: chunk 0 holds 4 micro-batches (a warm-up of 4 forwards, 2 of each chunk, then F4
  // and F5 of chunk 0 before B0 and B1 of chunk 1), each with its 1 B embedding dropout mask.
  CHECK(inflight_microbatches_of_chunk(in, 0, 0) == 4);
  CHECK(stage_footprint(in, 0).embedding_head_bytes == doctest::Approx(4 * 512.0 * 1024));
}

TEST_CASE("FP8: Transformer Engine's fp8 GEMM inputs and cached fp8 weights") {
  FootprintInputs in = megatron_22b();
  const double sbh = 2048.0 * 4 * 6144;
  in.fp8 = true;
  // Selective with SP, t 8: the 34 of bf16 becomes LN inputs 4 + masks 2 + fp8 QKV and MLP
  // inputs 1 + 1, Q K V 6, attention output 2 + its fp8 copy 1, GELU input 8 + fp8 fc2 input
  // 4 = 29.
  CHECK(layer_activation_bytes(in) == doctest::Approx(sbh * 29.0 / 8));
  // SwiGLU (f = 16384): gate and up outputs 4 f/h + fp8 down input f/h.
  in.model.hidden_act = Activation::swiglu;
  in.model.intermediate_size = 16384;
  const double f = 16384.0 / 6144;
  CHECK(layer_activation_bytes(in) == doctest::Approx(sbh * (8.0 + 9.0 + 5.0 * f) / 8));
  // Full recompute keeps the bf16 layer input whatever the GEMM precision.
  in.recompute = RecomputePolicy::full;
  CHECK(layer_activation_bytes(in) == doctest::Approx(2.0 * sbh / 8));

  // fp8 weight + fp8 transposed weight of the 4 layers (12,584,960 parameters each), not of
  // the embedding or LM head; 0 without fp8.
  FootprintInputs small = tiny();
  CHECK(stage_footprint(small, 0).fp8_weight_cache_bytes == 0);
  small.fp8 = true;
  const StageFootprint fp = stage_footprint(small, 0);
  CHECK(fp.fp8_weight_cache_bytes == doctest::Approx(2.0 * 4 * 12584960.0));
  CHECK(fp.total_bytes == doctest::Approx(fp.weights_bytes + fp.gradients_bytes + fp.optimizer_bytes +
                                          fp.activations_bytes + fp.embedding_head_bytes +
                                          fp.recompute_buffer_bytes + fp.fp8_weight_cache_bytes));
}

TEST_CASE("ZeRO-3 live parameters follow DeepSpeed's caps for wide layers") {
  // SC21's 529.6B layer width: h 20480, fc1 4h x h = 1,677,721,600 parameters, above the 1e9
  // live cap, so nothing is prefetched while it is computed.
  FootprintInputs in;
  in.model = gpt(20480, 2, 128, 51200);
  in.seq_len = 2048;
  in.micro_batch = 1;
  in.dp = 8;
  in.zero = 3;
  in.recompute = RecomputePolicy::full;
  in.workspace_bytes = 0;
  in.fragmentation = 1.0;
  const double fc1 = 4.0 * 20480 * 20480;
  CHECK(stage_footprint(in, 0).zero3_gathered_bytes == doctest::Approx((fc1 + fc1 + 5e8) * 2));
  // A larger live cap admits the 5e8 prefetch up to the cap: live min(2e9, fc1 + 5e8) = 2e9.
  in.zero3_max_live_parameters = 2e9;
  CHECK(stage_footprint(in, 0).zero3_gathered_bytes == doctest::Approx((2e9 + fc1 + 5e8) * 2));
  in.zero3_reduce_bucket_parameters = -1;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("must not be negative"));
}

TEST_CASE("full recompute keeps one layer's rematerialized activations as a buffer") {
  FootprintInputs in = megatron_22b();
  in.recompute = RecomputePolicy::full;
  const double sbh = 2048.0 * 4 * 6144;
  const StageFootprint fp = stage_footprint(in, 0);
  CHECK(fp.activations_bytes == doctest::Approx(48 * 2 * sbh / 8));
  CHECK(fp.recompute_buffer_bytes ==
        doctest::Approx(sbh / 8 * (34.0 + 5.0 * 64 * 2048 / 6144.0) - 2 * sbh / 8));
}

TEST_CASE("does-not-fit message names the stage and the largest terms") {
  FootprintInputs in = megatron_22b();
  in.sequence_parallel = false;
  in.recompute = RecomputePolicy::none;
  const TrainingFootprint fp = training_footprint(in);
  CHECK_THROWS_AS(check_fits(fp, 80e9), DoesNotFitError);
  try {
    check_fits(fp, 80e9);
  } catch (const DoesNotFitError& e) {
    const std::string message = e.what();
    CHECK(message.rfind("does not fit: needs ", 0) == 0);
    CHECK(message.find("of 74.5 GiB on pipeline stage 0 (activations 59.2 GiB, optimizer") != std::string::npos);
  }
  CHECK_NOTHROW(check_fits(fp, 200e9));
  CHECK_THROWS_WITH(check_fits(fp, 0), doctest::Contains("capacity must be positive"));
}

TEST_CASE("KV cache per device") {
  TransformerSpec m = gpt(8192, 80, 64, 128256);
  m.num_key_value_heads = 8;
  // 2 x 80 x 8 x 128 x 1000 x 2 / 8
  CHECK(kv_cache_bytes(m, 1000, 2, 8) == doctest::Approx(40960000.0));
  // tp 16 > 8 KV heads: each rank keeps one head.
  CHECK(kv_cache_bytes(m, 1000, 2, 16) == doctest::Approx(40960000.0));
  CHECK(kv_cache_bytes(m, 1000, 1, 1) == doctest::Approx(163840000.0));
  CHECK_THROWS_WITH(kv_cache_bytes(m, -1, 2, 1), doctest::Contains("tokens must not be negative"));
  CHECK_THROWS_WITH(kv_cache_bytes(m, 1, 0, 1), doctest::Contains("bytes per element must be positive"));
}

TEST_CASE("interleaved with uneven virtual stages: activation sets at the schedule's peak") {
  // pp 2, vp 2, 4 micro-batches, virtual stages of 1, 3, 3, 1 layers (stage 0 holds virtual
  // stages 0 and 2: 1 + 3 layers; stage 1 virtual stages 1 and 3: 3 + 1). Hand-run of the
  // interleaved order (forward k runs chunk (k mod 4) / 2, backward k chunk 1 - (k mod 4) / 2):
  // stage 0 warms up with 4 forwards (chunks 0 0 1 1: 2 x 1 + 2 x 3 = 8 sets), then forward k 4
  // (chunk 0, 9 sets) before its first backward: peak 9. Stage 1 warms up with 2 forwards
  // (chunk 0: 6 sets), and holds 9 after forward 4 (chunk 0) before backward 2 frees one: 9.
  FootprintInputs in = tiny();
  in.model.num_hidden_layers = 8;
  in.pp = 2;
  in.vp = 2;
  in.dp = 2;
  in.schedule = ScheduleKind::interleaved;
  in.stage_layers = {1, 3, 3, 1};
  CHECK(stage_footprint(in, 0).stored_layer_activations == 9);
  CHECK(stage_footprint(in, 1).stored_layer_activations == 9);
  CHECK(stage_layer_indices(in, 0) == std::vector<std::int64_t>{0, 4, 5, 6});
  CHECK(stage_layer_indices(in, 1) == std::vector<std::int64_t>{1, 2, 3, 7});
  // Even chunks: the peak count of micro-batch chunks x the chunk's layers, as before.
  in.stage_layers = {4, 4};  // per stage: 2 + 2
  const StageFootprint even = stage_footprint(in, 0);
  CHECK(even.stored_layer_activations == even.inflight_microbatches * 2);
  in.stage_layers = {3, 5};
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("stage 0 has 3 layers, which do not split evenly"));
}

TEST_CASE("invalid footprint inputs are rejected with the field named") {
  FootprintInputs in = tiny();
  in.zero = 4;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("ZeRO stage 4 is not one of 0, 1, 2, 3"));
  in = tiny();
  in.pp = 3;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("4 layers do not divide evenly over pp x vp = 3 x 1 virtual stages"));
  in = tiny();
  in.fragmentation = 0.9;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("fragmentation factor 0.9 must be >= 1"));
  in = tiny();
  in.cp = 3;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("seq_len 512 is not divisible by 2 x cp = 6"));
}

TEST_CASE("estimated HBM traffic of a step") {
  FootprintInputs in = tiny();
  in.dp = 1;
  in.zero = 0;
  in.microbatches = 1;
  in.recompute = RecomputePolicy::none;
  const double params = 52388864.0;
  const double layer = 512.0 * 1024 * 34;  // s b h 34 (flash, t 1)
  const double expected = 3 * params * 2 + 4 * 4 * layer + 8 * params + params * 30;
  CHECK(estimated_step_hbm_bytes(in, 0) == doctest::Approx(expected));
}

namespace {

/// A small MoE: h 1024, 8 MHA heads, 4 layers of which layer 0 is dense (SwiGLU 4096) and
/// layers 1-3 have 8 experts of SwiGLU 512, top-2, vocabulary 1000.
///   attention 4 h^2 = 4,194,304; dense MLP 3 x 1024 x 4096 = 12,582,912; norms 2,048
///   expert 3 x 1024 x 512 = 1,572,864 (8 routed: 12,582,912); router 1024 x 8 = 8,192
FootprintInputs tiny_moe() {
  FootprintInputs in = tiny();
  in.model.hidden_act = Activation::swiglu;
  in.model.moe.num_experts = 8;
  in.model.moe.num_experts_per_tok = 2;
  in.model.moe.moe_intermediate_size = 512;
  in.model.moe.first_k_dense_replace = 1;
  in.sequence_parallel = false;
  return in;
}

}  // namespace

TEST_CASE("MoE weights: experts sharded over ep, ZeRO over the expert-data-parallel group") {
  FootprintInputs in = tiny_moe();
  in.zero = 0;
  // One device, no parallelism: every parameter once.
  in.dp = 1;
  CHECK(stage_footprint(in, 0).weights_bytes == 2 * in.model.total_parameters());
  CHECK(in.model.total_parameters() == 69190656.0);
  // dp 4 x ep 4: the dense part (dense layer, 3 x (attention + norms + router), embedding, LM
  // head, final norm) stays whole; each device keeps 2 of the 8 experts of each MoE layer.
  in.dp = 4;
  in.ep = 4;
  const double dense = 16779264.0 + 3 * (4196352.0 + 8192.0) + 2 * 1024000.0 + 1024.0;
  const double experts = 3 * 12582912.0 / 4;
  CHECK(expert_data_parallel_size(in) == 1);
  StageFootprint fp = stage_footprint(in, 0);
  CHECK(fp.weights_bytes == doctest::Approx(2 * (dense + experts)));
  CHECK(fp.gradients_bytes == doctest::Approx(4 * (dense + experts)));
  CHECK(fp.optimizer_bytes == doctest::Approx(12 * (dense + experts)));
  // ZeRO 1: the dense optimizer over dp x cp = 4, the experts' over dp x cp / ep = 1.
  in.zero = 1;
  CHECK(stage_footprint(in, 0).optimizer_bytes == doctest::Approx(12 * (dense / 4 + experts)));
  // ep 2: experts over 2 ranks, their optimizer shared by 2 replicas.
  in.ep = 2;
  CHECK(expert_data_parallel_size(in) == 2);
  fp = stage_footprint(in, 0);
  CHECK(fp.weights_bytes == doctest::Approx(2 * (dense + 3 * 12582912.0 / 2)));
  CHECK(fp.optimizer_bytes == doctest::Approx(12 * (dense / 4 + 3 * 12582912.0 / 2 / 2)));
  // tp 2: attention, dense MLP, embedding and experts halve; the router does not.
  in.tp = 2;
  in.ep = 4;
  in.zero = 0;
  const double dense_tp2 = 16779264.0 / 2 + 3 * (4196352.0 / 2 + 8192.0) + 2 * 1024000.0 / 2 + 1024.0;
  CHECK(stage_footprint(in, 0).weights_bytes == doctest::Approx(2 * (dense_tp2 + experts / 2)));
}

TEST_CASE("MoE activations: top-k token copies on the busiest EP rank, router scores, dispatch buffers") {
  FootprintInputs in = tiny_moe();
  const double sbh = 512.0 * 1024;
  // Dense layer (selective, flash, t 1): 10 + 8 (MHA) + 6 x 4096 / 1024 = 42.
  CHECK(layer_activation_bytes(in, LayerKind::dense) == doctest::Approx(42 * sbh));
  // MoE layer: 10 + router 2 x 2 x 8 / 1024 + 8 (attention) + 2 copies x (2 input + 6 x 512 / 1024).
  const double moe_balanced = 10 + 4.0 * 8 / 1024 + 8 + 2 * (2 + 3.0);
  CHECK(layer_activation_bytes(in, LayerKind::moe) == doctest::Approx(moe_balanced * sbh));
  // The model's mean layer: 1 dense + 3 MoE.
  CHECK(layer_activation_bytes(in) == doctest::Approx((42 + 3 * moe_balanced) / 4 * sbh));
  // Imbalance 2 on 8 ranks of one expert each: the busiest rank holds twice the copies.
  in.dp = 8;
  in.ep = 8;
  in.moe.imbalance = 2;
  CHECK(layer_activation_bytes(in, LayerKind::moe) == doctest::Approx((10 + 4.0 * 8 / 1024 + 8 + 4 * 5.0) * sbh));
  // ... unless a capacity factor caps it: 1.25 x the mean (per rank ceil(1.25 x 512 x 2 / 8) = 160 = 1.25 x 128).
  in.moe.capacity_factor = 1.25;
  CHECK(layer_activation_bytes(in, LayerKind::moe) == doctest::Approx((10 + 4.0 * 8 / 1024 + 8 + 2.5 * 5.0) * sbh));
  // Dispatch buffers of one layer: the 2 own copies per token and the 2.5 received, 2 B x h each.
  const StageFootprint fp = stage_footprint(in, 0);
  CHECK(fp.moe_dispatch_bytes == doctest::Approx(2 * sbh * (2 + 2.5)));
  // Stage activations: in-flight micro-batches x the stage's mean layer.
  const double mean = (42 + 3 * (10 + 4.0 * 8 / 1024 + 8 + 2.5 * 5.0)) / 4 * sbh;
  CHECK(fp.activations_bytes == doctest::Approx(fp.stored_layer_activations * mean));
  CHECK(stage_footprint(tiny(), 0).moe_dispatch_bytes == 0.0);  // dense: none
}

TEST_CASE("MLA activations: per-head Q, K, V at their widths; latents on every TP rank") {
  FootprintInputs in = tiny();
  in.model.attention = AttentionKind::mla;
  in.model.mla = {256, 128, 128, 64, 128};
  in.model.num_attention_heads = 8;
  in.sequence_parallel = false;
  const double sbh = 512.0 * 1024;
  // Q and K 8 x 192, V and the output input 8 x 128 (2 B each); c_q, c_kv with norm inputs
  // and the RoPE key; MLP 4 x 4h / h.
  const double attention = (4.0 * 8 * 192 + 4.0 * 8 * 128) / 1024;
  const double latents = (4.0 * 256 + 4.0 * 128 + 2.0 * 64) / 1024;
  CHECK(layer_activation_bytes(in) == doctest::Approx((10 + attention + 16 + latents) * sbh));
  in.tp = 2;
  CHECK(layer_activation_bytes(in) == doctest::Approx((10 + (attention + 16) / 2 + latents) * sbh));
  // The KV cache stores the latent and the shared RoPE key: 4 layers x (128 + 64) x tokens x 2 B.
  CHECK(kv_cache_bytes(in.model, 1000, 2, 8) == doctest::Approx(4.0 * 192 * 1000 * 2));
}

TEST_CASE("stage layer indices follow Megatron's (interleaved) assignment") {
  FootprintInputs in = tiny_moe();
  in.model.num_hidden_layers = 8;
  in.pp = 2;
  CHECK(stage_layer_indices(in, 1) == std::vector<std::int64_t>{4, 5, 6, 7});
  in.schedule = ScheduleKind::interleaved;
  in.vp = 2;
  CHECK(stage_layer_indices(in, 0) == std::vector<std::int64_t>{0, 1, 4, 5});
  CHECK(stage_layer_indices(in, 1) == std::vector<std::int64_t>{2, 3, 6, 7});
  // Stage 0 holds the dense layer 0, so it has fewer expert weights than stage 1.
  in.zero = 0;
  CHECK(stage_footprint(in, 0).weights_bytes - 2 * 1024000.0 < stage_footprint(in, 1).weights_bytes);
}

TEST_CASE("MoE stage weights over all stages add up to the model") {
  FootprintInputs in = tiny_moe();
  in.model.num_hidden_layers = 8;
  in.zero = 0;
  in.pp = 4;
  double weights = 0;
  for (const StageFootprint& stage : training_footprint(in).stages) weights += stage.weights_bytes;
  CHECK(weights == doctest::Approx(2 * in.model.total_parameters()));
}

TEST_CASE("invalid expert parallelism is rejected with the field named") {
  FootprintInputs in = tiny();
  in.ep = 2;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("expert parallelism needs a mixture-of-experts model (ep = 2; model 'gpt-test'"));
  in = tiny_moe();
  in.ep = 3;
  in.dp = 3;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("ep 3 does not divide the 8 experts of model 'gpt-test'"));
  in = tiny_moe();
  in.ep = 8;
  CHECK_THROWS_WITH(stage_footprint(in, 0),
                    doctest::Contains("ep 8 does not divide dp x cp = 4 x 1 (the expert-parallel group is carved out of"));
  in = tiny_moe();
  in.moe.imbalance = 0.5;
  CHECK_THROWS_WITH(stage_footprint(in, 0), doctest::Contains("moe imbalance (busiest expert's load / mean load) must be >= 1"));
  in = tiny();
  CHECK_THROWS_WITH(layer_activation_bytes(in, LayerKind::moe), doctest::Contains("model 'gpt-test' has no MoE layers"));
}

TEST_CASE("estimated HBM traffic of an MoE step counts the local experts") {
  FootprintInputs in = tiny_moe();
  in.dp = 4;
  in.ep = 4;
  in.zero = 1;
  in.microbatches = 1;
  in.recompute = RecomputePolicy::none;
  const double dense = 16779264.0 + 3 * (4196352.0 + 8192.0) + 2 * 1024000.0 + 1024.0;
  const double experts = 3 * 12582912.0 / 4;
  const double params = dense + experts;
  const double layers = 4 * layer_full_activation_bytes(in);  // mean layer x 4 layers
  const double expected = 3 * params * 2 + 4 * layers + 8 * params + (dense / 4 + experts) * 30;
  CHECK(estimated_step_hbm_bytes(in, 0) == doctest::Approx(expected));
}

TEST_CASE("dropout masks are stored only with dropout") {
  FootprintInputs in = megatron_22b();
  const double sbh = 2048.0 * 4 * 6144;
  in.sequence_parallel = true;
  in.recompute = RecomputePolicy::selective;
  // Korthikanti's 34 s b h / t includes the two hidden-dropout masks (Megatron's default 0.1).
  CHECK(layer_activation_bytes(in) == doctest::Approx(34.0 * sbh / 8).epsilon(1e-12));
  in.hidden_dropout = 0;
  CHECK(layer_activation_bytes(in) == doctest::Approx(32.0 * sbh / 8).epsilon(1e-12));
  // Unfused attention without attention dropout stores only the softmax output, 2 a s^2 b.
  in.recompute = RecomputePolicy::none;
  const double scores = 2048.0 * 2048 * 4 * 64;  // a s^2 b
  CHECK(layer_activation_bytes(in) == doctest::Approx(32.0 * sbh / 8 + 5.0 * scores / 8).epsilon(1e-12));
  in.attention_dropout = 0;
  CHECK(layer_activation_bytes(in) == doctest::Approx(32.0 * sbh / 8 + 2.0 * scores / 8).epsilon(1e-12));
  // The embedding's dropout mask goes with hidden dropout too.
  FootprintInputs first = tiny();
  first.pp = 2;
  first.dp = 1;
  const double with_mask = stage_footprint(first, 0).embedding_head_bytes;
  first.hidden_dropout = 0;
  CHECK(with_mask > 0);
  CHECK(stage_footprint(first, 0).embedding_head_bytes == 0);
}

TEST_CASE("FP8 primary weights keep the layers' weights in 1 byte and cache only the transposes") {
  FootprintInputs in = tiny();
  in.fp8 = true;
  in.dp = 1;
  const StageFootprint bf16_weights = stage_footprint(in, 0);
  in.fp8_params = true;
  const StageFootprint fp8_weights = stage_footprint(in, 0);
  const double layers = 4 * 12584960.0;
  const double rest = 52388864.0 - layers;  // embedding, head, final norm: working precision
  CHECK(bf16_weights.weights_bytes == doctest::Approx(2.0 * (layers + rest)).epsilon(1e-12));
  CHECK(fp8_weights.weights_bytes == doctest::Approx(1.0 * layers + 2.0 * rest).epsilon(1e-12));
  CHECK(bf16_weights.fp8_weight_cache_bytes == doctest::Approx(2.0 * layers).epsilon(1e-12));
  CHECK(fp8_weights.fp8_weight_cache_bytes == doctest::Approx(1.0 * layers).epsilon(1e-12));
  CHECK(fp8_weights.gradients_bytes == bf16_weights.gradients_bytes);
  CHECK(fp8_weights.optimizer_bytes == bf16_weights.optimizer_bytes);
}

TEST_CASE("under ZeRO-3 only the live gathered layers have fp8 weight copies") {
  FootprintInputs in = tiny();
  in.fp8 = true;
  in.dp = 4;
  in.zero = 1;
  const double layers = 4 * 12584960.0;
  CHECK(stage_footprint(in, 0).fp8_weight_cache_bytes == doctest::Approx(2.0 * layers).epsilon(1e-12));
  in.zero = 3;
  in.zero3_max_live_parameters = 0;       // only the module computed is live ...
  in.zero3_prefetch_bucket_parameters = 0;
  const StageFootprint fp = stage_footprint(in, 0);
  // ... the largest module: the embedding or head (1000 x 1024) vs fc1 / fc2 (4 h^2 = 4.19M).
  CHECK(fp.fp8_weight_cache_bytes > 0);
  CHECK(fp.fp8_weight_cache_bytes <= 2.0 * 4.0 * 1024 * 1024 + 1);
  CHECK(fp.fp8_weight_cache_bytes < 0.1 * 2.0 * layers);
}

TEST_CASE("torchtitan's per-op checkpointing keeps the attention output and every other matmul output") {
  FootprintInputs in = megatron_22b();
  const double sbh = 2048.0 * 4 * 6144;
  in.recompute = RecomputePolicy::op;
  in.sequence_parallel = false;
  in.tp = 1;
  // GELU, MHA: block input, attention output, wq and wv outputs (h each), fc1 output (4h), 2 B.
  CHECK(layer_activation_bytes(in) == doctest::Approx(2.0 * sbh * (1 + 1 + 1 + 1 + 4)).epsilon(1e-12));
  // SwiGLU with GQA (Llama-3-8B widths): q h, v h/4, w1 3.5h, and w2's full-width output; with
  // TP 2 and SP the input is / t, the column-parallel outputs are / t, w2's partial sum is
  // full width and its reduce-scattered copy / t.
  in.model.hidden_size = 4096;
  in.model.num_attention_heads = 32;
  in.model.num_key_value_heads = 8;
  in.model.intermediate_size = 14336;
  in.model.hidden_act = Activation::swiglu;
  const double llama_sbh = 2048.0 * 4 * 4096;
  CHECK(layer_activation_bytes(in) ==
        doctest::Approx(2.0 * llama_sbh * (1 + 1 + 1 + 0.25 + 3.5 + 1)).epsilon(1e-12));
  in.tp = 2;
  in.sequence_parallel = true;
  CHECK(layer_activation_bytes(in) ==
        doctest::Approx(2.0 * llama_sbh * (0.5 + 0.5 + (1 + 0.25 + 3.5) / 2 + 1 + 0.5)).epsilon(1e-12));
  // Not modelled for MoE layers.
  in.model.moe.num_experts = 8;
  in.model.moe.num_experts_per_tok = 2;
  in.model.moe.moe_intermediate_size = 14336;
  CHECK_THROWS_WITH(in.validate(), doctest::Contains("recompute op"));
}

TEST_CASE("torchtitan's conventions: no fp8 weight copies kept, the loss on fp32 logits") {
  FootprintInputs in = tiny();
  in.pp = 2;
  in.zero = 0;
  in.fp8 = true;
  const StageFootprint megatron = stage_footprint(in, 1);
  in.fp8_weight_cache = false;
  in.loss = LossKernel::eager;
  const StageFootprint titan = stage_footprint(in, 1);
  CHECK(megatron.fp8_weight_cache_bytes > 0);
  CHECK(titan.fp8_weight_cache_bytes == 0);
  // Eager cross_entropy(logits.float()): at the backward's peak the saved fp32 log-softmax, the
  // dense fp32 gradient nll_loss_backward writes and log_softmax_backward's fp32 result, 12 B a
  // logit, against the fused kernel's saved fp32 softmax and the bf16 gradient beside it, 6.
  CHECK(titan.embedding_head_bytes - megatron.embedding_head_bytes == doctest::Approx(6.0 * 512 * 1000).epsilon(1e-12));
  // Compiled: the bf16 logits saved and the bf16 gradient, 4 B a logit.
  in.loss = LossKernel::compiled;
  CHECK(megatron.embedding_head_bytes - stage_footprint(in, 1).embedding_head_bytes ==
        doctest::Approx(2.0 * 512 * 1000).epsilon(1e-12));
  // torchtitan's TP plan gathers the LM head's input before the matmul and saves it whole:
  // 2 s b h instead of 2 s b h / t (t 2 with SP here), per micro-batch in flight on the last chunk.
  in = tiny();
  in.pp = 2;
  in.zero = 0;
  in.tp = 2;
  in.sequence_parallel = true;
  const double sharded = stage_footprint(in, 1).embedding_head_bytes;
  in.gathered_head_input = true;
  CHECK(stage_footprint(in, 1).embedding_head_bytes - sharded == doctest::Approx(2.0 * 512 * 1024 / 2).epsilon(1e-12));
  CHECK(loss_saved_bytes(LossKernel::fused) + loss_transient_bytes(LossKernel::fused) == 6);
  CHECK(loss_saved_bytes(LossKernel::eager) + loss_transient_bytes(LossKernel::eager) == 12);
  CHECK(loss_saved_bytes(LossKernel::compiled) + loss_transient_bytes(LossKernel::compiled) == 4);
}

}  // namespace memory_footprint_test
