#pragma once
/// Workloads on a platform. A scenario names one primary workload (`workload:`) and, optionally,
/// other jobs sharing the platform (`jobs:`); each is a WorkloadSpec of some kind (training,
/// a synthetic collective loop, serving) that the runner instantiates on the platform and
/// starts on one shared Session. Workloads add their work as tasks to executors on the
/// session's engine, possibly while it runs (open-loop work: arrivals, one iteration after
/// another), and report a WorkloadResult.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/platform/platform.hpp"
#include "sim/platform/session.hpp"

namespace clustersim::platform {

/// Accelerators [first, first + count) of the platform.
struct Allocation {
  int first = 0;
  int count = 0;
  int end() const { return first + count; }
};

/// One number of a workload's summary.
struct Metric {
  std::string name;  ///< e.g. "rounds", "bytes_per_round"
  double value = 0;
  std::string unit;  ///< "s", "B", "B/s", "" for counts
};

/// What a workload produced. Kinds with a richer result derive from it (training's
/// TrainingResult); reports fall back to the metrics and notes for the others.
struct WorkloadResult {
  virtual ~WorkloadResult() = default;
  std::string kind;                ///< the workload kind
  std::vector<Metric> metrics;     ///< its headline numbers, with units
  std::vector<std::string> notes;  ///< assumptions and observations
  /// On a platform with link faults (flow fidelity) the runner runs every workload again on the
  /// intact network, the same other jobs beside it (Session::intact_baseline), and hands each
  /// result its counterpart there: what the faults cost this workload. Default: nothing to say.
  virtual void compare_with_intact(const WorkloadResult& /*intact*/, const topologies::NetworkFaultPlan& /*plan*/) {}
  /// Whether compare_with_intact says anything: the runner skips the second run when no result
  /// of the scenario does.
  virtual bool compares_with_intact() const { return false; }
  /// The figures a change of the models is judged by (runner::compare_with_default_tables);
  /// default: the metrics.
  virtual std::vector<Metric> headline() const { return metrics; }
};

/// A workload running in a session.
class Workload {
 public:
  virtual ~Workload() = default;
  /// Adds its work to `session` (tasks on its executors, engine events); it may keep adding
  /// work while the engine runs. Calls `on_done` once, from an engine event, when its work is
  /// complete (an open-loop workload: once stopped and its work in flight is done).
  virtual void start(Session& session, std::function<void()> on_done) = 0;
  /// Asks it to stop generating new work (the primary workload finished); work in flight
  /// completes. Idempotent.
  virtual void stop() {}
  /// After the engine drained: its result. Throws SimulationError for work that could not
  /// complete (a deadlock) or a result the simulation cannot honestly give.
  virtual std::unique_ptr<WorkloadResult> finish(Session& session) = 0;
};

/// A workload's validated settings.
class WorkloadSpec {
 public:
  virtual ~WorkloadSpec() = default;
  /// The kind's name ("training", "collective-loop", ...).
  virtual std::string_view kind() const = 0;
  /// The accelerators it is pinned to, or nullopt: the platform's accelerators the pinned jobs
  /// leave (the primary workload).
  virtual std::optional<Allocation> pinned() const { return std::nullopt; }
  /// Checks what must hold before anything runs on `platform` within `allocation` (e.g. that it
  /// fits in device memory) and builds the running workload. Throws ConfigError or
  /// SimulationError (models::DoesNotFitError).
  virtual std::unique_ptr<Workload> instantiate(const Platform& platform, const Allocation& allocation,
                                                const SessionOptions& options) const = 0;
};

/// The primary workload's allocation on a platform of `accelerators` accelerators when other
/// jobs are pinned to `pinned` ranges: [0, first pinned accelerator). Pinned ranges must lie
/// inside the platform, not overlap, and sit after the primary's (the primary keeps the
/// platform's first accelerators). Throws ConfigError naming the ranges otherwise.
Allocation primary_allocation(int accelerators, std::span<const Allocation> pinned);

}  // namespace clustersim::platform
