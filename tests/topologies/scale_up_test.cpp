#include "topologies/scale_up.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

TEST_CASE("one 8-GPU node is one NVSwitch with 8 cables and no scale-out") {
  ClusterNetworkSpec spec = cluster(1, 8, 8);
  spec.scale_out.nic_bytes_per_s = 0;  // a single node needs no NIC bandwidth
  const Topology topology = Topology::build(spec);
  const TopologySummary summary = topology.summary();
  CHECK(summary.accelerators == 8);
  CHECK(summary.switches == 1);
  CHECK(summary.links == 8);
  CHECK(summary.bisection_bytes_per_s == 0.0);
  CHECK(summary.diameter_hops == 2);
  REQUIRE(topology.links().size() == 16);
  for (std::size_t i = 0; i < topology.links().size(); i += 2) {
    const Link& up = topology.links()[i];
    const Link& down = topology.links()[i + 1];
    CHECK(up.from == down.to);  // the two directions of one cable are consecutive ids
    CHECK(up.to == down.from);
    CHECK(up.bytes_per_s == 450e9);
    CHECK(up.latency_s == doctest::Approx(0.5e-6));  // half the switch-path latency per link
    CHECK(up.tier == 0);
  }
}

TEST_CASE("same-node path goes accelerator -> NVSwitch -> accelerator") {
  const Topology topology = Topology::build(cluster(2, 8, 8));
  const Path& path = topology.path(3, 6);
  REQUIRE(path.links.size() == 2);
  const Link& first = topology.links()[static_cast<std::size_t>(path.links[0])];
  const Link& second = topology.links()[static_cast<std::size_t>(path.links[1])];
  CHECK(first.to == second.from);
  CHECK(first.tier == 0);
  CHECK(second.tier == 0);
  CHECK(path.latency_s == doctest::Approx(1e-6));
  CHECK(path.bottleneck_bytes_per_s == 450e9);
  CHECK(topology.node_of(3) == 0);
  CHECK(topology.node_of(15) == 1);
}

TEST_CASE("one accelerator per node has no scale-up switch and needs no scale-up bandwidth") {
  ClusterNetworkSpec spec = cluster(1, 1, 1);
  spec.scale_up.bytes_per_s = 0;
  const TopologySummary summary = Topology::build(spec).summary();
  CHECK(summary.accelerators == 1);
  CHECK(summary.switches == 0);
  CHECK(summary.links == 0);
  CHECK(summary.diameter_hops == 0);
}

TEST_CASE("scale-up spec errors name the field and range") {
  ClusterNetworkSpec spec = cluster(1, 8, 8);
  spec.scale_up.bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(Topology::build(spec), "scale_up.bytes_per_s must be a finite number > 0, got 0",
                       clustersim::ConfigError);
  spec = cluster(1, 8, 8);
  spec.scale_up.latency_s = -1e-6;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       doctest::Contains("scale_up.latency_s must be a finite number >= 0"),
                       clustersim::ConfigError);
  spec = cluster(1, 8, 8);
  spec.scale_up.fabric = "nvlink";
  CHECK_THROWS_WITH_AS(Topology::build(spec), "scale_up.fabric must be one of: nvswitch; got 'nvlink'",
                       clustersim::ConfigError);
}

TEST_CASE("node_of rejects indices outside the cluster") {
  const Topology topology = Topology::build(cluster(1, 8, 8));
  CHECK_THROWS_WITH_AS(topology.node_of(8), "accelerator index 8 is out of range [0, 8)",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(topology.node_of(-1), "accelerator index -1 is out of range [0, 8)",
                       clustersim::ConfigError);
}
