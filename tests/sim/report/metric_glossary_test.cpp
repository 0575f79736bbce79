// The metrics glossary against what the reports emit: every metric of a training run (with a
// second job, prices and a token budget, so that every optional block is written), of a serving
// run and of their sweep rows is declared, every declaration is emitted by one of them, and
// docs/metrics.md is the generated text.
#include "sim/report/metric_glossary.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/trace/chakra_trace.hpp"

namespace metric_glossary_test {

using namespace clustersim;

namespace {

std::string source_path(const std::string& relative) { return std::string(CLUSTERSIM_SOURCE_DIR) + "/" + relative; }

struct Emitted {
  std::vector<std::pair<std::string, std::string>> result_paths;  ///< path, unit (job metrics only)
  std::vector<std::string> sweep_columns;
};

void collect(const scenario::Scenario& scenario, Emitted& emitted) {
  runner::RunResult run = runner::run_scenario(scenario);
  // With simulation.calibration, what `clustersim run` adds: the comparison with the library's tables.
  const auto calibration = runner::compare_with_default_tables(scenario, run);
  nlohmann::json result = report::run_result_json(scenario, run);
  if (calibration) report::add_calibration_effect(result, *calibration);
  for (auto& path : report::result_metric_paths(result)) {
    emitted.result_paths.push_back(std::move(path));
  }
  for (const sweep::Metric& metric : sweep::summary_metrics(scenario, run)) {
    std::string column = metric.column;
    // A job's columns are job.NAME.<metric>; the glossary declares them once for any name.
    if (column.rfind("job.", 0) == 0) column = "job.<name>." + column.substr(column.find('.', 4) + 1);
    column = report::generic_metric_path(column);  // per-tier columns: tier_<N>
    emitted.sweep_columns.push_back(column);
  }
}

void run_and_collect(const std::string& file, const std::vector<std::string>& overrides, Emitted& emitted) {
  collect(scenario::load_scenario(source_path(file), overrides), emitted);
}

/// A Chakra trace of two ranks (compute, an all-reduce, a send): the trace kind's metrics.
void run_trace_and_collect(Emitted& emitted) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("clustersim-glossary-trace-" + std::to_string(getpid()));
  for (int rank = 0; rank < 2; ++rank) {
    trace::ChakraTrace t;
    trace::ChakraNode gemm, reduce, p2p;
    gemm.id = 1;
    gemm.name = "gemm";
    gemm.type = trace::ChakraNodeType::compute;
    gemm.num_ops = 1'000'000'000;
    reduce.id = 2;
    reduce.name = "all-reduce";
    reduce.type = trace::ChakraNodeType::collective;
    reduce.data_deps = {1};
    reduce.comm_type = trace::ChakraCollective::all_reduce;
    reduce.comm_size = 1 << 20;
    p2p.id = 3;
    p2p.name = "p2p";
    p2p.type = rank == 0 ? trace::ChakraNodeType::send : trace::ChakraNodeType::recv;
    p2p.data_deps = {2};
    (rank == 0 ? p2p.comm_dst : p2p.comm_src) = 1 - rank;
    p2p.comm_size = 1 << 20;
    t.nodes = {gemm, reduce, p2p};
    trace::write_chakra_file(dir / ("step." + std::to_string(rank) + ".et"), t);
  }
  collect(scenario::load_scenario_from_string("schema_version: 1\nname: trace\ninclude: [systems/dgx-h100.yaml]\n"
                                              "cluster: {nodes: 1}\n"
                                              "workload: {kind: trace, trace: " + (dir / "step").string() + "}\n",
                                              "trace.yaml"),
          emitted);
  std::filesystem::remove_all(dir);
}

const Emitted& emitted_by_the_runs() {
  static const Emitted emitted = [] {
    Emitted e;
    // Training with a collective-loop job beside it, flow fidelity (network tiers), prices
    // (cost) and a token budget (the whole-run block).
    // Three iterations with kernel jitter and failures on: the iterations and goodput blocks.
    run_and_collect("scenarios/congestion/shared-fabric.yaml",
                    {"workload.train_tokens=1e9", "cost.accelerator_hour_usd=2", "simulation.iterations=3",
                     "simulation.variability.gemm_cv=0.02", "simulation.failures.enabled=true"},
                    e);
    // A failed spine and a degraded optic: the link_faults block.
    // (With every other optional training block on, so that none of them is null.)
    run_and_collect("examples/faults/spine-failure.yaml",
                    {"workload.train_tokens=1e9", "cost.accelerator_hour_usd=2", "simulation.iterations=2",
                     "simulation.variability.gemm_cv=0.02", "simulation.failures.enabled=true"},
                    e);
    // Serving with every fault on: the faults block.
    run_and_collect("scenarios/serving/llama3-8b-chatbot.yaml",
                    {"cost.accelerator_hour_usd=2", "workload.requests.count=200", "simulation.variability.gemm_cv=0.05",
                     "cluster.stragglers.probability=0.5", "cluster.stragglers.compute_speed=0.8",
                     "simulation.failures.enabled=true"},
                    e);
    // Multi-turn chat with a host KV-cache tier: the kv_offload block; on a calibration table
    // (the library's H100 kernel rows): the calibration block.
    run_and_collect("scenarios/serving/multi-turn-prefix-aware.yaml",
                    {"workload.requests.count=300", "workload.kv_offload={tiers: [host]}",
                     "simulation.calibration=" + source_path("models/data/calibration/h100-sxm.csv")},
                    e);
    if (trace::chakra_supported()) run_trace_and_collect(e);  // a build with -DCLUSTERSIM_WITH_CHAKRA=ON
    return e;
  }();
  return emitted;
}

}  // namespace

