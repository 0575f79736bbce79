#include "models/comm/collective_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "models/comm/mesh_rings.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

bool is_power_of_two(std::size_t n) { return n > 0 && (n & (n - 1)) == 0; }

int floor_log2(std::size_t n) {
  int log = 0;
  while (n > 1) {
    n >>= 1;
    ++log;
  }
  return log;
}

/// Ranks of `group` grouped by scale-up domain, domains in order of first appearance.
std::vector<std::vector<int>> by_domain(const topologies::Topology& topology, std::span<const int> group) {
  std::vector<std::vector<int>> domains;
  std::map<int, std::size_t> index_of;
  for (const int rank : group) {
    const int domain = topology.scale_up_domain_of(rank);
    const auto [it, inserted] = index_of.emplace(domain, domains.size());
    if (inserted) domains.emplace_back();
    domains[it->second].push_back(rank);
  }
  return domains;
}

bool uniform_domains(const std::vector<std::vector<int>>& domains) {
  return std::all_of(domains.begin(), domains.end(),
                     [&](const std::vector<int>& d) { return d.size() == domains.front().size(); });
}

/// Builds phases: converts payload to wire bytes, computes the fixed latency and applies the
/// per-source rate ceiling (wire bytes/s shared equally by a source's flows of one phase).
class PhaseBuilder {
 public:
  PhaseBuilder(const topologies::Topology& topology, double efficiency, double step_latency_s,
               double source_cap_wire_bytes_per_s)
      : topology_(topology),
        efficiency_(efficiency),
        step_latency_s_(step_latency_s),
        source_cap_(source_cap_wire_bytes_per_s) {}

  void ring(std::span<const int> ranks, double payload_bytes, bool close_ring = true, std::uint64_t flow_key = 0) {
    const std::size_t n = ranks.size();
    if (n < 2) return;
    const std::size_t hops = close_ring ? n : n - 1;
    for (std::size_t i = 0; i < hops; ++i) flow(ranks[i], ranks[(i + 1) % n], payload_bytes, flow_key);
  }
  void flow(int src, int dst, double payload_bytes, std::uint64_t flow_key = 0) {
    FlowSpec spec;
    spec.src = src;
    spec.dst = dst;
    spec.bytes = payload_bytes / efficiency_;
    spec.flow_key = flow_key;
    current_.flows.push_back(spec);
  }
  /// Closes the current phase with `steps` latency terms (drops it when it has no flows).
  void end_phase(int steps) {
    if (current_.flows.empty()) return;
    double path_latency_s = 0;
    for (const FlowSpec& f : current_.flows) {
      path_latency_s = std::max(path_latency_s, topology_.path(f.src, f.dst, f.flow_key).latency_s);
    }
    if (std::isfinite(source_cap_)) {
      std::map<int, int> flows_from;
      for (const FlowSpec& f : current_.flows) ++flows_from[f.src];
      for (FlowSpec& f : current_.flows) f.rate_cap_bytes_per_s = source_cap_ / flows_from[f.src];
    }
    current_.steps = steps;
    current_.fixed_latency_s = steps * (path_latency_s + step_latency_s_);
    phases_.push_back(std::move(current_));
    current_ = Phase{};
  }
  std::vector<Phase> take() { return std::move(phases_); }

 const topologies::Topology& topology() const { return topology_; }

 private:
  const topologies::Topology& topology_;
  double efficiency_;
  double step_latency_s_;
  double source_cap_;
  Phase current_;
  std::vector<Phase> phases_;
};

// The phases of each algorithm (CollectiveLowering::lower checked that it applies).

