#pragma once
/// Fewest-hop routing between scale-out switches with ECMP-like spreading.
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "topologies/fabric_router.hpp"
#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// Routes inside the scale-out fabric. Holds its own Boost.Graph of the fabric switches only
/// (endpoints, NICs and scale-up switches are never transit vertices) and runs a BFS per
/// destination switch on first use, caching the hop distances of every switch to it. Switches
/// with the same neighbours (the leaves of one pod or scalable unit, cabled to the same spines)
/// share one BFS: every other switch is as far from each of them, and they are two hops apart,
/// so a destination's distances are its first twin's with the two entries swapped. (Only where
/// every link has its reverse, as the BFS from the destination already assumes.)
///
/// Equal-cost choice: at each hop the candidates are the out-edges, in insertion order, to a
/// neighbour one hop closer to the destination (parallel cables count separately); the route
/// takes candidate splitmix64(flow_hash + hop) mod count. The same flow_hash always gets the
/// same route, and different (src, dst) pairs spread over spines/cores like ECMP.
class SwitchRouter final : public FabricRouter {
 public:
  /// Routes over the vertices [first_switch_vertex, vertex_count) of `graph`: the fabric
  /// switches of a scale-out fabric, or every vertex (first_switch_vertex = 0) for a custom
  /// network where any vertex may be a transit hop.
  /// `by_destination`: d-mod-k (ScaleOutSpec::routing): append_route's `flow_hash` is the
  /// destination's index, and each hop takes it modulo its candidates (then divides it by them)
  /// instead of hashing; a hop whose candidates are parallel cables to one switch takes the
  /// whole index modulo their count and divides nothing (the bundle spreads destinations, the
  /// digits stay for the switches further on).
  SwitchRouter(const NetworkGraph& graph, int first_switch_vertex, bool by_destination = false);
  /// The same over the links that survive: `failed[link]` != 0 leaves a link out of the graph
  /// (a failed cable or switch, topologies/link_faults.hpp), so routes re-hash (or take
  /// d-mod-k) over the equal-cost next hops that remain.
  SwitchRouter(const NetworkGraph& graph, int first_switch_vertex, bool by_destination,
               const std::vector<std::uint8_t>& failed);

  /// True when a route from switch vertex `from` to switch vertex `to` exists.
  bool connected(int from, int to) const;

  /// Appends the links of a fewest-hop route from switch vertex `from` to switch vertex `to`.
  void append_route(int from, int to, std::uint64_t flow_hash,
                    std::vector<LinkId>& links) const override;

  /// Hops between two switch vertices.
  int distance(int from, int to) const override;

  /// Number of fabric switches.
  int switch_count() const { return static_cast<int>(boost::num_vertices(switches_)); }
  int first_switch_vertex() const { return first_switch_vertex_; }

 private:
  using SwitchGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                            boost::no_property, EdgeProperties>;
  /// Hop distances of every switch to one destination: its twin class's BFS, the destination's
  /// and the class representative's entries swapped.
  class Hops {
   public:
    Hops(const std::vector<int>& of_representative, std::size_t destination, std::size_t representative)
        : of_representative_(of_representative), destination_(destination), representative_(representative) {}
    int operator[](std::size_t vertex) const {
      return of_representative_[vertex == destination_      ? representative_
                                : vertex == representative_ ? destination_
                                                            : vertex];
    }

   private:
    const std::vector<int>& of_representative_;
    std::size_t destination_, representative_;
  };
  int local(int vertex) const;
  Hops hops_to(int local_to) const;
  void group_twins();

  SwitchGraph switches_;
  int first_switch_vertex_ = 0;
  bool by_destination_ = false;
  std::vector<int> representative_;  ///< per switch: the first with its neighbours (itself if alone)
  mutable std::vector<std::vector<int>> distances_from_;  ///< per representative; empty until used
};

}  // namespace clustersim::topologies
