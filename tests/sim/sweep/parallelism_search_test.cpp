// The parallelism search: enumeration against a hand-listed set, the memory filter, ranking,
// determinism across thread counts, re-simulation, objectives and error messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "models/llm/memory_footprint.hpp"
#include "sim/config/units.hpp"
#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/parallelism_search.hpp"
#include "sim/sweep/search_report.hpp"
#include "sim/training/analytical_step.hpp"
#include "sim/training/training_job.hpp"
#include "topologies/topology.hpp"

namespace parallelism_search_test {

using clustersim::config::kGiB;

using namespace clustersim;
using training::Recompute;

namespace {

/// A 4-layer, 4-head model on one node of 4 A100s; `extra` is appended (overrides, cost).
scenario::Scenario tiny(const std::string& extra = "", const std::string& hbm = "80 GiB",
                        const std::vector<std::string>& overrides = {}) {
  return scenario::load_scenario_from_string(R"(schema_version: 1
name: tiny-search
include: [systems/dgx-a100.yaml]
models:
  tiny-llm: {source: "invented for tests/sim/sweep", hidden_size: 256, num_hidden_layers: 4,
             num_attention_heads: 4, intermediate_size: 1024, vocab_size: 1000, hidden_act: gelu}
accelerators:
  a100-sxm-80gb: {memory: {hbm_capacity: ")" + hbm + R"("}}
cluster:
  nodes: 1
  node: {per_node: 4}
  network: {nic: {per_node: 4}}
workload:
  kind: training
  model: tiny-llm
  seq_len: 256
  global_batch: 4
  parallelism: {tp: 1, pp: 1, dp: 4}
)" + extra,
                                             "tiny-search.yaml", overrides);
}

/// A GPT-size model on 2 DGX A100 nodes whose candidates partly do not fit in 80 GiB.
scenario::Scenario gpt_on_16(const std::string& extra = "") {
  return scenario::load_scenario_from_string(R"(schema_version: 1
name: gpt-search
include: [systems/dgx-a100.yaml]
cluster: {nodes: 2}
workload:
  kind: training
  model: megatron-gpt-18.4b
  seq_len: 2048
  global_batch: 32
  parallelism: {tp: 8, pp: 1, dp: 2}
)" + extra,
                                             "gpt-search.yaml");
}

sweep::SearchSpaceOptions narrow_space() {
  sweep::SearchSpaceOptions space;
  space.max_cp = 2;
  space.max_vp = 2;
  space.zero_stages = {1};
  space.recompute_policies = {Recompute::selective};
  return space;
}

}  // namespace

