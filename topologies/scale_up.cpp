#include "topologies/scale_up.hpp"

namespace clustersim::topologies {

ScaleUpDomains build_scale_up(NetworkGraph& graph, const ClusterNetworkSpec& spec) {
  ScaleUpDomains domains;
  const auto accelerators = static_cast<std::size_t>(spec.nodes) *
                            static_cast<std::size_t>(spec.accelerators_per_node);
  domains.accelerator_vertex.reserve(accelerators);
  domains.switch_vertex.reserve(static_cast<std::size_t>(spec.nodes));
  domains.accelerator_cable.reserve(accelerators);
  const double per_link_latency_s = spec.scale_up.latency_s / 2.0;
  for (int node = 0; node < spec.nodes; ++node) {
    const auto first = domains.accelerator_vertex.size();
    for (int local = 0; local < spec.accelerators_per_node; ++local) {
      domains.accelerator_vertex.push_back(graph.add_vertex(VertexKind::accelerator, node, 0));
    }
    if (spec.accelerators_per_node == 1) {
      domains.switch_vertex.push_back(-1);
      domains.accelerator_cable.push_back(Cable{-1, -1});
      continue;
    }
    const int nvswitch = graph.add_vertex(VertexKind::scale_up_switch, node, 0);
    domains.switch_vertex.push_back(nvswitch);
    for (auto a = first; a < domains.accelerator_vertex.size(); ++a) {
      domains.accelerator_cable.push_back(graph.add_cable(
          domains.accelerator_vertex[a], nvswitch, spec.scale_up.bytes_per_s, per_link_latency_s, 0));
    }
  }
  return domains;
}

}  // namespace clustersim::topologies
