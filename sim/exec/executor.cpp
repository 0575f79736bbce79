#include "sim/exec/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::exec {
namespace {

// Compressed adjacency: for node i, items [offset[i], offset[i+1]).
struct Adjacency {
  std::vector<std::int32_t> offset;
  std::vector<TaskId> items;
};

// Mutable state of one run over `instances` copies of the graph. Per-instance arrays are flat,
// instance-major (index instance * count + item). Handlers capture a pointer to it; it outlives
// engine.run().
class RunState {
 public:
  RunState(const TaskGraph& graph, const ExecutionOptions& options, const Replication& replication,
           ExecutionResult& result)
      : graph_(graph), replication_(replication), result_(result) {
    tasks_ = graph.task_count();
    streams_ = graph.stream_count();
    devices_ = static_cast<std::size_t>(graph.device_count());
    instances_ = static_cast<std::size_t>(replication.instances);
    std::vector<std::int32_t> prerequisites(tasks_, 0);
    successors_.offset.assign(tasks_ + 1, 0);
    for (const Dependency& d : graph.dependencies()) {
      ++prerequisites[static_cast<std::size_t>(d.task)];
      ++successors_.offset[static_cast<std::size_t>(d.prerequisite) + 1];
    }
    for (std::size_t i = 0; i < tasks_; ++i) {
      successors_.offset[i + 1] += successors_.offset[i];
      if (prerequisites[i] > std::numeric_limits<std::int16_t>::max()) {
        throw ConfigError(fmt::format("task '{}' has {} prerequisites; at most {} are supported",
                                      graph.task(static_cast<TaskId>(i)).label, prerequisites[i],
                                      std::numeric_limits<std::int16_t>::max()));
      }
    }
    successors_.items.resize(graph.dependencies().size());
    std::vector<std::int32_t> fill(successors_.offset.begin(), successors_.offset.end() - 1);
    for (const Dependency& d : graph.dependencies()) {
      successors_.items[static_cast<std::size_t>(fill[static_cast<std::size_t>(d.prerequisite)]++)] = d.task;
    }
    remaining_.resize(tasks_ * instances_);
    for (std::size_t i = 0; i < instances_; ++i) {
      for (std::size_t t = 0; t < tasks_; ++t) remaining_[task_slot(static_cast<int>(i), static_cast<TaskId>(t))] = static_cast<std::int16_t>(prerequisites[t]);
    }
    head_.assign(streams_ * instances_, 0);
    busy_.assign(streams_ * instances_, 0);
    stream_end_.assign(streams_ * instances_, result.start_time_ps);
    // Compute sharing: only devices whose rate is below 1 need tracking.
    device_rate_.assign(devices_, 1.0);
    for (std::size_t d = 0; d < devices_ && d < options.compute_rate_while_communicating.size(); ++d) {
      device_rate_[d] = options.compute_rate_while_communicating[d];
    }
    active_comm_.assign(devices_ * instances_, 0);
    compute_streams_.resize(devices_);
    running_.resize(streams_ * instances_);
    for (std::size_t st = 0; st < streams_; ++st) {
      const int device = graph.stream_device(static_cast<StreamId>(st));
      if (device >= 0 && graph.stream_role(static_cast<StreamId>(st)) == StreamRole::compute) {
        compute_streams_[static_cast<std::size_t>(device)].push_back(static_cast<StreamId>(st));
      }
    }
    speed_ = replication.compute_speed;
    if (!speed_.empty() && speed_.size() != devices_ * instances_) {
      throw ConfigError(fmt::format("compute speeds cover {} instance x device pairs, the run has {} x {}",
                                    speed_.size(), instances_, devices_));
    }
    for (const double speed : speed_) {
      if (!(speed > 0) || !std::isfinite(speed)) {
        throw ConfigError(fmt::format("a compute speed must be a finite number > 0, got {}", speed));
      }
    }
  }

  void start_ready_streams(engine::Engine& engine) {
    for (std::size_t i = 0; i < instances_; ++i) {
      for (std::size_t s = 0; s < streams_; ++s) try_start(engine, static_cast<int>(i), static_cast<StreamId>(s));
    }
  }

  std::size_t finished() const { return finished_; }
  std::size_t head(int instance, std::size_t stream) const {
    return head_[stream_index(instance, static_cast<StreamId>(stream))];
  }
  /// End of each stream's last task, instance-major (instance x streams + stream).
  std::vector<engine::TimePs> stream_end() const {
    std::vector<engine::TimePs> by_instance(stream_end_.size());
    for (std::size_t i = 0; i < instances_; ++i) {
      for (std::size_t s = 0; s < streams_; ++s) {
        by_instance[i * streams_ + s] = stream_end_[stream_index(static_cast<int>(i), static_cast<StreamId>(s))];
      }
    }
    return by_instance;
  }