TEST_CASE("enumeration on a tiny model and cluster equals the hand-listed set") {
  const auto candidates = sweep::enumerate_candidates(tiny(), narrow_space());
  // (tp, pp, dp, cp, vp, mb): 4 accelerators, 4 heads, 4 layers, seq 256, global batch 4,
  // tp <= 4 (one node), cp in {1, 2}, vp <= 2 only where layers / pp allows it and the
  // micro-batch count is a multiple of pp, micro-batches powers of two dividing 4 / dp.
  const std::vector<std::tuple<int, int, int, int, int, std::int64_t>> expected{
      {1, 1, 2, 2, 1, 1}, {1, 1, 2, 2, 1, 2}, {1, 1, 4, 1, 1, 1},
      {1, 2, 1, 2, 1, 1}, {1, 2, 1, 2, 1, 2}, {1, 2, 1, 2, 1, 4}, {1, 2, 1, 2, 2, 1}, {1, 2, 1, 2, 2, 2},
      {1, 2, 2, 1, 1, 1}, {1, 2, 2, 1, 1, 2}, {1, 2, 2, 1, 2, 1},
      {1, 4, 1, 1, 1, 1}, {1, 4, 1, 1, 1, 2}, {1, 4, 1, 1, 1, 4},
      {2, 1, 1, 2, 1, 1}, {2, 1, 1, 2, 1, 2}, {2, 1, 1, 2, 1, 4},
      {2, 1, 2, 1, 1, 1}, {2, 1, 2, 1, 1, 2},
      {2, 2, 1, 1, 1, 1}, {2, 2, 1, 1, 1, 2}, {2, 2, 1, 1, 1, 4}, {2, 2, 1, 1, 2, 1}, {2, 2, 1, 1, 2, 2},
      {4, 1, 1, 1, 1, 1}, {4, 1, 1, 1, 1, 2}, {4, 1, 1, 1, 1, 4}};
  std::vector<std::tuple<int, int, int, int, int, std::int64_t>> got;
  for (const auto& c : candidates) {
    CHECK(c.zero == 1);
    CHECK(c.recompute == Recompute::selective);
    got.emplace_back(c.tp, c.pp, c.dp, c.cp, c.vp, c.micro_batch);
  }
  CHECK(got == expected);

  SUBCASE("ZeRO stages and recompute policies multiply the set; max_tp caps tp") {
    auto space = narrow_space();
    space.zero_stages = {3, 0, 1, 2, 1};  // order and duplicates do not matter
    space.recompute_policies = {Recompute::full, Recompute::none, Recompute::selective};
    CHECK(sweep::enumerate_candidates(tiny(), space).size() == 27 * 4 * 3);
    space = narrow_space();
    space.max_tp = 2;
    CHECK(sweep::enumerate_candidates(tiny(), space).size() == 27 - 3);
  }
  SUBCASE("tp divides the heads") {
    // 6 heads: tp 4 no longer divides them.
    auto space = narrow_space();
    const auto six_heads = scenario::load_scenario_from_string(R"(schema_version: 1
name: six-heads
include: [systems/dgx-a100.yaml]
models:
  six-llm: {source: "invented for tests/sim/sweep", hidden_size: 384, num_hidden_layers: 4,
            num_attention_heads: 6, intermediate_size: 1536, vocab_size: 1000, hidden_act: gelu}
cluster: {nodes: 1, node: {per_node: 4}, network: {nic: {per_node: 4}}}
workload: {kind: training, model: six-llm, seq_len: 256, global_batch: 4, parallelism: {tp: 1, pp: 1, dp: 4}}
)",
                                                               "six-heads.yaml");
    for (const auto& c : sweep::enumerate_candidates(six_heads, space)) CHECK(c.tp != 4);
    CHECK(sweep::enumerate_candidates(six_heads, space).size() == 27 - 3);
  }
}

TEST_CASE("apply_candidate sets the split, schedule, micro-batch, ZeRO and recompute") {
  const auto base = tiny().training();
  const auto w = sweep::apply_candidate(base, sweep::Candidate{2, 2, 1, 1, 2, 2, 3, Recompute::full});
  CHECK(w.parallelism.tp == 2);
  CHECK(w.parallelism.pp == 2);
  CHECK(w.parallelism.vp == 2);
  CHECK(w.parallelism.schedule == training::PipelineSchedule::interleaved);
  CHECK(w.parallelism.zero == 3);
  CHECK(w.micro_batch == 2);
  CHECK(w.recompute == Recompute::full);
  CHECK(w.microbatches_per_pipeline() == 2);
  const auto flat = sweep::apply_candidate(w, sweep::Candidate{1, 1, 4, 1, 1, 1, 0, Recompute::none});
  CHECK(flat.parallelism.schedule == training::PipelineSchedule::one_f_one_b);
  CHECK(sweep::Candidate{8, 4, 32, 1, 1, 1, 1, Recompute::selective}.label() ==
        "tp8 pp4 dp32 cp1 vp1 mb1 zero1 selective");
}