/// `orders`: the ring(s) the data is split over equally (collective_plan.hpp); the i-th
/// carries its share with flow key i.
void lower_ring(PhaseBuilder& phases, CollectiveKind kind, std::span<const int> group, double bytes,
                const std::vector<std::vector<int>>& orders) {
  using K = CollectiveKind;
  const std::size_t n = group.size();
  const double nd = static_cast<double>(n);
  const int n_steps = static_cast<int>(n) - 1;
  if (kind == K::all_reduce || kind == K::all_gather || kind == K::reduce_scatter) {
    const double per_rank = kind == K::all_reduce ? 2.0 * (nd - 1) / nd * bytes : (nd - 1) / nd * bytes;
    const double share = per_rank / static_cast<double>(orders.size());
    for (std::size_t c = 0; c < orders.size(); ++c) phases.ring(orders[c], share, true, c);
    phases.end_phase(kind == K::all_reduce ? 2 * n_steps : n_steps);
  } else if (kind == K::broadcast) {
    phases.ring(group, bytes, /*close_ring=*/false);
    phases.end_phase(n_steps);
  } else if (kind == K::reduce) {
    std::vector<int> reversed(group.rbegin(), group.rend());
    phases.ring(reversed, bytes, /*close_ring=*/false);
    phases.end_phase(n_steps);
  } else {  // send-recv
    phases.flow(group[0], group[1], bytes);
    phases.end_phase(1);
  }
}

void lower_tree(PhaseBuilder& phases, CollectiveKind kind, std::span<const int> group, double bytes) {
  const std::size_t n = group.size();
  const int depth = floor_log2(n);
  const auto tree_edges = [&](bool mirrored, double edge_bytes, bool up, bool down) {
    const auto rank_at = [&](std::size_t p) { return mirrored ? group[n - 1 - p] : group[p]; };
    for (std::size_t p = 1; p < n; ++p) {
      const int child = rank_at(p);
      const int parent = rank_at((p - 1) / 2);
      if (up) phases.flow(child, parent, edge_bytes);
      if (down) phases.flow(parent, child, edge_bytes);
    }
  };
  if (kind == CollectiveKind::all_reduce) {
    tree_edges(false, bytes / 2, true, true);
    tree_edges(true, bytes / 2, true, true);
    phases.end_phase(2 * depth);
  } else {
    tree_edges(false, bytes, kind == CollectiveKind::reduce, kind == CollectiveKind::broadcast);
    phases.end_phase(depth);
  }
}

void lower_halving_doubling(PhaseBuilder& phases, CollectiveKind kind, std::span<const int> group, double bytes) {
  using K = CollectiveKind;
  const std::size_t n = group.size();
  const double nd = static_cast<double>(n);
  const auto exchange = [&](std::size_t distance, double each_bytes) {
    for (std::size_t i = 0; i < n; ++i) phases.flow(group[i], group[i ^ distance], each_bytes);
    phases.end_phase(1);
  };
  if (kind == K::all_reduce || kind == K::reduce_scatter) {
    for (std::size_t d = n / 2; d >= 1; d /= 2) exchange(d, bytes * static_cast<double>(d) / nd);
  }
  if (kind == K::all_reduce || kind == K::all_gather) {
    for (std::size_t d = 1; d < n; d *= 2) exchange(d, bytes * static_cast<double>(d) / nd);
  }
}

/// Reduce-scatter in each scale-up domain, the domains' shares across them (rings, or SHARP in
/// the switches), all-gather in each domain.
/// `domain_rings(domain)`: the rings a domain's reduce-scatter and all-gather are split over.
template <typename DomainRings>
void lower_hierarchical(PhaseBuilder& phases, bool sharp, std::span<const int> group, double bytes,
                        const DomainRings& domain_rings) {
  const auto domains = by_domain(phases.topology(), group);
  const std::size_t m = domains.front().size();
  const double md = static_cast<double>(m);
  const double dd = static_cast<double>(domains.size());
  const int m_steps = static_cast<int>(m) - 1;
  const auto in_domains = [&] {
    for (const auto& domain : domains) {
      const auto rings = domain_rings(domain);
      for (const auto& ring : rings) phases.ring(ring, (md - 1) / md * bytes / static_cast<double>(rings.size()));
    }
    phases.end_phase(m_steps);
  };
  in_domains();
  for (std::size_t j = 0; j < m; ++j) {
    std::vector<int> rail;
    for (const auto& domain : domains) rail.push_back(domain[j]);
    if (sharp) {
      phases.ring(rail, bytes / md);
    } else {
      phases.ring(rail, 2.0 * (dd - 1) / dd * bytes / md);
    }
  }
  phases.end_phase(sharp ? 2 : 2 * (static_cast<int>(domains.size()) - 1));
  in_domains();
}

