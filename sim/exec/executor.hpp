#pragma once
/// Runs a TaskGraph on the discrete-event engine: every task start and finish is an engine
/// event (tagged with the task id, so the engine fingerprint reflects the schedule).
#include <cstdint>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/exec/task_graph.hpp"

namespace clustersim::exec {

/// The compute-sharing model: while any task runs on a communication stream of device d, the
/// fixed-duration tasks of d's compute streams progress at compute_rate_while_communicating[d]
/// of full speed (communication kernels occupy some of the device's SMs); their finish is
/// rescheduled whenever that changes. Devices beyond the vector, and an empty vector, run at
/// full speed.
struct ExecutionOptions {
  std::vector<double> compute_rate_while_communicating;  ///< per device, in (0, 1]
};

/// When every task ran, in absolute engine time.
struct ExecutionResult {
  std::vector<engine::TimePs> start_ps;        ///< per task, picoseconds
  std::vector<engine::TimePs> end_ps;          ///< per task, picoseconds
  std::vector<engine::TimePs> stream_busy_ps;  ///< per stream: sum of its task durations (end - start for asynchronous tasks)
  std::vector<engine::TimePs> stream_end_ps;   ///< per stream: end of its last task (start time if empty)
  /// Per stream: time its fixed-duration tasks ran beyond their durations because
  /// communication shared the device (ExecutionOptions), picoseconds.
  std::vector<engine::TimePs> stream_slowdown_ps;
  engine::TimePs start_time_ps = 0;            ///< engine time when the run began
  engine::TimePs makespan_ps = 0;              ///< last task end - start_time_ps (0 for an empty graph)
};

/// Executes a graph. Streams are FIFO: a ready task behind a blocked one waits. A fixed task
/// ends duration_ps after it starts; an asynchronous task (Task::start set) ends when the
/// callback handed to its start hook is called (SimulationError if it is called twice; a task
/// whose callback is never called leaves the graph unfinished, reported as a deadlock).
class Executor {
 public:
  /// The graph must outlive the executor and must not change while it runs. Throws
  /// ConfigError for a rate outside (0, 1].
  explicit Executor(const TaskGraph& graph, ExecutionOptions options = {});

  /// Schedules the graph on `engine` starting at engine.now() and runs the engine until it
  /// drains. An empty graph gives an empty result with makespan 0. Throws SimulationError if
  /// the engine drains with tasks unfinished (a deadlock), naming the first blocked task of
  /// each stream and what it waits on.
  ExecutionResult run(engine::Engine& engine) const;

 private:
  const TaskGraph* graph_;
  ExecutionOptions options_;
};

}  // namespace clustersim::exec
