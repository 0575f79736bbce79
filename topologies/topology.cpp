#include "topologies/topology.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"
#include "topologies/direct_network.hpp"
#include "topologies/min_cut.hpp"
#include "topologies/network_graph.hpp"
#include "topologies/nic_attachment.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"
#include "topologies/scale_out_fabric.hpp"
#include "topologies/scale_up.hpp"

namespace clustersim::topologies {

struct Topology::Impl {
  ClusterNetworkSpec spec;
  bool route_by_destination = false;  ///< spec.scale_out.routing == "d-mod-k"
  NetworkGraph graph;
  ScaleUpDomains scale_up;
  ScaleOutEndpoints endpoints;
  std::optional<ScaleOutFabric> fabric;  ///< absent for a single node and direct networks
  std::optional<DirectNetwork> direct;   ///< torus, custom: no scale-up switch, no NICs
  std::unique_ptr<FabricRouter> router;  ///< the fabric's or direct network's router
  /// Looked up, never iterated, so their order cannot reach results. Keyed by (src, dst);
  /// the second map also by flow key.
  mutable std::unordered_map<std::uint64_t, Path> path_cache;
  mutable std::unordered_map<std::uint64_t, std::unordered_map<std::uint64_t, Path>> flow_path_cache;

  int accelerators() const {
    return static_cast<int>(direct ? direct->accelerator_vertex.size() : scale_up.accelerator_vertex.size());
  }
  int node_of(int accelerator) const { return accelerator / spec.accelerators_per_node; }
  void check_accelerator(int accelerator) const;
  Path compute_path(int src, int dst, std::uint64_t flow_key) const;
  int diameter_hops() const;
};

void Topology::Impl::check_accelerator(int accelerator) const {
  if (accelerator < 0 || accelerator >= accelerators()) {
    throw ConfigError(fmt::format("accelerator index {} is out of range [0, {})", accelerator,
                                  accelerators()));
  }
}

Path Topology::Impl::compute_path(int src, int dst, std::uint64_t flow_key) const {
  Path path;
  const auto s = static_cast<std::size_t>(src);
  const auto d = static_cast<std::size_t>(dst);
  if (src == dst) {
    path.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
    path.bottleneck_payload_bytes_per_s = path.bottleneck_bytes_per_s;
    return path;
  }
  std::uint64_t flow_hash =
      engine::splitmix64((static_cast<std::uint64_t>(src) << 32U) | static_cast<std::uint32_t>(dst));
  if (flow_key != 0) flow_hash = engine::splitmix64(flow_hash ^ engine::splitmix64(flow_key));
  if (direct) {
    // Destination routing keys the torus's / custom network's equal-cost choice by the destination.
    router->append_route(direct->accelerator_vertex[s], direct->accelerator_vertex[d],
                         route_by_destination ? static_cast<std::uint64_t>(dst) : flow_hash, path.links);
  } else if (scale_up.domain_of(src) == scale_up.domain_of(dst)) {
    if (scale_up.mesh) {
      path.links = {scale_up.mesh_link_between(src, dst)};  // one point-to-point link, never a detour
    } else {
      path.links = {scale_up.accelerator_cable[s].forward, scale_up.accelerator_cable[d].backward};
    }
  } else {
    const auto es = static_cast<std::size_t>(endpoints.endpoint_of(src));
    const auto ed = static_cast<std::size_t>(endpoints.endpoint_of(dst));
    if (endpoints.shared_nics) {
      path.links.push_back(scale_up.accelerator_cable[s].forward);
      path.links.push_back(endpoints.nic_cable[es].forward);
    }
    path.links.push_back(fabric->endpoint_cable[es].forward);
    // d-mod-k routes by the destination NIC alone (ScaleOutSpec::routing).
    const std::uint64_t choice = route_by_destination ? static_cast<std::uint64_t>(ed) : flow_hash;
    router->append_route(fabric->leaf_vertex[es], fabric->leaf_vertex[ed], choice, path.links);
    path.links.push_back(fabric->endpoint_cable[ed].backward);
    if (endpoints.shared_nics) {
      path.links.push_back(endpoints.nic_cable[ed].backward);
      path.links.push_back(scale_up.accelerator_cable[d].backward);
    }
  }
  path.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
  path.bottleneck_payload_bytes_per_s = path.bottleneck_bytes_per_s;
  for (const LinkId id : path.links) {
    const Link& link = graph.links()[static_cast<std::size_t>(id)];
    path.latency_s += link.latency_s;
    path.bottleneck_bytes_per_s = std::min(path.bottleneck_bytes_per_s, link.bytes_per_s);
    path.bottleneck_payload_bytes_per_s = std::min(path.bottleneck_payload_bytes_per_s, link.payload_bytes_per_s());
  }
  return path;
}

int Topology::Impl::diameter_hops() const {
  if (direct) {
    if (direct->diameter_hops >= 0) return direct->diameter_hops;
    int longest = 0;
    for (const int a : direct->accelerator_vertex) {
      for (const int b : direct->accelerator_vertex) longest = std::max(longest, router->distance(a, b));
    }
    return longest;
  }
  int diameter = scale_up.domain_size > 1 ? (scale_up.mesh ? 1 : 2) : 0;
  if (!fabric) return diameter;
  // Per leaf, the range of scale-up domains whose NICs sit on it (NICs are placed
  // node-major, so the domains of one leaf are consecutive, except on rail-optimized
  // fabrics where the range is a superset, which only adds pairs). Only pairs of different
  // domains use the fabric.
  struct DomainRange { int leaf, first_domain, last_domain; };
  std::vector<DomainRange> leaves;
  const int nics = spec.scale_out.nics_per_node;
  const int nodes_per_domain = scale_up.domain_size / spec.accelerators_per_node;
  if (nodes_per_domain >= spec.nodes) return diameter;  // one domain: the fabric is unused
  for (std::size_t e = 0; e < fabric->leaf_vertex.size(); ++e) {
    const int leaf = fabric->leaf_vertex[e];
    const int domain = static_cast<int>(e) / nics / nodes_per_domain;
    auto it = std::find_if(leaves.rbegin(), leaves.rend(),
                           [leaf](const DomainRange& r) { return r.leaf == leaf; });
    if (it == leaves.rend()) {
      leaves.push_back({leaf, domain, domain});
    } else {
      it->first_domain = std::min(it->first_domain, domain);
      it->last_domain = std::max(it->last_domain, domain);
    }
  }
  const int edge_hops = 2 + (endpoints.shared_nics ? 4 : 0);
  for (const DomainRange& a : leaves) {
    for (const DomainRange& b : leaves) {
      const bool one_domain = a.first_domain == a.last_domain && b.first_domain == b.last_domain &&
                            a.first_domain == b.first_domain;
      if (one_domain) continue;
      diameter = std::max(diameter, router->distance(a.leaf, b.leaf) + edge_hops);
    }
  }
  return diameter;
}

Topology Topology::build(const ClusterNetworkSpec& spec) {
  const std::vector<std::string> problems = spec_problems(spec);
  if (!problems.empty()) {
    std::string message = problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
    throw ConfigError(message);
  }
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  impl->route_by_destination = spec.scale_out.routing == "d-mod-k";
  if (const DirectBuilder direct_builder = find_direct_builder(spec.scale_out.topology)) {
    impl->direct = direct_builder(impl->graph, spec);
    impl->router = std::move(impl->direct->router);
    impl->graph.set_efficiencies(spec.scale_up.efficiency, spec.scale_out.efficiency);
    return Topology(std::move(impl));
  }
  impl->scale_up = build_scale_up(impl->graph, spec);
  if (spec.nodes > 1) {
    impl->endpoints = attach_nics(impl->graph, spec, impl->scale_up);
    const ScaleOutBuilder builder = find_scale_out_builder(spec.scale_out.topology);
    impl->fabric = builder(impl->graph, spec.scale_out, impl->endpoints.vertex);
    impl->router = impl->fabric->router
                       ? std::move(impl->fabric->router)
                       : std::make_unique<SwitchRouter>(impl->graph, impl->fabric->first_switch_vertex,
                                                        impl->route_by_destination);
  }
  impl->graph.set_efficiencies(spec.scale_up.efficiency, spec.scale_out.efficiency);
  return Topology(std::move(impl));
}

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

int Topology::accelerator_count() const { return impl_->accelerators(); }

int Topology::node_of(int accelerator) const {
  impl_->check_accelerator(accelerator);
  return impl_->node_of(accelerator);
}

const std::vector<Link>& Topology::links() const { return impl_->graph.links(); }

const Path& Topology::path(int src_accelerator, int dst_accelerator, std::uint64_t flow_key) const {
  impl_->check_accelerator(src_accelerator);
  impl_->check_accelerator(dst_accelerator);
  const std::uint64_t key = (static_cast<std::uint64_t>(src_accelerator) << 32U) |
                            static_cast<std::uint32_t>(dst_accelerator);
  // Destination routing ignores the flow key: every key shares the per-pair route.
  if (impl_->route_by_destination) flow_key = 0;
  auto& cache = flow_key == 0 ? impl_->path_cache : impl_->flow_path_cache[flow_key];
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, impl_->compute_path(src_accelerator, dst_accelerator, flow_key)).first;
  }
  return it->second;
}

