#include "topologies/rail_optimized.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/integer_math.hpp"
#include "topologies/fat_tree.hpp"

namespace clustersim::topologies {
namespace {


std::string capacity_problem(const ScaleOutSpec& spec, std::int64_t nodes, int rails) {
  const int k = spec.radix;
  const int d = down_ports_for(k, spec.oversubscription);
  if (spec.tiers == 3) {
    const int d2 = down_ports_for(k, spec.aggregation_oversubscription);
    const std::int64_t max_nodes = static_cast<std::int64_t>(d) * d2 * (k / rails);
    if (nodes <= max_nodes) return {};
    return fmt::format(
        "3-tier rail-optimized fat-tree of radix {} with {} rails holds at most {} nodes (at most {} pods of {} rail "
        "leaves of {} nodes); the cluster has {}: use a larger radix",
        k, rails, max_nodes, k, d2, d, nodes);
  }
  const std::int64_t max_nodes = static_cast<std::int64_t>(d) * (k / rails);
  if (nodes <= max_nodes) return {};
  return fmt::format(
      "rail-optimized fat-tree of radix {} with {} rails holds at most {} nodes at "
      "oversubscription {} (at most {} rail leaves of {} nodes); the cluster has {}: use "
      "tiers: 3 or a larger radix",
      k, rails, max_nodes, spec.oversubscription, k, d, nodes);
}

}  // namespace

void check_rail_optimized_parameters(const ClusterNetworkSpec& spec,
                                     std::vector<std::string>& problems) {
  const ScaleOutSpec& out = spec.scale_out;
  bool ok = true;
  if (out.tiers != 2 && out.tiers != 3) {
    problems.push_back(fmt::format(
        "rail-optimized fat-tree has 2 tiers (rail leaves and spines) or 3 (rail leaves, rail-aligned aggregation "
        "pods and cores), got tiers: {}",
        out.tiers));
    ok = false;
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
  if (out.tiers == 3 &&
      (!(out.aggregation_oversubscription >= 1.0) || !std::isfinite(out.aggregation_oversubscription))) {
    problems.push_back(fmt::format(
        "scale_out.aggregation_oversubscription must be a finite number >= 1, got {}", out.aggregation_oversubscription));
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
  shape.tiers = spec.tiers;
  shape.radix = spec.radix;
  shape.down_ports = down_ports_for(spec.radix, spec.oversubscription);
  shape.up_ports = spec.radix - shape.down_ports;
  shape.rails = rails;
  shape.groups = engine::ceil_div(nodes, shape.down_ports);
  shape.leaves = shape.groups * rails;
  if (shape.tiers == 2) {
    shape.spines = shape.leaves > 1 ? engine::ceil_div(shape.leaves * shape.up_ports, shape.radix) : 0;
    return shape;
  }
  shape.aggregation_down_ports = down_ports_for(spec.radix, spec.aggregation_oversubscription);
  shape.aggregation_up_ports = spec.radix - shape.aggregation_down_ports;
  shape.pods_per_rail = engine::ceil_div(shape.groups, shape.aggregation_down_ports);
  shape.pods = shape.pods_per_rail * rails;
  shape.cores = shape.pods > 1 ? shape.up_ports * cores_per_plane(shape.pods, shape.aggregation_up_ports, shape.radix) : 0;
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
  fabric.switch_count =
      shape.leaves + shape.spines + (shape.tiers == 3 && shape.leaves > 1 ? shape.pods * shape.up_ports + shape.cores : 0);
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
  const std::int64_t u = shape.up_ports;
  if (shape.tiers == 2 && shape.spines > 0) {
    std::vector<int> spines;
    for (std::int64_t s = 0; s < shape.spines; ++s) spines.push_back(graph.add_vertex(VertexKind::switch_, -1, 2));
    for (std::int64_t l = 0; l < shape.leaves; ++l) {
      for (std::int64_t j = 0; j < u; ++j) {
        const auto spine = static_cast<std::size_t>((l * u + j) % shape.spines);
        graph.add_cable(leaves[static_cast<std::size_t>(l)], spines[spine], bw, latency_s, 2);
      }
    }
    bisection = std::min(bisection, static_cast<double>(shape.leaves * u) * bw / 2.0);
  }
  std::vector<int> aggregations;
  if (shape.tiers == 3 && shape.leaves > 1) {
    // Pod (rail r, block p) holds rail r's leaves of groups [p*d2, (p+1)*d2).
    for (std::int64_t a = 0; a < shape.pods * u; ++a) aggregations.push_back(graph.add_vertex(VertexKind::switch_, -1, 2));
    for (std::int64_t l = 0; l < shape.leaves; ++l) {
      const std::int64_t group = l / rails;
      const std::int64_t rail = l % rails;
      const std::int64_t pod = rail * shape.pods_per_rail + group / shape.aggregation_down_ports;
      for (std::int64_t i = 0; i < u; ++i) {
        graph.add_cable(leaves[static_cast<std::size_t>(l)], aggregations[static_cast<std::size_t>(pod * u + i)], bw,
                        latency_s, 2);
      }
    }
    bisection = std::min(bisection, static_cast<double>(shape.leaves * u) * bw / 2.0);
  }
  if (shape.tiers == 3 && shape.cores > 0) {
    std::vector<int> cores;
    for (std::int64_t c = 0; c < shape.cores; ++c) cores.push_back(graph.add_vertex(VertexKind::switch_, -1, 3));
    const std::int64_t u2 = shape.aggregation_up_ports;
    const std::int64_t per_plane = shape.cores / u;
    for (std::int64_t a = 0; a < shape.pods * u; ++a) {
      for (std::int64_t j = 0; j < u2; ++j) {
        const auto core = static_cast<std::size_t>(core_of_uplink(a / u, a % u, j, u2, per_plane));
        graph.add_cable(aggregations[static_cast<std::size_t>(a)], cores[core], bw, latency_s, 3);
      }
    }
    bisection = std::min(bisection, static_cast<double>(shape.pods * u * u2) * bw / 2.0);
  }
  fabric.bisection_bytes_per_s = bisection;
  fabric.destination_stride = rails;
  return fabric;
}

}  // namespace clustersim::topologies
