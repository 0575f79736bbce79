#include "topologies/link_faults.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/config/diagnostics.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::topologies {
namespace {

/// "did you mean 'x'? valid names: a, b, ... (N in all)": the closest name and the first few.
std::string names_hint(std::string_view what, const std::string& name, const std::vector<std::string>& names) {
  constexpr std::size_t kListed = 12;
  std::string hint;
  if (const auto closest = config::closest_match(name, names)) hint = "did you mean '" + *closest + "'? ";
  hint += fmt::format("valid {}: ", what);
  for (std::size_t i = 0; i < names.size() && i < kListed; ++i) hint += (i > 0 ? ", " : "") + names[i];
  if (names.size() > kListed) hint += fmt::format(", ... ({} in all)", names.size());
  return hint;
}

/// The vertices of cable name "a-b": the first split at a '-' whose two sides are vertices
/// joined by a cable (custom switch names may hold '-').
std::optional<std::pair<int, int>> cable_ends(const Topology& topology, const std::string& name) {
  for (std::size_t dash = name.find('-'); dash != std::string::npos; dash = name.find('-', dash + 1)) {
    const auto a = topology.find_vertex(std::string_view(name).substr(0, dash));
    const auto b = topology.find_vertex(std::string_view(name).substr(dash + 1));
    if (a && b && !topology.links_between(*a, *b).empty()) return std::pair{*a, *b};
  }
  return std::nullopt;
}

std::vector<std::string> switch_names(const Topology& topology) {
  std::vector<std::string> names;
  for (int v = 0; v < topology.vertex_count(); ++v) {
    if (topology.is_switch(v)) names.push_back(topology.vertex_name(v));
  }
  return names;
}

}  // namespace

const config::NameTable<ReroutePolicy>& reroute_policy_names() {
  static const config::NameTable<ReroutePolicy> names(
      "reroute policy", {{"ecmp", ReroutePolicy::ecmp}, {"subnet-manager", ReroutePolicy::subnet_manager}});
  return names;
}

ReroutePolicy default_reroute_policy(std::string_view routing) {
  return routing == "d-mod-k" ? ReroutePolicy::subnet_manager : ReroutePolicy::ecmp;
}

double default_reroute_delay_s(ReroutePolicy policy) { return policy == ReroutePolicy::ecmp ? 0.3 : 10.0; }

bool NetworkFaultPlan::any_down() const {
  return std::any_of(faults.begin(), faults.end(), [](const LinkFault& fault) { return fault.down(); });
}

NetworkFaultPlan resolve_link_faults(const Topology& topology, const ScaleOutSpec& spec,
                                     std::vector<LinkFaultProblem>& problems) {
  NetworkFaultPlan plan;
  plan.policy = spec.reroute.empty() ? default_reroute_policy(spec.routing) : reroute_policy_names().parse(spec.reroute);
  plan.reroute_delay_ps = engine::seconds_to_ps(spec.reroute_delay_s.value_or(default_reroute_delay_s(plan.policy)));
  for (const auto& [name, entry] : spec.faults) {
    const auto problem = [&](std::string key, std::string message, std::string hint = {}) {
      problems.push_back({name, std::move(key), std::move(message), std::move(hint)});
    };
    LinkFault fault;
    fault.name = name;
    fault.at_ps = engine::seconds_to_ps(entry.at_s);
    fault.scale = entry.bandwidth_fraction;
    if (entry.link.empty() == entry.switch_name.empty()) {
      problem(entry.link.empty() ? "link" : "switch",
              entry.link.empty() ? "a fault names one cable (link) or one switch (switch), neither is set"
                                 : "a fault names one cable (link) or one switch (switch), not both");
      continue;
    }
    if (!entry.link.empty()) {
      const auto ends = cable_ends(topology, entry.link);
      if (!ends) {
        const auto vertex = topology.find_vertex(entry.link);
        problem("link",
                vertex && topology.is_switch(*vertex)
                    ? fmt::format("'{}' is a switch, not a cable: write `switch: {}`", entry.link, entry.link)
                    : fmt::format("unknown cable '{}' (a cable is named by its two ends, e.g. leaf0-spine0)", entry.link),
                names_hint("cables", entry.link, topology.cable_names()));
        continue;
      }
      fault.element = "link " + entry.link;
      fault.links = topology.links_between(ends->first, ends->second);
    } else {
      const auto vertex = topology.find_vertex(entry.switch_name);
      if (!vertex || !topology.is_switch(*vertex)) {
        problem("switch",
                vertex ? fmt::format("'{}' is not a switch", entry.switch_name)
                       : fmt::format("unknown switch '{}'", entry.switch_name),
                names_hint("switches", entry.switch_name, switch_names(topology)));
        continue;
      }
      if (entry.bandwidth_fraction > 0) {
        problem("bandwidth_fraction", fmt::format("a switch fault takes the switch down: bandwidth_fraction must be 0, "
                                                  "got {} (degrade its cables one by one instead)",
                                                  entry.bandwidth_fraction));
        continue;
      }
      fault.element = "switch " + entry.switch_name;
      fault.links = topology.links_at(*vertex);
    }
    if (entry.until_s) {
      if (fault.down()) {
        problem("until", "a failed element stays down (its traffic reroutes for good): `until` needs "
                         "bandwidth_fraction > 0");
        continue;
      }
      if (!(*entry.until_s > entry.at_s)) {
        problem("until", fmt::format("must be after at ({} s), got {} s", entry.at_s, *entry.until_s));
        continue;
      }
      fault.until_ps = engine::seconds_to_ps(*entry.until_s);
    }
    if (fault.down() && !topology.can_reroute()) {
      problem(entry.link.empty() ? "switch" : "link",
              fmt::format("topology {} cannot route around a failed element (only fat-tree, rail-optimized, switch and "
                          "custom networks reroute); degrade it instead (bandwidth_fraction > 0)",
                          spec.topology));
      continue;
    }
    plan.faults.push_back(std::move(fault));
  }
  return plan;
}

NetworkFaultPlan resolve_link_faults(const Topology& topology, const ScaleOutSpec& spec) {
  std::vector<LinkFaultProblem> problems;
  NetworkFaultPlan plan = resolve_link_faults(topology, spec, problems);
  if (!problems.empty()) {
    std::string message;
    for (const LinkFaultProblem& p : problems) {
      message += fmt::format("{}cluster.network.faults.{}.{}: {}", message.empty() ? "" : "; ", p.fault, p.key,
                             p.message);
    }
    throw ConfigError(message);
  }
  return plan;
}

}  // namespace clustersim::topologies
