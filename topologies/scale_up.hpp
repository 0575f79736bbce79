#pragma once
/// Scale-up domains (NVLink + NVSwitch): one aggregated switch vertex per node.
#include <vector>

#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// The accelerators and scale-up switches of the whole cluster.
///
/// Each accelerator has one cable to its node's switch carrying `scale_up.bytes_per_s` per
/// direction and `scale_up.latency_s / 2` per link, so accelerator -> switch -> accelerator
/// costs exactly `scale_up.latency_s` and is limited by the per-accelerator NVLink bandwidth.
/// A node with a single accelerator has no scale-up switch.
struct ScaleUpDomains {
  std::vector<int> accelerator_vertex;   ///< per global accelerator index
  std::vector<int> switch_vertex;        ///< per node; -1 when the node has one accelerator
  std::vector<Cable> accelerator_cable;  ///< per accelerator; forward = accelerator -> switch
};

/// Adds every node's accelerators and scale-up switch to `graph` (node-major order).
ScaleUpDomains build_scale_up(NetworkGraph& graph, const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
