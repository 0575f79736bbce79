// The serving iteration's cost by layer (issue 33 part 4): exact() is the sum of the op list
// of the exact batch, each op costed once by the pool's compute model and repeated per layer,
// with one attention launch per layer (not one per (q, kv) group) and the host's time; its
// parts add up to its time. The expectations are built from the op list here, op by op.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <vector>

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

}  // namespace iteration_cost_test
