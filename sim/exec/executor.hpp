#pragma once
/// Runs a TaskGraph on the discrete-event engine: every task start and finish is an engine
/// event (tagged with the task id, so the engine fingerprint reflects the schedule).
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/exec/task_graph.hpp"

namespace clustersim::exec {

/// The compute-sharing model: while any task runs on a communication stream of device d, the
/// fixed-duration compute tasks (not communication kinds) of d's compute streams progress at
/// compute_rate_while_communicating[d]
/// of full speed (communication kernels occupy some of the device's SMs); their finish is
/// rescheduled whenever that changes. Devices beyond the vector, and an empty vector, run at
/// full speed.
struct ExecutionOptions {
  std::vector<double> compute_rate_while_communicating;  ///< per device, in (0, 1]
};

/// The group a synchronising task's instance joins (Replication): instances with the same key
/// run that task together, once all `size` of them have reached it.
struct GroupMembership {
  std::uint64_t key = 0;
  int size = 1;  ///< 1: the task runs on its own instance alone
};

/// Several instances of one template graph run at once and synchronise at group tasks (tasks
/// with Task::sync != 0): "full" simulation of many ranks that run the same program. Instance
/// i's stream s is its own; a group task starts when every member instance has it at the head
/// of its stream with its prerequisites done, runs once (its duration, its start hook, or
/// group_start's), and ends for all members together.
struct Replication {
  int instances = 1;
  /// For a task with sync != 0: the group `instance` joins. Must return the same size for every
  /// member of a key. Empty: every task runs per instance.
  std::function<GroupMembership(int instance, TaskId task)> group_of;
  /// Start hook of a group task once its members have arrived (e.g. the group's own flows);
  /// empty: the task's fixed duration, or its own start hook.
  std::function<AsyncStart(TaskId task, int first_instance, const GroupMembership& group)> group_start;
  /// Per instance x device (index instance * devices + device): speed of the fixed-duration
  /// tasks of its compute streams relative to nominal (> 0; 0.8: a straggler at 80 %). Empty:
  /// all 1.
  std::vector<double> compute_speed;
  /// Instance whose per-task start and end times the result keeps (-1: none).
  int tracked_instance = 0;
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
  /// Replicated runs: per instance x stream (instance * streams + stream), end of its last task.
  std::vector<engine::TimePs> instance_stream_end_ps;
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

  /// Runs `replication.instances` instances of the graph (see Replication). Per-task times and
  /// per-stream sums are those of the tracked instance; instance_stream_end_ps covers all.
  /// Throws ConfigError for a bad replication (instances < 1, a speed <= 0, a group whose
  /// members disagree on its size), SimulationError for a deadlock.
  ExecutionResult run(engine::Engine& engine, const Replication& replication) const;

 private:
  const TaskGraph* graph_;
  ExecutionOptions options_;
};

}  // namespace clustersim::exec
