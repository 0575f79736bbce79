#pragma once
/// The communication runtime: collectives and point-to-point transfers between accelerators,
/// workload-neutral (ASTRA-sim's network API shape). A workload asks it how a communication
/// runs and adds a task that does exactly that; which backend answers is the scenario's
/// `simulation.fidelity`, never a branch in the workload:
///   * AnalyticalComm: a fixed duration from the closed-form collective model, with the
///     replicas of a collective sharing the links they cross (no contention between
///     different communications);
///   * FlowComm: phases of flows on one shared max-min fair flow network, so concurrent
///     communications of every workload on the platform contend for links.
/// An uncontended communication takes the same time in both (the flow backend lowers the plan
/// the closed form times).
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "models/comm/collective_model.hpp"
#include "models/comm/comm_fidelity.hpp"
#include "models/comm/plan_evaluators.hpp"
#include "sim/config/name_table.hpp"
#include "sim/engine/profile.hpp"
#include "topologies/link_faults.hpp"
#include "sim/exec/task_graph.hpp"
#include "sim/platform/replica_index.hpp"
#include "topologies/flow_network.hpp"
#include "topologies/link_utilisation.hpp"

namespace clustersim::platform {

/// The network fidelity of a run (`simulation.fidelity`): which CommRuntime backend answers.
using Fidelity = models::CommFidelity;

/// "analytical", "flow" (models::comm_fidelity_names).
inline const config::NameTable<Fidelity>& fidelity_names() { return models::comm_fidelity_names(); }
/// "analytical" or "flow".
inline std::string_view fidelity_name(Fidelity fidelity) { return models::comm_fidelity_name(fidelity); }

/// One communication backend bound to one run (engine) of a platform.
class CommRuntime {
 public:
  explicit CommRuntime(const models::CollectiveModel& collectives) : collectives_(&collectives) {}
  virtual ~CommRuntime() = default;
  CommRuntime(const CommRuntime&) = delete;
  CommRuntime& operator=(const CommRuntime&) = delete;

  /// How `kind` of `bytes` (nccl-tests convention, per group) runs when every group of
  /// `groups` runs it at once (replicas of one collective; send_recv groups are {src, dst}).
  /// The first group is the caller's: a fixed duration is that group's; an asynchronous run
  /// ends when the caller's group is done (every group for collectives, whose replicas
  /// synchronise; only the first for send_recv, whose replicas are independent). Groups of
  /// fewer than two accelerators are dropped. Throws ConfigError for a bad group or bytes.
  virtual exec::Work collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                double bytes) = 0;
  /// A point-to-point transfer of `bytes` from `src` to `dst`.
  exec::Work transfer(int src, int dst, double bytes) {
    const std::vector<int> pair{src, dst};
    return collective(models::CollectiveKind::send_recv, std::span<const std::vector<int>>(&pair, 1), bytes);
  }

  /// Changes the capacity of directed link `link` over time (`profile` of factors of its
  /// nominal payload rate; 0 = down). Throws SimulationError where the backend has no links
  /// (analytical), ConfigError for a bad link or profile.
  virtual void apply_link_profile(topologies::LinkId link, const engine::Profile& profile) = 0;

  /// Applies degraded and failed cables and switches (`cluster.network.faults`, resolved) from
  /// now on, their times absolute: see FlowComm. Throws SimulationError where the backend has no
  /// links (analytical).
  virtual void apply_link_faults(const topologies::NetworkFaultPlan& plan) = 0;

  /// Bytes carried per directed link so far; nullptr when the backend does not track links.
  virtual const topologies::LinkTraffic* traffic() const { return nullptr; }
  /// Link utilisation per network tier over time so far (topologies/link_utilisation.hpp);
  /// nullptr when the backend does not track links.
  virtual const topologies::TierUtilisationSeries* tier_utilisation() const { return nullptr; }
  /// Flows started so far (0 for the analytical backend).
  virtual std::uint64_t flows_started() const { return 0; }
  /// Stops recording tier_utilisation() (a run that reads only its times); call before the
  /// first flow. Nothing to stop where the backend does not track links.
  virtual void stop_recording_utilisation() {}
  /// The backend's fidelity.
  virtual Fidelity fidelity() const = 0;

