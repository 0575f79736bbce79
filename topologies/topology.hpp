#pragma once
/// The cluster network as a directed graph (Boost.Graph): accelerators, scale-up switches,
/// scale-out switches, and one directed edge per direction of every full-duplex cable.
#include <cstdint>
#include <span>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::topologies {

/// What a vertex of the network graph is. A `nic` vertex exists only when a node has fewer
/// NICs than accelerators (the NIC then hangs off the node's scale-up switch).
enum class VertexKind { accelerator, scale_up_switch, switch_, nic };

/// Scale-up domain: one node, or several nodes on one NVLink switch. The fabric inside it is a
/// switch (NVSwitch / NVLink switch trays, or a PCIe switch tree) or a full mesh of
/// point-to-point links (AMD Infinity Fabric xGMI, Gaudi's integrated RoCE ports).
/// The defaults are the scenario's (`cluster.node.scale_up`, declared in topology_keys.cpp).
struct ScaleUpSpec {
  /// "nvswitch", "ualink" or "pcie" (one switch per domain), "xgmi-mesh" or "ethernet-mesh" (one
  /// point-to-point cable between every pair of the domain's accelerators).
  std::string fabric = "nvswitch";
  /// Per accelerator, one direction, over all its scale-up links. On a mesh of D accelerators
  /// each pair's cable carries bytes_per_s / (D - 1) per direction (MI300X: 448 GB/s = 7 x 64).
  double bytes_per_s = 0;
  double latency_s = 1e-6;          ///< accelerator -> accelerator (through the switch, or one mesh link)
  /// Accelerators per scale-up domain; 0 means one node (accelerators_per_node). A multiple
  /// of accelerators_per_node dividing the cluster, e.g. 72 for NVL72 (18 nodes of 4 GPUs):
  /// accelerators of one domain talk over its NVLink switch, never over a NIC.
  int domain_size = 0;
  /// Achievable payload fraction of bytes_per_s (protocol headers, flow control, SM-driven
  /// copies), in (0, 1]: collectives and the flow model see bytes_per_s x efficiency.
  double efficiency = 0.8;

  /// True for the full-mesh fabrics ("xgmi-mesh", "ethernet-mesh").
  bool is_mesh() const { return is_mesh_fabric(fabric); }
  /// True for any fabric name this library builds.
  static bool known_fabric(std::string_view name) {
    return name == "nvswitch" || name == "pcie" || name == "ualink" || is_mesh_fabric(name);
  }
  static bool is_mesh_fabric(std::string_view name) { return name == "xgmi-mesh" || name == "ethernet-mesh"; }
};

/// One entry of `cluster.network.faults` (topologies/link_faults.hpp resolves it): a cable
/// degraded or down, or a switch down, from a simulated time on. Names are the topology's
/// (Topology::vertex_name): a cable is "a-b" by its two vertices (every parallel cable between
/// them), a switch by its own name.
struct LinkFaultSpec {
  std::string link;         ///< a cable "a-b" (e.g. "leaf0-spine1"); empty when `switch_name` is set
  std::string switch_name;  ///< a switch whose every cable goes down (e.g. "spine0"); or empty
  double at_s = 0;          ///< when the fault starts, seconds of simulated time from the run's start
  std::optional<double> until_s;  ///< a degraded cable's recovery time; unset: to the end of the run
  /// Capacity left, as a fraction of the nominal payload rate, in [0, 1): 0 = down (its
  /// traffic reroutes after the reroute delay), 0.5 = degraded to half.
  double bandwidth_fraction = 0;
  bool operator==(const LinkFaultSpec&) const = default;
};