/// All-reduce on a torus as XLA runs it over several mesh axes: the data is split into one
/// share per dimension of size >= 2, and share j reduce-scatters along the dimensions in the
/// order j, j+1, ... (rotated), then all-gathers back in reverse; at every stage the shares
/// work on different dimensions at once, so every dimension's links carry data all the time.
void lower_torus_rings(PhaseBuilder& phases, const std::vector<int>& dims, std::span<const int> group, double bytes) {
  const std::size_t n = group.size();
  // Rank at group index i has coordinate (i / stride_k) mod d_k, dimension 0 fastest. As XLA
  // does on a TPU torus, a dimension of 3 or more runs a bidirectional ring: half the data
  // each way round, on both links to the neighbours; a dimension of 2 has one cable per pair,
  // whose two directions one ring already uses.
  const auto rings_of = [&](std::size_t k, double each_bytes) {
    std::size_t stride = 1;
    for (std::size_t j = 0; j < k; ++j) stride *= static_cast<std::size_t>(dims[j]);
    const auto dk = static_cast<std::size_t>(dims[k]);
    const bool both_ways = dk >= 3;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t coord = (i / stride) % dk;
      const std::size_t next = i - coord * stride + ((coord + 1) % dk) * stride;
      const std::size_t previous = i - coord * stride + ((coord + dk - 1) % dk) * stride;
      phases.flow(group[i], group[next], both_ways ? each_bytes / 2 : each_bytes);
      if (both_ways) phases.flow(group[i], group[previous], each_bytes / 2);
    }
  };
  std::vector<std::size_t> active;  // dimensions with a ring
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] > 1) active.push_back(k);
  }
  const std::size_t shares = active.size();
  // held[j][t]: bytes per chip of share j when it enters stage t of the reduce-scatter.
  std::vector<std::vector<double>> held(shares, std::vector<double>(shares, 0.0));
  std::vector<int> stage_steps(shares, 0);
  const auto dimension_of = [&](std::size_t share, std::size_t stage) { return active[(share + stage) % shares]; };
  for (std::size_t j = 0; j < shares; ++j) held[j][0] = bytes / static_cast<double>(shares);
  for (std::size_t t = 0; t < shares; ++t) {
    for (std::size_t j = 0; j < shares; ++j) {
      const std::size_t k = dimension_of(j, t);
      const double dk = dims[k];
      rings_of(k, (dk - 1) / dk * held[j][t]);
      if (t + 1 < shares) held[j][t + 1] = held[j][t] / dk;
      stage_steps[t] = std::max(stage_steps[t], dims[k] - 1);
    }
    phases.end_phase(stage_steps[t]);
  }
  for (std::size_t t = shares; t-- > 0;) {
    for (std::size_t j = 0; j < shares; ++j) {
      const std::size_t k = dimension_of(j, t);
      const double dk = dims[k];
      rings_of(k, (dk - 1) / dk * held[j][t]);
    }
    phases.end_phase(stage_steps[t]);
  }
}

/// Rounds of NCCL's rotating-pairs p2p schedule (round k: send to rank + k, receive from rank -
/// k) in flight at once: its p2p channels spread over the peers, 32 channels at 2 per peer on
/// Hopper and Blackwell ("32 p2p channels, 2 p2p channels per peer" in NCCL's init log, e.g.
/// NVIDIA/nccl#1680; NCCL_MAX_P2P_NCHANNELS, NCCL_NCHANNELS_PER_NET_PEER).
constexpr std::size_t kConcurrentP2pRounds = 16;

