#include "topologies/dragonfly.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::topologies {

void check_dragonfly_parameters(const ClusterNetworkSpec& spec, std::vector<std::string>& problems) {
  const ScaleOutSpec& out = spec.scale_out;
  const int g = out.dragonfly_groups;
  const int a = out.dragonfly_routers_per_group;
  const int p = out.dragonfly_terminals_per_router;
  const int h = out.dragonfly_global_links_per_router;
  bool shape_ok = true;
  auto at_least = [&](const char* name, int value, int low) {
    if (value < low) {
      problems.push_back(fmt::format("dragonfly {} must be >= {}, got {}", name, low, value));
      shape_ok = false;
    }
  };
  at_least("groups", g, 1);
  at_least("routers_per_group", a, 1);
  at_least("terminals_per_router", p, 1);
  at_least("global_links_per_router", h, 0);
  if (!shape_ok) return;
  if (g > 1 && static_cast<std::int64_t>(a) * h < g - 1) {
    problems.push_back(fmt::format(
        "dragonfly of {} groups needs routers_per_group x global_links_per_router >= groups - 1 "
        "= {} so every pair of groups is linked, got {} x {} = {}",
        g, g - 1, a, h, static_cast<std::int64_t>(a) * h));
  }
  const std::int64_t terminals = static_cast<std::int64_t>(g) * a * p;
  const std::int64_t nics = static_cast<std::int64_t>(spec.nodes) * out.nics_per_node;
  if (nics > terminals) {
    problems.push_back(fmt::format(
        "dragonfly of {} groups x {} routers x {} terminals holds {} NICs, but the cluster has "
        "{} ({} nodes x {} NICs)",
        g, a, p, terminals, nics, spec.nodes, out.nics_per_node));
  }
}

DragonflyRouter::DragonflyRouter(int first_router_vertex, int groups, int routers_per_group,
                                 std::vector<std::vector<LinkId>> local_link,
                                 std::vector<std::vector<GlobalLink>> global_links)
    : first_router_vertex_(first_router_vertex),
      groups_(groups),
      routers_per_group_(routers_per_group),
      local_link_(std::move(local_link)),
      global_links_(std::move(global_links)) {}

int DragonflyRouter::router(int vertex) const {
  const int r = vertex - first_router_vertex_;
  if (r < 0 || r >= groups_ * routers_per_group_) {
    throw SimulationError(fmt::format("vertex {} is not a dragonfly router", vertex));
  }
  return r;
}

int DragonflyRouter::hops_via(const GlobalLink& global, int from_router, int to_router) const {
  return (global.from_router != from_router ? 1 : 0) + 1 + (global.to_router != to_router ? 1 : 0);
}

int DragonflyRouter::distance(int from, int to) const {
  const int s = router(from);
  const int t = router(to);
  if (s == t) return 0;
  const int gs = s / routers_per_group_;
  const int gt = t / routers_per_group_;
  if (gs == gt) return 1;
  int best = std::numeric_limits<int>::max();
  for (const GlobalLink& global : global_links_[static_cast<std::size_t>(gs * groups_ + gt)]) {
    best = std::min(best, hops_via(global, s, t));
  }
  return best;
}

void DragonflyRouter::append_route(int from, int to, std::uint64_t flow_hash,
                                   std::vector<LinkId>& links) const {
  const int s = router(from);
  const int t = router(to);
  if (s == t) return;
  const int gs = s / routers_per_group_;
  const int gt = t / routers_per_group_;
  auto local = [&](int a, int b) {
    links.push_back(local_link_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b % routers_per_group_)]);
  };
  if (gs == gt) {
    local(s, t);
    return;
  }
  const auto& candidates = global_links_[static_cast<std::size_t>(gs * groups_ + gt)];
  const int best = distance(from, to);
  std::uint64_t count = 0;
  for (const GlobalLink& global : candidates) count += hops_via(global, s, t) == best ? 1U : 0U;
  std::uint64_t pick = engine::splitmix64(flow_hash) % count;
  for (const GlobalLink& global : candidates) {
    if (hops_via(global, s, t) != best || pick-- != 0) continue;
    if (global.from_router != s) local(s, global.from_router);
    links.push_back(global.link);
    if (global.to_router != t) local(global.to_router, t);
    return;
  }
}

