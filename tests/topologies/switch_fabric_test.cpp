#include "topologies/switch_fabric.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "topology_test_support.hpp"

namespace switch_fabric_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

TEST_CASE("switch fabric: one big switch, one cable per NIC") {
  // 4 nodes x 2 GPUs, one NIC per GPU: 4 NVSwitches + 1 switch; cables 8 GPU-NVSwitch + 8 GPU-switch.
  const Topology topology = Topology::build(cluster(4, 2, 2, "switch"));
  const TopologySummary summary = topology.summary();
  CHECK(summary.accelerators == 8);
  CHECK(summary.switches == 5);
  CHECK(summary.links == 16);
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(8 * 50e9 / 2));
  CHECK(summary.diameter_hops == 2);
  const Path& path = topology.path(0, 7);
  REQUIRE(path.links.size() == 2);
  CHECK(topology.links()[static_cast<std::size_t>(path.links[0])].tier == 1);
  CHECK(path.latency_s == relative_approx(2e-6));
  CHECK(path.bottleneck_bytes_per_s == 50e9);
}

TEST_CASE("switch fabric with a shared NIC per node reaches it through the NVSwitch") {
  // 4 nodes x 2 GPUs, 1 NIC: cables 8 GPU-NVSwitch + 4 NVSwitch-NIC + 4 NIC-switch = 16.
  const Topology topology = Topology::build(cluster(4, 2, 1, "switch"));
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 5);
  CHECK(summary.links == 16);
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(4 * 50e9 / 2));
  CHECK(summary.diameter_hops == 6);  // GPU, NVSwitch, NIC, switch, NIC, NVSwitch, GPU
  const Path& path = topology.path(1, 6);
  CHECK(path.links.size() == 6);
  // 0.5 us GPU->NVSwitch, 0 NVSwitch->NIC, 1 us NIC->switch, 1 us switch->NIC, 0, 0.5 us.
  CHECK(path.latency_s == relative_approx(3e-6));
}

TEST_CASE("switch fabric ignores the radix") {
  const Topology topology = Topology::build(cluster(100, 1, 1, "switch", 4));
  CHECK(topology.summary().switches == 1);
  CHECK(topology.summary().links == 100);
}

}  // namespace switch_fabric_test
