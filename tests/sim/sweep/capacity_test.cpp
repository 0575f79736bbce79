// Serving capacity planning: the highest rate within the SLO, and the fewest instances for a rate.
#include "sim/sweep/capacity.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/engine/error.hpp"

namespace capacity_test {

using namespace clustersim;

namespace {

std::filesystem::path scenario_file(const std::string& name, const std::string& extra = "") {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << R"(schema_version: 1
name: capacity
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 4, tp: 1}
  requests:
    count: 300
    arrival: {process: poisson, rate: 10}
    input: {distribution: fixed, value: 1000}
    output: {distribution: fixed, value: 200}
  slo: {ttft: 300 ms, tpot: 30 ms}
)" << extra;
  return path;
}

}  // namespace

TEST_CASE("capacity: the highest rate within the SLO is bracketed to the precision asked") {
  sweep::CapacityOptions options;
  options.precision = 0.05;
  options.threads = 2;
  const auto result = sweep::find_capacity(scenario_file("cs_capacity.yaml"), {}, options);
  REQUIRE(result.answer);
  REQUIRE(result.beyond);
  CHECK(result.answer->met);
  CHECK_FALSE(result.beyond->met);
  CHECK_FALSE(result.beyond->missed.empty());  // names the target it missed
  CHECK(result.answer->missed.empty());
  CHECK(result.beyond->rate_per_s > result.answer->rate_per_s);
  CHECK((result.beyond->rate_per_s - result.answer->rate_per_s) / result.answer->rate_per_s <= 0.05);
  CHECK(result.answer->ttft_s <= 0.3);
  CHECK(result.answer->tpot_s <= 0.03);
  CHECK(result.trials.size() >= 4);
  // The same search again gives the same answer (every trial is seeded), from the file's text too
  // (a scenario held in memory: the Python module's clustersim.load(text)).
  CHECK(sweep::find_capacity(scenario_file("cs_capacity.yaml"), {}, options).answer->rate_per_s ==
        result.answer->rate_per_s);
  std::ifstream file(scenario_file("cs_capacity.yaml"));
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const auto from_text = sweep::find_capacity(scenario::ScenarioSource::text(text, "<text>"), {}, options);
  CHECK(sweep::capacity_json(from_text) == sweep::capacity_json(result));
  CHECK(sweep::capacity_table(result).find("highest rate within the SLO") != std::string::npos);
  CHECK(sweep::capacity_json(result)["answer"]["met"] == true);
}

TEST_CASE("capacity: the fewest instances that serve a rate; one fewer misses") {
  sweep::CapacityOptions options;
  options.target_rate = 20;
  const auto result = sweep::find_capacity(scenario_file("cs_capacity.yaml"), {}, options);
  REQUIRE(result.answer);
  CHECK(result.answer->met);
  const int n = result.answer->replicas.front();
  CHECK(n >= 1);
  if (n > 1) {
    REQUIRE(result.beyond);
    CHECK(result.beyond->replicas.front() == n - 1);
    CHECK_FALSE(result.beyond->met);
  }
  // Beyond the cluster's 8 accelerators, the search grows it.
  options.target_rate = 1000;
  const auto big = sweep::find_capacity(scenario_file("cs_capacity.yaml"), {}, options);
  REQUIRE(big.answer);
  CHECK(big.answer->accelerators > 8);
}

