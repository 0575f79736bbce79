#include "sim/platform/flow_comm.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"
#include "sim/engine/time.hpp"

namespace clustersim::platform {

FlowComm::FlowComm(engine::Engine& engine, const models::CollectiveModel& collectives)
    : CommRuntime(collectives),
      utilisation_(collectives.topology().links()),
      network_(engine, collectives.topology()),
      engine_(&engine) {
  network_.set_load_listener(&utilisation_);
}

exec::Work FlowComm::collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) {
  return {0, starter(prepare(kind, groups, bytes))};
}

void FlowComm::apply_link_profile(topologies::LinkId link, const engine::Profile& profile) {
  // The flow network's profiles start from the link's current scale; the platform's start from
  // a value of their own, set now.
  engine::check_profile(profile, fmt::format("capacity profile of link {}", link), 0.0, false);
  topologies::LinkProfile changes;
  for (const engine::ProfileChange& change : profile.changes) changes.changes.push_back({change.at_ps, change.value});
  network_.apply_profile(link, changes);  // checks the link and the times before changing anything
  network_.set_link_scale(link, profile.initial);
}

int FlowComm::prepare(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) {
  if (const auto known = index_.find(kind, groups, bytes)) return *known;
  Prepared prepared;
  const topologies::Topology& topology = collectives().topology();
  // Pipeline sends of different replicas are independent (no replica waits for another's), so
  // a send-recv run ends with the first group's flows; the others load the network meanwhile.
  const bool first_group_gates = kind == models::CollectiveKind::send_recv;
  // Packet spraying: a flow between nodes becomes spray_paths equal subflows on independently
  // hashed equal-cost routes (the subflow index joins the flow's key).
  const topologies::ClusterNetworkSpec& network = topology.spec();
  const int spray = network.scale_out.routing == "spray" ? std::max(1, network.scale_out.spray_paths) : 1;
  const int per_node = std::max(1, network.accelerators_per_node);
  bool first_group = true;
  for (const models::CollectivePlan& plan : collectives().replica_plans(kind, groups, bytes)) {
    if (prepared.phases.size() < plan.phases.size()) prepared.phases.resize(plan.phases.size());
    prepared.base_latency_ps = std::max(prepared.base_latency_ps, engine::seconds_to_ps(plan.base_latency_s));
    for (std::size_t k = 0; k < plan.phases.size(); ++k) {
      PreparedPhase& phase = prepared.phases[k];
      phase.fixed_latency_ps =
          std::max(phase.fixed_latency_ps, engine::seconds_to_ps(plan.phases[k].fixed_latency_s));
      for (const models::FlowSpec& f : plan.phases[k].flows) {
        const int parts = f.src / per_node != f.dst / per_node ? spray : 1;
        for (int part = 0; part < parts; ++part) {
          const std::uint64_t key =
              part == 0 ? f.flow_key : engine::splitmix64(f.flow_key ^ (0x5b7a'0000ULL + static_cast<std::uint64_t>(part)));
          phase.flows.push_back(Flow{&topology.path(f.src, f.dst, key), f.bytes / parts, f.rate_cap_bytes_per_s / parts,
                                     f.src, f.dst, key});
        }
      }
      if (first_group || !first_group_gates) phase.gating_flows = phase.flows.size();
    }
    first_group = false;
  }
  plans_.push_back(std::move(prepared));
  const int handle = static_cast<int>(plans_.size() - 1);
  index_.insert(kind, groups, bytes, handle);
  return handle;
}

exec::AsyncStart FlowComm::starter(int handle) {
  if (handle < 0 || static_cast<std::size_t>(handle) >= plans_.size()) {
    throw ConfigError(fmt::format("unknown flow collective handle {} ({} prepared)", handle, plans_.size()));
  }
  const Prepared* plan = &plans_[static_cast<std::size_t>(handle)];
  return [this, plan](engine::Engine& engine, exec::DoneCallback done) {
    Run& run = runs_.emplace_back();
    run.plan = plan;
    run.done = std::move(done);
    start_phase(engine, run);
  };
}

void FlowComm::start_phase(engine::Engine& engine, Run& run) {
  if (run.phase == run.plan->phases.size()) {
    exec::DoneCallback done = std::move(run.done);
    done(engine);
    return;
  }
  const engine::TimePs wait_ps =
      run.plan->phases[run.phase].fixed_latency_ps + (run.phase == 0 ? run.plan->base_latency_ps : 0);
  if (wait_ps == 0) {
    start_flows(engine, run);
    return;
  }
  Run* r = &run;
  engine.schedule_after(wait_ps, [this, r](engine::Engine& e) { start_flows(e, *r); });
}

void FlowComm::start_flows(engine::Engine& engine, Run& run) {
  const PreparedPhase& phase = run.plan->phases[run.phase];
  run.pending = phase.gating_flows;
  if (run.pending == 0) {
    ++run.phase;
    start_phase(engine, run);
    return;
  }
  Run* r = &run;
  for (std::size_t i = 0; i < phase.flows.size(); ++i) {
    const Flow& f = phase.flows[i];
    ++flows_started_;
    const auto tag = reinterpret_cast<std::uint64_t>(&f);  // plans_ is a deque: its flows never move
    const std::span<const topologies::LinkId> links = route_of(f);
    if (i >= phase.gating_flows) {  // load only: its arrival moves no phase
      const topologies::FlowId id =
          network_.start_flow(links, f.bytes, 0.0, [](engine::Engine&) {}, f.rate_cap_bytes_per_s, tag);
      if (faults_) faults_->started_flow(id, links);
      continue;
    }
    const topologies::FlowId id = network_.start_flow(
        links, f.bytes, 0.0,
        [this, r](engine::Engine& e) {
          if (--r->pending == 0) {
            ++r->phase;
            start_phase(e, *r);
          }
        },
        f.rate_cap_bytes_per_s, tag);
    if (faults_) faults_->started_flow(id, links);
  }
}

void FlowComm::apply_link_faults(const topologies::NetworkFaultPlan& plan) {
  if (plan.faults.empty()) return;
  if (faults_) throw ConfigError("link faults are applied once per run");
  faults_ = std::make_unique<topologies::LinkFaultInjector>(
      *engine_, collectives().topology(), network_, plan, [](std::uint64_t tag) {
        const Flow& flow = *reinterpret_cast<const Flow*>(tag);  // NOLINT: start_flows tags a flow with its address
        return topologies::RouteKey{flow.src, flow.dst, flow.flow_key};
      });
}

std::span<const topologies::LinkId> FlowComm::route_of(const Flow& flow) const {
  if (!faults_) return flow.path->links;
  return faults_->links(*flow.path, {flow.src, flow.dst, flow.flow_key});
}

}  // namespace clustersim::platform
