#include "topologies/topology_size.hpp"

#include <algorithm>

#include "topologies/fat_tree.hpp"

namespace clustersim::topologies {

namespace {

/// Switches and cables of the scale-out fabric over `endpoints` NICs.
TopologySize fabric_size(const ClusterNetworkSpec& spec, std::int64_t endpoints) {
  const ScaleOutSpec& out = spec.scale_out;
  TopologySize size;
  if (out.topology == "fat-tree") {
    const FatTreeShape shape = fat_tree_shape(out, endpoints);
    size.vertices = shape.switches();
    const std::int64_t uplinks = shape.leaves > 1 ? shape.leaves * shape.up_ports : 0;
    const std::int64_t core_links = shape.cores > 0 ? shape.pods * shape.aggregations_per_pod * shape.aggregation_up_ports : 0;
    size.links = 2 * (endpoints + uplinks + core_links);
  } else if (out.topology == "switch") {
    size.vertices = 1;
    size.links = 2 * endpoints;
  } else if (out.topology == "dragonfly") {
    const std::int64_t routers = static_cast<std::int64_t>(out.dragonfly_groups) * out.dragonfly_routers_per_group;
    size.vertices = routers;
    const std::int64_t local = routers * std::max(0, out.dragonfly_routers_per_group - 1) / 2;
    const std::int64_t global = routers * out.dragonfly_global_links_per_router / 2;
    size.links = 2 * (endpoints + local + global);
  } else {  // rail-optimized: at most three tiers of leaves, as many uplinks as NIC ports each
    size.vertices = std::max<std::int64_t>(1, 3 * endpoints / std::max(2, out.radix / 2));
    size.links = 2 * 3 * endpoints;
  }
  return size;
}

}  // namespace

TopologySize topology_size(const ClusterNetworkSpec& spec) {
  TopologySize size;
  size.accelerators = static_cast<std::int64_t>(spec.nodes) * spec.accelerators_per_node;
  const ScaleOutSpec& out = spec.scale_out;
  if (out.topology == "torus" || out.topology == "custom") {
    const auto dimensions = static_cast<std::int64_t>(out.topology == "torus" ? out.torus_dims.size() : 2);
    size.vertices = size.accelerators;
    size.links = 2 * dimensions * size.accelerators;
    return size;
  }
  const std::int64_t domain = spec.scale_up_domain_size();
  const std::int64_t domains = size.accelerators / std::max<std::int64_t>(1, domain);
  size.vertices = size.accelerators;
  if (domain > 1 && spec.scale_up.is_mesh()) {
    size.links = 2 * domains * domain * (domain - 1) / 2;
  } else {
    size.vertices += domains;  // one switch per domain
    size.links = 2 * size.accelerators;
  }
  if (spec.nodes > 1) {
    const std::int64_t endpoints = static_cast<std::int64_t>(spec.nodes) * out.nics_per_node;
    if (out.nics_per_node < spec.accelerators_per_node) {  // shared NICs hang off the scale-up switch
      size.vertices += endpoints;
      size.links += 2 * endpoints;
    }
    const TopologySize fabric = fabric_size(spec, endpoints);
    size.vertices += fabric.vertices;
    size.links += fabric.links;
  }
  return size;
}

double topology_memory_bytes(const TopologySize& size) {
  return static_cast<double>(size.vertices + size.links) * kBytesPerGraphElement;
}

}  // namespace clustersim::topologies
