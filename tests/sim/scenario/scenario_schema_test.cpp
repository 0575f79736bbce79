#include "sim/scenario/scenario_schema.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/scenario/workload_kinds.hpp"

namespace scenario_schema_test {

using namespace clustersim::scenario;

TEST_CASE("schema: the scenario reference is generated from the schema") {
  const std::string markdown = scenario_reference_markdown(builtin_workload_kinds());
  CHECK(markdown.rfind("# Scenario reference\n", 0) == 0);
  CHECK(markdown.find("## `cluster`") != std::string::npos);
  CHECK(markdown.find("| `cluster.network.nic.bandwidth` | bandwidth (B/s) |  | per NIC, one direction; required with more than "
                        "one node (torus: the link default; custom: unused) |") !=
        std::string::npos);
  CHECK(markdown.find("| `workload.parallelism.zero` | integer (between 0 and 3) | `1` | ZeRO stage |") !=
        std::string::npos);
  CHECK(markdown.find("| `accelerators.<name>.memory.hbm_capacity` | size (B) | **required** |") !=
        std::string::npos);
  CHECK(markdown.find("| `simulation.fidelity` | one of: analytical, flow | `flow` |") != std::string::npos);
}

}  // namespace scenario_schema_test
