#pragma once
/// Runs a TaskGraph on the discrete-event engine: every task finish is an engine event, and so
/// is the start of a task that waits for its release time, joins a group or starts
/// communication (tagged with the task id, so the engine fingerprint reflects the schedule); a
/// fixed-duration task that may start when its stream and prerequisites free it starts within
/// that event (its start only schedules its finish). The
/// executor schedules; it does not own the run loop: its owner calls engine.run() (perhaps
/// with other executors and workloads on the same engine), may add tasks while the engine
/// runs, and asks finish() for the outcome.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/engine/profile.hpp"
#include "sim/exec/observer.hpp"
#include "sim/exec/task_graph.hpp"

namespace clustersim::exec {

/// The compute-sharing model: while any task runs on a communication stream of device d, the
/// fixed-duration compute tasks (not of kind communication) of d's compute streams progress at
/// compute_rate_while_communicating[d] of full speed (communication kernels occupy some of the
/// device's SMs); their finish is rescheduled whenever that changes. Devices beyond the vector,
/// and an empty vector, run at full speed.
struct ExecutionOptions {
  std::vector<double> compute_rate_while_communicating;  ///< per device, in (0, 1]
  /// The nominal duration (picoseconds, before device speed and compute sharing stretch it)
  /// of one instance of a fixed-duration task, given the graph's duration: how a workload
  /// draws kernel-time variability per run. A group task asks once, for its first member.
  /// Must return >= 0. Empty: the graph's (or group_start's) duration.
  std::function<engine::TimePs(int instance, TaskId task, engine::TimePs nominal_ps)> duration;
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
  /// How a group task runs once its members have arrived (e.g. the group's own flows, or its
  /// own closed-form time); empty: the task's fixed duration, or its own start hook.
  std::function<Work(TaskId task, int first_instance, const GroupMembership& group)> group_start;
};

/// What a finished run leaves, in absolute engine time.
struct ExecutionResult {
  engine::TimePs start_time_ps = 0;  ///< engine time when start() was called
  engine::TimePs makespan_ps = 0;    ///< last task end - start_time_ps (0 for an empty graph)
  /// Per instance x stream (instance * streams + stream): end of its last task (the start time
  /// for a stream that ran nothing).
  std::vector<engine::TimePs> stream_end_ps;
};

/// Executes a graph. Streams are FIFO: a ready task behind a blocked one waits. A fixed task
/// ends duration_ps after it starts, stretched while its device computes slower (compute
/// sharing, device speed); an asynchronous task (Task::start set) ends when the callback
/// handed to its start hook is called (SimulationError if it is called twice; a task whose
/// callback is never called leaves the graph unfinished, reported as a deadlock).
///
/// Device speed: each (instance, device) has a speed, 1 by default; a fixed-duration task of a
/// compute stream (not of kind communication) progresses at that fraction of nominal. It can
/// change at any simulated time (set_device_speed, apply_speed_profile): running tasks bank
/// the work done and are rescheduled. Speed 0 stalls them until it is raised again.
class Executor {
 public:
  /// Binds `graph` and `engine`, which must outlive the executor (and every event it schedules).
  /// The graph may only grow, through this executor, once start() was called. Throws
  /// ConfigError for a rate outside (0, 1] or fewer than one instance.
  Executor(engine::Engine& engine, TaskGraph& graph, ExecutionOptions options = {}, Replication replication = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Adds an observer (not owned; must outlive the run). Observers are called in the order
  /// they were added.
  void add_observer(ExecutionObserver& observer);

  /// Sets the speed of `device` of `instance` from now on (> 0, or 0 to stall; finite).
  /// Throws ConfigError for an unknown instance, a negative device, or a bad speed.
  void set_device_speed(int instance, int device, double speed);
  /// Applies `profile` to (instance, device): its initial value now, each change at its time
  /// (engine events; changes in the past are rejected). Throws ConfigError as check_profile
  /// and set_device_speed do.
  void apply_speed_profile(int instance, int device, const engine::Profile& profile);

  /// Calls `callback` (from the engine event of the task end) whenever every task instance has
  /// ended: once for a fixed graph, again after each batch of tasks added later completes.
  void on_finished(std::function<void()> callback);

  /// Schedules the ready tasks at engine.now(). Call once; then run the engine.
  void start();

  /// Adds a stream, or a task at the end of `stream` (for every instance), before or while the
  /// engine runs; it starts as soon as it is at its stream's head with its prerequisites done
  /// (tasks that already ended count as done). Same checks as TaskGraph's.
  StreamId add_stream(std::string name, int device = -1, StreamRole role = StreamRole::other);
  TaskId add_task(StreamId stream, engine::TimePs duration_ps, TaskTraits traits, std::string_view label,
                  std::span<const TaskId> prerequisites = {});
  TaskId add_async_task(StreamId stream, AsyncStart start, TaskTraits traits, std::string_view label,
                        std::span<const TaskId> prerequisites = {});
  /// A task that runs as `work` says (fixed or asynchronous).
  TaskId add_work(StreamId stream, Work work, TaskTraits traits, std::string_view label,
                  std::span<const TaskId> prerequisites = {});

  /// Task instances that ended, and all of them.
  std::size_t tasks_finished() const;
  std::size_t task_instances() const;
  /// True when every task instance ended.
  bool finished() const { return tasks_finished() == task_instances(); }

  /// The outcome once the engine has drained. Throws SimulationError if tasks are unfinished
  /// (a deadlock), naming the first blocked task of each stream and what it waits on.
  ExecutionResult finish() const;

  const TaskGraph& graph() const { return *graph_; }

 private:
  class State;
  TaskGraph* graph_;
  std::unique_ptr<State> state_;
};

/// Runs `graph` alone on `engine`: an executor started at engine.now(), the engine run until it
/// drains, and its finish(). Observers are added in order.
ExecutionResult run_graph(engine::Engine& engine, TaskGraph& graph, ExecutionOptions options = {},
                          Replication replication = {}, std::span<ExecutionObserver* const> observers = {});

}  // namespace clustersim::exec