/// Scale-out fabric between nodes. The defaults are the scenario's (`cluster.network`, declared
/// in topology_keys.cpp).
struct ScaleOutSpec {
  /// Registry name: "custom", "dragonfly", "fat-tree", "rail-optimized", "switch", "torus".
  std::string topology = "fat-tree";
  int tiers = 2;                      ///< fat-tree tiers (2 or 3)
  int radix = 64;                     ///< switch ports (fat-tree, rail-optimized)
  double oversubscription = 1.0;      ///< downlink:uplink port ratio at the leaf tier (>= 1)
  /// Downlink:uplink port ratio of the aggregation tier of a 3-tier fat-tree (>= 1).
  double aggregation_oversubscription = 1.0;
  int nics_per_node = 8;              ///< NICs per node; NIC i serves accelerator i*(per_node/nics)
  double nic_bytes_per_s = 0;         ///< per NIC, one direction
  /// Switch-to-switch (and torus chip-to-chip) link bandwidth, one direction; 0 means
  /// nic_bytes_per_s.
  double link_bytes_per_s = 0;
  double link_latency_s = 1e-6;       ///< per hop (cable + switch traversal)
  /// Achievable payload fraction of every scale-out link (NIC, switch-to-switch, torus and
  /// custom links), in (0, 1]: 47 of 50 GB/s per NDR NIC (nccl-tests#290).
  double efficiency = 0.94;
  std::vector<int> torus_dims;        ///< torus: size per dimension (1 to 3 entries)
  int dragonfly_groups = 0;                   ///< dragonfly: groups
  int dragonfly_routers_per_group = 0;        ///< dragonfly: routers per group
  int dragonfly_terminals_per_router = 0;     ///< dragonfly: NIC ports per router
  int dragonfly_global_links_per_router = 0;  ///< dragonfly: inter-group ports per router
  std::string custom_file;  ///< custom: edge-list file (absolute, or relative to the process)
  /// How a route picks among equal-cost choices: "ecmp" hashes each flow (source, destination,
  /// channel), as Ethernet/RoCE switches do; "d-mod-k" routes by the destination alone, as
  /// InfiniBand's subnet manager does: in fat-tree, rail-optimized and switch fabrics each hop
  /// takes the destination endpoint's index modulo the candidates (then divided by them for
  /// the next hop), so every flow to one NIC takes the same route and a shift pattern (rings)
  /// gets disjoint uplinks; dragonflies, tori and custom networks key their own equal-cost
  /// choice by the destination instead of the flow. "spray": packet spraying (Ultra Ethernet's
  /// multipath transport, Spectrum-X adaptive routing): a flow between nodes is split into
  /// `spray_paths` equal subflows, each on its own hashed equal-cost route (ECMP's hash with a
  /// subflow index), so one flow's bytes spread over the fabric's uplinks.
  std::string routing = "ecmp";
  /// Subflows per flow between nodes under routing "spray" (>= 1): the more, the closer to a
  /// perfect spread and the more flows to solve.
  int spray_paths = 16;
  /// Not a shipping fabric: what is projected and from which announcement (a feasibility preset,
  /// models/data/projected); a run says so in a notice. Empty: none.
  std::string projected;
  /// Rail-optimized fabrics with one NIC per accelerator: a transfer between accelerators on
  /// different rails of different nodes first crosses the scale-up fabric to the accelerator of
  /// its own node on the destination's rail, then leaves by that accelerator's NIC, so it stays
  /// in one rail plane (NCCL's PXN, on by default since NCCL 2.12: NCCL_P2P_PXN_LEVEL=2).
  /// false: every transfer leaves by its source's own NIC and crosses rails in the fabric.
  bool pxn = true;
  /// Degraded and failed cables and switches, by entry name (`cluster.network.faults`).
  std::map<std::string, LinkFaultSpec> faults;
  /// How traffic leaves a failed cable or switch: "ecmp" (routers re-hash each flow over the
  /// equal-cost next hops that survive), "subnet-manager" (the subnet manager recomputes d-mod-k
  /// over the survivors); "" = by `routing` (ecmp -> ecmp, d-mod-k -> subnet-manager).
  std::string reroute;
  /// Time from a failure to the rerouted paths, seconds; unset: the policy's default
  /// (topologies/link_faults.hpp).
  std::optional<double> reroute_delay_s;

