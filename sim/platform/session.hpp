#pragma once
/// One run on a platform: the engine every workload schedules on and the communication
/// runtime they share (so one workload's traffic contends with another's under the flow
/// fidelity).
#include <functional>
#include <string_view>
#include <cstdint>
#include <memory>

#include "models/comm/collective_model.hpp"
#include "models/reliability/goodput.hpp"
#include "sim/config/name_table.hpp"
#include "sim/engine/engine.hpp"
#include "sim/platform/comm_runtime.hpp"
#include "sim/platform/resource_limits.hpp"
#include "sim/platform/trace_sink.hpp"
#include "sim/platform/variability.hpp"

namespace clustersim::platform {

class Platform;

/// Which ranks a replicated workload simulates (`simulation.mode`): one representative per
/// group of identical replicas (`symmetric`), or every one (`full`, needed when replicas differ:
/// stragglers, failures, heterogeneous clusters).
enum class SimulationMode : std::uint8_t { symmetric, full };

/// "symmetric", "full".
const config::NameTable<SimulationMode>& simulation_mode_names();
/// "symmetric" or "full".
std::string_view simulation_mode_name(SimulationMode mode);

/// The run's options (`simulation`).
struct SessionOptions {
  /// Flow: the fidelity that sees contention between communications as well as among a
  /// collective's replicas; analytical is the faster closed form.
  Fidelity fidelity = Fidelity::flow;
  SimulationMode mode = SimulationMode::symmetric;
  std::uint64_t seed = 1;
  /// Steps a training workload simulates, each with fresh draws of the variability and the
  /// probabilistic stragglers (`simulation.iterations`); 1: the single nominal step.
  int iterations = 1;
  VariabilitySpec variability;  ///< `simulation.variability`; none by default
  models::FailureSpec failures;  ///< `simulation.failures`: the goodput report of a training run
  ResourceLimits limits;  ///< `simulation.limits`: the session's engine stops past limits.events
};

/// An engine and a communication backend of `options.fidelity` on it. Neither copyable nor
/// movable (the backend refers to the engine).
class Session {
 public:
  /// Binds to `collectives` (and its topology), which must outlive the session.
  Session(const models::CollectiveModel& collectives, SessionOptions options);
  /// The platform's collective model; under the flow fidelity, with the platform's link faults
  /// (Platform::link_faults) applied from time 0, unless `intact_baseline`: a second run of the
  /// same workloads on the intact network, which measures what the faults cost
  /// (WorkloadResult::compare_with_intact); its workloads report their step alone.
  Session(const Platform& platform, SessionOptions options, bool intact_baseline = false);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  engine::Engine& engine() { return engine_; }
  CommRuntime& comm() { return *comm_; }
  const SessionOptions& options() const { return options_; }
  /// True for the intact-network baseline run of a platform with link faults (the constructor).
  bool intact_baseline() const { return intact_baseline_; }
  /// Where workloads report their timeline (not owned; nullptr: no trace).
  TraceSink* trace() const { return trace_; }
  void set_trace(TraceSink* trace) { trace_ = trace; }
  /// How far the primary workload is, for a progress line: `unit`s done out of those known
  /// (a training step's tasks, a serving run's requests; may be empty: nobody is watching).
  /// Workloads call it from their observers; it must not change the run.
  using TaskProgress = std::function<void(std::string_view unit, std::size_t done, std::size_t total)>;
  const TaskProgress& progress() const { return progress_; }
  void set_progress(TaskProgress progress) { progress_ = std::move(progress); }

 private:
  SessionOptions options_;
  bool intact_baseline_ = false;
  TraceSink* trace_ = nullptr;
  TaskProgress progress_;
  engine::Engine engine_;
  std::unique_ptr<CommRuntime> comm_;
};

}  // namespace clustersim::platform
