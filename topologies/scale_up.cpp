#include "topologies/scale_up.hpp"

namespace clustersim::topologies {
namespace {

/// One cable between every pair of the domain's accelerators [first, end).
void add_mesh(NetworkGraph& graph, const ClusterNetworkSpec& spec, std::size_t first, ScaleUpDomains& domains) {
  const auto size = static_cast<std::size_t>(domains.domain_size);
  const double per_peer_bytes_per_s = spec.scale_up.bytes_per_s / static_cast<double>(size - 1);
  domains.mesh_link.resize(domains.mesh_link.size() + size * size, -1);
  for (std::size_t i = 0; i < size; ++i) {
    for (std::size_t j = i + 1; j < size; ++j) {
      const Cable cable = graph.add_cable(domains.accelerator_vertex[first + i], domains.accelerator_vertex[first + j],
                                          per_peer_bytes_per_s, spec.scale_up.latency_s, 0);
      domains.mesh_link[(first + i) * size + j] = cable.forward;
      domains.mesh_link[(first + j) * size + i] = cable.backward;
    }
  }
}

}  // namespace

ScaleUpDomains build_scale_up(NetworkGraph& graph, const ClusterNetworkSpec& spec) {
  ScaleUpDomains domains;
  domains.domain_size = spec.scale_up_domain_size();
  domains.mesh = spec.scale_up.is_mesh() && domains.domain_size > 1;
  const int nodes_per_domain = domains.domain_size / spec.accelerators_per_node;
  const auto accelerators = static_cast<std::size_t>(spec.nodes) *
                            static_cast<std::size_t>(spec.accelerators_per_node);
  domains.accelerator_vertex.reserve(accelerators);
  domains.switch_vertex.reserve(static_cast<std::size_t>(spec.nodes));
  domains.accelerator_cable.reserve(accelerators);
  const double per_link_latency_s = spec.scale_up.latency_s / 2.0;
  for (int first_node = 0; first_node < spec.nodes; first_node += nodes_per_domain) {
    const auto first = domains.accelerator_vertex.size();
    for (int node = first_node; node < first_node + nodes_per_domain; ++node) {
      for (int local = 0; local < spec.accelerators_per_node; ++local) {
        domains.accelerator_vertex.push_back(graph.add_vertex(VertexKind::accelerator, node, 0));
      }
    }
    if (domains.domain_size == 1 || domains.mesh) {
      domains.switch_vertex.insert(domains.switch_vertex.end(), static_cast<std::size_t>(nodes_per_domain), -1);
      domains.accelerator_cable.insert(domains.accelerator_cable.end(), domains.accelerator_vertex.size() - first,
                                       Cable{-1, -1});
      if (domains.mesh) add_mesh(graph, spec, first, domains);
      continue;
    }
    // A multi-node domain's switch belongs to its first node (the vertex needs one node).
    const int nvswitch = graph.add_vertex(VertexKind::scale_up_switch, first_node, 0);
    domains.switch_vertex.insert(domains.switch_vertex.end(),
                                 static_cast<std::size_t>(nodes_per_domain), nvswitch);
    for (auto a = first; a < domains.accelerator_vertex.size(); ++a) {
      domains.accelerator_cable.push_back(graph.add_cable(
          domains.accelerator_vertex[a], nvswitch, spec.scale_up.bytes_per_s, per_link_latency_s, 0));
    }
  }
  return domains;
}

}  // namespace clustersim::topologies
