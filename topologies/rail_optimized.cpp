#include "topologies/rail_optimized.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "topologies/fat_tree.hpp"

namespace clustersim::topologies {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string capacity_problem(const ScaleOutSpec& spec, std::int64_t nodes, int rails) {
  const int k = spec.radix;
  const int d = down_ports_for(k, spec.oversubscription);
  const std::int64_t max_nodes = static_cast<std::int64_t>(d) * (k / rails);
  if (nodes <= max_nodes) return {};
  return fmt::format(
      "rail-optimized fat-tree of radix {} with {} rails holds at most {} nodes at "
      "oversubscription {} (at most {} rail leaves of {} nodes); the cluster has {}: use a "
      "larger radix",
      k, rails, max_nodes, spec.oversubscription, k, d, nodes);
}

}  // namespace

void check_rail_optimized_parameters(const ClusterNetworkSpec& spec,
                                     std::vector<std::string>& problems) {
  const ScaleOutSpec& out = spec.scale_out;
  bool ok = true;
  if (out.tiers != 2) {
    problems.push_back(fmt::format(
        "rail-optimized fat-tree has 2 tiers (rail leaves and spines), got tiers: {}", out.tiers));
  }
  if (out.radix < 4 || out.radix % 2 != 0) {
    problems.push_back(fmt::format("rail-optimized radix must be even and >= 4, got {}", out.radix));
    ok = false;
  }
  if (!(out.oversubscription >= 1.0) || !std::isfinite(out.oversubscription)) {
    problems.push_back(fmt::format(
        "scale_out.oversubscription (rail leaf downlink:uplink ratio) must be a finite number "
        ">= 1, got {}",
        out.oversubscription));
    ok = false;
  }
  if (out.nics_per_node > out.radix && ok) {
    problems.push_back(fmt::format("rail-optimized fat-tree of radix {} cannot hold {} rails",
                                   out.radix, out.nics_per_node));
    ok = false;
  }
  if (ok && out.nics_per_node >= 1 && spec.nodes > 1) {
    const std::string capacity = capacity_problem(out, spec.nodes, out.nics_per_node);
    if (!capacity.empty()) problems.push_back(capacity);
  }
}

RailShape rail_shape(const ScaleOutSpec& spec, std::int64_t nodes, int rails) {
  ClusterNetworkSpec cluster;
  cluster.scale_out = spec;
  cluster.nodes = static_cast<int>(nodes);
  cluster.scale_out.nics_per_node = rails;
  std::vector<std::string> problems;
  check_rail_optimized_parameters(cluster, problems);
  if (!problems.empty()) throw ConfigError(problems.front());
  RailShape shape;
  shape.radix = spec.radix;
  shape.down_ports = down_ports_for(spec.radix, spec.oversubscription);
  shape.up_ports = spec.radix - shape.down_ports;
  shape.rails = rails;
  shape.groups = ceil_div(nodes, shape.down_ports);
  shape.leaves = shape.groups * rails;
  shape.spines = shape.leaves > 1 ? ceil_div(shape.leaves * shape.up_ports, shape.radix) : 0;
  return shape;
}

ScaleOutFabric build_rail_optimized(NetworkGraph& graph, const ScaleOutSpec& spec,
                                    std::span<const int> endpoints) {
  const int rails = spec.nics_per_node;
  const auto nodes = static_cast<std::int64_t>(endpoints.size()) / rails;
  const RailShape shape = rail_shape(spec, nodes, rails);
  const double nic_bw = spec.nic_bytes_per_s;
  const double bw = spec.fabric_link_bytes_per_s();
  const double latency_s = spec.link_latency_s;

  ScaleOutFabric fabric;
  fabric.first_switch_vertex = graph.vertex_count();
  fabric.switch_count = shape.leaves + shape.spines;
  std::vector<int> leaves;
  for (std::int64_t l = 0; l < shape.leaves; ++l) leaves.push_back(graph.add_vertex(VertexKind::switch_, -1, 1));
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    const auto node = static_cast<std::int64_t>(e) / rails;
    const auto rail = static_cast<std::int64_t>(e) % rails;
    const int leaf = leaves[static_cast<std::size_t>((node / shape.down_ports) * rails + rail)];
    fabric.leaf_vertex.push_back(leaf);
    fabric.endpoint_cable.push_back(graph.add_cable(endpoints[e], leaf, nic_bw, latency_s, 1));
  }
  double bisection = static_cast<double>(endpoints.size()) * nic_bw / 2.0;
  if (shape.spines > 0) {
    std::vector<int> spines;
    for (std::int64_t s = 0; s < shape.spines; ++s) spines.push_back(graph.add_vertex(VertexKind::switch_, -1, 2));
    const std::int64_t u = shape.up_ports;
    for (std::int64_t l = 0; l < shape.leaves; ++l) {
      for (std::int64_t j = 0; j < u; ++j) {
        const auto spine = static_cast<std::size_t>((l * u + j) % shape.spines);
        graph.add_cable(leaves[static_cast<std::size_t>(l)], spines[spine], bw, latency_s, 2);
      }
    }
    bisection = std::min(bisection, static_cast<double>(shape.leaves * u) * bw / 2.0);
  }
  fabric.bisection_bytes_per_s = bisection;
  return fabric;
}

}  // namespace clustersim::topologies
