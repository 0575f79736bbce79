#pragma once
/// One run on a platform: the engine every workload schedules on and the communication
/// runtime they share (so one workload's traffic contends with another's under the flow
/// fidelity).
#include <cstdint>
#include <memory>

#include "models/comm/collective_model.hpp"
#include "sim/config/name_table.hpp"
#include "sim/engine/engine.hpp"
#include "sim/platform/comm_runtime.hpp"
#include "sim/platform/trace_sink.hpp"

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
};

/// An engine and a communication backend of `options.fidelity` on it. Neither copyable nor
/// movable (the backend refers to the engine).
class Session {
 public:
  /// Binds to `collectives` (and its topology), which must outlive the session.
  Session(const models::CollectiveModel& collectives, SessionOptions options);
  /// The platform's collective model.
  Session(const Platform& platform, SessionOptions options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  engine::Engine& engine() { return engine_; }
  CommRuntime& comm() { return *comm_; }
  const SessionOptions& options() const { return options_; }
  /// Where workloads report their timeline (not owned; nullptr: no trace).
  TraceSink* trace() const { return trace_; }
  void set_trace(TraceSink* trace) { trace_ = trace; }

 private:
  SessionOptions options_;
  TraceSink* trace_ = nullptr;
  engine::Engine engine_;
  std::unique_ptr<CommRuntime> comm_;
};

}  // namespace clustersim::platform
