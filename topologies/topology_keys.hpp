#pragma once
/// The topology kinds a cluster may name (`cluster.network.topology`), and the keys of
/// `cluster.network` and `cluster.node.scale_up`, each declared once and bound to the
/// ScaleOutSpec / ScaleUpSpec member it sets (config::Declarations). The scenario loader reads
/// through these declarations; `clustersim list/describe` and docs/scenario-reference.md print
/// them with their YAML keys; their defaults are the specs' initializers.
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/declarations.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// One registered topology.
struct TopologyKind {
  std::string name;  ///< the `cluster.network.topology` value
  std::string help;  ///< its shape and routing
  /// The `cluster.network` keys it reads (paths relative to cluster.network, all declared in
  /// scale_out_keys()), in the order `describe` prints them.
  std::vector<std::string> keys;
  /// Of `keys`, those it cannot do without: the loader requires them when it is chosen.
  std::vector<std::string> required;
  /// Torus and custom describe the whole network: no scale-up switch and no NICs.
  bool whole_network = false;
};

/// Every registered topology, in name order.
const std::vector<TopologyKind>& topology_kinds();
/// The topology named `name`, or nullptr.
const TopologyKind* find_topology_kind(std::string_view name);

/// Every key of `cluster.network` (of all topologies), bound to ScaleOutSpec.
const config::Declarations<ScaleOutSpec>& scale_out_keys();
/// The keys of `cluster.node.scale_up`, bound to ScaleUpSpec.
const config::Declarations<ScaleUpSpec>& scale_up_keys();

}  // namespace clustersim::topologies
