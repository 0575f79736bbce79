// compare's table on hand-made runs: which input keys it lists and the relative changes; the
// summary metrics it sets side by side, jobs' included.
#include "sim/report/compare.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "sim/report/run_report.hpp"

namespace compare_test {

namespace report = clustersim::report;

TEST_CASE("relative change of a metric") {
  CHECK(report::relative_change(2, 3) == "+50.0%");
  CHECK(report::relative_change(4, 3) == "-25.0%");
  CHECK(report::relative_change(-2, -1) == "+50.0%");  // relative to |A|
  CHECK(report::relative_change(5, 5) == "0%");
  CHECK(report::relative_change(0, 1) == "new");
}

TEST_CASE("compare lists the differing, added and removed inputs and every metric") {
  report::ComparedRun a{"a", {{"cluster.nodes", "2"}, {"simulation.seed", "1"}, {"only.a", "x"}, {"ratio", "1"}},
                        {{"training.step_time_s", "2"}, {"network.fidelity", "flow"}, {"only_a", "1"}}};
  report::ComparedRun b{"b", {{"cluster.nodes", "4"}, {"simulation.seed", "1"}, {"only.b", "y"}, {"ratio", "1.0"}},
                        {{"training.step_time_s", "1.5"}, {"network.fidelity", "analytical"}}};
  const std::string table = report::compare_table(a, b);
  CHECK(table.find("inputs: 3 keys differ") != std::string::npos);
  CHECK(table.find("cluster.nodes  2 -> 4") != std::string::npos);
  CHECK(table.find("only.a         x -> (unset)") != std::string::npos);
  CHECK(table.find("only.b         (unset) -> y") != std::string::npos);
  CHECK(table.find("simulation.seed") == std::string::npos);  // equal: not listed
  CHECK(table.find("ratio") == std::string::npos);            // 1 and 1.0: the same number
  CHECK(table.find("-25.0%") != std::string::npos);           // 2 s -> 1.5 s
  CHECK(table.find("differs") != std::string::npos);          // flow -> analytical
  CHECK(table.find("only_a") != std::string::npos);

  const std::string same = report::compare_table(a, a);
  CHECK(same.find("inputs: the same") != std::string::npos);
  CHECK(same.find('%') != std::string::npos);
  CHECK(same.find("+") == std::string::npos);
}

TEST_CASE("a metric's column carries its unit unless its name ends in it") {
  CHECK(report::metric_column("busy_time", "s") == "busy_time_s");
  CHECK(report::metric_column("step_time_s", "s") == "step_time_s");
  CHECK(report::metric_column("algorithm_bandwidth", "B/s") == "algorithm_bandwidth_B_s");
  CHECK(report::metric_column("rate", "1/s") == "rate_per_s");
  CHECK(report::metric_column("rounds", "") == "rounds");
}

TEST_CASE("summary metrics hold each job's metrics as job.NAME.column, after the primary's") {
  const auto result = nlohmann::json::parse(R"({
    "schema_version": 1, "fingerprint": "ab", "training": {"step_time_s": 2, "per_stage": [1, 2]},
    "jobs": [{"name": "other-tenant", "kind": "collective-loop", "notes": ["n"],
              "metrics": {"busy_time": {"unit": "s", "value": 0.5}, "rounds": {"unit": "", "value": 3.0}}},
             {"name": "b", "kind": "collective-loop", "metrics": {"busy_time": {"unit": "s", "value": 1}}}]})");
  const std::vector<std::pair<std::string, std::string>> expected = {{"training.step_time_s", "2"},
                                                                     {"job.other-tenant.busy_time_s", "0.5"},
                                                                     {"job.other-tenant.rounds", "3.0"},
                                                                     {"job.b.busy_time_s", "1"}};
  CHECK(report::summary_metrics(result) == expected);
}

}  // namespace compare_test
