#include "models/comm/plan_evaluators.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/engine.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"
#include "topologies/flow_network.hpp"

namespace clustersim::models {
namespace {

/// Every link a flow of phase `k` of `plans` crosses, once per flow, sorted (into `crossed`).
void phase_links(std::span<const CollectivePlan> plans, std::size_t k, const topologies::Topology& topology,
                 std::vector<topologies::LinkId>& crossed) {
  crossed.clear();
  for (const CollectivePlan& plan : plans) {
    if (k >= plan.phases.size()) continue;
    for (const FlowSpec& f : plan.phases[k].flows) {
      const auto& links = topology.path(f.src, f.dst, f.flow_key).links;
      crossed.insert(crossed.end(), links.begin(), links.end());
    }
  }
  std::sort(crossed.begin(), crossed.end());
}

/// Seconds of phase `k` of every plan run at once: the slowest flow of the first `gating`
/// plans, each flow getting its link's payload rate divided by the phase's flows on it.
double phase_transfer_s(std::span<const CollectivePlan> plans, std::size_t k, std::size_t gating,
                        const topologies::Topology& topology, const LinkLoad& background) {
  std::vector<topologies::LinkId> crossed;
  phase_links(plans, k, topology, crossed);
  const auto& all_links = topology.links();
  double slowest_s = 0;
  for (std::size_t p = 0; p < gating; ++p) {
    if (k >= plans[p].phases.size()) continue;
    for (const FlowSpec& f : plans[p].phases[k].flows) {
      double share_bytes_per_s = f.rate_cap_bytes_per_s;
      for (const topologies::LinkId id : topology.path(f.src, f.dst, f.flow_key).links) {
        const auto range = std::equal_range(crossed.begin(), crossed.end(), id);
        double count = static_cast<double>(range.second - range.first);
        if (!background.empty()) {
          const auto other = std::lower_bound(background.begin(), background.end(), id,
                                              [](const auto& entry, topologies::LinkId link) { return entry.first < link; });
          if (other != background.end() && other->first == id) count += other->second;
        }
        share_bytes_per_s =
            std::min(share_bytes_per_s, all_links[static_cast<std::size_t>(id)].payload_bytes_per_s() / count);
      }
      if (share_bytes_per_s < std::numeric_limits<double>::infinity()) {
        slowest_s = std::max(slowest_s, f.bytes / share_bytes_per_s);
      }
    }
  }
  return slowest_s;
}

/// Runs the phases one after the other on a FlowNetwork.
struct PhaseRunner {
  const CollectivePlan* plan;
  topologies::FlowNetwork* network;
  std::size_t phase = 0;
  std::size_t pending = 0;
  engine::TimePs finished_ps = -1;

  void start_phase(engine::Engine& engine) {
    if (phase == plan->phases.size()) {
      finished_ps = engine.now();
      return;
    }
    engine.schedule_after(engine::seconds_to_ps(plan->phases[phase].fixed_latency_s),
                          [this](engine::Engine& e) { start_flows(e); });
  }
  void start_flows(engine::Engine& engine) {
    const Phase& current = plan->phases[phase];
    pending = current.flows.size();
    for (const FlowSpec& f : current.flows) {
      network->start_flow(network_path(f), f.bytes, 0.0, [this](engine::Engine& e) { flow_done(e); },
                          f.rate_cap_bytes_per_s);
    }
    if (pending == 0) next_phase(engine);
  }
  std::span<const topologies::LinkId> network_path(const FlowSpec& f) const;
  void flow_done(engine::Engine& engine) {
    if (--pending == 0) next_phase(engine);
  }
  void next_phase(engine::Engine& engine) {
    ++phase;
    start_phase(engine);
  }
  const topologies::Topology* topology = nullptr;
};

std::span<const topologies::LinkId> PhaseRunner::network_path(const FlowSpec& f) const {
  return topology->path(f.src, f.dst, f.flow_key).links;
}

}  // namespace

double analytical_time_s(const CollectivePlan& plan, const topologies::Topology& topology) {
  return shared_analytical_time_s(std::span<const CollectivePlan>(&plan, 1), 1, topology);
}

double shared_analytical_time_s(std::span<const CollectivePlan> plans, std::size_t gating,
                                const topologies::Topology& topology) {
  return shared_analytical_time_s(plans, gating, topology, LinkLoad{});
}

namespace {

/// Sorts `entries` by link and keeps one per link, its counts folded by `fold`.
template <class Fold>
LinkLoad collapse_by_link(LinkLoad entries, Fold fold) {
  std::sort(entries.begin(), entries.end());
  LinkLoad out;
  for (const auto& [link, count] : entries) {
    if (!out.empty() && out.back().first == link) {
      out.back().second = fold(out.back().second, count);
    } else {
      out.emplace_back(link, count);
    }
  }
  return out;
}

}  // namespace

LinkLoad link_load(std::span<const CollectivePlan> plans, const topologies::Topology& topology) {
  std::size_t phases = 0;
  for (const CollectivePlan& plan : plans) phases = std::max(phases, plan.phases.size());
  LinkLoad load;
  std::vector<topologies::LinkId> crossed;
  for (std::size_t k = 0; k < phases; ++k) {
    phase_links(plans, k, topology, crossed);
    for (std::size_t i = 0; i < crossed.size();) {
      std::size_t j = i;
      while (j < crossed.size() && crossed[j] == crossed[i]) ++j;
      load.emplace_back(crossed[i], static_cast<double>(j - i));
      i = j;
    }
  }
  // The most in any one phase, per link.
  return collapse_by_link(std::move(load), [](double a, double b) { return std::max(a, b); });
}

LinkLoad summed_link_load(std::span<const LinkLoad* const> loads) {
  LinkLoad all;
  for (const LinkLoad* load : loads) all.insert(all.end(), load->begin(), load->end());
  return collapse_by_link(std::move(all), [](double a, double b) { return a + b; });
}

double shared_analytical_time_s(std::span<const CollectivePlan> plans, std::size_t gating,
                                const topologies::Topology& topology, const LinkLoad& background) {
  if (gating == 0 || gating > plans.size()) {
    throw ConfigError(fmt::format("shared collective time: {} gating plans of {}", gating, plans.size()));
  }
  double base_s = 0;
  std::size_t phases = 0;
  for (const CollectivePlan& plan : plans) {
    base_s = std::max(base_s, plan.base_latency_s);
    phases = std::max(phases, plan.phases.size());
  }
  double total_s = base_s;
  for (std::size_t k = 0; k < phases; ++k) {
    double fixed_s = 0;
    for (const CollectivePlan& plan : plans) {
      if (k < plan.phases.size()) fixed_s = std::max(fixed_s, plan.phases[k].fixed_latency_s);
    }
    total_s += fixed_s + phase_transfer_s(plans, k, gating, topology, background);
  }
  return total_s;
}

double flow_time_s(const CollectivePlan& plan, const topologies::Topology& topology) {
  engine::Engine engine;
  topologies::FlowNetwork network(engine, topology);
  PhaseRunner runner{&plan, &network};
  runner.topology = &topology;
  engine.schedule_after(engine::seconds_to_ps(plan.base_latency_s),
                        [&runner](engine::Engine& e) { runner.start_phase(e); });
  engine.run();
  if (runner.finished_ps < 0) {
    throw SimulationError("flow evaluation of a collective stopped before its last phase finished");
  }
  return engine::ps_to_seconds(runner.finished_ps);
}

}  // namespace clustersim::models