TEST_CASE("pipeline depths the layers do not divide: the embedding and the loss take a layer's place") {
  // 6 layers: even splits over pp 1, 2 (vp 1, 3 > max_vp) and pp 3 (4 % 3: not on 4 GPUs);
  // (6 + 2) = 8 slots: pp 4 x vp 1 (1, 2, 2, 1 layers) and pp 2 x vp 2 (1, 2, 2, 1 per virtual
  // stage); pp 2 x vp 1 would be the even split again, pp 4 x vp 2 leaves a virtual stage empty.
  const auto six = tiny("", "80 GiB", {"models.tiny-llm.num_hidden_layers=6", "workload.parallelism.pp=2", "workload.parallelism.dp=2"});
  const auto candidates = sweep::enumerate_candidates(six, narrow_space());
  std::vector<std::pair<int, int>> lighter;
  for (const auto& c : candidates) {
    if (c.ends_lighter) lighter.emplace_back(c.pp, c.vp);
    if (!c.ends_lighter) CHECK(6 % (c.pp * c.vp) == 0);
  }
  std::sort(lighter.begin(), lighter.end());
  lighter.erase(std::unique(lighter.begin(), lighter.end()), lighter.end());
  CHECK(lighter == std::vector<std::pair<int, int>>{{2, 2}, {4, 1}});
  sweep::Candidate deep{1, 4, 1, 1, 1, 1, 1, Recompute::selective, 1, true};
  const auto w = sweep::apply_candidate(six.training(), deep);
  CHECK(w.parallelism.stage_layers == std::vector<int>{1, 2, 2, 1});
  CHECK(deep.label() == "tp1 pp4 dp1 cp1 vp1 mb1 zero1 selective ends-1");
  sweep::Candidate interleaved{1, 2, 2, 1, 2, 1, 1, Recompute::selective, 1, true};
  const auto wi = sweep::apply_candidate(six.training(), interleaved);
  CHECK(wi.parallelism.stage_layers == std::vector<int>{1, 2, 2, 1});
  CHECK(wi.parallelism.schedule == training::PipelineSchedule::interleaved);
  // An even candidate drops a layout the scenario gave for its own split.
  auto custom = six.training();
  custom.parallelism.stage_layers = {2, 4};
  CHECK(sweep::apply_candidate(custom, sweep::Candidate{1, 2, 2, 1, 1, 1, 1, Recompute::selective})
            .parallelism.stage_layers.empty());
  // The search runs them and ranks them with the rest.
  sweep::SearchOptions options;
  options.space = narrow_space();
  options.resimulate = 1;
  const auto result = sweep::search_parallelism(six, options);
  CHECK(result.invalid == 0);
  CHECK(result.enumerated == static_cast<std::int64_t>(candidates.size()));
}

TEST_CASE("MoE models add the expert-parallel degrees that divide the experts and dp x cp") {
  auto scenario = tiny();
  auto moe_workload = scenario.training();
  moe_workload.model.moe.num_experts = 4;
  moe_workload.model.moe.num_experts_per_tok = 2;
  moe_workload.model.moe.moe_intermediate_size = 512;
  scenario.set_training(moe_workload);
  REQUIRE(scenario.training().model.is_moe());
  const auto dense = sweep::enumerate_candidates(tiny(), narrow_space());
  const auto moe = sweep::enumerate_candidates(scenario, narrow_space());
  // Each dense candidate once with ep 1, plus ep 2 / ep 4 where they divide dp x cp (4 experts).
  std::size_t expected = 0;
  for (const auto& c : dense) {
    CHECK(c.ep == 1);
    for (const int ep : {1, 2, 4}) expected += (c.dp * c.cp) % ep == 0 ? 1 : 0;
  }
  CHECK(moe.size() == expected);
  CHECK(std::any_of(moe.begin(), moe.end(), [](const sweep::Candidate& c) { return c.ep == 4 && c.dp * c.cp == 4; }));
  for (const auto& c : moe) CHECK((c.dp * c.cp) % c.ep == 0);
  auto space = narrow_space();
  space.max_ep = 2;
  for (const auto& c : sweep::enumerate_candidates(scenario, space)) CHECK(c.ep <= 2);
  // The candidate's ep reaches the workload, and the label names it.
  sweep::Candidate c{1, 1, 4, 1, 1, 1, 1, Recompute::none, 4};
  CHECK(sweep::apply_candidate(scenario.training(), c).parallelism.ep == 4);
  CHECK(c.label() == "tp1 pp1 dp4 cp1 vp1 mb1 zero1 none ep4");
  // And the search runs them: every ranked candidate is a feasible MoE split.
  sweep::SearchOptions options;
  options.space = narrow_space();
  options.resimulate = 0;
  const auto result = sweep::search_parallelism(scenario, options);
  CHECK(result.enumerated == static_cast<std::int64_t>(expected));
  CHECK(result.feasible > 0);
}