/// `concurrent`: every shift at once (a mesh, where each peer has its own link), else the
/// shifts in windows of kConcurrentP2pRounds, one phase per window: the rounds of a window share
/// the links (a NIC carries every cross-node round of its GPU at once) and each still pays its
/// own latency step, as the serial rounds did.
void lower_pairwise(PhaseBuilder& phases, std::span<const int> group, double bytes, bool concurrent) {
  const std::size_t n = group.size();
  const std::size_t window = concurrent ? n : kConcurrentP2pRounds;
  for (std::size_t first = 1; first < n; first += window) {
    const std::size_t last = std::min(n, first + window);
    for (std::size_t k = first; k < last; ++k) {
      for (std::size_t i = 0; i < n; ++i) phases.flow(group[i], group[(i + k) % n], bytes / static_cast<double>(n));
    }
    phases.end_phase(static_cast<int>(last - first));
  }
}

}  // namespace

CollectiveLowering::CollectiveLowering(const topologies::Topology& topology, TunerParams params,
                                       CollectiveHardware hardware)
    : topology_(&topology), params_(std::move(params)), hardware_(hardware) {
  check_tuner_params(params_);
  check_collective_hardware(hardware_);
}

std::vector<int> CollectiveLowering::torus_dims_for(std::size_t ranks) const {
  std::vector<int> dims = params_.torus_dims;
  if (dims.empty() && topology_->spec().scale_out.topology == "torus") dims = topology_->spec().scale_out.torus_dims;
  std::size_t product = 1;
  for (const int d : dims) product *= static_cast<std::size_t>(d);
  if (dims.empty() || product != ranks) return {};
  return dims;
}

std::string CollectiveLowering::inapplicable_reason(CollectiveKind kind, Algorithm algorithm,
                                                    std::span<const int> group) const {
  using K = CollectiveKind;
  const std::string op(collective_name(kind));
  const std::string name(algorithm_name(algorithm));
  const auto only = [&](std::initializer_list<K> kinds) -> std::string {
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return "";
    std::string list;
    for (const K k : kinds) list += (list.empty() ? "" : ", ") + std::string(collective_name(k));
    return fmt::format("{} runs only {}, not {}", name, list, op);
  };
  switch (algorithm) {
    case Algorithm::ring:
      return only({K::all_reduce, K::all_gather, K::reduce_scatter, K::broadcast, K::reduce, K::send_recv});
    case Algorithm::tree: return only({K::all_reduce, K::broadcast, K::reduce});
    case Algorithm::halving_doubling: {
      auto reason = only({K::all_reduce, K::all_gather, K::reduce_scatter});
      if (reason.empty() && !is_power_of_two(group.size())) {
        reason = fmt::format("halving-doubling needs a power-of-two rank count, got {}", group.size());
      }
      return reason;
    }
    case Algorithm::hierarchical:
    case Algorithm::sharp: {
      auto reason = only({K::all_reduce});
      if (!reason.empty()) return reason;
      if (algorithm == Algorithm::sharp && !params_.scale_out_sharp) {
        return "sharp needs scale-out switches with SHARP (comm scale_out_sharp is off)";
      }
      const auto domains = by_domain(*topology_, group);
      if (domains.size() < 2) return fmt::format("{} needs ranks in at least 2 scale-up domains", name);
      if (!uniform_domains(domains)) return fmt::format("{} needs the same rank count in every scale-up domain", name);
      return "";
    }
    case Algorithm::nvls: {
      auto reason = only({K::all_reduce});
      if (!reason.empty()) return reason;
      if (!hardware_.nvls) return "nvls needs an accelerator with NVLink SHARP (H100, H200, B200)";
      if (topology_->spec().scale_up.fabric != "nvswitch") {
        return fmt::format("nvls needs an NVSwitch scale-up fabric, not {}", topology_->spec().scale_up.fabric);
      }
      if (by_domain(*topology_, group).size() != 1) return "nvls needs every rank in one NVSwitch domain";
      return "";
    }
    case Algorithm::torus_rings: {
      auto reason = only({K::all_reduce});
      if (reason.empty() && torus_dims_for(group.size()).empty()) {
        reason = fmt::format("torus-rings needs torus dimensions whose product is the rank count {}", group.size());
      }
      return reason;
    }
    case Algorithm::pairwise: return only({K::all_to_all});
  }
  return "unknown algorithm";
}

