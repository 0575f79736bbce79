#include "sim/exec/executor.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::exec {
namespace {

// Compressed adjacency: for node i, items [offset[i], offset[i+1]).
struct Adjacency {
  std::vector<std::int32_t> offset;
  std::vector<TaskId> items;
};

// Mutable state of one run. Handlers capture a pointer to it; it outlives engine.run().
class RunState {
 public:
  RunState(const TaskGraph& graph, const ExecutionOptions& options, ExecutionResult& result)
      : graph_(graph), result_(result) {
    const std::size_t task_count = graph.task_count();
    const std::size_t stream_count = graph.stream_count();
    remaining_.assign(task_count, 0);
    successors_.offset.assign(task_count + 1, 0);
    for (const Dependency& d : graph.dependencies()) {
      ++remaining_[static_cast<std::size_t>(d.task)];
      ++successors_.offset[static_cast<std::size_t>(d.prerequisite) + 1];
    }
    for (std::size_t i = 0; i < task_count; ++i) successors_.offset[i + 1] += successors_.offset[i];
    successors_.items.resize(graph.dependencies().size());
    std::vector<std::int32_t> fill(successors_.offset.begin(), successors_.offset.end() - 1);
    for (const Dependency& d : graph.dependencies()) {
      successors_.items[static_cast<std::size_t>(fill[static_cast<std::size_t>(d.prerequisite)]++)] =
          d.task;
    }
    head_.assign(stream_count, 0);
    busy_.assign(stream_count, 0);
    // Compute sharing: only devices whose rate is below 1 need tracking.
    const auto devices = static_cast<std::size_t>(graph.device_count());
    device_rate_.assign(devices, 1.0);
    for (std::size_t d = 0; d < devices && d < options.compute_rate_while_communicating.size(); ++d) {
      device_rate_[d] = options.compute_rate_while_communicating[d];
    }
    active_comm_.assign(devices, 0);
    compute_streams_.resize(devices);
    running_.resize(stream_count);
    for (std::size_t st = 0; st < stream_count; ++st) {
      const int device = graph.stream_device(static_cast<StreamId>(st));
      if (device >= 0 && graph.stream_role(static_cast<StreamId>(st)) == StreamRole::compute) {
        compute_streams_[static_cast<std::size_t>(device)].push_back(static_cast<StreamId>(st));
      }
    }
  }

  void start_ready_streams(engine::Engine& engine) {
    for (std::size_t s = 0; s < graph_.stream_count(); ++s) try_start(engine, static_cast<StreamId>(s));
  }

  std::size_t finished() const { return finished_; }
  const std::vector<std::size_t>& heads() const { return head_; }
  const std::vector<std::int32_t>& remaining() const { return remaining_; }

 private:
  void try_start(engine::Engine& engine, StreamId stream) {
    const auto s = static_cast<std::size_t>(stream);
    const auto queue = graph_.stream_tasks(stream);
    if (busy_[s] != 0 || head_[s] >= queue.size()) return;
    const TaskId task = queue[head_[s]];
    if (remaining_[static_cast<std::size_t>(task)] != 0) return;
    busy_[s] = 1;
    const auto tag = static_cast<std::uint64_t>(task) * 2;
    engine.schedule_at(engine.now(), [this, task](engine::Engine& e) { on_start(e, task); }, tag);
  }

