#include "topologies/routing.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::topologies {

SwitchRouter::SwitchRouter(const NetworkGraph& graph, int first_switch_vertex, bool by_destination)
    : SwitchRouter(graph, first_switch_vertex, by_destination, {}) {}

SwitchRouter::SwitchRouter(const NetworkGraph& graph, int first_switch_vertex, bool by_destination,
                           const std::vector<std::uint8_t>& failed)
    : switches_(static_cast<std::size_t>(graph.vertex_count() - first_switch_vertex)),
      first_switch_vertex_(first_switch_vertex),
      by_destination_(by_destination),
      distances_to_(static_cast<std::size_t>(graph.vertex_count() - first_switch_vertex)) {
  for (const Link& link : graph.links()) {
    if (link.from < first_switch_vertex || link.to < first_switch_vertex) continue;
    const auto id = static_cast<LinkId>(&link - graph.links().data());
    if (!failed.empty() && failed[static_cast<std::size_t>(id)] != 0) continue;
    boost::add_edge(static_cast<std::size_t>(link.from - first_switch_vertex),
                    static_cast<std::size_t>(link.to - first_switch_vertex), EdgeProperties{id},
                    switches_);
  }
}

int SwitchRouter::local(int vertex) const {
  const int index = vertex - first_switch_vertex_;
  if (index < 0 || index >= switch_count()) {
    throw SimulationError(fmt::format("vertex {} is not a scale-out switch", vertex));
  }
  return index;
}

const std::vector<int>& SwitchRouter::distances_to(int local_to) const {
  auto& distances = distances_to_[static_cast<std::size_t>(local_to)];
  if (distances.empty()) {
    distances.assign(static_cast<std::size_t>(switch_count()), -1);
    distances[static_cast<std::size_t>(local_to)] = 0;
    // Every cable is two directed edges, so distances *from* `to` equal distances *to* it.
    boost::breadth_first_search(
        switches_, static_cast<std::size_t>(local_to),
        boost::visitor(boost::make_bfs_visitor(
            boost::record_distances(distances.data(), boost::on_tree_edge()))));
  }
  return distances;
}

int SwitchRouter::distance(int from, int to) const {
  const int hops = distances_to(local(to))[static_cast<std::size_t>(local(from))];
  if (hops < 0) {
    throw SimulationError(fmt::format("scale-out switches {} and {} are not connected", from, to));
  }
  return hops;
}

bool SwitchRouter::connected(int from, int to) const {
  return distances_to(local(to))[static_cast<std::size_t>(local(from))] >= 0;
}

void SwitchRouter::append_route(int from, int to, std::uint64_t flow_hash,
                                std::vector<LinkId>& links) const {
  const int local_to = local(to);
  const std::vector<int>& distances = distances_to(local_to);
  auto current = static_cast<std::size_t>(local(from));
  if (distances[current] < 0) {
    throw SimulationError(fmt::format("scale-out switches {} and {} are not connected", from, to));
  }
  std::uint64_t destination = flow_hash;  // d-mod-k: the destination index, consumed digit by digit
  for (std::uint64_t hop = 0; distances[current] > 0; ++hop) {
    const int wanted = distances[current] - 1;
    std::uint64_t candidates = 0;
    bool parallel = true;  // every candidate is a cable to one neighbour
    std::size_t neighbour = 0;
    for (const auto edge : boost::make_iterator_range(boost::out_edges(current, switches_))) {
      const auto next = boost::target(edge, switches_);
      if (distances[next] != wanted) continue;
      if (candidates++ == 0) neighbour = next;
      parallel = parallel && next == neighbour;
    }
    std::uint64_t pick = 0;
    if (by_destination_ && parallel) {
      // Parallel cables to one switch (a pod's bundle to a core): spread the destinations over
      // them by their own index; the digits left choose the switches further on, if any.
      pick = flow_hash % candidates;
    } else if (by_destination_) {
      pick = destination % candidates;
      destination /= candidates;
    } else {
      pick = engine::splitmix64(flow_hash + hop) % candidates;
    }
    for (const auto edge : boost::make_iterator_range(boost::out_edges(current, switches_))) {
      const auto next = boost::target(edge, switches_);
      if (distances[next] != wanted) continue;
      if (pick-- == 0) {
        links.push_back(switches_[edge].link);
        current = next;
        break;
      }
    }
  }
}

}  // namespace clustersim::topologies
