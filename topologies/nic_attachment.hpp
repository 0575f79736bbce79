#pragma once
/// Where the scale-out network attaches to the nodes: the NIC endpoints.
#include <vector>

#include "topologies/scale_up.hpp"

namespace clustersim::topologies {

/// The scale-out endpoints, node-major: endpoint `node * nics_per_node + j` is NIC j of `node`,
/// which serves local accelerators [j*per_node/nics, (j+1)*per_node/nics).
///
/// When every accelerator has its own NIC the endpoint is the accelerator vertex itself and
/// its NIC is modeled by the accelerator -> leaf cable (nic_bytes_per_s). When NICs are
/// shared, each NIC is a vertex hanging off the node's scale-up switch by a cable of
/// nic_bytes_per_s and zero latency (the NIC's latency is on its leaf cable); traffic from a
/// shared NIC's accelerators reaches it through the scale-up switch.
struct ScaleOutEndpoints {
  std::vector<int> vertex;         ///< per endpoint: NIC vertex, or the accelerator vertex
  std::vector<Cable> nic_cable;    ///< per endpoint when shared: forward = scale-up switch -> NIC
  bool shared_nics = false;        ///< true when nics_per_node < accelerators_per_node
  int accelerators_per_nic = 1;

  /// Endpoint index serving global accelerator `accelerator`.
  int endpoint_of(int accelerator) const { return accelerator / accelerators_per_nic; }
};

/// Adds NIC vertices when NICs are shared; otherwise names the accelerators as endpoints.
ScaleOutEndpoints attach_nics(NetworkGraph& graph, const ClusterNetworkSpec& spec,
                              const ScaleUpDomains& domains);

}  // namespace clustersim::topologies
