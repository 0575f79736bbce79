#pragma once
/// The bipartite graph of active flows and the directed links they cross, kept incrementally
/// for the flow model (topologies/flow_network.hpp): each link lists its flows, each flow its
/// links, and a breadth-first search finds a connected component (for a from-scratch solve).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// One link crossed by a flow, with where the flow sits in that link's flow list.
struct FlowHop {
  LinkId link = 0;
  std::int32_t index_in_link = 0;
};

/// One flow on a link, with which of the flow's hops this link is.
struct LinkUse {
  std::int32_t flow = 0;  ///< flow slot
  std::int32_t hop = 0;   ///< index into the flow's hops
};

/// Flows are named by dense slot numbers chosen by the caller (reused after removal); links by
/// LinkId in [0, link_count). Adding and removing a flow cost O(its hop count).
class FlowLinkIncidence {
 public:
  explicit FlowLinkIncidence(std::size_t link_count);

  /// Registers flow `flow` (not currently registered) on `links` (valid, distinct ids).
  void add(std::int32_t flow, std::span<const LinkId> links);
  /// Unregisters flow `flow` (registered). Other flows on its links may change list position.
  void remove(std::int32_t flow);

  /// Flows currently on `link`.
  std::span<const LinkUse> flows_on(LinkId link) const {
    return link_flows_[static_cast<std::size_t>(link)];
  }
  /// Links of a registered flow, in path order.
  std::span<const FlowHop> hops_of(std::int32_t flow) const {
    return flow_hops_[static_cast<std::size_t>(flow)];
  }

  /// Appends to `links_out` and `flows_out` every link and flow connected to a link of
  /// `seed_links` through shared links, transitively (each once, in breadth-first order;
  /// seed links that carry no flow are included too).
  void collect_component(std::span<const LinkId> seed_links, std::vector<LinkId>& links_out,
                         std::vector<std::int32_t>& flows_out);

 private:
  std::vector<std::vector<LinkUse>> link_flows_;
  std::vector<std::vector<FlowHop>> flow_hops_;
  // Visit marks of the current search: equal to epoch_ when visited.
  std::vector<std::uint32_t> link_mark_;
  std::vector<std::uint32_t> flow_mark_;
  std::uint32_t epoch_ = 0;
};

}  // namespace clustersim::topologies
