#pragma once
/// The "custom" topology: the whole network read from an edge-list file, for uneven and
/// hand-made fabrics.
#include <string>
#include <string_view>
#include <vector>

#include "topologies/direct_network.hpp"

namespace clustersim::topologies {

/// One cable of an edge-list file.
struct EdgeListCable {
  std::string a, b;          ///< vertex names
  double bytes_per_s = 0;    ///< one direction
  double latency_s = 0;
  int line = 0;              ///< 1-based line in the file
};

/// Parses edge-list text. Format, one cable per line:
///
///     a,b,bytes_per_s,latency_s        e.g.  gpu0,leaf0,50e9,1e-6
///
/// Blank lines and lines starting with '#' are skipped; fields are trimmed. `gpuN` (N a
/// decimal index in [0, accelerators)) is accelerator N (global, node-major); any other name
/// ([A-Za-z0-9_.-]+, not starting with "gpu" followed by digits) is a switch. Bandwidth is in
/// bytes/s per direction (> 0), latency in seconds (>= 0); every cable is full duplex.
/// Throws ConfigError listing every bad line as "`file_name`:line: problem" (bad field
/// count, bad numbers, self-loops, unknown vertices such as gpu16 in a 16-accelerator
/// cluster).
std::vector<EdgeListCable> parse_edge_list(std::string_view text, const std::string& file_name,
                                           int accelerators);

/// Builds the network of `spec.scale_out.custom_file`: accelerators gpu0..gpuN-1 become
/// vertices 0..N-1, switches follow in order of first appearance (tier 1; cables tier 1).
/// Routing is fewest-hop with per-flow ECMP over every vertex (an accelerator may be a
/// transit hop, as in direct-connect fabrics). Throws ConfigError when the file cannot be
/// read, has bad lines, or leaves an accelerator unreachable from gpu0 (naming them).
/// Bisection and diameter are left to Topology::summary (max-flow between the two halves of
/// the accelerator indices, and BFS).
DirectNetwork build_custom(NetworkGraph& graph, const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
