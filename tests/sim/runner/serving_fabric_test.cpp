// Serving collectives on the platform (issue 30 part 6): an instance whose TP, EP or PP groups
// cross the scale-out fabric lists its iteration's collectives per group (IterationCost::
// traffic), and its replicas run them through the session's CommRuntime, so they load the
// network and wait for other jobs' traffic. Inside a scale-up domain they stay closed-form.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/iteration_cost.hpp"
#include "sim/serving/serving_workload.hpp"

namespace serving_fabric_test {

using namespace clustersim;

namespace {

// Llama-3-8B as one TP16 instance across the two nodes of a DGX H100 pair (8-GPU NVSwitch
// domains), one request of 512 prompt tokens and 2 output tokens: a prefill iteration, then one
// decode iteration.
const std::string kAcross = R"(schema_version: 1
name: across
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 4
  network: {topology: fat-tree, tiers: 2, radix: 20, oversubscription: 4.0, routing: ecmp}
workload:
  kind: serving
  model: llama-3-8b
  framework: vllm-0.8
  pools:
    main: {replicas: 1, tp: 16}
  requests:
    count: 1
    arrival: {process: offline}
    input: {distribution: fixed, value: 512}
    output: {distribution: fixed, value: 2}
simulation: {seed: 1}
)";

const serving::ServingResult& serving_of(const runner::RunResult& run) {
  const auto* result = dynamic_cast<const serving::ServingResult*>(run.primary.get());
  REQUIRE(result != nullptr);
  return *result;
}

serving::InstanceLayout layout_of(const serving::ServingSpec& spec, int tp, bool record) {
  serving::InstanceLayout layout;
  layout.model = spec.model;
  layout.sharding.tp = tp;
  for (int a = 0; a < tp; ++a) layout.accelerators.push_back(a);
  layout.record_traffic = record;
  return layout;
}

}  // namespace

TEST_CASE("an instance's groups by id, offset to another instance") {
  serving::InstanceLayout layout;
  layout.sharding.tp = 4;
  layout.sharding.ep = 2;
  layout.pp = 2;
  for (int a = 0; a < 8; ++a) layout.accelerators.push_back(a);
  CHECK(layout.groups() == 3);
  CHECK(layout.group(0) == std::vector<int>{0, 1, 2, 3});
  CHECK(layout.group(0, 16) == std::vector<int>{16, 17, 18, 19});
  CHECK(layout.group(1, 16) == std::vector<int>{16, 17});
  CHECK(layout.group(2, 16) == std::vector<int>{16, 20});  // stage 0's first rank to stage 1's
  CHECK(layout.group(3).empty());
}

TEST_CASE("an iteration's collectives listed per group and kind: Megatron's all-reduces and the logits' gather") {
  const scenario::Scenario s = scenario::load_scenario_from_string(kAcross, "across.yaml");
  const auto platform = runner::build_platform(s);
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  serving::IterationCostModel listed(platform->compute(), platform->collectives(), layout_of(spec, 16, true));
  serving::IterationCostModel plain(platform->compute(), platform->collectives(), layout_of(spec, 16, false));
  const std::vector<serving::BatchEntry> batch = {{512, 512, false}, {1, 900, true}, {1, 300, true}};
  std::vector<serving::GroupTraffic> traffic, none;
  const serving::IterationCost cost = listed.cost(batch, &traffic);
  // Listing changes nothing of the cost itself; a layout that does not record lists nothing.
  CHECK(cost.time_s == plain.cost(batch, &none).time_s);
  CHECK(none.empty());
  // 514 tokens of hidden size 4096 in bf16, all-reduced after the attention projection and after
  // the MLP of each of the 32 layers (tensor parallelism without sequence parallelism) and once
  // after the vocabulary-parallel embedding: 65 ops; the head gathers the 3 sequences' logits
  // (vocabulary 128,256, bf16) once.
  REQUIRE(traffic.size() == 2);
  const serving::GroupTraffic& tp = traffic[0];
  CHECK(tp.kind == models::CollectiveKind::all_reduce);
  CHECK(tp.group == 0);
  CHECK(tp.ops == 65);
  CHECK(tp.bytes == 65.0 * 514 * 4096 * 2);
  const serving::GroupTraffic& logits = traffic[1];
  CHECK(logits.kind == models::CollectiveKind::all_gather);
  CHECK(logits.group == 0);
  CHECK(logits.ops == 1);
  CHECK(logits.bytes == 3.0 * 128256 * 2);
  // Their closed-form time is the iteration's communication, each op timed alone.
  const std::vector<int> group = listed.layout().group(0);
  const models::CollectiveModel& closed = platform->collectives();
  CHECK(tp.closed_form_s ==
        doctest::Approx(65 * closed.time_s(models::CollectiveKind::all_reduce, group, 514.0 * 4096 * 2)).epsilon(1e-12));
  CHECK(logits.closed_form_s == closed.time_s(models::CollectiveKind::all_gather, group, 3.0 * 128256 * 2));
  CHECK(tp.closed_form_s + logits.closed_form_s == doctest::Approx(cost.communication_s).epsilon(1e-12));
  // The exact op-by-op cost lists the same traffic.
  std::vector<serving::GroupTraffic> exact;
  (void)listed.exact(batch, &exact);
  REQUIRE(exact.size() == 2);
  CHECK(exact[0].ops == tp.ops);
  CHECK(exact[0].bytes == tp.bytes);
  CHECK(exact[1].bytes == logits.bytes);
}

