// topology_size counts a network's graph from its spec, before anything is built (the memory
// check of simulation.limits): for switch fabrics and the fat-tree it is what Topology::build
// makes, vertex for vertex and link for link.
#include <doctest/doctest.h>

#include <string>

#include "topologies/topology.hpp"
#include "topologies/topology_size.hpp"

namespace topology_size_test {

using namespace clustersim::topologies;

namespace {

ClusterNetworkSpec network(int nodes, int nics_per_node, const std::string& topology, int tiers, int radix) {
  ClusterNetworkSpec spec;
  spec.nodes = nodes;
  spec.accelerators_per_node = 8;
  spec.scale_up.bytes_per_s = 450e9;
  spec.scale_out.topology = topology;
  spec.scale_out.tiers = tiers;
  spec.scale_out.radix = radix;
  spec.scale_out.nics_per_node = nics_per_node;
  spec.scale_out.nic_bytes_per_s = 50e9;
  return spec;
}

/// The counts of the built topology: vertices (accelerators + switches + shared NICs) and links.
TopologySize built(const ClusterNetworkSpec& spec) {
  const Topology topology = Topology::build(spec);
  const TopologySummary summary = topology.summary();
  TopologySize size;
  size.accelerators = summary.accelerators;
  const bool shared_nics = spec.nodes > 1 && spec.scale_out.nics_per_node < spec.accelerators_per_node;
  size.vertices = summary.accelerators + summary.switches +
                  (shared_nics ? static_cast<std::int64_t>(spec.nodes) * spec.scale_out.nics_per_node : 0);
  size.links = static_cast<std::int64_t>(topology.links().size());
  return size;
}

}  // namespace

TEST_CASE("topology_size counts what Topology::build makes") {
  for (const ClusterNetworkSpec& spec :
       {network(1, 8, "fat-tree", 2, 64), network(2, 8, "fat-tree", 2, 64), network(16, 8, "fat-tree", 2, 16),
        network(64, 8, "fat-tree", 3, 16), network(8, 2, "fat-tree", 2, 8), network(4, 8, "switch", 2, 64)}) {
    CAPTURE(spec.nodes);
    CAPTURE(spec.scale_out.topology);
    CAPTURE(spec.scale_out.tiers);
    const TopologySize counted = topology_size(spec);
    const TopologySize made = built(spec);
    CHECK(counted.accelerators == made.accelerators);
    CHECK(counted.vertices == made.vertices);
    CHECK(counted.links == made.links);
  }
}

TEST_CASE("two DGX nodes on one leaf: 19 vertices and 64 links, by hand") {
  // 16 GPUs and 2 NVSwitches and one leaf; 16 NVLink cables and 16 NIC cables, two links each.
  const TopologySize size = topology_size(network(2, 8, "fat-tree", 2, 64));
  CHECK(size.vertices == 19);
  CHECK(size.links == 64);
  CHECK(topology_memory_bytes(size) == (19 + 64) * kBytesPerGraphElement);
}

}  // namespace topology_size_test