 private:
  struct Running {
    TaskId task = -1;
    double work_left_ps = 0;  ///< at full speed
    double rate = 1;
    engine::TimePs since_ps = 0;
    engine::EventId finish;
  };
  struct Barrier {
    int size = 0;
    std::vector<int> members;  ///< instances, in arrival order
  };

  // Per-instance state is laid out instance-minor (slot = item x instances + instance): in
  // full mode the replicas run the same task at nearly the same time, so this keeps the
  // state they touch together in the same cache lines (16,384 instances of the 405B scale
  // scenario: ~270 MB of counters that an instance-major layout walked at random).
  std::size_t task_slot(int instance, TaskId task) const {
    return static_cast<std::size_t>(task) * instances_ + static_cast<std::size_t>(instance);
  }
  std::size_t stream_index(int instance, StreamId stream) const {
    return static_cast<std::size_t>(stream) * instances_ + static_cast<std::size_t>(instance);
  }
  std::size_t device_index(int instance, int device) const {
    return static_cast<std::size_t>(device) * instances_ + static_cast<std::size_t>(instance);
  }
  int instance_of_device_slot(std::size_t dev) const { return static_cast<int>(dev % instances_); }
  std::size_t device_of_device_slot(std::size_t dev) const { return dev / instances_; }
  static std::uint64_t tag(int instance, TaskId task, bool finish) {
    return (static_cast<std::uint64_t>(instance) << 40U) + static_cast<std::uint64_t>(task) * 2 + (finish ? 1 : 0);
  }
  bool tracked(int instance) const { return instance == replication_.tracked_instance; }

  void try_start(engine::Engine& engine, int instance, StreamId stream) {
    const std::size_t s = stream_index(instance, stream);
    const auto queue = graph_.stream_tasks(stream);
    if (busy_[s] != 0 || head_[s] >= queue.size()) return;
    const TaskId task = queue[head_[s]];
    if (remaining_[task_slot(instance, task)] != 0) return;
    busy_[s] = 1;
    engine.schedule_at(engine.now(), [this, instance, task](engine::Engine& e) { on_ready(e, instance, task); },
                       tag(instance, task, false));
  }

  // The task is at its stream's head with its prerequisites done: a group task waits for its
  // group, any other starts.
  void on_ready(engine::Engine& engine, int instance, TaskId task) {
    const Task& info = graph_.task(task);
    if (info.sync == 0 || !replication_.group_of) {
      start(engine, instance, task);
      return;
    }
    const GroupMembership group = replication_.group_of(instance, task);
    if (group.size <= 1 && !replication_.group_start) {
      start(engine, instance, task);
      return;
    }
    Barrier& barrier = barriers_[group.key];
    if (barrier.members.empty()) {
      barrier.size = group.size;
    } else if (barrier.size != group.size) {
      throw ConfigError(fmt::format("task '{}': group {:#x} has members of size {} and {}", info.label, group.key,
                                    barrier.size, group.size));
    }
    barrier.members.push_back(instance);
    if (static_cast<int>(barrier.members.size()) < barrier.size) return;
    std::vector<int> members = std::move(barrier.members);
    barriers_.erase(group.key);
    start_group(engine, task, group, std::move(members));
  }

  void start_group(engine::Engine& engine, TaskId task, const GroupMembership& group, std::vector<int> members) {
    const Task& info = graph_.task(task);
    for (const int m : members) note_start(engine, m, task);
    const auto shared = std::make_shared<std::vector<int>>(std::move(members));
    auto finish_all = [this, task, shared](engine::Engine& e) {
      for (const int m : *shared) on_finish(e, m, task);
    };
    if (replication_.group_start) {
      replication_.group_start(task, shared->front(), group)(engine, std::move(finish_all));
    } else if (info.start) {
      info.start(engine, std::move(finish_all));
    } else {
      engine.schedule_after(info.duration_ps, std::move(finish_all), tag(shared->front(), task, true));
    }
  }

  // Bookkeeping of a task start: its time (tracked instance) and communication activity.
  void note_start(engine::Engine& engine, int instance, TaskId task) {
    if (tracked(instance)) result_.start_ps[static_cast<std::size_t>(task)] = engine.now();
    const Task& info = graph_.task(task);
    const int device = graph_.stream_device(info.stream);
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::communication) {
      comm_started(engine, device_index(instance, device));
    }
  }