ScaleOutFabric build_dragonfly(NetworkGraph& graph, const ScaleOutSpec& spec,
                               std::span<const int> endpoints) {
  const int g = spec.dragonfly_groups;
  const int a = spec.dragonfly_routers_per_group;
  const int p = spec.dragonfly_terminals_per_router;
  const int h = spec.dragonfly_global_links_per_router;
  const std::int64_t routers = static_cast<std::int64_t>(g) * a;
  if (g < 1 || a < 1 || p < 1 || h < 0 || static_cast<std::int64_t>(endpoints.size()) > routers * p ||
      (g > 1 && static_cast<std::int64_t>(a) * h < g - 1)) {
    throw ConfigError("invalid dragonfly parameters (see spec_problems)");
  }
  const double nic_bw = spec.nic_bytes_per_s;
  const double bw = spec.fabric_link_bytes_per_s();
  const double latency_s = spec.link_latency_s;

  ScaleOutFabric fabric;
  fabric.first_switch_vertex = graph.vertex_count();
  fabric.switch_count = routers;
  for (std::int64_t r = 0; r < routers; ++r) graph.add_vertex(VertexKind::switch_, -1, 1);
  const int first = fabric.first_switch_vertex;
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    const int router = first + static_cast<int>(e) / p;
    fabric.leaf_vertex.push_back(router);
    fabric.endpoint_cable.push_back(graph.add_cable(endpoints[e], router, nic_bw, latency_s, 1));
  }

  std::vector<std::vector<LinkId>> local_link(static_cast<std::size_t>(routers),
                                              std::vector<LinkId>(static_cast<std::size_t>(a), -1));
  for (int group = 0; group < g; ++group) {
    for (int i = 0; i < a; ++i) {
      for (int j = i + 1; j < a; ++j) {
        const int ri = group * a + i;
        const int rj = group * a + j;
        const Cable cable = graph.add_cable(first + ri, first + rj, bw, latency_s, 2);
        local_link[static_cast<std::size_t>(ri)][static_cast<std::size_t>(j)] = cable.forward;
        local_link[static_cast<std::size_t>(rj)][static_cast<std::size_t>(i)] = cable.backward;
      }
    }
  }

  std::vector<std::vector<GlobalLink>> global_links(static_cast<std::size_t>(g) * static_cast<std::size_t>(g));
  std::int64_t crossing = 0;
  if (g > 1) {
    const int rounds = a * h / (g - 1);
    for (int i = 0; i < g; ++i) {
      for (int q = 0; q < rounds * (g - 1); ++q) {
        const int round = q / (g - 1);
        const int offset = q % (g - 1);
        const int j = (i + 1 + offset) % g;
        if (j < i) continue;  // added from the lower-numbered group
        const int q_back = round * (g - 1) + (g - 2 - offset);
        const int ri = i * a + q / h;
        const int rj = j * a + q_back / h;
        const Cable cable = graph.add_cable(first + ri, first + rj, bw, latency_s, 3);
        global_links[static_cast<std::size_t>(i * g + j)].push_back({ri, rj, cable.forward});
        global_links[static_cast<std::size_t>(j * g + i)].push_back({rj, ri, cable.backward});
        if ((i < g / 2) != (j < g / 2)) ++crossing;
      }
    }
  }
  double bisection = static_cast<double>(endpoints.size()) * nic_bw / 2.0;
  if (g > 1) {
    bisection = std::min(bisection, static_cast<double>(crossing) * bw);
  } else if (a > 1) {
    bisection = std::min(bisection, static_cast<double>((a / 2) * (a - a / 2)) * bw);
  }
  fabric.bisection_bytes_per_s = bisection;
  fabric.router = std::make_unique<DragonflyRouter>(first, g, a, std::move(local_link),
                                                    std::move(global_links));
  return fabric;
}

}  // namespace clustersim::topologies
