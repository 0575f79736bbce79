#pragma once
/// The `flow` backend of the communication runtime (comm_runtime.hpp): collectives and
/// transfers run as phases of flows on one topologies::FlowNetwork shared by every workload of
/// the run, so concurrent collectives (and the replicas of a collective) contend for links with
/// max-min fair sharing.
///
/// Plans are those of the closed-form model (models::CollectiveModel): the algorithm and
/// protocol it picks for the representative group are lowered for every replica group (a
/// replica group the algorithm cannot serve gets its own choice), with the same base latency,
/// step latencies, wire bytes and protocol rate ceilings. An uncontended collective therefore
/// takes the closed-form time, up to picosecond rounding; only contention makes it slower.
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "models/comm/collective_model.hpp"
#include "models/comm/collective_plan.hpp"
#include "sim/engine/engine.hpp"
#include "sim/exec/task_graph.hpp"
#include "sim/platform/comm_runtime.hpp"
#include "sim/platform/replica_index.hpp"
#include "topologies/flow_network.hpp"
#include "topologies/link_fault_injector.hpp"
#include "topologies/link_utilisation.hpp"
#include "topologies/topology.hpp"

namespace clustersim::platform {

/// Prepared collectives and the shared flow network they run on.
class FlowComm final : public CommRuntime {
 public:
  /// Binds to `engine` and `collectives` (and its topology), which must outlive this object
  /// and every task started through it.
  FlowComm(engine::Engine& engine, const models::CollectiveModel& collectives);

  /// starter(prepare(kind, groups, bytes)): an asynchronous run of the groups' flows.
  exec::Work collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) override;
  void apply_link_profile(topologies::LinkId link, const engine::Profile& profile) override;
  /// The fault model of topologies::LinkFaultInjector on this backend's network: degraded
  /// cables, failed ones stalling their flows, then rerouting them after the plan's delay, a
  /// partition a SimulationError. Call before the run's first flow; the times are absolute.
  /// Rerouted flows keep their phase's fixed latency (the plan's), not the new route's hops.
  void apply_link_faults(const topologies::NetworkFaultPlan& plan) override;
  const topologies::LinkTraffic* traffic() const override { return &network_.traffic(); }
  const topologies::TierUtilisationSeries* tier_utilisation() const override { return &utilisation_.series(); }
  std::uint64_t flows_started() const override { return flows_started_; }
  void stop_recording_utilisation() override { network_.set_load_listener(nullptr); }
  Fidelity fidelity() const override { return Fidelity::flow; }

  /// Prepares `kind` of `bytes` (nccl-tests convention, per group) run at the same time by
  /// every group of `groups` (groups in ring order; send-recv groups are {src, dst}). The
  /// groups' plans are merged phase by phase: phase k of the merged plan holds the flows of
  /// phase k of every group and the largest fixed latency; the base latency is waited before
  /// phase 0. Groups of fewer than two accelerators are dropped. Identical requests share one plan. Returns a handle for
  /// `starter`. Throws ConfigError for a bad group or bytes (CollectiveLowering::check_group).
  int prepare(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes);

  /// A start hook for exec::TaskGraph::add_async_task: waits each phase's fixed latency, then
  /// starts its flows; the next phase starts when the last flow arrives; the task ends when
  /// the last phase is done (at once when the plan has no flows). Send-recv is the exception:
  /// the replicas' pipeline sends are independent (no replica waits for another's), so the
  /// first group's (the representative's) flow ends it and the other groups' flows only load
  /// the network; every other kind waits for all groups, as its replicas synchronise.
  exec::AsyncStart starter(int handle);

  /// Prepared (distinct) plans.
  std::size_t plan_count() const { return plans_.size(); }

 private:
  struct Flow {
    const topologies::Path* path = nullptr;
    double bytes = 0;
    double rate_cap_bytes_per_s = 0;
    int src = 0;                  ///< accelerators and flow key of `path`, to reroute it
    int dst = 0;
    std::uint64_t flow_key = 0;
  };
  struct PreparedPhase {
    engine::TimePs fixed_latency_ps = 0;
    std::vector<Flow> flows;
    /// The first flows whose arrival ends the phase: all of them, except for send-recv, where
    /// only the first group's (the representative's) gate it.
    std::size_t gating_flows = 0;
  };
  struct Prepared {
    engine::TimePs base_latency_ps = 0;
    std::vector<PreparedPhase> phases;
  };
  struct Run {
    const Prepared* plan = nullptr;
    std::size_t phase = 0;
    std::size_t pending = 0;
    exec::DoneCallback done;
  };
  void start_phase(engine::Engine& engine, Run& run);
  void start_flows(engine::Engine& engine, Run& run);
  /// The links `flow` takes now: its route, or the one over the surviving links once a
  /// failure has been rerouted. Throws SimulationError when no route survives.
  std::span<const topologies::LinkId> route_of(const Flow& flow) const;

  topologies::TierUtilisationRecorder utilisation_;  ///< listens to network_ (declared first: outlives it)
  topologies::FlowNetwork network_;
  ReplicaIndex index_;  ///< prepared plans (handles) by (kind, groups, bytes)
  std::deque<Prepared> plans_;
  std::deque<Run> runs_;
  std::uint64_t flows_started_ = 0;
  engine::Engine* engine_ = nullptr;
  /// cluster.network.faults: degrades, fails and reroutes (declared last: it refers to network_).
  std::unique_ptr<topologies::LinkFaultInjector> faults_;
};

}  // namespace clustersim::platform
