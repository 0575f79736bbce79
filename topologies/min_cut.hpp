#pragma once
/// Bisection bandwidth of an arbitrary network by max-flow (private to topologies/).
#include <span>

#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// Minimum cut, in bytes/s one direction, between the first half of `accelerator_vertex`
/// (indices [0, n/2)) and the second half ([n/2, n)), over the directed links of `graph`
/// (Boost push-relabel max-flow from a source feeding the first half to a sink drained by
/// the second). 0 for fewer than two accelerators.
double half_split_min_cut_bytes_per_s(const NetworkGraph& graph, std::span<const int> accelerator_vertex);

}  // namespace clustersim::topologies
