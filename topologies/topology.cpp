#include "topologies/topology.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

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
  /// PXN (ScaleOutSpec::pxn) applies: a rail-optimized fabric with one NIC per accelerator.
  bool pxn = false;
  /// The accelerator whose NIC a transfer from `src` to `dst` (on different nodes) leaves by:
  /// under PXN the one of src's node on dst's rail, else src.
  int relay_of(int src, int dst) const {
    if (!pxn) return src;
    const int per_node = spec.accelerators_per_node;
    return (src / per_node) * per_node + dst % per_node;
  }
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
  /// The fabric routes with a SwitchRouter (fewest hops), which can route around failures.
  bool switch_routed = false;
  /// Custom networks: the switch names of the file, in vertex order.
  std::vector<std::string> switch_names;
  /// Vertex names and their index (built on first use; looked up, never iterated).
  mutable std::vector<std::string> vertex_names;
  mutable std::unordered_map<std::string, int> vertex_by_name;

  int accelerators() const {
    return static_cast<int>(direct ? direct->accelerator_vertex.size() : scale_up.accelerator_vertex.size());
  }
  int node_of(int accelerator) const { return accelerator / spec.accelerators_per_node; }
  void check_accelerator(int accelerator) const;
  Path compute_path(int src, int dst, std::uint64_t flow_key) const {
    return compute_path(src, dst, flow_key, router.get(), route_by_destination);
  }
  /// The route `route_with` takes (the topology's own, or one over surviving links; null where
  /// there is no fabric, so that only routes inside a scale-up domain exist); by_destination:
  /// its equal-cost choice is keyed by the destination (d-mod-k) instead of the flow hash.
  Path compute_path(int src, int dst, std::uint64_t flow_key, const FabricRouter* route_with,
                    bool by_destination) const;
  /// The two switch vertices `router` routes between for (src, dst), or nullopt when the route
  /// stays inside one scale-up domain.
  std::optional<std::pair<int, int>> fabric_ends(int src, int dst) const;
  void name_vertices() const;
  int diameter_hops() const;
};

void Topology::Impl::check_accelerator(int accelerator) const {
  if (accelerator < 0 || accelerator >= accelerators()) {
    throw ConfigError(fmt::format("accelerator index {} is out of range [0, {})", accelerator,
                                  accelerators()));
  }
}

