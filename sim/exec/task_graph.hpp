#pragma once
/// A task graph for the executor: streams (models of CUDA streams of one rank) holding tasks in
/// FIFO order, and dependencies between tasks on any streams.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/time.hpp"

namespace clustersim::engine {
class Engine;
}

namespace clustersim::exec {

/// Index of a task in its TaskGraph (0-based, in insertion order).
using TaskId = std::int32_t;
/// Index of a stream in its TaskGraph (0-based, in insertion order).
using StreamId = std::int32_t;

/// What a task does; reports split time by it. The executor itself treats all kinds alike.
enum class TaskKind : std::uint8_t {
  compute,    ///< forward/backward kernels
  recompute,  ///< activation recomputation kernels (hardware FLOPs, not model FLOPs)
  tp_comm,    ///< tensor-parallel collective
  cp_comm,    ///< context-parallel exchange
  ep_comm,    ///< expert-parallel all-to-all (MoE token dispatch / combine)
  pp_comm,    ///< pipeline point-to-point transfer
  dp_comm,    ///< data-parallel gradient reduction or parameter gather
  optimizer,  ///< optimizer step
  other,
};

/// True for the communication kinds (tp, cp, ep, pp, dp).
constexpr bool is_communication(TaskKind kind) {
  return kind == TaskKind::tp_comm || kind == TaskKind::cp_comm || kind == TaskKind::ep_comm ||
         kind == TaskKind::pp_comm || kind == TaskKind::dp_comm;
}

/// Lower-case name of a kind ("compute", "tp_comm", ...).
std::string_view task_kind_name(TaskKind kind);

/// How a stream shares its device's compute units (executor.hpp, ExecutionOptions):
/// fixed-duration tasks on `compute` streams slow down while a task runs on a `communication`
/// stream of the same device (communication kernels occupy SMs). `other` streams neither.
enum class StreamRole : std::uint8_t { other, compute, communication };

/// Handed to an asynchronous task's start hook: call it exactly once, from an engine event at
/// the time the task ends (or from the hook itself for a task that ends at once).
using DoneCallback = std::function<void(engine::Engine&)>;
/// Start hook of an asynchronous task: called when the task starts (engine.now() is its start
/// time); it arranges for `done` to be called when the work completes, e.g. when the last
/// flow of a collective arrives on a topologies::FlowNetwork.
using AsyncStart = std::function<void(engine::Engine& engine, DoneCallback done)>;

/// One unit of work on one stream.
struct Task {
  StreamId stream = 0;
  /// Fixed-duration tasks: time the task occupies its stream, picoseconds (>= 0). Ignored for
  /// asynchronous tasks (0), whose duration is known only when `start` signals completion.
  engine::TimePs duration_ps = 0;
  TaskKind kind = TaskKind::other;
  std::string label;  ///< human-readable, used in deadlock messages and traces
  AsyncStart start;   ///< set: asynchronous task (ends when its DoneCallback is called)
  /// Non-zero: the task synchronises instances of a replicated run (a collective among ranks);
  /// the value is the builder's code for the kind of group (Replication::group_of reads it).
  std::uint8_t sync = 0;
};

/// "`task` may start only after `prerequisite` has finished".
struct Dependency {
  TaskId task = 0;
  TaskId prerequisite = 0;
};

/// Builder and container of the graph. A stream runs its tasks one at a time in the order
/// they were added; a task starts when it is at the head of its stream and all its
/// prerequisites have finished.
class TaskGraph {
 public:
  /// Adds a stream named `name` (e.g. "stage 2 compute"); returns its id. `device` (>= 0)
  /// and `role` place it for the executor's compute-sharing model; device -1 = none.
  /// Throws ConfigError for a device < -1.
  StreamId add_stream(std::string name, int device = -1, StreamRole role = StreamRole::other);

  /// Appends a task to the end of `stream`. Throws ConfigError for an unknown stream, a
  /// negative duration or an unknown prerequisite.
  TaskId add_task(StreamId stream, engine::TimePs duration_ps, TaskKind kind, std::string label,
                  std::initializer_list<TaskId> prerequisites = {});

  /// Appends an asynchronous task to the end of `stream`: when it starts, `start` is called
  /// and the task ends when the callback it was given is called. Throws ConfigError for an
  /// unknown stream or prerequisite or an empty `start`.
  TaskId add_async_task(StreamId stream, AsyncStart start, TaskKind kind, std::string label,
                        std::initializer_list<TaskId> prerequisites = {});

  /// Makes `task` wait for `prerequisite`. Both must exist; they may be in either insertion
  /// order (forward references are how cross-stream schedules are wired). Throws ConfigError
  /// for unknown ids or a task depending on itself.
  void add_dependency(TaskId task, TaskId prerequisite);

  /// Marks `task` as synchronising replicated instances (Task::sync). Throws ConfigError for
  /// an unknown task.
  void set_sync(TaskId task, std::uint8_t sync);

  /// Pre-allocates room for `tasks` tasks and `dependencies` dependencies.
  void reserve(std::size_t tasks, std::size_t dependencies);

  std::size_t task_count() const { return tasks_.size(); }
  std::size_t stream_count() const { return stream_names_.size(); }
  const Task& task(TaskId id) const { return tasks_[static_cast<std::size_t>(id)]; }
  const std::vector<Task>& tasks() const { return tasks_; }
  const std::string& stream_name(StreamId id) const {
    return stream_names_[static_cast<std::size_t>(id)];
  }
  int stream_device(StreamId id) const { return stream_devices_[static_cast<std::size_t>(id)]; }
  StreamRole stream_role(StreamId id) const { return stream_roles_[static_cast<std::size_t>(id)]; }
  /// 1 + the largest device id of any stream (0 if none has one).
  int device_count() const { return device_count_; }
  /// Task ids of `stream` in FIFO (insertion) order.
  std::span<const TaskId> stream_tasks(StreamId id) const {
    return stream_tasks_[static_cast<std::size_t>(id)];
  }
  /// All dependencies in insertion order.
  std::span<const Dependency> dependencies() const { return dependencies_; }

 private:
  void check_task(TaskId id, std::string_view role) const;

  std::vector<Task> tasks_;
  std::vector<std::string> stream_names_;
  std::vector<int> stream_devices_;
  std::vector<StreamRole> stream_roles_;
  int device_count_ = 0;
  std::vector<std::vector<TaskId>> stream_tasks_;
  std::vector<Dependency> dependencies_;
};

}  // namespace clustersim::exec
