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
/// nodes. Leaf index = group * rails + rail.
///
/// 2 tiers: spines = ceil(leaves * u / k); uplink j of leaf l goes to spine (l*u + j) mod
/// spines, as in the fat-tree. At most k leaves, so at most d * floor(k / rails) nodes.
///
/// 3 tiers (DGX SuperPOD's rail-aligned spine groups): aggregation switches split their ports
/// by the aggregation oversubscription as in the fat-tree (d2 down, u2 up). A pod holds the
/// leaves of ONE rail for up to d2 consecutive groups (pods per rail = ceil(groups / d2); pod
/// index = rail * pods_per_rail + group / d2) and u aggregation switches, each cabled once to
/// every leaf of its pod; the cores form u planes, aggregation switch i of every pod cabled only
/// to plane i (core_of_uplink, fat_tree.hpp), cores = u * ceil(pods * u2 / k). At most k pods,
/// so at most d * d2 * floor(k / rails) nodes.
///
/// Same-rail traffic of one group turns at its rail leaf, of one pod at its aggregation
/// switches; any other inter-node traffic crosses a spine (2 tiers) or a core (3 tiers) (no PXN
/// relay through NVLink is modeled).
struct RailShape {
  int tiers = 2;
  int radix = 0;
  int down_ports = 0;         ///< d: nodes per rail group
  int up_ports = 0;           ///< u: uplinks per rail leaf
  int rails = 0;              ///< NICs per node
  std::int64_t groups = 0;    ///< groups of d nodes
  std::int64_t leaves = 0;    ///< groups * rails
  std::int64_t spines = 0;    ///< 2 tiers; 0 with a single leaf
  int aggregation_down_ports = 0;  ///< 3 tiers: d2, leaves per pod
  int aggregation_up_ports = 0;    ///< 3 tiers: u2, core uplinks per aggregation switch
  std::int64_t pods_per_rail = 0;  ///< 3 tiers
  std::int64_t pods = 0;           ///< 3 tiers: rails * pods_per_rail
  std::int64_t cores = 0;          ///< 3 tiers; 0 with a single pod
};

/// Appends one message per invalid rail-optimized parameter (tiers 2 or 3, radix even and
/// >= 4, oversubscriptions >= 1, nodes within capacity).
void check_rail_optimized_parameters(const ClusterNetworkSpec& spec,
                                     std::vector<std::string>& problems);

/// Shape for `nodes` nodes of `rails` NICs; throws ConfigError when out of capacity.
RailShape rail_shape(const ScaleOutSpec& spec, std::int64_t nodes, int rails);

/// Builds the rail-optimized fabric over `endpoints` (node-major, nics_per_node per node).
/// Bisection (one direction): min(endpoints * nic / 2, leaves * u * link / 2, and with 3 tiers
/// aggregation switches * u2 * link / 2).
ScaleOutFabric build_rail_optimized(NetworkGraph& graph, const ScaleOutSpec& spec,
                                    std::span<const int> endpoints);

}  // namespace clustersim::topologies
