#pragma once
/// Watching an executor run (Taskflow's ObserverInterface): every task instance's start and
/// end, with its stream, traits (kind, workload category, FLOPs, bytes) and label through the
/// graph. Traces, timelines, utilisation and the training step's breakdown are observers;
/// nothing in the executor formats or aggregates results.
#include <cstddef>
#include <functional>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/exec/task_graph.hpp"

namespace clustersim::exec {

/// One task instance as observers see it. `graph.task(task)` gives its stream, traits and
/// label; `graph.stream_device(stream)` its device.
struct TaskEvent {
  const TaskGraph* graph = nullptr;
  TaskId task = -1;
  int instance = 0;             ///< replicated runs: which copy of the graph (else 0)
  engine::TimePs start_ps = 0;  ///< when it started
  engine::TimePs end_ps = -1;   ///< when it ended (-1 in on_task_start)
  /// on_task_start: the prerequisite whose end made the task ready, when the task started at
  /// once because of it; -1 when it started as its stream's previous task ended (or at the
  /// run's start). Breakdowns attribute an idle gap before a task to it.
  TaskId released_by = -1;
  /// on_task_start: when the task was at its stream's head with its prerequisites done; before
  /// start_ps only when it then waited for its release time (Task::release_ps).
  engine::TimePs ready_ps = 0;
  const Task& info() const { return graph->task(task); }
};

/// Callbacks of one observer; both are called at the event's simulated time, in event order,
/// once per task instance (a group task of a replicated run: once per member instance).
/// Observers must not schedule engine events or change the graph from them.
class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void on_task_start(const TaskEvent& /*event*/) {}
  virtual void on_task_end(const TaskEvent& /*event*/) {}
};

/// Records the start and end of every task of one instance, each stream's busy time, its last
/// end, and how long its slowable tasks (fixed-duration, not communication, on a compute
/// stream) ran beyond their durations because of compute sharing or speed. For tests and small
/// graphs: it keeps two times per task.
class TaskTimesRecorder : public ExecutionObserver {
 public:
  explicit TaskTimesRecorder(int instance = 0) : instance_(instance) {}
  void on_task_start(const TaskEvent& event) override;
  void on_task_end(const TaskEvent& event) override;

  /// Per task, picoseconds; -1 for a task that did not start (end) in the recorded instance.
  std::vector<engine::TimePs> start_ps, end_ps;
  /// Per stream: sum of its tasks' end - start; end of its last task (0 when none ran);
  /// slowdown beyond the fixed durations of its slowable tasks.
  std::vector<engine::TimePs> stream_busy_ps, stream_end_ps, stream_slowdown_ps;

 private:
  void grow(const TaskGraph& graph);
  int instance_ = 0;
};

/// Counts task ends (every instance's) for a progress line: reports (done, total) when it is
/// created (0 done), every `every` ends and at the last. `total` is the tasks known when the run
/// starts; tasks added while it runs raise it, so done never exceeds total.
class TaskCountObserver : public ExecutionObserver {
 public:
  TaskCountObserver(std::size_t total, std::function<void(std::size_t done, std::size_t total)> report,
                    std::size_t every = 4096);
  void on_task_end(const TaskEvent& event) override;
  std::size_t done() const { return done_; }

 private:
  std::size_t total_;
  std::function<void(std::size_t, std::size_t)> report_;
  std::size_t every_;
  std::size_t done_ = 0;
};

}  // namespace clustersim::exec
