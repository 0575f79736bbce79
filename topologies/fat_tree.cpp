#include "topologies/fat_tree.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/integer_math.hpp"

namespace clustersim::topologies {
void check_fat_tree_parameters(const ScaleOutSpec& spec, std::vector<std::string>& problems) {
  if (spec.tiers != 2 && spec.tiers != 3) {
    problems.push_back(fmt::format("fat-tree tiers must be 2 or 3, got {}", spec.tiers));
  }
  if (spec.radix < 4 || spec.radix % 2 != 0) {
    problems.push_back(fmt::format("fat-tree radix must be even and >= 4, got {}", spec.radix));
  }
  if (!(spec.oversubscription >= 1.0) || !std::isfinite(spec.oversubscription)) {
    problems.push_back(fmt::format(
        "scale_out.oversubscription (leaf downlink:uplink ratio) must be a finite number >= 1, got {}",
        spec.oversubscription));
  }
  if (!(spec.aggregation_oversubscription >= 1.0) || !std::isfinite(spec.aggregation_oversubscription)) {
    problems.push_back(fmt::format(
        "scale_out.aggregation_oversubscription (aggregation downlink:uplink ratio) must be a "
        "finite number >= 1, got {}",
        spec.aggregation_oversubscription));
  }
  if (spec.tiers == 2 && spec.aggregation_oversubscription != 1.0) {
    problems.push_back(fmt::format(
        "a 2-tier fat-tree has no aggregation tier, so its aggregation oversubscription must "
        "be 1, got {}; use tiers: 3",
        spec.aggregation_oversubscription));
  }
}

int down_ports_for(int radix, double oversubscription) {
  // The epsilon keeps exact ratios (k*o/(1+o) integral) from rounding down through FP error.
  const auto ideal_down =
      static_cast<int>(std::floor(radix * oversubscription / (1.0 + oversubscription) + 1e-9));
  return std::clamp(ideal_down, radix / 2, radix - 1);
}

FatTreeShape fat_tree_shape(const ScaleOutSpec& spec, std::int64_t endpoints) {
  std::vector<std::string> problems;
  check_fat_tree_parameters(spec, problems);
  if (!problems.empty()) throw ConfigError(problems.front());
  if (endpoints < 1) throw ConfigError(fmt::format("fat-tree needs at least one NIC, got {}", endpoints));

  FatTreeShape shape;
  shape.tiers = spec.tiers;
  shape.radix = spec.radix;
  shape.endpoints = endpoints;
  const int k = spec.radix;
  const double o = spec.oversubscription;
  shape.down_ports = down_ports_for(k, o);
  shape.up_ports = k - shape.down_ports;
  const std::int64_t d = shape.down_ports;
  const std::int64_t u = shape.up_ports;

  if (spec.tiers == 2) {
    const std::int64_t capacity = d * k;
    if (endpoints > capacity) {
      throw ConfigError(fmt::format(
          "2-tier fat-tree of radix {} holds at most {} NICs at oversubscription {}; the cluster "
          "has {}: use tiers: 3 or a larger radix",
          k, capacity, o, endpoints));
    }
    shape.leaves = engine::ceil_div(endpoints, d);
    shape.spines = shape.leaves > 1 ? engine::ceil_div(shape.leaves * u, k) : 0;
    return shape;
  }

  shape.aggregation_down_ports = down_ports_for(k, spec.aggregation_oversubscription);
  shape.aggregation_up_ports = k - shape.aggregation_down_ports;
  const std::int64_t capacity = static_cast<std::int64_t>(k) * shape.aggregation_down_ports * d;
  if (endpoints > capacity) {
    throw ConfigError(fmt::format(
        "3-tier fat-tree of radix {} holds at most {} NICs at oversubscription {}{}; the "
        "cluster has {}: use a larger radix",
        k, capacity, o,
        spec.aggregation_oversubscription == 1.0
            ? std::string()
            : fmt::format(" (aggregation {})", spec.aggregation_oversubscription),
        endpoints));
  }
  shape.leaves = engine::ceil_div(endpoints, d);
  shape.leaves_per_pod = shape.aggregation_down_ports;
  shape.pods = engine::ceil_div(shape.leaves, shape.leaves_per_pod);
  shape.aggregations_per_pod = shape.leaves > 1 ? static_cast<int>(u) : 0;
  shape.cores = shape.pods > 1 ? u * cores_per_plane(shape.pods, shape.aggregation_up_ports, k) : 0;
  return shape;
}

std::int64_t cores_per_plane(std::int64_t pods, std::int64_t uplinks, int radix) {
  return engine::ceil_div(pods * uplinks, radix);
}

ScaleOutFabric build_fat_tree(NetworkGraph& graph, const ScaleOutSpec& spec,
                              std::span<const int> endpoints) {
  const FatTreeShape shape = fat_tree_shape(spec, static_cast<std::int64_t>(endpoints.size()));
  const double bw = spec.nic_bytes_per_s;
  const double fabric_bw = spec.fabric_link_bytes_per_s();
  const double latency_s = spec.link_latency_s;
  const std::int64_t u = shape.up_ports;

  ScaleOutFabric fabric;
  fabric.first_switch_vertex = graph.vertex_count();
  fabric.switch_count = shape.switches();

  std::vector<int> leaves;
  leaves.reserve(static_cast<std::size_t>(shape.leaves));
  for (std::int64_t l = 0; l < shape.leaves; ++l) {
    leaves.push_back(graph.add_vertex(VertexKind::switch_, -1, 1));
  }
  fabric.leaf_vertex.reserve(endpoints.size());
  fabric.endpoint_cable.reserve(endpoints.size());
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    const int leaf = leaves[e / static_cast<std::size_t>(shape.down_ports)];
    fabric.leaf_vertex.push_back(leaf);
    fabric.endpoint_cable.push_back(graph.add_cable(endpoints[e], leaf, bw, latency_s, 1));
  }

