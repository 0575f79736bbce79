#pragma once
/// The cluster network as a directed graph (Boost.Graph): accelerators, scale-up switches,
/// scale-out switches, and one directed edge per direction of every full-duplex cable.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace clustersim::topologies {

/// What a vertex of the network graph is. A `nic` vertex exists only when a node has fewer
/// NICs than accelerators (the NIC then hangs off the node's scale-up switch).
enum class VertexKind { accelerator, scale_up_switch, switch_, nic };

/// Scale-up domain inside a node (NVLink + NVSwitch).
struct ScaleUpSpec {
  std::string fabric = "nvswitch";  ///< "nvswitch" (one switch plane per node)
  double bytes_per_s = 0;           ///< per accelerator, one direction
  double latency_s = 0;             ///< accelerator -> accelerator through the switch
};

/// Scale-out fabric between nodes.
struct ScaleOutSpec {
  std::string topology = "fat-tree";  ///< registry name: "fat-tree" or "switch"
  int tiers = 2;                      ///< fat-tree tiers (2 or 3)
  int radix = 64;                     ///< switch ports
  double oversubscription = 1.0;      ///< downlink:uplink bandwidth ratio at the leaf tier (>= 1)
  int nics_per_node = 8;              ///< NICs per node; NIC i serves accelerator i*(per_node/nics)
  double nic_bytes_per_s = 0;         ///< per NIC, one direction
  double link_latency_s = 1e-6;       ///< per hop (cable + switch traversal)
};

/// Whole cluster: `nodes` nodes of `accelerators_per_node` accelerators.
struct ClusterNetworkSpec {
  int nodes = 1;
  int accelerators_per_node = 8;
  ScaleUpSpec scale_up;
  ScaleOutSpec scale_out;
};

/// Index of a directed link in Topology::links().
using LinkId = std::int32_t;

/// One direction of a cable.
struct Link {
  std::int32_t from = 0;  ///< vertex index
  std::int32_t to = 0;    ///< vertex index
  double bytes_per_s = 0;
  double latency_s = 0;
  int tier = 0;  ///< 0 = scale-up, 1 = accelerator/NIC to leaf, 2 = leaf to spine, 3 = spine to core
};

/// A route between two accelerators.
struct Path {
  std::vector<LinkId> links;
  double latency_s = 0;                   ///< sum of link latencies
  double bottleneck_bytes_per_s = 0;      ///< slowest link on the path
};

/// Size and capability figures reported by `clustersim describe`.
struct TopologySummary {
  std::int64_t accelerators = 0;
  std::int64_t switches = 0;            ///< scale-up and scale-out switches
  std::int64_t links = 0;               ///< full-duplex cables (each is two directed links)
  double bisection_bytes_per_s = 0;     ///< scale-out bisection, one direction
  int diameter_hops = 0;                ///< longest shortest path between accelerators
};

/// A built network. Not thread-safe (the path cache mutates); build one per simulation.
class Topology {
 public:
  /// Builds the network; throws ConfigError naming the bad parameter and its valid range.
  static Topology build(const ClusterNetworkSpec& spec);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  int accelerator_count() const;
  /// Node of a global accelerator index (accelerators are numbered node-major).
  int node_of(int accelerator) const;
  /// All directed links; a cable's two directions are consecutive ids.
  const std::vector<Link>& links() const;
  /// Shortest (fewest-hop) path; cached, so repeated collectives are cheap. Same-node traffic
  /// takes accelerator -> scale-up switch -> accelerator, never a NIC. Other traffic leaves
  /// through the NIC serving the source and enters through the one serving the destination;
  /// inside the fabric, equal-cost choices are made per (src, dst) hash (ECMP-like, see
  /// topologies/routing.hpp). src == dst gives an empty path with zero latency and infinite
  /// bottleneck. Throws ConfigError for an index outside [0, accelerator_count()).
  /// The reference stays valid for the Topology's lifetime.
  const Path& path(int src_accelerator, int dst_accelerator) const;
  /// Counts, scale-out bisection and diameter (computed on each call: BFS per leaf).
  TopologySummary summary() const;
  /// The spec the topology was built from.
  const ClusterNetworkSpec& spec() const;

 private:
  struct Impl;
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A documented parameter of a registered topology (for `clustersim list/describe`).
struct ParameterDoc {
  std::string name, unit, default_value, help;
};

/// A registered scale-out topology builder.
struct TopologyDoc {
  std::string name, help;
  std::vector<ParameterDoc> parameters;
};

/// All registered scale-out topologies, in name order.
const std::vector<TopologyDoc>& topology_registry();

/// Every problem with `spec`, one message each naming the field and its valid range (empty
/// when valid). Topology::build throws a ConfigError joining them with "; ". Checks that need
/// the built shape (e.g. too many NICs for a 2-tier fat-tree) are made by build only.
/// Scale-up bandwidth is only required with more than one accelerator per node, NIC bandwidth
/// only with more than one node (a single node has no scale-out network).
std::vector<std::string> spec_problems(const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