int Topology::scale_up_domain_of(int accelerator) const {
  impl_->check_accelerator(accelerator);
  return impl_->direct ? accelerator : impl_->scale_up.domain_of(accelerator);
}

bool Topology::scale_up_mesh() const { return !impl_->direct && impl_->scale_up.mesh; }

TopologySummary Topology::summary() const {
  TopologySummary summary;
  summary.accelerators = impl_->accelerators();
  summary.links = static_cast<std::int64_t>(impl_->graph.links().size() / 2);
  summary.diameter_hops = impl_->diameter_hops();
  if (impl_->direct) {
    summary.switches = impl_->direct->switch_count;
    summary.bisection_bytes_per_s =
        impl_->direct->bisection_bytes_per_s >= 0
            ? impl_->direct->bisection_bytes_per_s
            : half_split_min_cut_bytes_per_s(impl_->graph, impl_->direct->accelerator_vertex);
    return summary;
  }
  // Nodes of one multi-node domain share a switch vertex, listed consecutively.
  const std::vector<int>& switches = impl_->scale_up.switch_vertex;
  for (std::size_t node = 0; node < switches.size(); ++node) {
    if (switches[node] >= 0 && (node == 0 || switches[node] != switches[node - 1])) ++summary.switches;
  }
  if (impl_->fabric) {
    summary.switches += impl_->fabric->switch_count;
    summary.bisection_bytes_per_s = impl_->fabric->bisection_bytes_per_s;
  }
  return summary;
}

const ClusterNetworkSpec& Topology::spec() const { return impl_->spec; }

}  // namespace clustersim::topologies