TEST_CASE("candidates that do not fit in memory are counted and excluded") {
  const auto scenario = gpt_on_16();
  sweep::SearchOptions options;
  options.space.max_cp = 1;
  options.space.max_vp = 1;
  options.top_n = 1000;
  options.resimulate = 0;
  const auto result = sweep::search_parallelism(scenario, options);
  // Independently: a candidate is feasible exactly when its peak stage fits in 80 GiB.
  std::int64_t fits = 0, does_not_fit = 0;
  for (const auto& c : sweep::enumerate_candidates(scenario, options.space)) {
    auto variant = scenario;
    variant.set_training(sweep::apply_candidate(scenario.training(), c));
    const double peak = models::training_footprint(training::footprint_inputs(variant.training())).peak().total_bytes;
    (peak <= scenario.platform.cluster.accelerator.hbm_capacity_bytes ? fits : does_not_fit) += 1;
  }
  CHECK(does_not_fit > 0);
  CHECK(fits > 0);
  CHECK(result.does_not_fit == does_not_fit);
  CHECK(result.feasible == fits);
  CHECK(result.invalid == 0);
  CHECK(result.enumerated == fits + does_not_fit);
  CHECK(static_cast<std::int64_t>(result.top.size()) == fits);
  for (const auto& ranked : result.top) {
    CHECK(ranked.analytical.estimate.memory.total_bytes <= 80.0 * kGiB);
  }
  // The example is the first dropped candidate in key order: tp1 pp1 dp16, no recompute.
  CHECK(result.does_not_fit_example.rfind("tp1 pp1 dp16 cp1 vp1 mb1 zero0 none: does not fit: needs ", 0) == 0);
  CHECK(sweep::search_table(result).find(std::to_string(does_not_fit) + " do not fit in memory") != std::string::npos);
}

TEST_CASE("ranking: best throughput first, equal to a direct sequential evaluation") {
  const auto scenario = tiny();
  sweep::SearchOptions options;
  options.space = narrow_space();
  options.space.zero_stages = {0, 1};
  options.top_n = 100;
  options.resimulate = 0;
  const auto result = sweep::search_parallelism(scenario, options);
  REQUIRE(result.top.size() == 54);
  for (std::size_t i = 1; i < result.top.size(); ++i) {
    const auto& a = result.top[i - 1];
    const auto& b = result.top[i];
    CHECK(a.rank + 1 == b.rank);
    const bool ordered = a.analytical.estimate.tokens_per_s > b.analytical.estimate.tokens_per_s ||
                         (a.analytical.estimate.tokens_per_s == b.analytical.estimate.tokens_per_s &&
                          a.candidate < b.candidate);
    CHECK(ordered);
  }
  // The best is the maximum of estimate_training_step over the hand-listed set.
  const auto topology = topologies::Topology::build(scenario.platform.cluster.network);
  const models::ComputeModel compute(scenario.platform.cluster.accelerator);
  const models::CollectiveModel collectives(topology, scenario.platform.comm,
                                            models::collective_hardware(scenario.platform.cluster.accelerator));
  double best = 0;
  for (const auto& c : sweep::enumerate_candidates(scenario, options.space)) {
    const auto w = sweep::apply_candidate(scenario.training(), c);
    const training::TrainingSetup setup{w, compute, collectives, topology, 1};
    best = std::max(best, training::estimate_training_step(setup).tokens_per_s);
  }
  CHECK(result.top.front().analytical.estimate.tokens_per_s == doctest::Approx(best).epsilon(1e-12));
  CHECK(result.top.front().analytical.objective_value == result.top.front().analytical.estimate.tokens_per_s);
}