  /// link_bytes_per_s, or nic_bytes_per_s when unset.
  double fabric_link_bytes_per_s() const { return link_bytes_per_s > 0 ? link_bytes_per_s : nic_bytes_per_s; }
};

/// Whole cluster: `nodes` nodes of `accelerators_per_node` accelerators.
struct ClusterNetworkSpec {
  int nodes = 1;
  int accelerators_per_node = 8;
  ScaleUpSpec scale_up;
  ScaleOutSpec scale_out;

  /// Accelerators per scale-up domain: scale_up.domain_size, or one node when it is 0.
  int scale_up_domain_size() const { return scale_up.domain_size > 0 ? scale_up.domain_size : accelerators_per_node; }
};

/// Index of a directed link in Topology::links().
using LinkId = std::int32_t;

/// One direction of a cable.
struct Link {
  std::int32_t from = 0;  ///< vertex index
  std::int32_t to = 0;    ///< vertex index
  double bytes_per_s = 0;  ///< line rate, one direction
  double latency_s = 0;
  /// 0 = scale-up; fat-tree/rail-optimized/switch: 1 = accelerator/NIC to leaf, 2 = leaf to
  /// spine/aggregation, 3 = aggregation to core; dragonfly: 1 = terminal, 2 = local, 3 =
  /// global; torus: 1 + dimension; custom: 1.
  int tier = 0;
  /// Achievable payload fraction of the line rate, in (0, 1] (ScaleUpSpec/ScaleOutSpec
  /// efficiency by tier).
  double efficiency = 1.0;
  /// Payload bytes per second the link sustains: bytes_per_s x efficiency.
  double payload_bytes_per_s() const { return bytes_per_s * efficiency; }
};

/// A route between two accelerators.
struct Path {
  std::vector<LinkId> links;
  double latency_s = 0;                   ///< sum of link latencies
  double bottleneck_bytes_per_s = 0;      ///< slowest link on the path (line rate)
  double bottleneck_payload_bytes_per_s = 0;  ///< smallest payload_bytes_per_s on the path
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
  /// The route from one accelerator to another; cached, so repeated collectives are cheap.
  /// Same-domain traffic takes accelerator -> scale-up switch -> accelerator, never a NIC
  /// (a domain is a node unless scale_up.domain_size groups several). Other traffic leaves
  /// through the NIC serving the source and enters through the one serving the destination;
  /// inside the fabric, fat-trees, rail-optimized and switch fabrics take a fewest-hop route
  /// (ECMP, topologies/routing.hpp) and dragonflies a minimal local-global-local one
  /// (topologies/dragonfly.hpp). Tori route in dimension order (topologies/torus.hpp) and
  /// custom networks by fewest hops over every vertex, both between accelerators directly
  /// (no NVSwitch, no NICs). src == dst gives an empty path with zero latency and infinite
  /// bottleneck. Throws ConfigError for an index outside [0, accelerator_count()).
  /// `flow_key` selects among equal-cost routes (ECMP hashed per flow): 0 is the per-pair
  /// default; other keys re-hash the choice and are cached separately, so keep the set of
  /// keys small (e.g. a channel index). Tori (dimension-order) and dragonflies (minimal
  /// local-global-local) use it only where they too have equal-cost choices.
  /// The reference stays valid for the Topology's lifetime.
  const Path& path(int src_accelerator, int dst_accelerator, std::uint64_t flow_key = 0) const;
  /// Scale-up domain of an accelerator (accelerators of one domain share an NVLink switch;
  /// domains are numbered from 0 in accelerator order). On torus and custom networks, which
  /// have no scale-up switch, every accelerator is its own domain (the result is its index).
  /// Throws ConfigError for an index outside [0, accelerator_count()).
  int scale_up_domain_of(int accelerator) const;
  /// True when the scale-up domains are full meshes of point-to-point links (ScaleUpSpec::
  /// is_mesh, domains of two or more accelerators, not a torus or custom network).
  bool scale_up_mesh() const;
  /// Counts, bisection and diameter (computed on each call: BFS per leaf; for custom
  /// networks a max-flow between the accelerator halves and a BFS per accelerator).
  TopologySummary summary() const;
  /// The spec the topology was built from.
  const ClusterNetworkSpec& spec() const;