TEST_CASE("capacity: a prefill side too small for the TTFT stops doubling the decode pool") {
  // 20 req/s of 2,000-token prompts (40k prompt tokens/s) on Llama-3-8B: one TP1 prefill
  // instance cannot keep a 200 ms TTFT, whatever the decode pool; more prefill instances can.
  const std::vector<std::string> disaggregated = {
      "workload.pools={prefill: {role: prefill, replicas: 1, tp: 1}, decode: {role: decode, replicas: 1, tp: 1}}",
      "workload.requests.arrival.rate=20", "workload.requests.input.value=2000",
      "workload.requests.output.value=100", "workload.slo={ttft: 200 ms, tpot: 50 ms}"};
  sweep::CapacityOptions options;
  options.target_rate = 20;
  options.threads = 1;
  const auto result = sweep::find_capacity(scenario_file("cs_capacity.yaml"), disaggregated, options);
  REQUIRE(result.answer);
  CHECK(result.answer->met);
  REQUIRE(result.pools == std::vector<std::string>{"decode", "prefill"});  // name order
  CHECK(result.answer->replicas[1] >= 2);
  int one_prefill_trials = 0;
  for (const auto& trial : result.trials) {
    if (trial.replicas[1] != 1) continue;
    ++one_prefill_trials;
    CHECK(trial.missed.find("TTFT") != std::string::npos);
  }
  // 1 and 2 decode instances: the second shows that more decode does not help the TTFT, and
  // the search moves on (it used to double to 4,096, past what the network holds).
  CHECK(one_prefill_trials == 2);
}

TEST_CASE("capacity: what it cannot plan is an error naming why") {
  CHECK_THROWS_WITH_AS(sweep::find_capacity(scenario_file("cs_capacity_loop.yaml"),
                                            {"workload.requests.arrival.process=closed_loop"}, {}),
                       doctest::Contains("needs a poisson, gamma or constant process (it is 'closed_loop')"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(sweep::find_capacity(scenario_file("cs_capacity_slo.yaml"),
                                            {"workload.slo.ttft=0 s", "workload.slo.tpot=0 s"}, {}),
                       doctest::Contains("capacity needs an SLO"), ConfigError);
  sweep::CapacityOptions bad;
  bad.precision = 0;
  CHECK_THROWS_WITH_AS(sweep::find_capacity(scenario_file("cs_capacity.yaml"), {}, bad),
                       "capacity: --precision must be > 0", ConfigError);
  bad.precision = 0.02;
  bad.target_rate = -1;
  CHECK_THROWS_WITH_AS(sweep::find_capacity(scenario_file("cs_capacity.yaml"), {}, bad),
                       "capacity: --rate must be > 0", ConfigError);
  const auto training = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios" / "default.yaml";
  CHECK_THROWS_WITH_AS(sweep::find_capacity(training, {}, {}), doctest::Contains("capacity needs a serving workload"),
                       ConfigError);
}

TEST_CASE("capacity warns before its first trial when the scenario's count / rate makes every trial long") {
  // 300 requests at 0.25 req/s: 1,200 s of arrivals per trial, past kLongTrialWindowS (600 s).
  sweep::CapacityOptions options;
  options.max_trials = 1;
  options.threads = 1;
  std::vector<std::string> warnings;
  options.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  (void)sweep::find_capacity(scenario_file("cs_capacity_long.yaml"), {"workload.requests.arrival.rate=0.25"}, options);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings.front() ==
        "warning: each trial sends requests for 1200 s (workload.requests.count 300 / arrival.rate 0.25/s), so a trial at "
        "0.25 req/s simulates about 300 requests and the search may take long; set workload.slo.window (e.g. 120 s) for "
        "a faster answer");
  // The scenario as written (30 s of arrivals): no warning.
  warnings.clear();
  (void)sweep::find_capacity(scenario_file("cs_capacity_short.yaml"), {}, options);
  CHECK(warnings.empty());
  // A window declared: the trial lasts it whatever the count; a long one is named as such.
  warnings.clear();
  (void)sweep::find_capacity(scenario_file("cs_capacity_long.yaml"),
                             {"workload.requests.arrival.rate=0.25", "workload.slo.window=100 s"}, options);
  CHECK(warnings.empty());
  (void)sweep::find_capacity(scenario_file("cs_capacity_short.yaml"), {"workload.slo.window=2000 s"}, options);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings.front().rfind("warning: each trial sends requests for 2000 s (workload.slo.window), so a trial at ", 0) ==
        0);
}

}  // namespace capacity_test
