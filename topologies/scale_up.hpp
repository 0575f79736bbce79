#pragma once
/// Scale-up domains (NVLink + NVSwitch): one aggregated switch vertex per domain of one node
/// (NVSwitch, e.g. 8 GPUs) or several nodes (multi-node NVLink, e.g. NVL72 = 18 x 4 GPUs).
#include <vector>

#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// The accelerators and scale-up switches of the whole cluster.
///
/// A domain is `domain_size` consecutive accelerators (scale_up.domain_size, default one
/// node). Each accelerator has one cable to its domain's switch carrying `scale_up.bytes_per_s` per
/// direction and `scale_up.latency_s / 2` per link, so accelerator -> switch -> accelerator
/// costs exactly `scale_up.latency_s` and is limited by the per-accelerator NVLink bandwidth.
/// A domain of a single accelerator has no scale-up switch.
struct ScaleUpDomains {
  int domain_size = 1;                   ///< accelerators per domain
  std::vector<int> accelerator_vertex;   ///< per global accelerator index
  /// Per node: its domain's switch (shared by the nodes of one domain); -1 when a domain is
  /// a single accelerator.
  std::vector<int> switch_vertex;
  std::vector<Cable> accelerator_cable;  ///< per accelerator; forward = accelerator -> switch

  /// Domain index of a global accelerator index.
  int domain_of(int accelerator) const { return accelerator / domain_size; }
};

/// Adds every domain's accelerators and then its scale-up switch to `graph` (node-major order).
/// `spec` must have passed spec_problems (domain_size a multiple of accelerators_per_node
/// that divides the accelerator count).
ScaleUpDomains build_scale_up(NetworkGraph& graph, const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
