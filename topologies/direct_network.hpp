#pragma once
/// What a whole-cluster builder (torus, custom) produces: accelerators wired to each other or
/// to their own switches, with no per-node scale-up switch and no NICs (private to
/// topologies/).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topologies/fabric_router.hpp"
#include "topologies/network_graph.hpp"

namespace clustersim::topologies {

/// A network built from the cluster spec alone; every accelerator-to-accelerator route,
/// same-node traffic included, is chosen by `router` between accelerator vertices.
struct DirectNetwork {
  std::vector<int> accelerator_vertex;  ///< per global accelerator index
  std::unique_ptr<FabricRouter> router;
  std::int64_t switch_count = 0;
  double bisection_bytes_per_s = 0;     ///< one direction
  int diameter_hops = 0;                ///< longest route between two accelerators
  /// Names of the switch vertices in vertex order (custom networks: as in the file); empty for
  /// builders whose switches are named by Topology::vertex_name's tier rule.
  std::vector<std::string> switch_names;
};

/// Signature shared by the whole-cluster builders. Throws ConfigError on a shape the spec's
/// parameters cannot build (spec_problems has already passed).
using DirectBuilder = DirectNetwork (*)(NetworkGraph& graph, const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
