#pragma once
/// The "rail-optimized" scale-out topology: NIC i of every node goes to rail (leaf) switch i
/// of its group of nodes; rail switches are joined by a spine tier.
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/scale_out_fabric.hpp"

namespace clustersim::topologies {

/// Switch counts of a rail-optimized fat-tree.
///
/// Rail leaves split their ports like fat-tree leaves: d = floor(k * o / (1 + o)) clamped to
/// [k/2, k-1] down ports, u = k - d uplinks. Nodes form groups of d consecutive nodes
/// (groups = ceil(nodes / d)); the group's rail j is one leaf holding NIC j of each of its
/// nodes. Leaf index = group * rails + rail. Spines = ceil(leaves * u / k); uplink j of leaf
/// l goes to spine (l*u + j) mod spines, as in the fat-tree. At most k leaves, so at most
/// d * floor(k / rails) nodes. Same-rail traffic of one group turns at its rail leaf; any
/// other inter-node traffic crosses a spine (no PXN relay through NVLink is modeled).
struct RailShape {
  int radix = 0;
  int down_ports = 0;         ///< d: nodes per rail group
  int up_ports = 0;           ///< u: uplinks per rail leaf
  int rails = 0;              ///< NICs per node
  std::int64_t groups = 0;    ///< groups of d nodes
  std::int64_t leaves = 0;    ///< groups * rails
  std::int64_t spines = 0;    ///< 0 with a single leaf
};

/// Appends one message per invalid rail-optimized parameter (tiers must be 2, radix even
/// and >= 4, oversubscription >= 1, nodes within capacity).
void check_rail_optimized_parameters(const ClusterNetworkSpec& spec,
                                     std::vector<std::string>& problems);

/// Shape for `nodes` nodes of `rails` NICs; throws ConfigError when out of capacity.
RailShape rail_shape(const ScaleOutSpec& spec, std::int64_t nodes, int rails);

/// Builds the rail-optimized fabric over `endpoints` (node-major, nics_per_node per node).
/// Bisection (one direction): min(endpoints * nic / 2, leaves * u * link / 2).
ScaleOutFabric build_rail_optimized(NetworkGraph& graph, const ScaleOutSpec& spec,
                                    std::span<const int> endpoints);

}  // namespace clustersim::topologies