  void on_start(engine::Engine& engine, TaskId task) {
    const auto t = static_cast<std::size_t>(task);
    result_.start_ps[t] = engine.now();
    const Task& info = graph_.task(task);
    const int device = graph_.stream_device(info.stream);
    const StreamRole role = graph_.stream_role(info.stream);
    if (device >= 0 && role == StreamRole::communication) comm_started(engine, static_cast<std::size_t>(device));
    if (info.start) {
      info.start(engine, [this, task](engine::Engine& e) { on_finish(e, task); });
      return;
    }
    if (device >= 0 && role == StreamRole::compute && device_rate_[static_cast<std::size_t>(device)] < 1.0) {
      Running& run = running_[static_cast<std::size_t>(info.stream)];
      run.task = task;
      run.work_left_ps = static_cast<double>(info.duration_ps);
      run.since_ps = engine.now();
      run.rate = active_comm_[static_cast<std::size_t>(device)] > 0 ? device_rate_[static_cast<std::size_t>(device)] : 1.0;
      schedule_finish(engine, run);
      return;
    }
    engine.schedule_after(graph_.task(task).duration_ps,
                          [this, task](engine::Engine& e) { on_finish(e, task); },
                          static_cast<std::uint64_t>(task) * 2 + 1);
  }

  struct Running {
    TaskId task = -1;
    double work_left_ps = 0;  ///< at full speed
    double rate = 1;
    engine::TimePs since_ps = 0;
    engine::EventId finish;
  };

  void schedule_finish(engine::Engine& engine, Running& run) {
    const TaskId task = run.task;
    const auto delay = static_cast<engine::TimePs>(std::ceil(run.work_left_ps / run.rate - 1e-9));
    run.finish = engine.schedule_after(std::max<engine::TimePs>(0, delay),
                                       [this, task](engine::Engine& e) { on_finish(e, task); },
                                       static_cast<std::uint64_t>(task) * 2 + 1);
  }

  // The device's compute streams change speed: bank the work done so far and reschedule.
  void set_compute_rate(engine::Engine& engine, std::size_t device, double rate) {
    for (const StreamId st : compute_streams_[device]) {
      Running& run = running_[static_cast<std::size_t>(st)];
      if (run.task < 0 || run.rate == rate) continue;
      run.work_left_ps = std::max(0.0, run.work_left_ps - static_cast<double>(engine.now() - run.since_ps) * run.rate);
      run.since_ps = engine.now();
      run.rate = rate;
      engine.cancel(run.finish);
      schedule_finish(engine, run);
    }
  }

  void comm_started(engine::Engine& engine, std::size_t device) {
    if (active_comm_[device]++ == 0 && device_rate_[device] < 1.0) set_compute_rate(engine, device, device_rate_[device]);
  }
  void comm_finished(engine::Engine& engine, std::size_t device) {
    if (--active_comm_[device] == 0 && device_rate_[device] < 1.0) set_compute_rate(engine, device, 1.0);
  }

  void on_finish(engine::Engine& engine, TaskId task) {
    const auto t = static_cast<std::size_t>(task);
    const Task& info = graph_.task(task);
    const auto s = static_cast<std::size_t>(info.stream);
    if (result_.end_ps[t] >= 0) {
      throw SimulationError(fmt::format("task '{}' signalled completion twice", info.label));
    }
    result_.end_ps[t] = engine.now();
    result_.stream_busy_ps[s] += info.start ? engine.now() - result_.start_ps[t] : info.duration_ps;
    if (running_[s].task == task) {
      running_[s].task = -1;
      result_.stream_slowdown_ps[s] += engine.now() - result_.start_ps[t] - info.duration_ps;
    }
    const int device = graph_.stream_device(info.stream);
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::communication) {
      comm_finished(engine, static_cast<std::size_t>(device));
    }
    result_.stream_end_ps[s] = engine.now();
    ++finished_;
    busy_[s] = 0;
    ++head_[s];
    for (auto i = successors_.offset[t]; i < successors_.offset[t + 1]; ++i) {
      const TaskId next = successors_.items[static_cast<std::size_t>(i)];
      if (--remaining_[static_cast<std::size_t>(next)] == 0) try_start(engine, graph_.task(next).stream);
    }
    try_start(engine, info.stream);
  }

