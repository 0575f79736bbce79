#pragma once
/// Collectives lowered to phases of concurrent flows on the real topology.
///
/// A plan is a base latency (launch + completion sync) followed by phases. In a phase all
/// flows run at once; the phase costs its fixed latency (steps x (slowest flow path latency +
/// protocol step latency)) plus the time its flows take to move their bytes. Phase k+1 starts
/// when phase k is done. Flow bytes are wire bytes: payload / protocol efficiency, so that the
/// analytical and flow evaluators see the same protocol overhead. Links carry their payload
/// rate (line rate x efficiency, topologies::Link). Under LL128 a flow's rate is capped at the
/// accelerator's LL128 ceiling shared equally by the flows its source sends in that phase.
///
/// Lowerings (n ranks in group order, S = nccl-tests bytes, see collective_kind.hpp):
///   ring          all-reduce: 1 phase, g[i]->g[i+1] carries 2(n-1)/n S, 2(n-1) steps;
///                 all-gather, reduce-scatter: (n-1)/n S, n-1 steps. A group over d >= 2
///                 scale-up domains of m >= 2 ranks each runs m channels, as NCCL does: channel
///                 c visits every domain's ranks rotated by c (it enters domain k at its c-th
///                 rank and leaves from its (c-1)-th), carries S/m, and hashes its routes with
///                 flow key c, so the m channels leave each domain through m different NICs;
///                 broadcast (reduce): the
///                 chain g[0]->...->g[n-1] (reversed) carries S per hop, n-1 steps;
///                 send-recv: g[0]->g[1] carries S, 1 step.
///   tree          all-reduce: two heap-shaped binary trees (positions p -> g[p] and
///                 g[n-1-p]), each reducing then broadcasting S/2 on every edge in both
///                 directions, 1 phase of 2 floor(log2 n) steps; broadcast/reduce: one tree, S.
///   halving-doubling  (n = 2^k) reduce-scatter: phases at distance n/2, n/4 .. 1 exchanging
///                 S/2, S/4 .. S/n; all-gather: the reverse; all-reduce: both; 1 step each.
///   hierarchical  all-reduce over d scale-up domains of m ranks: ring reduce-scatter in each
///                 domain ((m-1)/m S), ring all-reduce among the j-th ranks of every domain
///                 (2(d-1)/d S/m, one ring per j, all at once), ring all-gather in each domain.
///   nvls          all-reduce inside one NVSwitch domain: every GPU sends S into the switch and
///                 receives S from it (modelled as neighbour flows of S), 2 steps.
///   sharp         hierarchical with the middle phase done by the scale-out switches: each
///                 rail rank sends S/m up and receives S/m down, 2 steps.
///   torus-rings   all-reduce on a torus of dims d_0..d_k-1 (D of them of size >= 2): the
///                 data split into D shares, share j reduce-scattering along the dimensions in
///                 the order j, j+1, ... (data shrinks by d_i at each), then all-gathering back;
///                 the D shares run at once, each stage on D different dimensions, so all
///                 links work (1 phase per stage, max d_i - 1 steps); a dimension of >= 3 runs
///                 bidirectional rings (half each way round), as XLA does on TPU ICI.
///   (mesh)        on a full-mesh scale-up fabric (xgmi-mesh, ethernet-mesh) a ring
///                 collective inside one domain splits its data over the edge-disjoint
///                 Hamiltonian cycles of the group (n - 1 for n ranks, 2 for 4, 4 for 6;
///                 mesh_rings.hpp), each on its own links, as RCCL runs one channel per xGMI
///                 link; the hierarchical algorithm's in-domain phases do the same; across
///                 domains of an even m ranks channel c walks the c-th of m disjoint Hamiltonian
///                 paths; pairwise all-to-all sends to every peer at once (1 phase, n-1 steps).
///   pairwise      all-to-all: n-1 phases, in phase k rank i sends S/n to rank i+k.
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "models/comm/comm_tuning.hpp"
#include "topologies/topology.hpp"

