#pragma once
/// The "dragonfly" scale-out topology: groups of routers, all-to-all local links inside a
/// group, global links spread across groups, minimal (local-global-local) routing.
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/scale_out_fabric.hpp"

namespace clustersim::topologies {

/// Appends one message per invalid dragonfly parameter of `spec`: groups g, routers per
/// group a, terminals per router p (all >= 1), global links per router h (>= 0, and
/// a * h >= g - 1 so every pair of groups is linked), and nodes * nics_per_node <= g * a * p.
void check_dragonfly_parameters(const ClusterNetworkSpec& spec, std::vector<std::string>& problems);

/// One global cable, seen from its source group: router r_from (global router index) to
/// r_to, and the directed link between them.
struct GlobalLink {
  int from_router = 0;
  int to_router = 0;
  LinkId link = 0;
};

/// Minimal routing: inside a group the direct local link; between groups, over one global
/// link, with a local hop before it when the source router does not own it and after it when
/// it does not land on the destination router. Among the global links between the two
/// groups, those giving the fewest hops are candidates; the flow hash picks one.
class DragonflyRouter final : public FabricRouter {
 public:
  /// `first_router_vertex`: vertex of router 0 (routers are group-major); `local_link[r][j]`:
  /// directed link from router r to router j of the same group (local index j), -1 for j =
  /// r's own index; `global_links[g1 * groups + g2]`: global cables from group g1 to g2.
  DragonflyRouter(int first_router_vertex, int groups, int routers_per_group,
                  std::vector<std::vector<LinkId>> local_link,
                  std::vector<std::vector<GlobalLink>> global_links);
  void append_route(int from, int to, std::uint64_t flow_hash,
                    std::vector<LinkId>& links) const override;
  int distance(int from, int to) const override;

 private:
  int hops_via(const GlobalLink& global, int from_router, int to_router) const;
  int router(int vertex) const;
  int first_router_vertex_, groups_, routers_per_group_;
  std::vector<std::vector<LinkId>> local_link_;
  std::vector<std::vector<GlobalLink>> global_links_;
};

/// Builds the dragonfly over `endpoints` (NIC vertices, node-major).
///
/// Routers are numbered group-major (router r is local index r mod a of group r / a).
/// Terminals: endpoint e attaches to router e / p (NIC cables at nic_bytes_per_s, tier 1).
/// Local: one cable between every two routers of a group (tier 2). Global (tier 3): group i
/// owns ports q = 0 .. R*(g-1)-1 with R = floor(a*h / (g-1)) rounds (ports beyond that stay
/// dark); port q sits on local router q / h and leads to group (i + 1 + q mod (g-1)) mod g,
/// arriving on that group's port of the same round pointing back, so each pair of groups
/// gets R cables spread over routers. Local and global cables run at link_bytes_per_s
/// (default nic_bytes_per_s).
/// Bisection (one direction): min(endpoints * nic / 2, global cables between groups
/// [0, g/2) and [g/2, g) * link); with one group, floor(a/2) * ceil(a/2) local cables.
ScaleOutFabric build_dragonfly(NetworkGraph& graph, const ScaleOutSpec& spec,
                               std::span<const int> endpoints);

}  // namespace clustersim::topologies
