#include "topologies/switch_fabric.hpp"

namespace clustersim::topologies {

ScaleOutFabric build_switch_fabric(NetworkGraph& graph, const ScaleOutSpec& spec,
                                   std::span<const int> endpoints) {
  ScaleOutFabric fabric;
  fabric.first_switch_vertex = graph.vertex_count();
  const int big_switch = graph.add_vertex(VertexKind::switch_, -1, 1);
  fabric.switch_count = 1;
  fabric.leaf_vertex.assign(endpoints.size(), big_switch);
  fabric.endpoint_cable.reserve(endpoints.size());
  for (const int endpoint : endpoints) {
    fabric.endpoint_cable.push_back(
        graph.add_cable(endpoint, big_switch, spec.nic_bytes_per_s, spec.link_latency_s, 1));
  }
  fabric.bisection_bytes_per_s =
      static_cast<double>(endpoints.size()) * spec.nic_bytes_per_s / 2.0;
  return fabric;
}

}  // namespace clustersim::topologies