TEST_CASE("the output is deterministic across thread counts and runs") {
  const auto scenario = gpt_on_16();
  sweep::SearchOptions options;
  options.space.max_vp = 2;
  options.top_n = 8;
  options.resimulate = 2;
  options.threads = 1;
  const auto one = sweep::search_json(sweep::search_parallelism(scenario, options)).dump();
  options.threads = 2;
  const auto two = sweep::search_json(sweep::search_parallelism(scenario, options)).dump();
  const auto again = sweep::search_json(sweep::search_parallelism(scenario, options)).dump();
  CHECK(one == two);
  CHECK(two == again);
}

TEST_CASE("the best candidates are re-simulated with the event simulation") {
  const auto scenario = gpt_on_16();
  sweep::SearchOptions options;
  options.space.max_vp = 1;
  options.space.max_cp = 1;
  options.top_n = 3;
  options.resimulate = 2;
  const auto result = sweep::search_parallelism(scenario, options);
  REQUIRE(result.top.size() == 3);
  REQUIRE(result.top[0].simulated.has_value());
  REQUIRE(result.top[1].simulated.has_value());
  CHECK_FALSE(result.top[2].simulated.has_value());
  for (int i = 0; i < 2; ++i) {
    const auto& r = result.top[static_cast<std::size_t>(i)];
    // The closed form is tested within 3 % of the event simulation.
    CHECK(r.simulated->step_time_s == doctest::Approx(r.analytical.estimate.step_time_s).epsilon(0.03));
    CHECK(r.simulated->events > 0);
    CHECK(r.simulation_error.empty());
  }
  const auto json = sweep::search_json(result);
  CHECK(json["top"][0]["simulated"]["step_time_s"].get<double>() == result.top[0].simulated->step_time_s);
  CHECK(json["top"][2]["simulated"].is_null());
  CHECK(json["counts"]["enumerated"].get<std::int64_t>() == result.enumerated);
}

TEST_CASE("the re-simulated candidates are re-sorted by their simulated objective") {
  sweep::SearchResult result;
  result.objective = sweep::Objective::throughput;
  for (int r = 1; r <= 4; ++r) {
    sweep::RankedCandidate c;
    c.rank = c.closed_form_rank = r;
    c.candidate.tp = r;  // a tag to follow the candidate
    result.top.push_back(c);
  }
  // Closed-form ranks 1 and 2 simulate slower than rank 3; rank 2's simulation failed.
  const auto simulated = [](double tokens_per_s) {
    training::TrainingResult t;
    t.tokens_per_s = tokens_per_s;
    return t;
  };
  result.top[0].simulated = simulated(100);
  result.top[1].simulation_error = "failed";
  result.top[2].simulated = simulated(120);
  sweep::rerank_by_simulation(result, 3);
  CHECK(result.top[0].candidate.tp == 3);
  CHECK(result.top[1].candidate.tp == 1);
  CHECK(result.top[2].candidate.tp == 2);  // no simulated value: behind the simulated ones
  CHECK(result.top[3].candidate.tp == 4);  // not re-simulated: stays
  for (int r = 0; r < 4; ++r) CHECK(result.top[static_cast<std::size_t>(r)].rank == r + 1);
  CHECK(result.top[0].closed_form_rank == 3);
  const std::string table = sweep::search_table(result);
  CHECK(table.find("ordered by their simulated throughput") != std::string::npos);
  CHECK(sweep::search_json(result)["top"][0]["closed_form_rank"].get<int>() == 3);
  CHECK(*sweep::simulated_objective_value(result.top[0], sweep::Objective::throughput) == 120.0);
  CHECK_FALSE(sweep::simulated_objective_value(result.top[2], sweep::Objective::throughput).has_value());

  // Energy: lower first, and a run without power data has no value.
  result.objective = sweep::Objective::energy;
  result.top[0].simulated->power.computed = true;
  result.top[0].simulated->power.energy_per_token_j = 2.0;
  result.top[1].simulated->power.computed = false;
  sweep::rerank_by_simulation(result, 2);
  CHECK(result.top[0].candidate.tp == 3);
  CHECK(result.top[1].candidate.tp == 1);
}

