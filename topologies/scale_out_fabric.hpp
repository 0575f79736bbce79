#pragma once
/// What a scale-out builder (switch, fat-tree, rail-optimized, dragonfly) adds on top of the NIC endpoints.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "topologies/fabric_router.hpp"
#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// The scale-out network. Builders add all their switches after every node vertex, so the
/// fabric switches are exactly the vertices [first_switch_vertex, graph.vertex_count()).
struct ScaleOutFabric {
  std::vector<int> leaf_vertex;        ///< per endpoint: the switch its NIC cable ends on
  std::vector<Cable> endpoint_cable;   ///< per endpoint; forward = endpoint -> leaf
  int first_switch_vertex = 0;
  std::int64_t switch_count = 0;
  double bisection_bytes_per_s = 0;    ///< one direction
  /// d-mod-k numbers destinations as the subnet manager does on this fabric: endpoint index /
  /// destination_stride. A rail-optimized fabric is one fat-tree per rail (its planes meet only
  /// at the cores), so a destination's index is its node's, not its NIC's: with the NIC's index
  /// (node x rails + rail) a rail's destinations would all be congruent modulo the rails and
  /// take gcd(rails, uplinks)-th of a leaf's uplinks (8 NICs, 32 uplinks: 4 of them).
  int destination_stride = 1;
  /// The fabric's own router; when null, Topology routes with a SwitchRouter (fewest hops,
  /// ECMP) over the fabric switches.
  std::unique_ptr<FabricRouter> router;
};

/// Signature shared by the scale-out builders; `endpoints` are vertex indices, node-major.
using ScaleOutBuilder = ScaleOutFabric (*)(NetworkGraph& graph, const ScaleOutSpec& spec,
                                           std::span<const int> endpoints);

}  // namespace clustersim::topologies