  const TaskGraph& graph_;
  ExecutionResult& result_;
  std::vector<std::int32_t> remaining_;  // unfinished prerequisites per task
  Adjacency successors_;
  std::vector<std::size_t> head_;      // index into the stream's FIFO of its next task
  std::vector<std::uint8_t> busy_;     // stream has a task started or about to start
  std::size_t finished_ = 0;
  // Compute sharing (ExecutionOptions): per device its rate, running communication tasks and
  // compute streams; per stream the slowable task it runs.
  std::vector<double> device_rate_;
  std::vector<int> active_comm_;
  std::vector<std::vector<StreamId>> compute_streams_;
  std::vector<Running> running_;
};

std::string deadlock_message(const TaskGraph& graph, const RunState& state) {
  // Unfinished prerequisites of each blocked head task, in dependency insertion order.
  std::string message = fmt::format("task graph deadlocked: {} of {} tasks never ran",
                                    graph.task_count() - state.finished(), graph.task_count());
  std::vector<std::uint8_t> is_head(graph.task_count(), 0);
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const auto queue = graph.stream_tasks(static_cast<StreamId>(s));
    if (state.heads()[s] < queue.size()) is_head[static_cast<std::size_t>(queue[state.heads()[s]])] = 1;
  }
  std::vector<std::vector<TaskId>> waits(graph.task_count());
  for (const Dependency& d : graph.dependencies()) {
    if (is_head[static_cast<std::size_t>(d.task)] == 0) continue;
    // A prerequisite is unfinished if it is at or behind its own stream's head.
    const auto& pre = graph.task(d.prerequisite);
    const auto queue = graph.stream_tasks(pre.stream);
    const std::size_t head = state.heads()[static_cast<std::size_t>(pre.stream)];
    const bool unfinished =
        head < queue.size() &&
        std::find(queue.begin() + static_cast<std::ptrdiff_t>(head), queue.end(), d.prerequisite) !=
            queue.end();
    if (unfinished) waits[static_cast<std::size_t>(d.task)].push_back(d.prerequisite);
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const auto queue = graph.stream_tasks(static_cast<StreamId>(s));
    if (state.heads()[s] >= queue.size()) continue;
    const TaskId head = queue[state.heads()[s]];
    std::string waiting;
    for (TaskId w : waits[static_cast<std::size_t>(head)]) {
      waiting += fmt::format("{}'{}'", waiting.empty() ? "" : ", ", graph.task(w).label);
    }
    message += fmt::format("; {} stream blocked at '{}' waiting for {}", graph.stream_name(static_cast<StreamId>(s)),
                           graph.task(head).label, waiting);
  }
  return message;
}

}  // namespace

Executor::Executor(const TaskGraph& graph, ExecutionOptions options) : graph_(&graph), options_(std::move(options)) {
  for (std::size_t d = 0; d < options_.compute_rate_while_communicating.size(); ++d) {
    const double rate = options_.compute_rate_while_communicating[d];
    if (!(rate > 0 && rate <= 1)) {
      throw ConfigError(fmt::format("compute rate while communicating of device {} must be in (0, 1], got {}", d, rate));
    }
  }
}

ExecutionResult Executor::run(engine::Engine& engine) const {
  const TaskGraph& graph = *graph_;
  ExecutionResult result;
  result.start_time_ps = engine.now();
  result.start_ps.assign(graph.task_count(), -1);
  result.end_ps.assign(graph.task_count(), -1);
  result.stream_busy_ps.assign(graph.stream_count(), 0);
  result.stream_end_ps.assign(graph.stream_count(), engine.now());
  result.stream_slowdown_ps.assign(graph.stream_count(), 0);
  if (graph.task_count() == 0) return result;

  RunState state(graph, options_, result);
  state.start_ready_streams(engine);
  engine.run();
  if (state.finished() != graph.task_count()) throw SimulationError(deadlock_message(graph, state));
  result.makespan_ps = *std::max_element(result.end_ps.begin(), result.end_ps.end()) - result.start_time_ps;
  return result;
}

}  // namespace clustersim::exec
