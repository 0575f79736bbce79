#pragma once
/// How big a cluster network's graph will be, from its spec alone: the resource check runs it
/// before anything is built, so a cluster too large for memory is refused in milliseconds.
#include <cstdint>

#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// Vertices and directed links of the graph Topology::build makes (switch fabrics and the
/// fat-tree exactly from its shape; dragonfly, torus and custom networks approximately: a custom
/// network's edge list is counted as two cables per accelerator).
struct TopologySize {
  std::int64_t accelerators = 0;
  std::int64_t vertices = 0;
  std::int64_t links = 0;  ///< directed: two per cable
};

/// Bytes of memory a built topology takes per vertex and per directed link (Boost adjacency
/// lists both ways, the link table, the router's tables): fitted so that 65,536 H100s on a
/// 3-tier radix-64 fat-tree (about 80,000 vertices and 524,000 links) peak at the 165 MB that
/// `clustersim run` measures, base included.
inline constexpr double kBytesPerGraphElement = 250.0;

/// The size of the topology `spec` describes. `spec` must pass spec_problems.
TopologySize topology_size(const ClusterNetworkSpec& spec);

/// Bytes the built topology takes: (vertices + links) x kBytesPerGraphElement.
double topology_memory_bytes(const TopologySize& size);

}  // namespace clustersim::topologies
