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

#include <boost/container/deque.hpp>

#include "sim/engine/time.hpp"

namespace clustersim::engine {
class Engine;
}

namespace clustersim::exec {

/// Index of a task in its TaskGraph (0-based, in insertion order).
using TaskId = std::int32_t;
/// Index of a stream in its TaskGraph (0-based, in insertion order).
using StreamId = std::int32_t;

/// What a task does, in workload-neutral terms. The executor's only use of it: a task of kind
/// `communication` on a compute stream does not slow down while communication shares the device
/// (it is communication itself). Workloads say more with TaskTraits::category.
enum class TaskKind : std::uint8_t {
  compute,          ///< kernels on the device's compute units
  communication,    ///< a collective or point-to-point transfer between devices
  memory_transfer,  ///< a copy within the memory hierarchy (device, host, CXL)
  host,             ///< work on the host CPU (scheduling, launches)
  idle,             ///< a deliberate wait (a timer, think time)
};

/// Lower-case name of a kind ("compute", "communication", "memory_transfer", "host", "idle").
std::string_view task_kind_name(TaskKind kind);

/// What observers and reports learn about a task besides its timing: its general kind, the
/// workload's own class of it (`category`, a code the workload defines and names with
/// TaskGraph::set_category_names, e.g. training's "tp_comm" or "recompute"), and its work.
struct TaskTraits {
  TaskKind kind = TaskKind::compute;
  std::uint8_t category = 0;
  double flops = 0;  ///< floating-point operations the task performs
  double bytes = 0;  ///< bytes it moves (memory traffic, or a collective's nccl-tests size)
  TaskTraits() = default;
  TaskTraits(TaskKind kind_, std::uint8_t category_ = 0, double flops_ = 0, double bytes_ = 0)  // NOLINT
      : kind(kind_), category(category_), flops(flops_), bytes(bytes_) {}
};

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

/// How a task runs once started: for a fixed time, or asynchronously (`start` set: it ends when
/// the callback its start hook was given is called). Communication backends answer with one.
struct Work {
  engine::TimePs duration_ps = 0;  ///< fixed tasks, picoseconds (>= 0)
  AsyncStart start;                ///< set: asynchronous
  bool asynchronous() const { return static_cast<bool>(start); }
};

/// One unit of work on one stream. Its label and its start hook live in the graph beside it
/// (TaskGraph::label, TaskGraph::start_hook), so a task is a few numbers: a 100,000-GPU step
/// holds millions of them.
struct Task {
  TaskTraits traits;
  /// Fixed-duration tasks: time the task occupies its stream, picoseconds (>= 0). Ignored for
  /// asynchronous tasks (0), whose duration is known only when their start hook signals completion.
  engine::TimePs duration_ps = 0;
  /// Earliest start, picoseconds after the executor's start (>= 0): when the task's host issues
  /// it, for a host that runs ahead of the device on its own clock. 0: no bound.
  engine::TimePs release_ps = 0;
  StreamId stream = 0;
  /// >= 0: asynchronous, and the index of its start hook (TaskGraph::start_hook), which
  /// signals when it ends; -1: fixed duration.
  std::int32_t async = -1;
  /// Non-zero: the task synchronises instances of a replicated run (a collective among ranks);
  /// the value is the builder's code for the kind of group (Replication::group_of reads it).
  std::uint8_t sync = 0;
  std::uint32_t label_size = 0;  ///< bytes of its label (TaskGraph::label)
  bool asynchronous() const { return async >= 0; }
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
  TaskId add_task(StreamId stream, engine::TimePs duration_ps, TaskTraits traits, std::string_view label,
                  std::initializer_list<TaskId> prerequisites = {});
  /// Same with the prerequisites in a span.
  TaskId add_task(StreamId stream, engine::TimePs duration_ps, TaskTraits traits, std::string_view label,
                  std::span<const TaskId> prerequisites);

  /// Appends a task that runs as `work` says (fixed or asynchronous). Throws as add_task and
  /// add_async_task.
  TaskId add_work(StreamId stream, Work work, TaskTraits traits, std::string_view label,
                  std::initializer_list<TaskId> prerequisites = {});

