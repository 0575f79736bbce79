#include "topologies/min_cut.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>

namespace clustersim::topologies {

double half_split_min_cut_bytes_per_s(const NetworkGraph& graph, std::span<const int> accelerator_vertex) {
  const std::size_t n = accelerator_vertex.size();
  if (n < 2) return 0;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto vertices = static_cast<std::size_t>(graph.vertex_count());
  FlowGraph flow(vertices + 2);
  const std::size_t source = vertices;
  const std::size_t sink = vertices + 1;
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  auto add = [&](std::size_t from, std::size_t to, double bytes_per_s) {
    const auto forward = boost::add_edge(from, to, flow).first;
    const auto backward = boost::add_edge(to, from, flow).first;
    capacity[forward] = bytes_per_s;
    capacity[backward] = 0;
    reverse[forward] = backward;
    reverse[backward] = forward;
  };
  double total = 0;
  for (const Link& link : graph.links()) {
    add(static_cast<std::size_t>(link.from), static_cast<std::size_t>(link.to), link.bytes_per_s);
    total += link.bytes_per_s;
  }
  // Terminal edges never limit the cut: each carries more than every link together.
  const double unlimited = 2 * total + 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::size_t>(accelerator_vertex[i]);
    if (i < n / 2) {
      add(source, v, unlimited);
    } else {
      add(v, sink, unlimited);
    }
  }
  return boost::push_relabel_max_flow(flow, source, sink);
}

}  // namespace clustersim::topologies
