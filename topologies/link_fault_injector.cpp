#include "topologies/link_fault_injector.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::topologies {
namespace {

// Fingerprint tags of a failure and its reroute ("rero" in ASCII, then a kind).
constexpr std::uint64_t kTagReroute = 0x7265726f00000001ULL;
constexpr std::uint64_t kTagFailure = 0x7265726f00000002ULL;

/// Per link, its capacity scale from each time a fault on it starts or ends: the product of
/// the scales of the faults active then.
std::map<LinkId, LinkProfile> link_profiles(const NetworkFaultPlan& plan) {
  std::map<LinkId, std::vector<const LinkFault*>> on_link;
  for (const LinkFault& fault : plan.faults) {
    for (const LinkId link : fault.links) on_link[link].push_back(&fault);
  }
  std::map<LinkId, LinkProfile> profiles;
  for (const auto& [link, faults] : on_link) {
    std::vector<engine::TimePs> times;
    for (const LinkFault* fault : faults) {
      times.push_back(fault->at_ps);
      if (fault->until_ps) times.push_back(*fault->until_ps);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    LinkProfile& profile = profiles[link];
    for (const engine::TimePs t : times) {
      double scale = 1;
      for (const LinkFault* fault : faults) {
        if (fault->at_ps <= t && (!fault->until_ps || t < *fault->until_ps)) scale *= fault->scale;
      }
      profile.changes.push_back({t, scale});
    }
  }
  return profiles;
}

std::string failed_elements(const std::vector<const LinkFault*>& faults) {
  std::string text;
  for (const LinkFault* fault : faults) {
    text += fmt::format("{}{} (fault '{}' at {} s)", text.empty() ? "" : ", ", fault->element, fault->name,
                        engine::ps_to_seconds(fault->at_ps));
  }
  return text;
}

}  // namespace

LinkFaultInjector::LinkFaultInjector(engine::Engine& engine, const Topology& topology, FlowNetwork& network,
                                     NetworkFaultPlan plan, RouteOfTag route_of_tag)
    : engine_(engine),
      topology_(topology),
      network_(network),
      plan_(std::move(plan)),
      route_of_tag_(std::move(route_of_tag)) {
  if (plan_.any_down() && !topology_.can_reroute()) {
    throw ConfigError(fmt::format("topology {} cannot route around a failed element",
                                  topology_.spec().scale_out.topology));
  }
  down_.assign(topology_.links().size(), 0);
  for (const auto& [link, profile] : link_profiles(plan_)) network_.apply_profile(link, profile);
  for (const LinkFault& fault : plan_.faults) {
    if (!fault.down()) continue;
    const LinkFault* failed = &fault;
    // Scheduled after the capacity changes at the same time, before the recompute they ask for.
    pending_.push_back(
        engine_.schedule_at(fault.at_ps, [this, failed](engine::Engine&) { fail(*failed); }, kTagFailure));
    pending_.push_back(engine_.schedule_at(
        fault.at_ps + plan_.reroute_delay_ps, [this, failed](engine::Engine&) { reroute_after(*failed); },
        kTagReroute));
  }
}

LinkFaultInjector::~LinkFaultInjector() {
  for (const engine::EventId event : pending_) engine_.cancel(event);
}

std::span<const LinkId> LinkFaultInjector::links(const Path& nominal, const RouteKey& route) const {
  if (!survivors_ || !survivors_->crosses_failed(nominal.links)) return nominal.links;
  const Path* path = survivors_->path(route.src, route.dst, route.flow_key);
  if (path == nullptr) {
    throw NetworkPartitionError(
        fmt::format("cluster.network.faults: at {} s no route survives from gpu{} to gpu{}, which must talk: the "
                    "network is partitioned by the failure of {}",
                    engine::ps_to_seconds(engine_.now()), route.src, route.dst, failed_elements(rerouted_)),
        rerouted_.empty() ? std::string() : rerouted_.front()->name);
  }
  return path->links;
}

void LinkFaultInjector::fail(const LinkFault& fault) {
  for (const LinkId link : fault.links) down_[static_cast<std::size_t>(link)] = 1;
  const auto stalled = network_.flows_crossing([&fault](LinkId link) {
    return std::find(fault.links.begin(), fault.links.end(), link) != fault.links.end();
  });
  for (const FlowNetwork::CrossingFlow& crossing : stalled) network_.pause_flow(crossing.flow);
}

void LinkFaultInjector::started_flow(FlowId flow, std::span<const LinkId> links) {
  const bool crosses_down =
      std::any_of(links.begin(), links.end(), [this](LinkId link) { return down_[static_cast<std::size_t>(link)] != 0; });
  if (crosses_down) network_.pause_flow(flow);
}

void LinkFaultInjector::reroute_after(const LinkFault& fault) {
  rerouted_.push_back(&fault);
  failed_links_.insert(failed_links_.end(), fault.links.begin(), fault.links.end());
  survivors_ = topology_.surviving_routes(failed_links_, plan_.policy == ReroutePolicy::subnet_manager);
  const auto moving = network_.flows_crossing([this](LinkId link) { return survivors_->failed(link); });
  for (const FlowNetwork::CrossingFlow& crossing : moving) {
    const RouteKey route = route_of_tag_(crossing.route_tag);
    const Path& nominal = topology_.path(route.src, route.dst, route.flow_key);
    const std::span<const LinkId> detour = links(nominal, route);
    network_.reroute_flow(crossing.flow, detour);
    started_flow(crossing.flow, detour);  // a detour over another failure still waiting for its reroute
    ++flows_moved_;
  }
}

}  // namespace clustersim::topologies