std::vector<Protocol> CollectiveLowering::protocols(Algorithm algorithm) const {
  if (algorithm == Algorithm::nvls || algorithm == Algorithm::sharp) return {Protocol::simple};
  return {Protocol::ll, Protocol::ll128, Protocol::simple};
}

double CollectiveLowering::efficiency(Algorithm algorithm, Protocol protocol) const {
  if (algorithm == Algorithm::nvls) return params_.nvls_efficiency;
  return protocol_payload_fraction(protocol);
}

bool CollectiveLowering::in_one_mesh_domain(std::span<const int> group) const {
  return topology_->scale_up_mesh() && by_domain(*topology_, group).size() == 1;
}

const std::vector<std::vector<int>>& CollectiveLowering::mesh_rings(std::size_t ranks) const {
  auto it = mesh_rings_.find(ranks);
  if (it == mesh_rings_.end()) {
    it = mesh_rings_.emplace(ranks, disjoint_hamiltonian_rings(static_cast<int>(ranks))).first;
  }
  return it->second;
}

std::vector<std::vector<int>> CollectiveLowering::ring_orders(std::span<const int> group) const {
  const auto at = [&](const std::vector<int>& positions, std::span<const int> ranks) {
    std::vector<int> order;
    order.reserve(positions.size());
    for (const int p : positions) order.push_back(ranks[static_cast<std::size_t>(p)]);
    return order;
  };
  if (in_one_mesh_domain(group)) {
    std::vector<std::vector<int>> orders;
    for (const auto& ring : mesh_rings(group.size())) orders.push_back(at(ring, group));
    return orders;
  }
  const int channels = ring_channels(group);
  if (channels == 1) return {std::vector<int>(group.begin(), group.end())};
  const auto domains = by_domain(*topology_, group);
  const auto m = static_cast<std::size_t>(channels);
  // Channel c enters even domains at local rank c and leaves at c - 1; odd domains are
  // walked the other way round (enter at c - 1, leave at c), so every hop between domains
  // joins equal local ranks: the same NIC index, a rail-aligned hop, as NCCL's ring search
  // prefers (NCCL_CROSS_NIC); only an odd domain count closes with one cross-rail hop.
  // On a mesh the walk inside a domain is channel c's Hamiltonian path of a family that uses
  // every directed mesh link once (mesh_rings.hpp; from c to c + m/2, odd domains backwards),
  // so the m channels never share a mesh link.
  const bool mesh_paths = topology_->scale_up_mesh() && m % 2 == 0;
  const auto paths = mesh_paths ? disjoint_hamiltonian_paths(static_cast<int>(m)) : std::vector<std::vector<int>>{};
  std::vector<std::vector<int>> orders;
  for (std::size_t c = 0; c < m; ++c) {
    std::vector<int> order;
    order.reserve(group.size());
    for (std::size_t d = 0; d < domains.size(); ++d) {
      const auto& domain = domains[d];
      for (std::size_t i = 0; i < m; ++i) {
        if (mesh_paths) {
          const auto& path = paths[c];
          order.push_back(domain[static_cast<std::size_t>(d % 2 == 0 ? path[i] : path[m - 1 - i])]);
        } else {
          order.push_back(d % 2 == 0 ? domain[(i + c) % m] : domain[(c + 2 * m - 1 - i) % m]);
        }
      }
    }
    orders.push_back(std::move(order));
  }
  return orders;
}

int CollectiveLowering::ring_channels(std::span<const int> group) const {
  const auto domains = by_domain(*topology_, group);
  if (domains.size() < 2 || !uniform_domains(domains) || domains.front().size() < 2) return 1;
  return static_cast<int>(domains.front().size());
}

