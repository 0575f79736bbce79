#include "topologies/routing.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

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
      distances_from_(static_cast<std::size_t>(graph.vertex_count() - first_switch_vertex)) {
  const std::vector<Link>& links = graph.links();
  const auto up = [&](std::size_t id) { return failed.empty() || failed[id] == 0; };
  bool paired = true;  // every link kept has its reverse kept (add_cable makes links 2k, 2k + 1)
  for (std::size_t id = 0; id < links.size(); ++id) {
    const Link& link = links[id];
    if (link.from < first_switch_vertex || link.to < first_switch_vertex || !up(id)) continue;
    const std::size_t partner = id ^ 1U;
    paired = paired && partner < links.size() && up(partner) && links[partner].from == link.to &&
             links[partner].to == link.from;
    boost::add_edge(static_cast<std::size_t>(link.from - first_switch_vertex),
                    static_cast<std::size_t>(link.to - first_switch_vertex),
                    EdgeProperties{static_cast<LinkId>(id)}, switches_);
  }
  representative_.resize(static_cast<std::size_t>(switch_count()));
  std::iota(representative_.begin(), representative_.end(), 0);
  if (paired) group_twins();
}

namespace {

/// The distinct neighbours of `vertex`, sorted, into `out`.
template <typename Graph>
void neighbours_of(const Graph& graph, std::size_t vertex, std::vector<std::size_t>& out) {
  out.clear();
  for (const auto edge : boost::make_iterator_range(boost::out_edges(vertex, graph))) out.push_back(boost::target(edge, graph));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace

void SwitchRouter::group_twins() {
  // Only where every link has its reverse (the constructor checks): there a switch's distance to
  // a destination is the destination's to it, which is what one BFS per class gives. Switches
  // are sorted by a hash of their neighbour set; within a run of equal hashes, each takes the
  // run's first switch as its representative when their sets are equal (a collision only
  // costs a search).
  std::vector<std::pair<std::uint64_t, int>> signatures;
  signatures.reserve(representative_.size());
  std::vector<std::size_t> neighbours, others;
  for (std::size_t vertex = 0; vertex < representative_.size(); ++vertex) {
    neighbours_of(switches_, vertex, neighbours);
    if (neighbours.empty()) continue;
    std::uint64_t hash = neighbours.size();
    for (const std::size_t n : neighbours) hash = engine::splitmix64(hash ^ n);
    signatures.emplace_back(hash, static_cast<int>(vertex));
  }
  std::sort(signatures.begin(), signatures.end());
  for (std::size_t first = 0; first < signatures.size();) {
    std::size_t last = first + 1;
    while (last < signatures.size() && signatures[last].first == signatures[first].first) ++last;
    if (last - first > 1) neighbours_of(switches_, static_cast<std::size_t>(signatures[first].second), neighbours);
    for (std::size_t i = first + 1; i < last; ++i) {
      const auto vertex = static_cast<std::size_t>(signatures[i].second);
      neighbours_of(switches_, vertex, others);
      if (others == neighbours) representative_[vertex] = signatures[first].second;
    }
    first = last;
  }
}

int SwitchRouter::local(int vertex) const {
  const int index = vertex - first_switch_vertex_;
  if (index < 0 || index >= switch_count()) {
    throw SimulationError(fmt::format("vertex {} is not a scale-out switch", vertex));
  }
  return index;
}

SwitchRouter::Hops SwitchRouter::hops_to(int local_to) const {
  const auto destination = static_cast<std::size_t>(local_to);
  const auto representative = static_cast<std::size_t>(representative_[destination]);
  auto& distances = distances_from_[representative];
  if (distances.empty()) {
    distances.assign(static_cast<std::size_t>(switch_count()), -1);
    distances[representative] = 0;
    // Every cable is two directed edges, so distances *from* it equal distances *to* it.
    boost::breadth_first_search(
        switches_, representative,
        boost::visitor(boost::make_bfs_visitor(
            boost::record_distances(distances.data(), boost::on_tree_edge()))));
  }
  return Hops(distances, destination, representative);
}

int SwitchRouter::distance(int from, int to) const {
  const int hops = hops_to(local(to))[static_cast<std::size_t>(local(from))];
  if (hops < 0) {
    throw SimulationError(fmt::format("scale-out switches {} and {} are not connected", from, to));
  }
  return hops;
}

bool SwitchRouter::connected(int from, int to) const {
  return hops_to(local(to))[static_cast<std::size_t>(local(from))] >= 0;
}

void SwitchRouter::append_route(int from, int to, std::uint64_t flow_hash,
                                std::vector<LinkId>& links) const {
  const Hops distances = hops_to(local(to));
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
