// The serving iteration's cost by layer (issue 33 part 4): exact() is the sum of the op list
// of the exact batch, each op costed once by the pool's compute model and repeated per layer,
// with one attention launch per layer (not one per (q, kv) group) and the host's time; its
// parts add up to its time. The expectations are built from the op list here, op by op.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <string>
#include <vector>

#include "models/llm/memory_footprint.hpp"
#include "models/llm/transformer_ops.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/iteration_cost.hpp"
#include "sim/serving/serving_workload.hpp"

namespace iteration_cost_test {

using ::clustersim::tolerance::relative_approx;
using namespace clustersim;

namespace {

constexpr const char* kOneGpu = R"(schema_version: 1
name: iteration-cost
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 1, tp: 1}
  requests: {count: 1}
)";

/// Time of `ops` on `compute`, each op once (no communication op costs on one GPU).
double ops_time(const models::ComputeModel& compute, const std::vector<models::TransformerOp>& ops) {
  double total = 0;
  for (const models::TransformerOp& op : ops) {
    if (op.kind == models::TransformerOpKind::communication) continue;
    total += models::compute_estimate(compute, op).time_s;
  }
  return total;
}

}  // namespace

TEST_CASE("an iteration is its op list: embedding, each layer's ops x layers, one attention launch per layer, head, host") {
  const scenario::Scenario s = scenario::load_scenario_from_string(kOneGpu, "s.yaml");
  const auto platform = runner::build_platform(s);
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  serving::InstanceLayout layout;
  layout.model = spec.model;
  layout.model.num_hidden_layers = 3;  // a short model: the layer repeat must show
  layout.accelerators = {0};
  layout.host_overhead_s = 250e-6;
  const serving::IterationCostModel model(platform->compute(), platform->collectives(), layout);
  // A decode (1 token after 99) beside a prefill chunk (50 tokens after 30): two (q, kv) groups
  // in each layer's attention, run as one varlen kernel.
  const std::vector<serving::BatchEntry> batch = {{1, 100, true}, {50, 80, false}};
  models::TransformerBatch tb;
  tb.head = models::HeadOutput::next_token;
  tb.sequences = {{1, 100}, {50, 80}};
  const models::TransformerForwardOps ops =
      models::transformer_forward_ops(layout.model, tb, layout.sharding, layout.routing);
  REQUIRE(ops.moe_layer.empty());
  const models::ComputeModel& compute = platform->compute();
  const double launch = compute.spec().kernel_launch_s;
  const double expected = ops_time(compute, ops.embedding) + 3 * ops_time(compute, ops.dense_layer) +
                          ops_time(compute, ops.head) - 3 * launch /* one attention launch per layer, not two */ +
                          250e-6;
  const serving::IterationCost cost = model.exact(batch);
  CHECK(cost.time_s == relative_approx(expected, 1e-12));
  CHECK(cost.host_s == 250e-6);
  CHECK(cost.communication_s == 0);  // one GPU: no collective
  // The parts add up: by bound, and by kernel class.
  CHECK(cost.compute_bound_s + cost.memory_bound_s + cost.communication_s + cost.host_s ==
        relative_approx(cost.time_s, 1e-12));
  CHECK(cost.gemm_s + cost.attention_kernel_s + cost.elementwise_s ==
        relative_approx(cost.compute_bound_s + cost.memory_bound_s, 1e-12));
  // Model FLOPs: every op's, the layer's three times.
  double flops = 0;
  for (const auto* part : {&ops.embedding, &ops.head}) {
    for (const models::TransformerOp& op : *part) flops += op.flops;
  }
  for (const models::TransformerOp& op : ops.dense_layer) flops += 3 * op.flops;
  CHECK(cost.flops == relative_approx(flops, 1e-12));
  // One sequence: one group, no launch taken back.
  const models::TransformerForwardOps alone = models::transformer_forward_ops(
      layout.model, {{{1, 100}}, models::HeadOutput::next_token}, layout.sharding, layout.routing);
  const std::vector<serving::BatchEntry> one = {{1, 100, true}};
  CHECK(model.exact(one).time_s == relative_approx(ops_time(compute, alone.embedding) +
                                                       3 * ops_time(compute, alone.dense_layer) +
                                                       ops_time(compute, alone.head) + 250e-6,
                                                   1e-12));
}

