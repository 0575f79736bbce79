#pragma once
/// The routing interface shared by the fabric routers (private to topologies/).
#include <cstdint>
#include <vector>

#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// Chooses the links between two vertices of a built network. Implementations: SwitchRouter
/// (fewest hops with ECMP, fat-trees and anything else), DragonflyRouter (minimal
/// local-global-local), TorusRouter (dimension order). Deterministic: the same
/// (from, to, flow_hash) always gives the same route.
class FabricRouter {
 public:
  virtual ~FabricRouter() = default;
  /// Appends the links of the route from vertex `from` to vertex `to`; `flow_hash` picks
  /// among equal-cost choices. Throws SimulationError when the two are not connected.
  virtual void append_route(int from, int to, std::uint64_t flow_hash,
                            std::vector<LinkId>& links) const = 0;
  /// Hops of the route from `from` to `to` (the shortest one the router can take).
  virtual int distance(int from, int to) const = 0;
};

}  // namespace clustersim::topologies