  void start(engine::Engine& engine, int instance, TaskId task) {
    note_start(engine, instance, task);
    const Task& info = graph_.task(task);
    if (info.start) {
      info.start(engine, [this, instance, task](engine::Engine& e) { on_finish(e, instance, task); });
      return;
    }
    const int device = graph_.stream_device(info.stream);
    // Kernels slow down when they share the device; a collective that blocks the compute
    // stream (it is communication itself) does not.
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::compute && !is_communication(info.kind)) {
      const std::size_t dev = device_index(instance, device);
      // Replication::compute_speed is instance-major (instance x devices + device).
      const double speed =
          speed_.empty() ? 1.0 : speed_[static_cast<std::size_t>(instance) * devices_ + static_cast<std::size_t>(device)];
      const double sharing = device_rate_[static_cast<std::size_t>(device)];
      if (sharing < 1.0 || speed != 1.0) {
        Running& run = running_[stream_index(instance, info.stream)];
        run.task = task;
        run.work_left_ps = static_cast<double>(info.duration_ps) / speed;
        run.since_ps = engine.now();
        run.rate = active_comm_[dev] > 0 ? sharing : 1.0;
        schedule_finish(engine, instance, run);
        return;
      }
    }
    engine.schedule_after(info.duration_ps, [this, instance, task](engine::Engine& e) { on_finish(e, instance, task); },
                          tag(instance, task, true));
  }

  void schedule_finish(engine::Engine& engine, int instance, Running& run) {
    const TaskId task = run.task;
    const auto delay = static_cast<engine::TimePs>(std::ceil(run.work_left_ps / run.rate - 1e-9));
    run.finish = engine.schedule_after(std::max<engine::TimePs>(0, delay),
                                       [this, instance, task](engine::Engine& e) { on_finish(e, instance, task); },
                                       tag(instance, task, true));
  }

  // The device's compute streams change speed: bank the work done so far and reschedule.
  void set_compute_rate(engine::Engine& engine, std::size_t dev, double rate) {
    const int instance = instance_of_device_slot(dev);
    for (const StreamId st : compute_streams_[device_of_device_slot(dev)]) {
      Running& run = running_[stream_index(instance, st)];
      if (run.task < 0 || run.rate == rate) continue;
      run.work_left_ps = std::max(0.0, run.work_left_ps - static_cast<double>(engine.now() - run.since_ps) * run.rate);
      run.since_ps = engine.now();
      run.rate = rate;
      engine.cancel(run.finish);
      schedule_finish(engine, instance, run);
    }
  }

  void comm_started(engine::Engine& engine, std::size_t dev) {
    const double rate = device_rate_[device_of_device_slot(dev)];
    if (active_comm_[dev]++ == 0 && rate < 1.0) set_compute_rate(engine, dev, rate);
  }
  void comm_finished(engine::Engine& engine, std::size_t dev) {
    if (--active_comm_[dev] == 0 && device_rate_[device_of_device_slot(dev)] < 1.0) set_compute_rate(engine, dev, 1.0);
  }

  void on_finish(engine::Engine& engine, int instance, TaskId task) {
    const auto t = static_cast<std::size_t>(task);
    const Task& info = graph_.task(task);
    const std::size_t s = stream_index(instance, info.stream);
    if (busy_[s] == 0 || graph_.stream_tasks(info.stream)[head_[s]] != task) {
      throw SimulationError(fmt::format("task '{}' signalled completion twice", info.label));
    }
    const bool slowable = running_[s].task == task;
    if (tracked(instance)) {
      result_.end_ps[t] = engine.now();
      const std::size_t st = static_cast<std::size_t>(info.stream);
      result_.stream_busy_ps[st] += (info.start || info.sync != 0) ? engine.now() - result_.start_ps[t] : info.duration_ps;
      result_.stream_end_ps[st] = engine.now();
      if (slowable) result_.stream_slowdown_ps[st] += engine.now() - result_.start_ps[t] - info.duration_ps;
    }
    if (slowable) running_[s].task = -1;
    stream_end_[s] = engine.now();
    const int device = graph_.stream_device(info.stream);
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::communication) {
      comm_finished(engine, device_index(instance, device));
    }
    ++finished_;
    busy_[s] = 0;
    ++head_[s];
    for (auto i = successors_.offset[t]; i < successors_.offset[t + 1]; ++i) {
      const TaskId next = successors_.items[static_cast<std::size_t>(i)];
      if (--remaining_[task_slot(instance, next)] == 0) try_start(engine, instance, graph_.task(next).stream);
    }
    try_start(engine, instance, info.stream);
  }

  const TaskGraph& graph_;
  const Replication& replication_;
  ExecutionResult& result_;
  std::size_t tasks_ = 0, streams_ = 0, devices_ = 0, instances_ = 1;
  Adjacency successors_;
  std::vector<std::int16_t> remaining_;  // unfinished prerequisites per instance x task
  std::vector<std::size_t> head_;        // per instance x stream: index into its FIFO of the next task
  std::vector<std::uint8_t> busy_;       // per instance x stream: a task started or about to start
  std::vector<engine::TimePs> stream_end_;
  std::size_t finished_ = 0;
  // Compute sharing (ExecutionOptions) and speed (Replication): per device its sharing rate;
  // per instance x device running communication tasks; per instance x stream the slowable task.
  std::vector<double> device_rate_;
  std::vector<int> active_comm_;
  std::vector<std::vector<StreamId>> compute_streams_;
  std::vector<Running> running_;
  std::vector<double> speed_;
  // Looked up by key, never iterated: its order cannot reach results.
  std::unordered_map<std::uint64_t, Barrier> barriers_;
};

