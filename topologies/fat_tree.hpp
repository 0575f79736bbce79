#pragma once
/// The "fat-tree" scale-out topology: 2- or 3-tier k-ary fat-tree with per-tier
/// oversubscription (leaf, and aggregation in 3 tiers).
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/scale_out_fabric.hpp"

namespace clustersim::topologies {

/// Switch counts of a fat-tree, derived from the spec and the number of NIC endpoints.
///
/// Leaf ports split into `down_ports` d (to NICs) and `up_ports` u with d + u = radix k and
/// d / u = oversubscription: d = floor(k * o / (1 + o)), clamped to [k/2, k-1], u = k - d
/// (so a ratio that does not divide the radix rounds toward less oversubscription).
/// NICs fill leaf ports in endpoint order (node-major), leaves = ceil(endpoints / d).
/// NIC cables run at nic_bytes_per_s, switch-to-switch cables at link_bytes_per_s (default:
/// nic_bytes_per_s).
///
/// 2 tiers: spines = ceil(leaves * u / k); uplink j of leaf l (global index l*u + j) goes to
/// spine (l*u + j) mod spines, which balances spine ports (a leaf may have parallel cables
/// to one spine). At most d * k endpoints.
///
/// 3 tiers: aggregation switches split their ports the same way by the aggregation
/// oversubscription o2: d2 = floor(k * o2 / (1 + o2)) clamped to [k/2, k-1], u2 = k - d2.
/// Pods of d2 leaves and u aggregation switches; every leaf has one cable to each
/// aggregation switch of its pod; each aggregation switch has u2 uplinks. The cores form u
/// planes (core_of_uplink): aggregation switch i of every pod is cabled only to plane i, as in
/// the classic k-ary fat-tree's core groups and a DGX SuperPOD's core groups, so a route up
/// through aggregation switch i comes down through aggregation switch i of the destination pod;
/// cores = u * ceil(pods * u2 / k). With k pods and o = o2 = 1 this is the classic k-ary
/// fat-tree with (k/2)^2 cores. At most k * d2 * d endpoints.
///
/// A tier above is built only when it connects more than one switch below: one leaf has no
/// spines/aggregation switches, one pod has no cores.
/// Cores in each of the u planes of a 3-tier Clos: `pods` pods, `uplinks` (u2) uplinks per
/// aggregation switch, radix k: ceil(pods * uplinks / k).
std::int64_t cores_per_plane(std::int64_t pods, std::int64_t uplinks, int radix);

/// The core (global index: plane i's cores are [i * per_plane, (i + 1) * per_plane)) that uplink
/// j of aggregation switch i of pod p goes to: (p * uplinks + j) mod per_plane within plane i,
/// which balances the plane's core ports (a pod may have parallel cables to one core).
inline std::int64_t core_of_uplink(std::int64_t pod, std::int64_t aggregation, std::int64_t j, std::int64_t uplinks,
                                   std::int64_t per_plane) {
  return aggregation * per_plane + (pod * uplinks + j) % per_plane;
}

struct FatTreeShape {
  int tiers = 2;
  int radix = 0;
  int down_ports = 0;                 ///< d: NIC ports per leaf
  int up_ports = 0;                   ///< u: uplinks per leaf
  std::int64_t endpoints = 0;         ///< NICs
  std::int64_t leaves = 0;
  std::int64_t spines = 0;            ///< 2 tiers only
  int aggregation_down_ports = 0;     ///< 3 tiers only: d2, leaf ports per aggregation switch
  int aggregation_up_ports = 0;       ///< 3 tiers only: u2, core uplinks per aggregation switch
  int leaves_per_pod = 0;             ///< 3 tiers only (d2)
  std::int64_t pods = 0;              ///< 3 tiers only
  int aggregations_per_pod = 0;       ///< 3 tiers only (u), 0 with a single leaf
  std::int64_t cores = 0;             ///< 3 tiers only

  /// Total scale-out switches.
  std::int64_t switches() const { return leaves + spines + pods * aggregations_per_pod + cores; }
};

/// Appends to `problems` one message per invalid fat-tree parameter (tiers, radix,
/// oversubscription per tier) of `spec`.
void check_fat_tree_parameters(const ScaleOutSpec& spec, std::vector<std::string>& problems);

/// Down ports of a radix-`radix` switch at downlink:uplink ratio `oversubscription`:
/// floor(radix * o / (1 + o)) clamped to [radix/2, radix-1].
int down_ports_for(int radix, double oversubscription);

/// Shape for `endpoints` NICs; throws ConfigError on invalid parameters or when the tree
/// cannot hold that many NICs.
FatTreeShape fat_tree_shape(const ScaleOutSpec& spec, std::int64_t endpoints);

/// Builds the fat-tree over `endpoints` (vertex indices, node-major); see FatTreeShape.
/// Bisection (one direction) = min(endpoints * nic / 2, leaf uplinks * link / 2,
/// aggregation uplinks * link / 2) over the tiers that exist.
ScaleOutFabric build_fat_tree(NetworkGraph& graph, const ScaleOutSpec& spec,
                              std::span<const int> endpoints);

}  // namespace clustersim::topologies
