#include "topologies/topology.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"
#include "topologies/network_graph.hpp"
#include "topologies/nic_attachment.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"
#include "topologies/scale_out_fabric.hpp"
#include "topologies/scale_up.hpp"

namespace clustersim::topologies {

struct Topology::Impl {
  ClusterNetworkSpec spec;
  NetworkGraph graph;
  ScaleUpDomains scale_up;
  ScaleOutEndpoints endpoints;
  std::optional<ScaleOutFabric> fabric;  ///< absent for a single node
  std::optional<SwitchRouter> router;
  /// Looked up, never iterated, so its order cannot reach results.
  mutable std::unordered_map<std::uint64_t, Path> path_cache;

  int accelerators() const { return static_cast<int>(scale_up.accelerator_vertex.size()); }
  int node_of(int accelerator) const { return accelerator / spec.accelerators_per_node; }
  void check_accelerator(int accelerator) const;
  Path compute_path(int src, int dst) const;
  int diameter_hops() const;
};

void Topology::Impl::check_accelerator(int accelerator) const {
  if (accelerator < 0 || accelerator >= accelerators()) {
    throw ConfigError(fmt::format("accelerator index {} is out of range [0, {})", accelerator,
                                  accelerators()));
  }
}

Path Topology::Impl::compute_path(int src, int dst) const {
  Path path;
  const auto s = static_cast<std::size_t>(src);
  const auto d = static_cast<std::size_t>(dst);
  if (src == dst) {
    path.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
    return path;
  }
  if (node_of(src) == node_of(dst)) {
    path.links = {scale_up.accelerator_cable[s].forward, scale_up.accelerator_cable[d].backward};
  } else {
    const auto es = static_cast<std::size_t>(endpoints.endpoint_of(src));
    const auto ed = static_cast<std::size_t>(endpoints.endpoint_of(dst));
    if (endpoints.shared_nics) {
      path.links.push_back(scale_up.accelerator_cable[s].forward);
      path.links.push_back(endpoints.nic_cable[es].forward);
    }
    path.links.push_back(fabric->endpoint_cable[es].forward);
    const std::uint64_t flow_hash =
        engine::splitmix64((static_cast<std::uint64_t>(src) << 32U) | static_cast<std::uint32_t>(dst));
    router->append_route(fabric->leaf_vertex[es], fabric->leaf_vertex[ed], flow_hash, path.links);
    path.links.push_back(fabric->endpoint_cable[ed].backward);
    if (endpoints.shared_nics) {
      path.links.push_back(endpoints.nic_cable[ed].backward);
      path.links.push_back(scale_up.accelerator_cable[d].backward);
    }
  }
  path.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
  for (const LinkId id : path.links) {
    const Link& link = graph.links()[static_cast<std::size_t>(id)];
    path.latency_s += link.latency_s;
    path.bottleneck_bytes_per_s = std::min(path.bottleneck_bytes_per_s, link.bytes_per_s);
  }
  return path;
}

int Topology::Impl::diameter_hops() const {
  int diameter = spec.accelerators_per_node > 1 ? 2 : 0;
  if (!fabric) return diameter;
  // Per leaf, the range of nodes whose NICs sit on it (NICs are placed node-major, so the
  // nodes of one leaf are consecutive). Only pairs of different nodes use the fabric.
  struct NodeRange { int leaf, first_node, last_node; };
  std::vector<NodeRange> leaves;
  const int nics = spec.scale_out.nics_per_node;
  for (std::size_t e = 0; e < fabric->leaf_vertex.size(); ++e) {
    const int leaf = fabric->leaf_vertex[e];
    const int node = static_cast<int>(e) / nics;
    auto it = std::find_if(leaves.rbegin(), leaves.rend(),
                           [leaf](const NodeRange& r) { return r.leaf == leaf; });
    if (it == leaves.rend()) {
      leaves.push_back({leaf, node, node});
    } else {
      it->first_node = std::min(it->first_node, node);
      it->last_node = std::max(it->last_node, node);
    }
  }
  const int edge_hops = 2 + (endpoints.shared_nics ? 4 : 0);
  for (const NodeRange& a : leaves) {
    for (const NodeRange& b : leaves) {
      const bool one_node = a.first_node == a.last_node && b.first_node == b.last_node &&
                            a.first_node == b.first_node;
      if (one_node) continue;
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
  impl->scale_up = build_scale_up(impl->graph, spec);
  if (spec.nodes > 1) {
    impl->endpoints = attach_nics(impl->graph, spec, impl->scale_up);
    const ScaleOutBuilder builder = find_scale_out_builder(spec.scale_out.topology);
    impl->fabric = builder(impl->graph, spec.scale_out, impl->endpoints.vertex);
    impl->router.emplace(impl->graph, impl->fabric->first_switch_vertex);
  }
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

const Path& Topology::path(int src_accelerator, int dst_accelerator) const {
  impl_->check_accelerator(src_accelerator);
  impl_->check_accelerator(dst_accelerator);
  const std::uint64_t key = (static_cast<std::uint64_t>(src_accelerator) << 32U) |
                            static_cast<std::uint32_t>(dst_accelerator);
  auto it = impl_->path_cache.find(key);
  if (it == impl_->path_cache.end()) {
    it = impl_->path_cache.emplace(key, impl_->compute_path(src_accelerator, dst_accelerator)).first;
  }
  return it->second;
}

TopologySummary Topology::summary() const {
  TopologySummary summary;
  summary.accelerators = impl_->accelerators();
  summary.switches = static_cast<std::int64_t>(std::count_if(
      impl_->scale_up.switch_vertex.begin(), impl_->scale_up.switch_vertex.end(),
      [](int v) { return v >= 0; }));
  if (impl_->fabric) {
    summary.switches += impl_->fabric->switch_count;
    summary.bisection_bytes_per_s = impl_->fabric->bisection_bytes_per_s;
  }
  summary.links = static_cast<std::int64_t>(impl_->graph.links().size() / 2);
  summary.diameter_hops = impl_->diameter_hops();
  return summary;
}

const ClusterNetworkSpec& Topology::spec() const { return impl_->spec; }

}  // namespace clustersim::topologies