Path Topology::Impl::compute_path(int src, int dst, std::uint64_t flow_key, const FabricRouter* route_with,
                                  bool by_destination) const {
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
    route_with->append_route(direct->accelerator_vertex[s], direct->accelerator_vertex[d],
                            by_destination ? static_cast<std::uint64_t>(dst) : flow_hash, path.links);
  } else if (scale_up.domain_of(src) == scale_up.domain_of(dst)) {
    if (scale_up.mesh) {
      path.links = {scale_up.mesh_link_between(src, dst)};  // one point-to-point link, never a detour
    } else {
      path.links = {scale_up.accelerator_cable[s].forward, scale_up.accelerator_cable[d].backward};
    }
  } else {
    const int relay = relay_of(src, dst);
    if (relay != src) {  // PXN: over the scale-up fabric to the GPU on the destination's rail first
      if (scale_up.mesh) {
        path.links.push_back(scale_up.mesh_link_between(src, relay));
      } else {
        path.links.push_back(scale_up.accelerator_cable[s].forward);
        path.links.push_back(scale_up.accelerator_cable[static_cast<std::size_t>(relay)].backward);
      }
    }
    const auto es = static_cast<std::size_t>(endpoints.endpoint_of(relay));
    const auto ed = static_cast<std::size_t>(endpoints.endpoint_of(dst));
    if (endpoints.shared_nics) {
      path.links.push_back(scale_up.accelerator_cable[s].forward);
      path.links.push_back(endpoints.nic_cable[es].forward);
    }
    path.links.push_back(fabric->endpoint_cable[es].forward);
    // d-mod-k routes by the destination alone (ScaleOutSpec::routing), numbered as on its fabric.
    const std::uint64_t choice =
        by_destination ? static_cast<std::uint64_t>(ed) / static_cast<std::uint64_t>(fabric->destination_stride)
                       : flow_hash;
    route_with->append_route(fabric->leaf_vertex[es], fabric->leaf_vertex[ed], choice, path.links);
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

std::optional<std::pair<int, int>> Topology::Impl::fabric_ends(int src, int dst) const {
  const auto s = static_cast<std::size_t>(src);
  const auto d = static_cast<std::size_t>(dst);
  if (direct) return std::pair{direct->accelerator_vertex[s], direct->accelerator_vertex[d]};
  if (scale_up.domain_of(src) == scale_up.domain_of(dst)) return std::nullopt;
  return std::pair{fabric->leaf_vertex[static_cast<std::size_t>(endpoints.endpoint_of(relay_of(src, dst)))],
                   fabric->leaf_vertex[static_cast<std::size_t>(endpoints.endpoint_of(dst))]};
}

void Topology::Impl::name_vertices() const {
  if (!vertex_names.empty()) return;
  const int count = graph.vertex_count();
  vertex_names.resize(static_cast<std::size_t>(count));
  const std::vector<int>& accelerator_vertex = direct ? direct->accelerator_vertex : scale_up.accelerator_vertex;
  for (std::size_t a = 0; a < accelerator_vertex.size(); ++a) {
    vertex_names[static_cast<std::size_t>(accelerator_vertex[a])] = fmt::format("gpu{}", a);
  }
  const std::string& kind = spec.scale_out.topology;
  auto fabric_label = [&](int tier) -> std::string {
    if (kind == "switch") return "switch";
    if (kind == "dragonfly") return "router";
    if (tier == 1) return "leaf";
    if (tier == 2) return spec.scale_out.tiers == 3 ? "agg" : "spine";
    return "core";
  };
  // A scale-up domain's switch: pciN, ualinkN or nvswitchN.
  const auto scale_up_switch_label = [](const std::string& up_fabric) -> std::string {
    return up_fabric == "pcie" ? "pci" : up_fabric == "ualink" ? "ualink" : "nvswitch";
  };
  std::map<std::string, int> next_index;  // per label, in vertex order
  std::size_t next_custom_switch = 0;
  for (int v = 0; v < count; ++v) {
    std::string& name = vertex_names[static_cast<std::size_t>(v)];
    const VertexProperties& vertex = graph.vertex(v);
    if (vertex.kind == VertexKind::accelerator) continue;
    if (vertex.kind == VertexKind::switch_ && !switch_names.empty()) {
      name = switch_names[next_custom_switch++];
      continue;
    }
    std::string label = vertex.kind == VertexKind::nic ? "nic"
                        : vertex.kind == VertexKind::scale_up_switch ? scale_up_switch_label(spec.scale_up.fabric)
                                                                     : fabric_label(vertex.tier);
    name = fmt::format("{}{}", label, next_index[label]++);
  }
  for (int v = 0; v < count; ++v) vertex_by_name.emplace(vertex_names[static_cast<std::size_t>(v)], v);
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
    impl->switch_routed = spec.scale_out.topology == "custom";
    impl->switch_names = impl->direct->switch_names;
    impl->graph.set_efficiencies(spec.scale_up.efficiency, spec.scale_out.efficiency);
    return Topology(std::move(impl));
  }
  impl->scale_up = build_scale_up(impl->graph, spec);
  if (spec.nodes > 1) {
    impl->endpoints = attach_nics(impl->graph, spec, impl->scale_up);
    const ScaleOutBuilder builder = find_scale_out_builder(spec.scale_out.topology);
    impl->fabric = builder(impl->graph, spec.scale_out, impl->endpoints.vertex);
    impl->pxn = spec.scale_out.pxn && spec.scale_out.topology == "rail-optimized" && !impl->endpoints.shared_nics;
    impl->switch_routed = !impl->fabric->router;
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

int Topology::vertex_count() const { return impl_->graph.vertex_count(); }

std::string Topology::vertex_name(int vertex) const {
  if (vertex < 0 || vertex >= vertex_count()) {
    throw ConfigError(fmt::format("vertex index {} is out of range [0, {})", vertex, vertex_count()));
  }
  impl_->name_vertices();
  return impl_->vertex_names[static_cast<std::size_t>(vertex)];
}

std::optional<int> Topology::find_vertex(std::string_view name) const {
  impl_->name_vertices();
  const auto it = impl_->vertex_by_name.find(std::string(name));
  return it == impl_->vertex_by_name.end() ? std::nullopt : std::optional<int>(it->second);
}

bool Topology::is_switch(int vertex) const {
  const VertexKind kind = impl_->graph.vertex(vertex).kind;
  return kind == VertexKind::switch_ || kind == VertexKind::scale_up_switch;
}

std::vector<std::string> Topology::cable_names() const {
  impl_->name_vertices();
  std::vector<std::string> names;
  const std::vector<Link>& all = impl_->graph.links();
  for (std::size_t l = 0; l < all.size(); l += 2) {  // a cable's forward link has an even id
    std::string name = impl_->vertex_names[static_cast<std::size_t>(all[l].from)] + "-" +
                       impl_->vertex_names[static_cast<std::size_t>(all[l].to)];
    if (names.empty() || names.back() != name) names.push_back(std::move(name));  // parallel cables once
  }
  return names;
}

std::vector<LinkId> Topology::links_between(int a, int b) const {
  std::vector<LinkId> found;
  const std::vector<Link>& all = impl_->graph.links();
  for (std::size_t l = 0; l < all.size(); ++l) {
    if ((all[l].from == a && all[l].to == b) || (all[l].from == b && all[l].to == a)) {
      found.push_back(static_cast<LinkId>(l));
    }
  }
  return found;
}

std::vector<LinkId> Topology::links_at(int vertex) const {
  std::vector<LinkId> found;
  const std::vector<Link>& all = impl_->graph.links();
  for (std::size_t l = 0; l < all.size(); ++l) {
    if (all[l].from == vertex || all[l].to == vertex) found.push_back(static_cast<LinkId>(l));
  }
  return found;
}

bool Topology::can_reroute() const { return impl_->switch_routed; }

struct Topology::SurvivingRoutes::Impl {
  const Topology* topology = nullptr;
  std::vector<std::uint8_t> failed;  ///< by directed link
  bool by_destination = false;
  std::unique_ptr<SwitchRouter> router;  ///< over the surviving links
  /// Looked up, never iterated. Keyed by ((src, dst), flow key); nullopt: partitioned.
  mutable std::map<std::pair<std::uint64_t, std::uint64_t>, std::optional<Path>> cache;
};

Topology::SurvivingRoutes::SurvivingRoutes(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::SurvivingRoutes::~SurvivingRoutes() = default;

bool Topology::SurvivingRoutes::failed(LinkId link) const {
  return impl_->failed[static_cast<std::size_t>(link)] != 0;
}

bool Topology::SurvivingRoutes::crosses_failed(std::span<const LinkId> links) const {
  return std::any_of(links.begin(), links.end(), [this](LinkId link) { return failed(link); });
}

const Path* Topology::SurvivingRoutes::path(int src, int dst, std::uint64_t flow_key) const {
  const Topology& topology = *impl_->topology;
  const Path& nominal = topology.path(src, dst, flow_key);
  if (!crosses_failed(nominal.links)) return &nominal;
  const Topology::Impl& net = *topology.impl_;
  if (net.route_by_destination) flow_key = 0;  // as Topology::path: every key shares the route
  const std::pair key{(static_cast<std::uint64_t>(src) << 32U) | static_cast<std::uint32_t>(dst), flow_key};
  auto it = impl_->cache.find(key);
  if (it == impl_->cache.end()) {
    std::optional<Path> route;
    const auto ends = net.fabric_ends(src, dst);
    if (ends && impl_->router->connected(ends->first, ends->second)) {
      route = net.compute_path(src, dst, flow_key, impl_->router.get(), impl_->by_destination);
      if (crosses_failed(route->links)) route.reset();  // an accelerator's, NIC's or leaf's own cable
    }
    it = impl_->cache.emplace(key, std::move(route)).first;
  }
  return it->second ? &*it->second : nullptr;
}

std::unique_ptr<Topology::SurvivingRoutes> Topology::surviving_routes(std::span<const LinkId> failed,
                                                                       bool by_destination) const {
  if (!can_reroute()) {
    throw ConfigError(fmt::format("topology {} cannot route around failed links (only fat-tree, rail-optimized, "
                                  "switch and custom networks reroute)",
                                  impl_->spec.scale_out.topology));
  }
  auto routes = std::make_unique<SurvivingRoutes::Impl>();
  routes->topology = this;
  routes->by_destination = by_destination;
  routes->failed.assign(impl_->graph.links().size(), 0);
  for (const LinkId link : failed) {
    if (link < 0 || static_cast<std::size_t>(link) >= routes->failed.size()) {
      throw ConfigError(fmt::format("failed link id {} is out of range [0, {})", link, routes->failed.size()));
    }
    routes->failed[static_cast<std::size_t>(link)] = 1;
  }
  const int first_switch = impl_->direct ? 0 : impl_->fabric ? impl_->fabric->first_switch_vertex : 0;
  if (impl_->fabric || impl_->direct) {
    routes->router = std::make_unique<SwitchRouter>(impl_->graph, first_switch, by_destination, routes->failed);
  }
  return std::make_unique<SurvivingRoutes>(std::move(routes));
}

}  // namespace clustersim::topologies