TEST_CASE("an MLA model: decode attends absorbed over the latent cache, prefill up-projects its cached context") {
  const scenario::Scenario s = scenario::load_scenario_from_string(R"(schema_version: 1
name: mla-iteration
include: [systems/dgx-h200.yaml]
cluster: {nodes: 1}
workload:
  kind: serving
  model: deepseek-v3
  precision: {weights: fp8}
  pools:
    main: {replicas: 1, tp: 8}
  requests: {count: 1}
)",
                                                                   "mla.yaml");
  const auto platform = runner::build_platform(s);
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  serving::InstanceLayout layout;
  layout.model = spec.model;
  layout.model.num_hidden_layers = 4;  // three dense layers and one MoE layer
  layout.sharding.tp = 8;
  layout.accelerators = {0, 1, 2, 3, 4, 5, 6, 7};
  serving::IterationCostModel model(platform->compute(), platform->collectives(), layout);
  const models::ComputeModel& compute = platform->compute();

  // A decode step's attention, by hand: 16 query heads per rank (128 / tp 8) against the one
  // latent (512) and RoPE key (64) of 999 cached tokens + the new one: 1000 keys.
  const models::TransformerForwardOps decode = models::transformer_forward_ops(
      layout.model, {{{1, 1000, models::SequencePhase::decode}}, models::HeadOutput::next_token}, layout.sharding,
      layout.routing);
  const models::AttentionShape* latent = nullptr;
  for (const models::TransformerOp& op : decode.dense_layer) {
    if (op.kind == models::TransformerOpKind::attention) latent = &op.attention.groups.at(0);
  }
  REQUIRE(latent != nullptr);
  CHECK(latent->q_heads == 16);
  CHECK(latent->kv_heads == 1);
  CHECK(latent->head_dim == 576);
  CHECK(latent->latent_value_dim == 512);
  const models::OpEstimate by_model = compute.attention(*latent);
  // FLOPs 2 x 16 x 1000 x (576 + 512); bytes: the latent cache once (1000 x 576 x 2 B), Q (16 x
  // 576 x 2), O (16 x 512 x 2), the fp32 LSE (16 x 4): memory-bound at FlashMLA's 3000 of 3350 GB/s.
  const double bytes = 1000.0 * 576 * 2 + 16.0 * 576 * 2 + 16.0 * 512 * 2 + 16.0 * 4;
  CHECK(by_model.flops == 2.0 * 16 * 1000 * (576 + 512));
  CHECK(by_model.bytes == bytes);
  CHECK_FALSE(by_model.compute_bound);
  CHECK(by_model.time_s == relative_approx(bytes / (compute.spec().hbm_bytes_per_s * 3000.0 / 3350.0) +
                                               compute.spec().kernel_launch_s,
                                           1e-12));
  // The same step as MHA over up-projected keys would read 16 heads' K and V: 9x the bytes.
  const models::TransformerForwardOps as_training = models::transformer_forward_ops(
      layout.model, {{{1, 1000}}, models::HeadOutput::next_token}, layout.sharding, layout.routing);
  for (const models::TransformerOp& op : as_training.dense_layer) {
    if (op.kind == models::TransformerOpKind::attention) {
      CHECK(compute.attention(op.attention.groups.at(0)).bytes > 8 * bytes);
    }
  }

  // A prefill chunk of 200 tokens after 300 cached: the cached latents up-projected again, one
  // GEMM of 300 rows per layer beside the chunk's own; none in a decode step or in training.
  const auto context_gemm = [](const std::vector<models::TransformerOp>& ops) -> const models::TransformerOp* {
    for (const models::TransformerOp& op : ops) {
      if (op.name == "kv up context") return &op;
    }
    return nullptr;
  };
  const models::TransformerForwardOps prefill = models::transformer_forward_ops(
      layout.model, {{{200, 500, models::SequencePhase::prefill}}, models::HeadOutput::next_token}, layout.sharding,
      layout.routing);
  const models::TransformerOp* up = context_gemm(prefill.moe_layer);
  REQUIRE(up != nullptr);
  CHECK(up->gemm.shape.m == 300);
  CHECK(up->gemm.shape.n == 16 * (128 + 128));
  CHECK(up->gemm.shape.k == 512);
  CHECK(context_gemm(decode.dense_layer) == nullptr);
  CHECK(context_gemm(as_training.dense_layer) == nullptr);

  // cost() (memoised parts) agrees with exact() (the op list) on a mixed batch.
  const std::vector<serving::BatchEntry> batch = {{1, 1000, true}, {1, 1000, true}, {200, 500, false}};
  const serving::IterationCost memo = model.cost(batch);
  const serving::IterationCost exact = model.exact(batch);
  CHECK(memo.time_s == relative_approx(exact.time_s, 0.01));
  CHECK(memo.flops == relative_approx(exact.flops, 0.01));
}

TEST_CASE("DeepSeek-V3 serves: the example's latent cache per token, every request completed, the MLA note") {
  const scenario::Scenario s =
      scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/serving/deepseek-v3-h200-tp8.yaml",
                              {"workload.requests.count=60"});
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  // 61 layers x (512 latent + 64 RoPE key) x 1 byte (fp8), on every TP rank.
  CHECK(models::kv_cache_bytes(spec.model, 1, 1, 8) == 61.0 * 576);
  const runner::RunResult run = runner::run_scenario(s);
  const auto& result = dynamic_cast<const serving::ServingResult&>(*run.primary);
  CHECK(result.completed == 60);
  CHECK(result.rejected == 0);
  CHECK(result.tpot_s.p50 > 0);
  bool noted = false;
  for (const std::string& note : result.notes) noted = noted || note.rfind("MLA: decode steps attend absorbed", 0) == 0;
  CHECK(noted);
}

}  // namespace iteration_cost_test