  double bisection = static_cast<double>(shape.endpoints) * bw / 2.0;
  if (shape.tiers == 2 && shape.spines > 0) {
    std::vector<int> spines;
    for (std::int64_t s = 0; s < shape.spines; ++s) {
      spines.push_back(graph.add_vertex(VertexKind::switch_, -1, 2));
    }
    for (std::int64_t l = 0; l < shape.leaves; ++l) {
      for (std::int64_t j = 0; j < u; ++j) {
        const auto spine = static_cast<std::size_t>((l * u + j) % shape.spines);
        graph.add_cable(leaves[static_cast<std::size_t>(l)], spines[spine], fabric_bw, latency_s, 2);
      }
    }
    bisection = std::min(bisection, static_cast<double>(shape.leaves * u) * fabric_bw / 2.0);
  }
  if (shape.tiers == 3 && shape.aggregations_per_pod > 0) {
    const std::int64_t aggs_per_pod = shape.aggregations_per_pod;
    std::vector<int> aggregations;
    for (std::int64_t a = 0; a < shape.pods * aggs_per_pod; ++a) {
      aggregations.push_back(graph.add_vertex(VertexKind::switch_, -1, 2));
    }
    for (std::int64_t l = 0; l < shape.leaves; ++l) {
      const std::int64_t pod = l / shape.leaves_per_pod;
      for (std::int64_t i = 0; i < aggs_per_pod; ++i) {
        graph.add_cable(leaves[static_cast<std::size_t>(l)],
                        aggregations[static_cast<std::size_t>(pod * aggs_per_pod + i)], fabric_bw,
                        latency_s, 2);
      }
    }
    bisection = std::min(bisection, static_cast<double>(shape.leaves * u) * fabric_bw / 2.0);
    if (shape.cores > 0) {
      std::vector<int> cores;
      for (std::int64_t c = 0; c < shape.cores; ++c) {
        cores.push_back(graph.add_vertex(VertexKind::switch_, -1, 3));
      }
      const std::int64_t agg_uplinks = shape.aggregation_up_ports;
      const std::int64_t per_plane = shape.cores / aggs_per_pod;
      for (std::int64_t a = 0; a < shape.pods * aggs_per_pod; ++a) {
        for (std::int64_t j = 0; j < agg_uplinks; ++j) {
          const auto core = static_cast<std::size_t>(
              core_of_uplink(a / aggs_per_pod, a % aggs_per_pod, j, agg_uplinks, per_plane));
          graph.add_cable(aggregations[static_cast<std::size_t>(a)], cores[core], fabric_bw,
                          latency_s, 3);
        }
      }
      bisection = std::min(bisection, static_cast<double>(shape.pods * aggs_per_pod * agg_uplinks) *
                                          fabric_bw / 2.0);
    }
  }
  fabric.bisection_bytes_per_s = bisection;
  return fabric;
}

}  // namespace clustersim::topologies