namespace clustersim::models {

/// One transfer of a phase, between global accelerator indices.
struct FlowSpec {
  int src = 0;
  int dst = 0;
  double bytes = 0;  ///< wire bytes (payload / protocol efficiency)
  std::uint64_t flow_key = 0;  ///< route choice (Topology::path); the channel index
  /// Wire bytes/s this flow may not exceed (protocol ceiling); infinity: none.
  double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity();
};

/// Flows that run concurrently, plus the phase's fixed latency.
struct Phase {
  std::vector<FlowSpec> flows;
  int steps = 0;               ///< algorithm steps (latency terms) of the phase
  double fixed_latency_s = 0;  ///< steps x (max flow path latency + step latency)
};

/// A lowered collective.
struct CollectivePlan {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int ranks = 0;
  double payload_bytes = 0;  ///< S (nccl-tests convention)
  double base_latency_s = 0;
  std::vector<Phase> phases;
};

/// Lowers collectives on one topology (which must outlive it).
class CollectiveLowering {
 public:
  /// Throws ConfigError for bad `params` (check_tuner_params) or `hardware`.
  CollectiveLowering(const topologies::Topology& topology, TunerParams params, CollectiveHardware hardware);

  /// Empty when `algorithm` can run `kind` on `group`, else why not (e.g. "nvls needs every
  /// rank in one NVSwitch domain"). Does not check the group itself (see check_group).
  std::string inapplicable_reason(CollectiveKind kind, Algorithm algorithm, std::span<const int> group) const;

  /// Protocols `algorithm` can use: NVLS and SHARP only Simple, the others LL, LL128, Simple.
  std::vector<Protocol> protocols(Algorithm algorithm) const;

  /// Payload fraction of the wire bytes for (algorithm, protocol): the protocol's
  /// (protocol_payload_fraction), or nvls_efficiency for NVLS.
  double efficiency(Algorithm algorithm, Protocol protocol) const;

  /// Ring channels of `group` (see the ring lowering): m when the group spans >= 2 scale-up
  /// domains with the same m >= 2 ranks in each, else 1 (a group inside one mesh domain has
  /// its rings from ring_orders instead).
  int ring_channels(std::span<const int> group) const;

  /// The rings a ring collective on `group` splits its data over equally, each a visiting
  /// order of every rank of the group: the group itself; its channels (ring_channels); or,
  /// inside one mesh domain, its edge-disjoint Hamiltonian cycles (mesh_rings.hpp: n - 1 of
  /// them for n ranks, 2 for n = 4, 4 for n = 6).
  std::vector<std::vector<int>> ring_orders(std::span<const int> group) const;

  /// True when the scale-up fabric is a mesh and every rank of `group` is in one domain.
  bool in_one_mesh_domain(std::span<const int> group) const;

  /// Throws ConfigError unless the group has >= 2 distinct accelerators in range (exactly 2
  /// for send-recv) and bytes is finite and > 0.
  void check_group(CollectiveKind kind, std::span<const int> group, double bytes) const;

  /// The plan. Throws ConfigError for a bad group or bytes, or an inapplicable algorithm
  /// (message names the reason and the algorithms that can run `kind` on this group).
  CollectivePlan lower(CollectiveKind kind, Algorithm algorithm, Protocol protocol,
                       std::span<const int> group, double bytes) const;

  const topologies::Topology& topology() const { return *topology_; }
  const TunerParams& params() const { return params_; }
  const CollectiveHardware& hardware() const { return hardware_; }

 private:
  std::vector<int> torus_dims_for(std::size_t ranks) const;
  /// disjoint_hamiltonian_rings(ranks), searched once per size.
  const std::vector<std::vector<int>>& mesh_rings(std::size_t ranks) const;

  const topologies::Topology* topology_;
  TunerParams params_;
  CollectiveHardware hardware_;
  /// Looked up, never iterated in a way that reaches results (a std::map: ordered anyway).
  mutable std::map<std::size_t, std::vector<std::vector<int>>> mesh_rings_;
};

}  // namespace clustersim::models
