#pragma once
/// Scale-up domains: one switch vertex per domain of one node (NVSwitch, PCIe switch, e.g. 8
/// GPUs) or several nodes (multi-node NVLink, e.g. NVL72 = 18 x 4 GPUs), or a full mesh of
/// point-to-point links between the domain's accelerators (AMD xGMI, Gaudi's RoCE ports).
#include <vector>

#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// The accelerators and scale-up links of the whole cluster.
///
/// A domain is `domain_size` consecutive accelerators (scale_up.domain_size, default one
/// node).
///
/// Switch fabrics (nvswitch, pcie): each accelerator has one cable to its domain's switch
/// carrying `scale_up.bytes_per_s` per direction and `scale_up.latency_s / 2` per link, so
/// accelerator -> switch -> accelerator costs exactly `scale_up.latency_s` and is limited by
/// the per-accelerator bandwidth.
///
/// Mesh fabrics (xgmi-mesh, ethernet-mesh): every pair of a domain's D accelerators has its
/// own cable of `scale_up.bytes_per_s / (D - 1)` per direction and `scale_up.latency_s`; a
/// pair's traffic takes its cable only (one link: 64 GB/s on MI300X, not the 448 GB/s
/// aggregate), so only traffic spread over all peers reaches the aggregate.
///
/// A domain of a single accelerator has no scale-up link.
struct ScaleUpDomains {
  int domain_size = 1;                   ///< accelerators per domain
  bool mesh = false;                     ///< point-to-point mesh instead of a switch
  std::vector<int> accelerator_vertex;   ///< per global accelerator index
  /// Per node: its domain's switch (shared by the nodes of one domain); -1 when a domain is
  /// a single accelerator or a mesh.
  std::vector<int> switch_vertex;
  /// Per accelerator; forward = accelerator -> switch. {-1, -1} on a mesh.
  std::vector<Cable> accelerator_cable;
  /// Mesh only: mesh_link[a * domain_size + j] is the directed link from accelerator a to the
  /// j-th accelerator of its domain (-1 for a itself).
  std::vector<LinkId> mesh_link;

  /// Domain index of a global accelerator index.
  int domain_of(int accelerator) const { return accelerator / domain_size; }
  /// Mesh only: the directed link from `src` to `dst`, two accelerators of one domain.
  LinkId mesh_link_between(int src, int dst) const {
    return mesh_link[static_cast<std::size_t>(src) * static_cast<std::size_t>(domain_size) +
                     static_cast<std::size_t>(dst % domain_size)];
  }
};

/// Adds every domain's accelerators and then its scale-up switch or mesh cables to `graph`
/// (node-major order). `spec` must have passed spec_problems (domain_size a multiple of
/// accelerators_per_node that divides the accelerator count).
ScaleUpDomains build_scale_up(NetworkGraph& graph, const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