  /// Appends an asynchronous task to the end of `stream`: when it starts, `start` is called
  /// and the task ends when the callback it was given is called. Throws ConfigError for an
  /// unknown stream or prerequisite or an empty `start`.
  TaskId add_async_task(StreamId stream, AsyncStart start, TaskTraits traits, std::string_view label,
                        std::initializer_list<TaskId> prerequisites = {});
  /// Same with the prerequisites in a span.
  TaskId add_async_task(StreamId stream, AsyncStart start, TaskTraits traits, std::string_view label,
                        std::span<const TaskId> prerequisites);

  /// Names of the workload's task categories (TaskTraits::category indexes them), for traces
  /// and reports. Categories without a name print as their number.
  void set_category_names(std::vector<std::string> names) { category_names_ = std::move(names); }
  /// The name of `category` ("3" when it has none).
  std::string category_name(std::uint8_t category) const;

  /// Makes `task` wait for `prerequisite`. Both must exist; they may be in either insertion
  /// order (forward references are how cross-stream schedules are wired). Throws ConfigError
  /// for unknown ids or a task depending on itself.
  void add_dependency(TaskId task, TaskId prerequisite);

  /// Marks `task` as synchronising replicated instances (Task::sync). Throws ConfigError for
  /// an unknown task.
  void set_sync(TaskId task, std::uint8_t sync);

  /// Sets `task`'s earliest start (Task::release_ps). Throws ConfigError for an unknown task or
  /// a negative time.
  void set_release(TaskId task, engine::TimePs release_ps);

  /// Pre-allocates room for `dependencies` dependencies (tasks grow in blocks).
  void reserve_dependencies(std::size_t dependencies) { dependencies_.reserve(dependencies); }

  std::size_t task_count() const { return tasks_.size(); }
  std::size_t stream_count() const { return stream_names_.size(); }
  const Task& task(TaskId id) const { return tasks_[static_cast<std::size_t>(id)]; }
  /// Human-readable name of `id`, for deadlock messages and traces ("fwd mb3 layer12 qkv").
  std::string_view label(TaskId id) const {
    const auto i = static_cast<std::size_t>(id);
    const std::uint64_t begin = label_begin_[i];
    return {label_blocks_[begin / kLabelBlock].data() + begin % kLabelBlock, tasks_[i].label_size};
  }
  /// The longest label a task may have, bytes.
  static constexpr std::size_t kMaxLabel = std::size_t{1} << 16;
  /// Bytes of one block of labels.
  static constexpr std::size_t kLabelBlock = 16 * kMaxLabel;
  /// The start hook of an asynchronous task (Task::async >= 0).
  const AsyncStart& start_hook(TaskId id) const {
    return start_hooks_[static_cast<std::size_t>(tasks_[static_cast<std::size_t>(id)].async)];
  }
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

  // Tasks and labels grow in blocks, never moved or copied once written: a step of millions
  // of tasks is written once, without a vector's doubling copies and the pages they touch
  // (docs/performance.md). The blocks stay small enough (28 KB of tasks; labels from 4 KB,
  // doubling) that a small graph, built and dropped many times, takes them from the heap and
  // not from fresh pages of the kernel each time. A label never spans two blocks.
  template <class T, std::size_t BlockSize>
  using Blocks =
      boost::container::deque<T, void, boost::container::deque_options_t<boost::container::block_size<BlockSize>>>;
  Blocks<Task, 512> tasks_;
  /// Every task's label, one after another in blocks of 4 KB to kLabelBlock bytes (each
  /// filled within the capacity it was given, so it never moves).
  std::vector<std::vector<char>> label_blocks_;
  /// Where task i's label starts: block x kLabelBlock + offset in the block.
  Blocks<std::uint64_t, 2048> label_begin_;
  std::vector<AsyncStart> start_hooks_;     ///< the asynchronous tasks' hooks (Task::async)
  std::vector<std::string> stream_names_;
  std::vector<int> stream_devices_;
  std::vector<StreamRole> stream_roles_;
  int device_count_ = 0;
  std::vector<std::vector<TaskId>> stream_tasks_;
  std::vector<Dependency> dependencies_;
  std::vector<std::string> category_names_;
};

}  // namespace clustersim::exec
