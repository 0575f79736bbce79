#pragma once
/// The "torus" topology: a 1D/2D/3D torus with wraparound, one accelerator per coordinate,
/// neighbour links and no switches (TPU-style ICI), routed in dimension order.
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/direct_network.hpp"

namespace clustersim::topologies {

/// Appends one message per invalid torus parameter of `spec` (dims count and sizes, their
/// product against the accelerator count, link bandwidth).
void check_torus_parameters(const ClusterNetworkSpec& spec, std::vector<std::string>& problems);

/// Dimension-order routing: dimensions 0, 1, 2 in turn, each the shorter way round; when
/// both ways are equally short (d even, distance d/2) the flow hash picks the direction.
class TorusRouter final : public FabricRouter {
 public:
  /// `plus_link[dim][a]` is the directed link from accelerator a to its +1 neighbour in
  /// `dim`, `minus_link[dim][a]` the one to its -1 neighbour (-1 where the dimension has
  /// size 1). Accelerator vertices are the indices [0, accelerators).
  TorusRouter(std::vector<int> dims, std::vector<std::vector<LinkId>> plus_link,
              std::vector<std::vector<LinkId>> minus_link);
  void append_route(int from, int to, std::uint64_t flow_hash,
                    std::vector<LinkId>& links) const override;
  int distance(int from, int to) const override;

 private:
  std::vector<int> dims_;
  std::vector<std::vector<LinkId>> plus_link_;
  std::vector<std::vector<LinkId>> minus_link_;
};

/// Builds the torus. Coordinates: accelerator a (global, node-major) sits at (x0, x1, x2) with dimension 0
/// fastest: a = x0 + d0 * (x1 + d1 * x2). A node's consecutive accelerators therefore lie
/// along dimension 0. The product of `torus_dims` must equal nodes * accelerators_per_node.
///
/// Each accelerator has one cable to its +1 neighbour (with wraparound) in every dimension
/// of size >= 3; a dimension of size 2 has a single cable per pair (the +1 and -1
/// neighbours coincide), size 1 has none. Cables run at link_bytes_per_s (default
/// nic_bytes_per_s) with link_latency_s; their tier is 1 + dimension.
///
/// Summary: links = sum over dimensions (N if d >= 3, N/2 if d == 2); bisection (one
/// direction) cuts the largest dimension D in half: 2 * N / D cables if D >= 3, N / 2 if
/// D == 2; diameter = sum floor(d / 2).
DirectNetwork build_torus(NetworkGraph& graph, const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
