#include "models/comm/plan_evaluators.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"
#include "topologies/flow_network.hpp"

namespace clustersim::models {
namespace {

double phase_transfer_s(const Phase& phase, const topologies::Topology& topology) {
  std::vector<topologies::LinkId> crossed;
  for (const FlowSpec& f : phase.flows) {
    const auto& links = topology.path(f.src, f.dst, f.flow_key).links;
    crossed.insert(crossed.end(), links.begin(), links.end());
  }
  std::sort(crossed.begin(), crossed.end());
  const auto& all_links = topology.links();
  double slowest_s = 0;
  for (const FlowSpec& f : phase.flows) {
    double share_bytes_per_s = f.rate_cap_bytes_per_s;
    for (const topologies::LinkId id : topology.path(f.src, f.dst, f.flow_key).links) {
      const auto range = std::equal_range(crossed.begin(), crossed.end(), id);
      const double count = static_cast<double>(range.second - range.first);
      share_bytes_per_s =
          std::min(share_bytes_per_s, all_links[static_cast<std::size_t>(id)].payload_bytes_per_s() / count);
    }
    if (share_bytes_per_s < std::numeric_limits<double>::infinity()) {
      slowest_s = std::max(slowest_s, f.bytes / share_bytes_per_s);
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
  double total_s = plan.base_latency_s;
  for (const Phase& phase : plan.phases) total_s += phase.fixed_latency_s + phase_transfer_s(phase, topology);
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