TEST_CASE("an instance across two nodes runs its collectives on the network: alone, as the closed form") {
  const scenario::Scenario s = scenario::load_scenario_from_string(kAcross, "across.yaml");
  const auto platform = runner::build_platform(s);
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  serving::IterationCostModel model(platform->compute(), platform->collectives(), layout_of(spec, 16, false));
  // The prefill iteration, then the decode iteration at 513 cached tokens, each with vLLM 0.8's
  // 0.5 ms host overhead per iteration.
  const double prefill = model.cost(std::vector<serving::BatchEntry>{{512, 512, false}}).time_s + 0.5e-3;
  const double decode = model.cost(std::vector<serving::BatchEntry>{{1, 513, true}}).time_s + 0.5e-3;
  for (const char* fidelity : {"analytical", "flow"}) {
    const scenario::Scenario run_scenario =
        scenario::load_scenario_from_string(kAcross, "across.yaml", {std::string("simulation.fidelity=") + fidelity});
    CHECK(run_scenario.warnings.empty());  // the fidelity matters here: no "has no effect"
    const runner::RunResult run = runner::run_scenario(run_scenario);
    const serving::ServingResult& r = serving_of(run);
    REQUIRE(r.completed == 1);
    // The local part, then each collective kind once through the runtime: the same time (to a
    // picosecond per event) as the closed form when nothing else is on the links.
    CHECK_MESSAGE(r.ttft_s.mean == doctest::Approx(prefill).epsilon(1e-9), std::string(fidelity));
    CHECK_MESSAGE(r.tpot_s.mean == doctest::Approx(decode).epsilon(1e-9), std::string(fidelity));
  }
}

TEST_CASE("an instance across nodes waits for another job's traffic on its links; inside a node it does not") {
  // Two nodes per leaf (16 NICs, 4 uplinks): the instance on nodes 1-2 crosses leaves 0 and 1,
  // a tenant on nodes 3-4 running a 4 GB all-to-all back to back crosses leaves 1 and 2: they
  // share leaf 1's uplinks. Prompts of 8,192 tokens: each prefill all-reduces 64 x 64 MiB.
  const std::string yaml = R"(schema_version: 1
name: shared
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 5
  network: {topology: fat-tree, tiers: 2, radix: 20, oversubscription: 4.0, routing: ecmp}
jobs:
  tenant:
    kind: collective-loop
    collective: all-to-all
    accelerators: {first: 24, count: 16}
    bytes: "4 GB"
workload:
  kind: serving
  model: llama-3-8b
  accelerators: {first: 8, count: 16}
  pools:
    main: {replicas: 1, tp: 16}
  requests:
    count: 20
    arrival: {process: poisson, rate: 5}
    input: {distribution: fixed, value: 8192}
    output: {distribution: fixed, value: 2}
simulation: {seed: 1, fidelity: flow}
)";
  const auto ttft = [&](const std::vector<std::string>& overrides) {
    const runner::RunResult run = runner::run_scenario(scenario::load_scenario_from_string(yaml, "s.yaml", overrides));
    const serving::ServingResult& r = serving_of(run);
    REQUIRE(r.completed == 20);
    return r.ttft_s.mean;
  };
  // The tenant reduced to one all-to-all of one byte: the instance alone on the fabric.
  const std::vector<std::string> quiet = {"jobs.tenant.bytes=1 B", "jobs.tenant.rounds=1"};
  for (const char* fidelity : {"flow", "analytical"}) {
    const std::string f = std::string("simulation.fidelity=") + fidelity;
    const double shared = ttft({f});
    const double alone = ttft({f, quiet[0], quiet[1]});
    CHECK_MESSAGE(shared > alone * 1.2, std::string(fidelity));
    // Two instances of tp 8, each inside a node: their collectives never leave the NVSwitch.
    const std::string inside = "workload.pools.main={replicas: 2, tp: 8}";
    CHECK_MESSAGE(ttft({f, inside}) == ttft({f, inside, quiet[0], quiet[1]}), std::string(fidelity));
  }
}

}  // namespace serving_fabric_test
