// compare's table on hand-made runs: which input keys it lists and the relative changes.
#include "sim/report/compare.hpp"

#include <doctest/doctest.h>

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