std::string deadlock_message(const TaskGraph& graph, const RunState& state, int instances) {
  std::string message = fmt::format("task graph deadlocked: {} of {} tasks never ran",
                                    graph.task_count() * static_cast<std::size_t>(instances) - state.finished(),
                                    graph.task_count() * static_cast<std::size_t>(instances));
  // The first instance with a blocked stream: the blocked head task of each stream and what it
  // waits on (unfinished prerequisites, or the rest of its group).
  int instance = 0;
  for (int i = 0; i < instances; ++i) {
    bool blocked = false;
    for (std::size_t s = 0; s < graph.stream_count(); ++s) {
      blocked = blocked || state.head(i, s) < graph.stream_tasks(static_cast<StreamId>(s)).size();
    }
    if (blocked) {
      instance = i;
      break;
    }
  }
  if (instances > 1) message += fmt::format(" (instance {} shown)", instance);
  std::vector<std::uint8_t> is_head(graph.task_count(), 0);
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const auto queue = graph.stream_tasks(static_cast<StreamId>(s));
    if (state.head(instance, s) < queue.size()) is_head[static_cast<std::size_t>(queue[state.head(instance, s)])] = 1;
  }
  std::vector<std::vector<TaskId>> waits(graph.task_count());
  for (const Dependency& d : graph.dependencies()) {
    if (is_head[static_cast<std::size_t>(d.task)] == 0) continue;
    // A prerequisite is unfinished if it is at or behind its own stream's head.
    const auto& pre = graph.task(d.prerequisite);
    const auto queue = graph.stream_tasks(pre.stream);
    const std::size_t head = state.head(instance, static_cast<std::size_t>(pre.stream));
    const bool unfinished =
        head < queue.size() &&
        std::find(queue.begin() + static_cast<std::ptrdiff_t>(head), queue.end(), d.prerequisite) != queue.end();
    if (unfinished) waits[static_cast<std::size_t>(d.task)].push_back(d.prerequisite);
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const auto queue = graph.stream_tasks(static_cast<StreamId>(s));
    if (state.head(instance, s) >= queue.size()) continue;
    const TaskId head = queue[state.head(instance, s)];
    std::string waiting;
    for (TaskId w : waits[static_cast<std::size_t>(head)]) {
      waiting += fmt::format("{}'{}'", waiting.empty() ? "" : ", ", graph.task(w).label);
    }
    if (waiting.empty() && graph.task(head).sync != 0) waiting = "the other members of its group";
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

ExecutionResult Executor::run(engine::Engine& engine) const { return run(engine, Replication{}); }

ExecutionResult Executor::run(engine::Engine& engine, const Replication& replication) const {
  const TaskGraph& graph = *graph_;
  if (replication.instances < 1) {
    throw ConfigError(fmt::format("a replicated run needs >= 1 instance, got {}", replication.instances));
  }
  ExecutionResult result;
  result.start_time_ps = engine.now();
  result.start_ps.assign(graph.task_count(), -1);
  result.end_ps.assign(graph.task_count(), -1);
  result.stream_busy_ps.assign(graph.stream_count(), 0);
  result.stream_end_ps.assign(graph.stream_count(), engine.now());
  result.stream_slowdown_ps.assign(graph.stream_count(), 0);
  if (graph.task_count() == 0) return result;

  RunState state(graph, options_, replication, result);
  state.start_ready_streams(engine);
  engine.run();
  const std::size_t total = graph.task_count() * static_cast<std::size_t>(replication.instances);
  if (state.finished() != total) throw SimulationError(deadlock_message(graph, state, replication.instances));
  result.instance_stream_end_ps = state.stream_end();
  const engine::TimePs last = *std::max_element(result.instance_stream_end_ps.begin(), result.instance_stream_end_ps.end());
  result.makespan_ps = last - result.start_time_ps;
  return result;
}

}  // namespace clustersim::exec