  /// Closed-form seconds of `kind` of `bytes` on one group (no contention), for costing ops.
  double time_s(models::CollectiveKind kind, std::span<const int> group, double bytes) const {
    return collectives_->time_s(kind, group, bytes);
  }
  const models::CollectiveModel& collectives() const { return *collectives_; }

 private:
  const models::CollectiveModel* collectives_;
};

/// Durations from the closed-form model, fixed when a communication starts. A collective that
/// several groups run at once (the replicas of a TP, DP or PP collective) takes the first
/// group's closed-form time scaled by how much the replicas slow each other where their flows
/// share links (an oversubscribed tier, a torus ring, dragonfly global links): the ratio of the
/// replicas' merged plans timed together (models::shared_analytical_time_s, the phases the flow
/// backend runs) to the first group's plan alone. Communications already running when one
/// starts (another collective, the gradient reduction beside the backward's TP collectives,
/// another job's traffic) load the links it crosses with their steady flows
/// (models::link_load) and slow it the same way; it does not slow them in turn (their
/// durations are fixed), which the flow fidelity's max-min sharing does.
class AnalyticalComm final : public CommRuntime {
 public:
  /// Binds to `engine` (for the time a communication starts) and `collectives`; both must
  /// outlive this object and every task started through it.
  AnalyticalComm(engine::Engine& engine, const models::CollectiveModel& collectives)
      : CommRuntime(collectives), engine_(&engine) {}
  /// An asynchronous run whose duration is fixed when it starts, from the communications
  /// running then (none: the same every time).
  exec::Work collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) override;
  /// The analytical fidelity has no links: throws SimulationError (use the flow fidelity).
  void apply_link_profile(topologies::LinkId link, const engine::Profile& profile) override;
  /// The analytical fidelity has no links: throws SimulationError (use the flow fidelity).
  void apply_link_faults(const topologies::NetworkFaultPlan& plan) override;
  Fidelity fidelity() const override { return Fidelity::analytical; }

  /// >= 1 in practice: the replicas' shared time over the first group's time alone (1 for one
  /// group), with nothing else running.
  double sharing_factor(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes);

 private:
  struct Prepared {
    std::vector<models::CollectivePlan> plans;  ///< one per replica group
    std::size_t gating = 0;                      ///< plans that end the communication
    double alone_s = 0;                          ///< the first group's closed-form time
    double shared_s = 0;                         ///< the replicas together, nothing else running
    double plans_s = 0;                          ///< the plans' own closed-form time, nothing else running
    models::LinkLoad load;                       ///< what it puts on the links while it runs
  };
  struct Running {
    int handle = 0;
    engine::TimePs end_ps = 0;
    std::uint64_t serial = 0;  ///< which start (the same handle may run more than once at a time)
  };
  int prepare(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes);
  /// Seconds of `handle` started now, beside what is running.
  double duration_s(int handle);
  /// Seconds `handle` would take if `running` (each crossing one of its links) ran beside it
  /// for all of it.
  double busy_s(int handle, std::span<const Running> running);

  engine::Engine* engine_;
  ReplicaIndex index_;
  std::vector<Prepared> prepared_;
  /// The running communications by the links they load (a start looks only at those on its
  /// own links; ended ones are dropped as they are met).
  std::vector<std::vector<Running>> running_on_link_;
  std::uint64_t starts_ = 0;
  /// Durations by (handle, the running handles, sorted): the same meetings recur every step.
  std::map<std::vector<int>, double> met_;
  std::vector<Running> meeting_;                       ///< duration_s's scratch: those it meets
};

}  // namespace clustersim::platform