TEST_CASE("every metric a training, a serving and a job run emit is declared in the glossary, with its unit") {
  const auto declarations = report::result_metric_declarations();
  const Emitted& emitted = emitted_by_the_runs();
  REQUIRE(emitted.result_paths.size() > 150);
  for (const auto& [path, unit] : emitted.result_paths) {
    INFO("emitted but not declared in sim/report/metric_glossary.cpp: ", path);
    const report::MetricDeclaration* declared = report::find_metric(declarations, path);
    REQUIRE(declared != nullptr);
    if (path.rfind("jobs[].metrics.", 0) == 0 || path.rfind("workload.metrics.", 0) == 0) {
      // A job metric carries its own unit ("" for a count).
      CHECK(declared->unit == (unit.empty() ? std::string("count") : unit));
    }
  }
}

TEST_CASE("every declared metric is emitted by one of the runs") {
  const Emitted& emitted = emitted_by_the_runs();
  const auto declarations = report::result_metric_declarations();
  std::set<const report::MetricDeclaration*> seen;
  for (const auto& [path, unit] : emitted.result_paths) seen.insert(report::find_metric(declarations, path));
  for (const report::MetricDeclaration* metric : declarations) {
    // Without Chakra support no trace runs: its section is checked only in builds that have it.
    if (!trace::chakra_supported() && metric->path.rfind("workload.", 0) == 0) continue;
    INFO("declared but no run emits it: ", metric->path);
    CHECK(seen.count(metric) == 1);
  }
}

TEST_CASE("every sweep column of the runs is declared, and every declared column is emitted") {
  const Emitted& emitted = emitted_by_the_runs();
  const auto declarations = report::sweep_metric_declarations();
  for (const std::string& column : emitted.sweep_columns) {
    INFO("sweep column not declared: ", column);
    CHECK(report::find_metric(declarations, column) != nullptr);
  }
  for (const report::MetricDeclaration* metric : declarations) {
    INFO("declared sweep column no run emits: ", metric->path);
    CHECK(std::find(emitted.sweep_columns.begin(), emitted.sweep_columns.end(), metric->path) !=
          emitted.sweep_columns.end());
  }
}

TEST_CASE("find_metric matches a path, a statistic of a declared object, and nothing else") {
  const auto declarations = report::result_metric_declarations();
  const auto* step = report::find_metric(declarations, "training.step_time_s");
  REQUIRE(step != nullptr);
  CHECK(step->unit == "s");
  const auto* p99 = report::find_metric(declarations, "serving.ttft_s.p99");
  REQUIRE(p99 != nullptr);
  CHECK(p99->path == "serving.ttft_s");
  CHECK(report::find_metric(declarations, "serving.ttft_s.count") != nullptr);
  CHECK(report::find_metric(declarations, "serving.ttft_s.p95") == nullptr);       // not one of its fields
  CHECK(report::find_metric(declarations, "serving.ttft_s.requests") == nullptr);  // a word of the note after ';' 
  CHECK(report::find_metric(declarations, "training.step_time") == nullptr);    // a prefix only
  CHECK(report::find_metric(declarations, "training.step_time_s.p99") == nullptr);
  // A per-tier scalar matches its tier_<N> declaration; a tier that is not a number does not.
  CHECK(report::find_metric(declarations, "network.utilisation.tier_2.peak_utilisation") != nullptr);
  CHECK(report::find_metric(declarations, "network.utilisation.tier_x.peak_utilisation") == nullptr);
  CHECK(report::generic_metric_path("network.utilisation.tier_12.mean") == "network.utilisation.tier_<N>.mean");
}

TEST_CASE("result_metric_paths leaves out the inputs, marks array elements and pairs job metrics with their unit") {
  const nlohmann::json document = {
      {"scenario", {{"name", "x"}}},
      {"training", {{"step_time_s", 1.0}}},
      {"memory", {{"stages", {{{"stage", 0}}, {{"stage", 1}, {"total_bytes", 2.0}}}}}},
      {"jobs", {{{"name", "j"}, {"metrics", {{"busy_time", {{"value", 2.0}, {"unit", "s"}}}}}}}}};
  const auto paths = report::result_metric_paths(document);
  // nlohmann::json keeps an object's keys sorted.
  const std::vector<std::pair<std::string, std::string>> expected = {{"jobs[].metrics.busy_time", "s"},
                                                                     {"jobs[].name", ""},
                                                                     {"memory.stages[].stage", ""},
                                                                     {"memory.stages[].total_bytes", ""},
                                                                     {"training.step_time_s", ""}};
  CHECK(paths == expected);
}

TEST_CASE("docs metrics matches the committed docs/metrics.md") {
  std::ifstream in(source_path("docs/metrics.md"));
  const std::string committed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO("regenerate with: build/release/clustersim docs metrics > docs/metrics.md");
  CHECK(report::metrics_glossary_markdown() == committed);
}

}  // namespace metric_glossary_test
