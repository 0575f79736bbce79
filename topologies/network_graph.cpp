#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

int NetworkGraph::add_vertex(VertexKind kind, int node, int tier) {
  const auto v = boost::add_vertex(VertexProperties{kind, node, tier}, graph_);
  return static_cast<int>(v);
}

Cable NetworkGraph::add_cable(int a, int b, double bytes_per_s, double latency_s, int tier) {
  Cable cable;
  cable.forward = static_cast<LinkId>(links_.size());
  links_.push_back(Link{a, b, bytes_per_s, latency_s, tier});
  cable.backward = static_cast<LinkId>(links_.size());
  links_.push_back(Link{b, a, bytes_per_s, latency_s, tier});
  boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b),
                  EdgeProperties{cable.forward}, graph_);
  boost::add_edge(static_cast<std::size_t>(b), static_cast<std::size_t>(a),
                  EdgeProperties{cable.backward}, graph_);
  return cable;
}

void NetworkGraph::set_efficiencies(double scale_up, double scale_out) {
  for (Link& link : links_) link.efficiency = link.tier == 0 ? scale_up : scale_out;
}

}  // namespace clustersim::topologies
