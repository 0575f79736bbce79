#include "topologies/scale_up.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <set>

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

namespace scale_up_test {

using ::clustersim::tolerance::relative_approx;

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
    CHECK(up.latency_s == relative_approx(0.5e-6));  // half the switch-path latency per link
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
  CHECK(path.latency_s == relative_approx(1e-6));
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
  CHECK_THROWS_WITH_AS(Topology::build(spec), "scale_up.fabric must be one of: ethernet-mesh, nvswitch, pcie, ualink, xgmi-mesh; got 'nvlink'",
                       clustersim::ConfigError);
}

TEST_CASE("node_of rejects indices outside the cluster") {
  const Topology topology = Topology::build(cluster(1, 8, 8));
  CHECK_THROWS_WITH_AS(topology.node_of(8), "accelerator index 8 is out of range [0, 8)",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(topology.node_of(-1), "accelerator index -1 is out of range [0, 8)",
                       clustersim::ConfigError);
}

TEST_CASE("NVL72: a 72-GPU NVLink domain spans 18 nodes of 4 GPUs") {
  ClusterNetworkSpec spec = cluster(36, 4, 4, "switch");
  spec.scale_up.domain_size = 72;
  const Topology topology = Topology::build(spec);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 2 + 1);  // two NVLink switch domains + the scale-out switch
  CHECK(summary.links == 144 + 144);
  CHECK(summary.diameter_hops == 2);
  // GPU 0 (node 0) and GPU 71 (node 17) share domain 0: NVLink, not the NIC.
  const Path& in_domain = topology.path(0, 71);
  REQUIRE(in_domain.links.size() == 2);
  CHECK(topology.links()[static_cast<std::size_t>(in_domain.links[0])].tier == 0);
  CHECK(in_domain.bottleneck_bytes_per_s == 450e9);
  CHECK(topology.node_of(71) == 17);
  CHECK(topology.scale_up_domain_of(71) == 0);
  CHECK(topology.scale_up_domain_of(72) == 1);
  // GPU 72 is in the next domain: through the NICs.
  const Path& across = topology.path(0, 72);
  REQUIRE(across.links.size() == 2);
  CHECK(topology.links()[static_cast<std::size_t>(across.links[0])].tier == 1);
}

TEST_CASE("multi-node domain with shared NICs: each node's NIC hangs off the domain switch") {
  // 4 nodes x 4 GPUs, 1 NIC per node, domains of 8 (2 nodes).
  ClusterNetworkSpec spec = cluster(4, 4, 1, "switch");
  spec.scale_up.domain_size = 8;
  const Topology topology = Topology::build(spec);
  CHECK(topology.path(4, 3).links.size() == 2);  // nodes 0 and 1: one domain
  const Path& from_node1 = topology.path(4, 8);  // GPU-NVSw-NIC-switch-NIC-NVSw-GPU
  REQUIRE(from_node1.links.size() == 6);
  const Path& from_node0 = topology.path(0, 8);
  const Link& nic1 = topology.links()[static_cast<std::size_t>(from_node1.links[1])];
  const Link& nic0 = topology.links()[static_cast<std::size_t>(from_node0.links[1])];
  CHECK(nic1.from == nic0.from);  // the same domain switch
  CHECK(nic1.to != nic0.to);      // but each node's own NIC
  CHECK(topology.summary().switches == 2 + 1);
}

TEST_CASE("scale-up domain size must group whole nodes and divide the cluster") {
  ClusterNetworkSpec spec = cluster(36, 4, 4, "switch");
  spec.scale_up.domain_size = 6;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "scale_up.domain_size must be a multiple of accelerators_per_node (4) that "
                       "divides the accelerator count (144), got 6",
                       clustersim::ConfigError);
  spec.scale_up.domain_size = 40;
  CHECK_THROWS_WITH_AS(Topology::build(spec), doctest::Contains("got 40"), clustersim::ConfigError);
  // Single-GPU nodes joined into one domain need scale-up bandwidth.
  spec = cluster(8, 1, 1, "switch");
  spec.scale_up.domain_size = 8;
  spec.scale_up.bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(Topology::build(spec), "scale_up.bytes_per_s must be a finite number > 0, got 0",
                       clustersim::ConfigError);
}

TEST_CASE("an xGMI full mesh: one 64 GB/s cable per GPU pair, no switch, pair traffic on its own link") {
  ClusterNetworkSpec spec = cluster(2, 8, 8, "switch");
  spec.scale_up.fabric = "xgmi-mesh";
  spec.scale_up.bytes_per_s = 448e9;  // 7 peers x 64 GB/s
  spec.scale_up.latency_s = 1.5e-6;
  const Topology topology = Topology::build(spec);
  CHECK(topology.scale_up_mesh());
  int mesh_links = 0;
  for (const Link& link : topology.links()) {
    if (link.tier != 0) continue;
    ++mesh_links;
    CHECK(link.bytes_per_s == doctest::Approx(64e9));
    CHECK(link.latency_s == relative_approx(1.5e-6));  // one hop, not two half-hops
  }
  CHECK(mesh_links == 2 * 2 * 28);  // 2 nodes x C(8, 2) cables x 2 directions
  const Path& pair = topology.path(1, 6);
  REQUIRE(pair.links.size() == 1);
  const Link& link = topology.links()[static_cast<std::size_t>(pair.links[0])];
  CHECK(link.from != link.to);
  CHECK(pair.bottleneck_bytes_per_s == doctest::Approx(64e9));  // one link, not the 448 GB/s aggregate
  CHECK(pair.latency_s == relative_approx(1.5e-6));
  // Every ordered pair of a node has a link of its own.
  std::set<LinkId> used;
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a != b) used.insert(topology.path(a, b).links.front());
    }
  }
  CHECK(used.size() == 56);
  // Across nodes: accelerator -> leaf -> accelerator over the NICs, never a mesh link.
  for (const LinkId id : topology.path(2, 10).links) CHECK(topology.links()[static_cast<std::size_t>(id)].tier != 0);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 1);  // the scale-out switch only
  CHECK(summary.diameter_hops == 2);
  ClusterNetworkSpec one = spec;
  one.nodes = 1;
  CHECK(Topology::build(one).summary().diameter_hops == 1);
}

TEST_CASE("a mesh needs one NIC per accelerator (no switch to share one through)") {
  ClusterNetworkSpec spec = cluster(2, 8, 4);
  spec.scale_up.fabric = "ethernet-mesh";
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "scale_up.fabric ethernet-mesh has no switch to share a NIC through: scale_out.nics_per_node "
                       "must equal accelerators_per_node (8), got 4",
                       clustersim::ConfigError);
}

}  // namespace scale_up_test