  /// Vertices of the network graph (accelerators, scale-up switches, NICs, fabric switches).
  int vertex_count() const;
  /// The name of a vertex, as scenarios write it: accelerators `gpuN` (global index), a
  /// scale-up domain's switch `nvswitchD` (`pciD` on PCIe), a shared NIC `nicE` (endpoint
  /// index, node-major), fabric switches by tier and kind in build order: fat-tree and
  /// rail-optimized `leafI`, `spineI` (2 tiers) or `aggI` (3 tiers), `coreI`; `switch0` (switch);
  /// `routerI` (dragonfly); a custom network's switches by their names in its file. Throws
  /// ConfigError for an index out of range.
  std::string vertex_name(int vertex) const;
  /// The vertex named `name`, or nullopt.
  std::optional<int> find_vertex(std::string_view name) const;
  /// True for scale-up and scale-out switches.
  bool is_switch(int vertex) const;
  /// Every cable as "a-b" (its vertices' names, in the order it was built), one per pair of
  /// vertices however many parallel cables join them: the names `cluster.network.faults` take.
  std::vector<std::string> cable_names() const;
  /// The directed links of every cable between vertices `a` and `b` (both directions), ascending.
  std::vector<LinkId> links_between(int a, int b) const;
  /// The directed links of every cable at `vertex` (both directions), ascending.
  std::vector<LinkId> links_at(int vertex) const;

  /// True when routes can avoid failed links: fat-tree, rail-optimized, switch and custom
  /// networks route by fewest hops (SwitchRouter); dragonfly (minimal routing) and torus
  /// (dimension order) have no detour in this model.
  bool can_reroute() const;
  /// Routes over the links that survive `failed` (directed link ids; fail both directions of a
  /// cable). `by_destination`: d-mod-k over the survivors (the subnet manager's reroute);
  /// otherwise each flow's ECMP hash over the equal-cost next hops that survive. Throws
  /// ConfigError if !can_reroute() or a link id is unknown.
  class SurvivingRoutes;
  std::unique_ptr<SurvivingRoutes> surviving_routes(std::span<const LinkId> failed, bool by_destination) const;

 private:
  struct Impl;
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Routes of a Topology over the links that survive a set of failed ones
/// (Topology::surviving_routes). A route that crosses no failed link is kept as it is (flows
/// that do not cross a failed element keep their path, as with resilient hashing); one that
/// does is recomputed over the survivors with the same flow hash or destination. Caches its
/// routes; the Topology must outlive it. Not thread-safe.
class Topology::SurvivingRoutes {
 public:
  ~SurvivingRoutes();
  /// True if directed link `link` has failed.
  bool failed(LinkId link) const;
  /// True if any link of `links` has failed.
  bool crosses_failed(std::span<const LinkId> links) const;
  /// The route from `src` to `dst` (accelerators; `flow_key` as for Topology::path) over the
  /// survivors, or nullptr when no route survives (the network is partitioned between them).
  /// The pointer stays valid for this object's lifetime.
  const Path* path(int src, int dst, std::uint64_t flow_key = 0) const;

  struct Impl;
  explicit SurvivingRoutes(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

/// Every problem with `spec`, one message each naming the field and its valid range (empty
/// when valid). Topology::build throws a ConfigError joining them with "; ". Checks that need
/// the built shape (e.g. too many NICs for a 2-tier fat-tree) are made by build only.
/// Scale-up bandwidth is only required with more than one accelerator per node, NIC bandwidth
/// only with more than one node (a single node has no scale-out network).
std::vector<std::string> spec_problems(const ClusterNetworkSpec& spec);

}  // namespace clustersim::topologies
