// simulation.limits: a scenario that would need more memory or events than its limits stops
// early with an estimate and a suggestion (sim/platform/resource_limits.hpp), and a fabric too
// small for the cluster is refused before any graph is built.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "sim/engine/error.hpp"
#include "sim/platform/resource_limits.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace resource_limits_test {

using namespace clustersim;

namespace {

const std::string kDefault = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/default.yaml";

/// The load error of scenarios/default.yaml with `sets`, and how long loading took.
std::string load_error(const std::vector<std::string>& sets, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    (void)scenario::load_scenario(kDefault, sets);
  } catch (const ConfigError& e) {
    message = e.what();
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return message;
}

}  // namespace

TEST_CASE("10,000,000 nodes are refused from the estimate, before the network is built") {
  double seconds = 0;
  const std::string message = load_error(
      {"cluster.nodes=10000000", "cluster.network.topology=switch", "simulation.limits.memory=16 GB"}, seconds);
  CHECK(message == "--set cluster.nodes=10000000: cluster.nodes: the cluster's network needs about 103 GB of memory (80000000 "
                       "accelerators: 90000001 graph vertices, 320000000 links), more than simulation.limits.memory "
                       "allows (16 GB): simulate fewer nodes (about 1560975 fit), or raise simulation.limits.memory");
  CHECK(seconds < 5.0);  // building it took 90 s and 13.8 GB before the limit
}

TEST_CASE("the memory limit defaults to a share of physical memory and the estimate follows the topology") {
  platform::ResourceLimits limits;
  CHECK(platform::memory_limit_bytes(limits) == platform::kDefaultMemoryFraction * platform::physical_memory_bytes());
  limits.memory_bytes = 1e9;
  CHECK(platform::memory_limit_bytes(limits) == 1e9);
  topologies::ClusterNetworkSpec network;
  network.nodes = 2;
  network.accelerators_per_node = 8;
  network.scale_up.bytes_per_s = 450e9;
  network.scale_out.nic_bytes_per_s = 50e9;
  // 16 GPUs, 2 NVSwitches, one leaf: 19 vertices; 16 NVLink and 16 NIC cables: 64 links.
  CHECK(!platform::network_memory_problem(network, limits));
  limits.memory_bytes = (19 + 64) * 250.0 - 1;
  const auto problem = platform::network_memory_problem(network, limits);
  REQUIRE(problem);
  CHECK(problem->find("(16 accelerators: 19 graph vertices, 64 links)") != std::string::npos);
}

TEST_CASE("a fat-tree too small for the cluster is refused before anything is built") {
  double seconds = 0;
  const std::string message = load_error({"cluster.nodes=100000"}, seconds);
  CHECK(message == kDefault +
                       ":10:5: cluster.network: 2-tier fat-tree of radix 64 holds at most 2048 NICs at "
                       "oversubscription 1; the cluster has 800000: use tiers: 3 or a larger radix");
  CHECK(seconds < 2.0);  // 13.8 s and 291 MB before the check moved ahead of the build
}

TEST_CASE("a run past simulation.limits.events stops with the time it reached and what to do") {
  // The default step has 95,532 tasks (one event each at least) and fires 767,623 events: a limit
  // between the two stops it while it runs.
  const auto scenario = scenario::load_scenario(kDefault, {"simulation.limits.events=200000"});
  CHECK_THROWS_WITH_AS(runner::run_scenario(scenario),
                       doctest::Contains("the run reached its limit of 200000 events at simulated time"),
                       EventLimitError);
  try {
    (void)runner::run_scenario(scenario);
  } catch (const EventLimitError& e) {
    CHECK(std::string(e.what()).ends_with(
        "(simulation.limits.events: 200000): simulate less (simulation.mode: symmetric, fewer steps, requests or "
        "nodes) or raise simulation.limits.events"));
  }
}

TEST_CASE("a training step that cannot fit in simulation.limits.events is refused before it runs, with the estimate") {
  // Below the step's task count nothing is simulated: the estimate comes first.
  const auto scenario = scenario::load_scenario(kDefault, {"simulation.limits.events=1000"});
  CHECK_THROWS_WITH_AS(runner::run_scenario(scenario),
                       "the training step needs at least 95532 events (95532 tasks x 1 instances, each ending in one) "
                       "(simulation.limits.events: 1000): simulate less (simulation.mode: symmetric, fewer steps, "
                       "requests or nodes) or raise simulation.limits.events",
                       EventLimitError);
}

}  // namespace resource_limits_test