void CollectiveLowering::check_group(CollectiveKind kind, std::span<const int> group, double bytes) const {
  const auto op = collective_name(kind);
  if (!std::isfinite(bytes) || bytes <= 0) {
    throw ConfigError(fmt::format("{} bytes must be a finite number > 0, got {}", op, bytes));
  }
  if (group.size() < 2) {
    throw ConfigError(fmt::format("{} needs a group of at least 2 ranks, got {}", op, group.size()));
  }
  if (kind == CollectiveKind::send_recv && group.size() != 2) {
    throw ConfigError(fmt::format("send-recv needs a group of exactly 2 (source, destination), got {}", group.size()));
  }
  std::vector<int> sorted(group.begin(), group.end());
  std::sort(sorted.begin(), sorted.end());
  const int count = topology_->accelerator_count();
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= count) {
      throw ConfigError(fmt::format("{} group has accelerator {} outside [0, {})", op, sorted[i], count));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      throw ConfigError(fmt::format("{} group lists accelerator {} more than once", op, sorted[i]));
    }
  }
}

CollectivePlan CollectiveLowering::lower(CollectiveKind kind, Algorithm algorithm, Protocol protocol,
                                         std::span<const int> group, double bytes) const {
  check_group(kind, group, bytes);
  if (const auto reason = inapplicable_reason(kind, algorithm, group); !reason.empty()) {
    std::string valid;
    for (const Algorithm a : all_algorithms()) {
      if (inapplicable_reason(kind, a, group).empty()) valid += (valid.empty() ? "" : ", ") + std::string(algorithm_name(a));
    }
    throw ConfigError(fmt::format("{}; algorithms that can run {} on these {} ranks: {}", reason,
                                  collective_name(kind), group.size(), valid.empty() ? "none" : valid));
  }
  const auto allowed = protocols(algorithm);
  if (std::find(allowed.begin(), allowed.end(), protocol) == allowed.end()) {
    throw ConfigError(fmt::format("{} cannot use protocol {}", algorithm_name(algorithm), protocol_name(protocol)));
  }
  const double step_latency_s = algorithm == Algorithm::nvls ? params_.nvls_step_latency_s
                                : protocol == Protocol::ll   ? params_.ll_step_latency_s
                                : protocol == Protocol::ll128 ? params_.ll128_step_latency_s
                                                              : params_.simple_step_latency_s;
  const double wire_efficiency = efficiency(algorithm, protocol);
  const double source_cap = protocol == Protocol::ll128 && hardware_.ll128_max_bytes_per_s > 0
                                ? hardware_.ll128_max_bytes_per_s / wire_efficiency
                                : std::numeric_limits<double>::infinity();
  PhaseBuilder phases(*topology_, wire_efficiency, step_latency_s, source_cap);
  switch (algorithm) {
    case Algorithm::ring: lower_ring(phases, kind, group, bytes, ring_orders(group)); break;
    case Algorithm::tree: lower_tree(phases, kind, group, bytes); break;
    case Algorithm::halving_doubling: lower_halving_doubling(phases, kind, group, bytes); break;
    case Algorithm::hierarchical:
    case Algorithm::sharp:
      lower_hierarchical(phases, algorithm == Algorithm::sharp, group, bytes,
                         [&](const std::vector<int>& domain) { return ring_orders(domain); });
      break;
    case Algorithm::nvls:
      phases.ring(group, bytes);
      phases.end_phase(2);
      break;
    case Algorithm::torus_rings: lower_torus_rings(phases, torus_dims_for(group.size()), group, bytes); break;
    case Algorithm::pairwise: lower_pairwise(phases, group, bytes, in_one_mesh_domain(group)); break;
  }
  CollectivePlan plan;
  plan.kind = kind;
  plan.algorithm = algorithm;
  plan.protocol = protocol;
  plan.ranks = static_cast<int>(group.size());
  plan.payload_bytes = bytes;
  plan.base_latency_s = params_.base_latency_s(protocol);
  plan.phases = phases.take();
  return plan;
}

}  // namespace clustersim::models
