#pragma once
// Small spec builders shared by the topology tests.
#include "topologies/topology.hpp"

namespace clustersim::topologies::testing {

/// `nodes` x `per_node` accelerators, 450 GB/s / 1 us NVSwitch, 400 Gb/s NICs, 1 us per hop;
/// ideal links (efficiency 1, not the scenario defaults), so payload rates are line rates.
inline ClusterNetworkSpec cluster(int nodes, int per_node, int nics, const char* topology = "fat-tree",
                                  int radix = 64, int tiers = 2, double oversubscription = 1.0) {
  ClusterNetworkSpec spec;
  spec.nodes = nodes;
  spec.accelerators_per_node = per_node;
  spec.scale_up.bytes_per_s = 450e9;
  spec.scale_up.latency_s = 1e-6;
  spec.scale_out.topology = topology;
  spec.scale_out.radix = radix;
  spec.scale_out.tiers = tiers;
  spec.scale_out.oversubscription = oversubscription;
  spec.scale_out.nics_per_node = nics;
  spec.scale_out.nic_bytes_per_s = 50e9;  // 400 Gb/s
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_up.efficiency = 1.0;
  spec.scale_out.efficiency = 1.0;
  return spec;
}

}  // namespace clustersim::topologies::testing