TEST_CASE("the table shows a re-simulated row's simulated tokens/s, MFU and objective, the closed form's MFU beside") {
  sweep::SearchResult result;
  result.objective = sweep::Objective::throughput;
  sweep::RankedCandidate simulated_row;
  simulated_row.rank = simulated_row.closed_form_rank = 1;
  simulated_row.analytical.estimate.step_time_s = 6.0;
  simulated_row.analytical.estimate.tokens_per_s = 5000;
  simulated_row.analytical.estimate.mfu = 0.640;
  simulated_row.analytical.objective_value = 5000;
  training::TrainingResult simulation;
  simulation.step_time_s = 6.9;
  simulation.tokens_per_s = 4321;
  simulation.mfu = 0.578;
  simulated_row.simulated = simulation;
  sweep::RankedCandidate closed_form_row = simulated_row;
  closed_form_row.rank = closed_form_row.closed_form_rank = 2;
  closed_form_row.simulated.reset();
  result.top = {simulated_row, closed_form_row};
  const std::string table = sweep::search_table(result);
  CHECK(table.find("MFU an. %") != std::string::npos);
  const auto row = [&](const std::string& rank) {
    const auto start = table.find("\n" + rank + " ");
    REQUIRE(start != std::string::npos);
    return table.substr(start + 1, table.find('\n', start + 1) - start - 1);
  };
  const std::string first = row("   1");
  CHECK(first.find("       6.9         4321   57.8      64.0") != std::string::npos);
  CHECK(first.substr(first.size() - 4) == "4321");  // the objective: the simulated throughput
  const std::string second = row("   2");
  CHECK(second.find("         -         5000   64.0      64.0") != std::string::npos);
  CHECK(second.substr(second.size() - 4) == "5000");
  CHECK(table.find("MFU % and throughput: the simulation's where a step sim. s is shown") != std::string::npos);
}

TEST_CASE("energy and cost objectives rank by J/token and USD/Mtoken") {
  const auto scenario = gpt_on_16("cost: {accelerator_hour_usd: 2}\n");
  sweep::SearchOptions options;
  options.space.max_vp = 1;
  options.space.max_cp = 1;
  options.top_n = 5;
  options.resimulate = 0;
  options.objective = sweep::Objective::energy;
  const auto energy = sweep::search_parallelism(scenario, options);
  for (std::size_t i = 1; i < energy.top.size(); ++i) {
    CHECK(energy.top[i - 1].analytical.energy_per_token_j <= energy.top[i].analytical.energy_per_token_j);
  }
  CHECK(energy.top[0].analytical.objective_value == energy.top[0].analytical.energy_per_token_j);
  CHECK(energy.top[0].analytical.energy_per_token_j > 0);
  options.objective = sweep::Objective::cost;
  const auto cost = sweep::search_parallelism(scenario, options);
  // Rental pricing: cost per token = 2 $/h x 16 GPUs x step time / tokens.
  const auto& best = cost.top[0].analytical;
  const double tokens = 32.0 * 2048.0;
  CHECK(best.usd_per_million_tokens ==
        doctest::Approx(2.0 / 3600.0 * 16.0 * best.estimate.step_time_s / tokens * 1e6).epsilon(1e-9));
  // With rental pricing cost is proportional to step time: the same winner as throughput.
  options.objective = sweep::Objective::throughput;
  CHECK(sweep::search_parallelism(scenario, options).top[0].candidate == cost.top[0].candidate);
}

