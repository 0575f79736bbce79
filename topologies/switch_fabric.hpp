#pragma once
/// The "switch" scale-out topology: every NIC on one ideal, non-blocking switch.
#include "topologies/scale_out_fabric.hpp"

namespace clustersim::topologies {

/// One switch vertex (tier 1) with one cable per endpoint of nic_bytes_per_s and
/// link_latency_s. The radix is not limited (an idealised big switch); bisection is
/// endpoints * nic_bytes_per_s / 2.
ScaleOutFabric build_switch_fabric(NetworkGraph& graph, const ScaleOutSpec& spec,
                                   std::span<const int> endpoints);

}  // namespace clustersim::topologies
