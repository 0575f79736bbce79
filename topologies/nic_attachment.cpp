#include "topologies/nic_attachment.hpp"

namespace clustersim::topologies {

ScaleOutEndpoints attach_nics(NetworkGraph& graph, const ClusterNetworkSpec& spec,
                              const ScaleUpDomains& domains) {
  ScaleOutEndpoints endpoints;
  const int nics = spec.scale_out.nics_per_node;
  endpoints.accelerators_per_nic = spec.accelerators_per_node / nics;
  endpoints.shared_nics = endpoints.accelerators_per_nic > 1;
  if (!endpoints.shared_nics) {
    endpoints.vertex = domains.accelerator_vertex;
    return endpoints;
  }
  const auto count = static_cast<std::size_t>(spec.nodes) * static_cast<std::size_t>(nics);
  endpoints.vertex.reserve(count);
  endpoints.nic_cable.reserve(count);
  for (int node = 0; node < spec.nodes; ++node) {
    const int nvswitch = domains.switch_vertex[static_cast<std::size_t>(node)];
    for (int j = 0; j < nics; ++j) {
      const int nic = graph.add_vertex(VertexKind::nic, node, 0);
      endpoints.vertex.push_back(nic);
      endpoints.nic_cable.push_back(
          graph.add_cable(nvswitch, nic, spec.scale_out.nic_bytes_per_s, 0.0, 0));
    }
  }
  return endpoints;
}

}  // namespace clustersim::topologies