TEST_CASE("errors: no feasible split, bad objective, missing cost block, bad options") {
  SUBCASE("nothing fits in a tiny HBM") {
    sweep::SearchOptions options;
    options.space = narrow_space();
    try {
      sweep::search_parallelism(tiny("", "512 MiB"), options);
      FAIL("expected SimulationError");
    } catch (const SimulationError& e) {
      const std::string message = e.what();
      CHECK(message.find("no feasible parallel split for 'tiny-search' on 4 accelerators: 27 candidates "
                         "enumerated, 27 do not fit in memory, 0 rejected by the models") == 0);
      CHECK(message.find("e.g. tp1 pp1 dp2 cp2 vp1 mb1 zero1 selective: does not fit: needs ") !=
            std::string::npos);
      CHECK(message.find("of 0.5 GiB") != std::string::npos);
    }
  }
  SUBCASE("no degree divides the model") {
    sweep::SearchOptions options;
    options.space = narrow_space();
    options.space.max_tp = 1;
    options.space.max_cp = 1;
    options.space.max_pp = 1;
    // 4 accelerators, tp = pp = cp = 1: dp 4 needs 4 | global_batch, which 6 is not.
    const auto six = tiny("", "80 GiB", {"workload.global_batch=6", "workload.parallelism.tp=2",
                                         "workload.parallelism.dp=2"});
    CHECK_THROWS_WITH_AS(sweep::search_parallelism(six, options),
                         doctest::Contains("0 candidates enumerated"), SimulationError);
  }
  SUBCASE("unknown objective lists the valid ones") {
    CHECK_THROWS_WITH_AS(sweep::parse_objective("speed"),
                         "unknown search objective 'speed'; valid objectives: throughput, cost, energy",
                         ConfigError);
    CHECK(sweep::parse_objective("energy") == sweep::Objective::energy);
  }
  SUBCASE("cost without a cost block") {
    sweep::SearchOptions options;
    options.objective = sweep::Objective::cost;
    CHECK_THROWS_WITH_AS(sweep::search_parallelism(tiny(), options),
                         doctest::Contains("objective 'cost' needs a cost block in the scenario"), ConfigError);
  }
  SUBCASE("bad options") {
    sweep::SearchOptions options;
    options.top_n = 0;
    CHECK_THROWS_WITH_AS(sweep::search_parallelism(tiny(), options), "search: top must be >= 1, got 0", ConfigError);
    options = {};
    options.space.zero_stages = {4};
    CHECK_THROWS_WITH_AS(sweep::search_parallelism(tiny(), options), "search: ZeRO stage must be 0..3, got 4",
                         ConfigError);
    options = {};
    options.space.recompute_policies.clear();
    CHECK_THROWS_WITH_AS(sweep::search_parallelism(tiny(), options),
                         "search: the list of recompute policies is empty", ConfigError);
    options = {};
    options.space.max_cp = 0;
    CHECK_THROWS_WITH_AS(sweep::search_parallelism(tiny(), options), "search: max_cp must be >= 1, got 0",
                         ConfigError);
  }
}

TEST_CASE("a job's accelerators are left out; a scattered placement is kept") {
  // 2 nodes of 4; a collective-loop job takes the second node, leaving the 4-GPU hand-listed set.
  const auto shared = tiny("jobs:\n  other: {kind: collective-loop, accelerators: {first: 4, count: 4}, bytes: \"1 MiB\"}\n",
                           "80 GiB", {"cluster.nodes=2", "cluster.placement=scattered"});
  CHECK(sweep::training_accelerators(shared) == 4);
  CHECK(sweep::enumerate_candidates(shared, narrow_space()) == sweep::enumerate_candidates(tiny(), narrow_space()));
  sweep::SearchOptions options;
  options.space = narrow_space();
  options.resimulate = 1;
  const auto result = sweep::search_parallelism(shared, options);
  CHECK(result.accelerators == 4);
  CHECK(result.feasible == 27);
  REQUIRE(result.top.front().simulated.has_value());
  CHECK(result.top.front().simulated->step_time_s ==
        doctest::Approx(result.top.front().analytical.estimate.step_time_s).epsilon(0.03));
}

}  // namespace parallelism_search_test
