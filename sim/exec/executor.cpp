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

// Compressed adjacency: for node i, items [offset[i], offset[i+1]). Outside the anonymous
// namespace: Executor::State, a member of a class with linkage, holds one.
struct ExecutorAdjacency {
  std::vector<std::int32_t> offset;
  std::vector<TaskId> items;
};

namespace {

using Adjacency = ExecutorAdjacency;

// Tag of the engine events that apply a device speed profile's changes (never a task's tag:
// those stay below 2^63).
std::uint64_t speed_change_tag(int instance, int device) {
  return (std::uint64_t{1} << 63U) | (static_cast<std::uint64_t>(instance) << 24U) | static_cast<std::uint64_t>(device);
}

}  // namespace

// Mutable state of a run over `instances` copies of the graph. Per-instance arrays are
// item-major, instance-minor (index item * instances + instance): in full mode the replicas run
// the same task at nearly the same time, so this keeps the state they touch together in the
// same cache lines (16,384 instances of the 405B scale scenario: ~270 MB of counters that an
// instance-major layout walked at random), and a task, stream or device added while running
// appends its slots at the end. Handlers capture a pointer to it; it outlives engine.run().
class Executor::State {
 public:
  State(engine::Engine& engine, TaskGraph& graph, ExecutionOptions options, Replication replication)
      : engine_(engine), graph_(graph), options_(std::move(options)), replication_(std::move(replication)) {
    for (std::size_t d = 0; d < options_.compute_rate_while_communicating.size(); ++d) {
      const double rate = options_.compute_rate_while_communicating[d];
      if (!(rate > 0 && rate <= 1)) {
        throw ConfigError(fmt::format("compute rate while communicating of device {} must be in (0, 1], got {}", d, rate));
      }
    }
    if (replication_.instances < 1) {
      throw ConfigError(fmt::format("a replicated run needs >= 1 instance, got {}", replication_.instances));
    }
    instances_ = static_cast<std::size_t>(replication_.instances);
  }

  void add_observer(ExecutionObserver& observer) { observers_.push_back(&observer); }
  void on_finished(std::function<void()> callback) { on_finished_ = std::move(callback); }

  void start() {
    if (started_) throw SimulationError("an executor can be started once");
    started_ = true;
    start_time_ = engine_.now();
    build_successors();
    grow();
    for (const auto& [slot, speed] : initial_speeds_) speed_[slot] = speed;
    for (std::size_t i = 0; i < instances_; ++i) {
      for (std::size_t s = 0; s < streams_; ++s) try_start(static_cast<int>(i), static_cast<StreamId>(s), -1);
    }
    for (auto& [instance, device, profile] : pending_profiles_) schedule_profile(instance, device, profile);
    pending_profiles_.clear();
  }

  bool started() const { return started_; }
  std::size_t finished() const { return finished_; }
  std::size_t task_instances() const { return graph_.task_count() * instances_; }
  std::size_t head(int instance, std::size_t stream) const {
    return stream < streams_ ? head_[stream_index(instance, static_cast<StreamId>(stream))] : 0;
  }
  int instances() const { return static_cast<int>(instances_); }

  /// A task appended to the graph while running: size its state and start it where it can.
  void task_added(TaskId task, std::span<const TaskId> prerequisites) {
    grow();
    if (late_successors_.size() < graph_.task_count()) late_successors_.resize(graph_.task_count());
    for (const TaskId prerequisite : prerequisites) {
      late_successors_[static_cast<std::size_t>(prerequisite)].push_back(task);
    }
    for (std::size_t i = 0; i < instances_; ++i) {
      std::int32_t unfinished = 0;
      for (const TaskId prerequisite : prerequisites) unfinished += done(static_cast<int>(i), prerequisite) ? 0 : 1;
      remaining_[task_slot(static_cast<int>(i), task)] = static_cast<std::int16_t>(unfinished);
    }
    for (std::size_t i = 0; i < instances_; ++i) try_start(static_cast<int>(i), graph_.task(task).stream, -1);
  }

  /// A stream appended while running.
  void stream_added() { grow(); }

  void set_speed(int instance, int device, double speed) {
    if (instance < 0 || static_cast<std::size_t>(instance) >= instances_) {
      throw ConfigError(fmt::format("device speed: instance {} is not in [0, {})", instance, instances_));
    }
    if (device < 0) throw ConfigError(fmt::format("device speed: device must be >= 0, got {}", device));
    if (!std::isfinite(speed) || speed < 0) {
      throw ConfigError(fmt::format("device speed must be a finite number >= 0, got {}", speed));
    }
    if (!started_) {
      initial_speeds_.emplace_back(device_index(instance, device), speed);
      if (static_cast<std::size_t>(device) >= min_devices_) min_devices_ = static_cast<std::size_t>(device) + 1;
      return;
    }
    if (static_cast<std::size_t>(device) >= devices_) {
      min_devices_ = static_cast<std::size_t>(device) + 1;
      grow();
    }
    change_speed(device_index(instance, device), speed);
  }

  void apply_profile(int instance, int device, const engine::Profile& profile) {
    engine::check_profile(profile, fmt::format("speed profile of device {} of instance {}", device, instance), 0.0,
                          false);
    if (!profile.changes.empty() && profile.changes.front().at_ps < engine_.now()) {
      throw ConfigError(fmt::format("speed profile of device {} of instance {}: a change at {} ps is in the past "
                                    "(now {} ps)",
                                    device, instance, profile.changes.front().at_ps, engine_.now()));
    }
    set_speed(instance, device, profile.initial);
    if (profile.is_constant()) return;
    if (!started_) {
      pending_profiles_.push_back({instance, device, profile});
    } else {
      schedule_profile(instance, device, profile);
    }
  }

  ExecutionResult result() const {
    ExecutionResult result;
    result.start_time_ps = start_time_;
    result.stream_end_ps.resize(stream_end_.size());
    for (std::size_t i = 0; i < instances_; ++i) {
      for (std::size_t s = 0; s < streams_; ++s) {
        result.stream_end_ps[i * streams_ + s] = stream_end_[stream_index(static_cast<int>(i), static_cast<StreamId>(s))];
      }
    }
    const engine::TimePs last = result.stream_end_ps.empty()
                                    ? start_time_
                                    : *std::max_element(result.stream_end_ps.begin(), result.stream_end_ps.end());
    result.makespan_ps = graph_.task_count() == 0 ? 0 : last - start_time_;
    return result;
  }

 private:
  struct Running {
    TaskId task = -1;
    double work_left_ps = 0;  ///< ps of work at rate 1 and `speed` (stalled: at speed 1)
    double rate = 1;          ///< compute-sharing rate
    double speed = 1;         ///< device speed the work is expressed at (0: stalled)
    engine::TimePs since_ps = 0;
    engine::EventId finish;
  };
  struct Barrier {
    int size = 0;
    std::vector<int> members;          ///< instances, in arrival order
    std::vector<TaskId> released_by;  ///< per member
    std::vector<engine::TimePs> ready;  ///< per member: when it was ready (TaskEvent::ready_ps)
  };
  struct PendingProfile {
    int instance = 0;
    int device = 0;
    engine::Profile profile;
  };

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
  bool done(int instance, TaskId task) const {
    const auto stream = graph_.task(task).stream;
    return head_[stream_index(instance, stream)] > position_[static_cast<std::size_t>(task)];
  }

  // Successor lists of the dependencies the graph has at the start (tasks added later keep
  // theirs in late_successors_).
  void build_successors() {
    const std::size_t tasks = graph_.task_count();
    std::vector<std::int32_t> prerequisites(tasks, 0);
    successors_.offset.assign(tasks + 1, 0);
    for (const Dependency& d : graph_.dependencies()) {
      ++prerequisites[static_cast<std::size_t>(d.task)];
      ++successors_.offset[static_cast<std::size_t>(d.prerequisite) + 1];
    }
    for (std::size_t i = 0; i < tasks; ++i) {
      successors_.offset[i + 1] += successors_.offset[i];
      if (prerequisites[i] > std::numeric_limits<std::int16_t>::max()) {
        throw ConfigError(fmt::format("task '{}' has {} prerequisites; at most {} are supported",
                                      graph_.label(static_cast<TaskId>(i)), prerequisites[i],
                                      std::numeric_limits<std::int16_t>::max()));
      }
    }
    successors_.items.resize(graph_.dependencies().size());
    std::vector<std::int32_t> fill(successors_.offset.begin(), successors_.offset.end() - 1);
    for (const Dependency& d : graph_.dependencies()) {
      successors_.items[static_cast<std::size_t>(fill[static_cast<std::size_t>(d.prerequisite)]++)] = d.task;
    }
    remaining_.resize(tasks * instances_);
    for (std::size_t t = 0; t < tasks; ++t) {
      for (std::size_t i = 0; i < instances_; ++i) {
        remaining_[t * instances_ + i] = static_cast<std::int16_t>(prerequisites[t]);
      }
    }
  }

  // Sizes the per-task, per-stream and per-device state to the graph (new items at the end).
  void grow() {
    const std::size_t tasks = graph_.task_count();
    if (remaining_.size() < tasks * instances_) remaining_.resize(tasks * instances_, 0);
    // Tasks join their stream in id order, so a new task's FIFO position is the count of its
    // stream's tasks seen before it.
    if (stream_size_.size() < graph_.stream_count()) stream_size_.resize(graph_.stream_count(), 0);
    for (std::size_t t = position_.size(); t < tasks; ++t) {
      position_.push_back(stream_size_[static_cast<std::size_t>(graph_.task(static_cast<TaskId>(t)).stream)]++);
    }
    const std::size_t streams = graph_.stream_count();
    if (streams > streams_) {
      head_.resize(streams * instances_, 0);
      busy_.resize(streams * instances_, 0);
      stream_end_.resize(streams * instances_, start_time_);
      running_.resize(streams * instances_);
      running_start_.resize(streams * instances_, 0);
    }
    const std::size_t devices = std::max({static_cast<std::size_t>(graph_.device_count()), devices_, min_devices_});
    if (devices > devices_) {
      device_rate_.resize(devices, 1.0);
      for (std::size_t d = devices_; d < devices && d < options_.compute_rate_while_communicating.size(); ++d) {
        device_rate_[d] = options_.compute_rate_while_communicating[d];
      }
      active_comm_.resize(devices * instances_, 0);
      speed_.resize(devices * instances_, 1.0);
      compute_streams_.resize(devices);
      devices_ = devices;
    }
    for (std::size_t st = streams_; st < streams; ++st) {
      const int device = graph_.stream_device(static_cast<StreamId>(st));
      if (device >= 0 && graph_.stream_role(static_cast<StreamId>(st)) == StreamRole::compute) {
        compute_streams_[static_cast<std::size_t>(device)].push_back(static_cast<StreamId>(st));
      }
    }
    streams_ = std::max(streams_, streams);
  }

  void schedule_profile(int instance, int device, const engine::Profile& profile) {
    const std::size_t dev = device_index(instance, device);
    for (const engine::ProfileChange& change : profile.changes) {
      const double value = change.value;
      engine_.schedule_at(
          change.at_ps, [this, dev, value](engine::Engine&) { change_speed(dev, value); },
          speed_change_tag(instance, device));
    }
  }

  void notify_start(int instance, TaskId task, TaskId released_by, engine::TimePs ready_ps) {
    if (observers_.empty()) return;
    const TaskEvent event{&graph_, task, instance, engine_.now(), -1, released_by, ready_ps};
    for (ExecutionObserver* observer : observers_) observer->on_task_start(event);
  }
  void notify_end(int instance, TaskId task, engine::TimePs start_ps) {
    if (observers_.empty()) return;
    const TaskEvent event{&graph_, task, instance, start_ps, engine_.now(), -1};
    for (ExecutionObserver* observer : observers_) observer->on_task_end(event);
  }

  void try_start(int instance, StreamId stream, TaskId released_by) {
    const std::size_t s = stream_index(instance, stream);
    const auto queue = graph_.stream_tasks(stream);
    if (busy_[s] != 0 || head_[s] >= queue.size()) return;
    const TaskId task = queue[head_[s]];
    if (remaining_[task_slot(instance, task)] != 0) return;
    busy_[s] = 1;
    // A task with a release time waits for it at its stream's head (its host has not issued it).
    const engine::TimePs ready = engine_.now();
    const Task& info = graph_.task(task);
    const engine::TimePs at = std::max(ready, start_time_ + info.release_ps);
    // A kernel of fixed duration that may start now starts at once: its start only schedules
    // its end (no model outside the executor runs, so nothing re-enters the caller). Tasks
    // that start communication or join a group start from an event of their own, after the
    // events already due now.
    if (at == ready && !info.asynchronous() && (info.sync == 0 || !replication_.group_of)) {
      start(instance, task, released_by, ready);
      return;
    }
    engine_.schedule_at(
        at, [this, instance, task, released_by, ready](engine::Engine&) { on_ready(instance, task, released_by, ready); },
        tag(instance, task, false));
  }

  // The task is at its stream's head with its prerequisites done: a group task waits for its
  // group, any other starts.
  void on_ready(int instance, TaskId task, TaskId released_by, engine::TimePs ready) {
    const Task& info = graph_.task(task);
    if (info.sync == 0 || !replication_.group_of) {
      start(instance, task, released_by, ready);
      return;
    }
    const GroupMembership group = replication_.group_of(instance, task);
    if (group.size <= 1 && !replication_.group_start) {
      start(instance, task, released_by, ready);
      return;
    }
    Barrier& barrier = barriers_[group.key];
    if (barrier.members.empty()) {
      barrier.size = group.size;
    } else if (barrier.size != group.size) {
      throw ConfigError(fmt::format("task '{}': group {:#x} has members of size {} and {}", graph_.label(task), group.key,
                                    barrier.size, group.size));
    }
    barrier.members.push_back(instance);
    barrier.released_by.push_back(released_by);
    barrier.ready.push_back(ready);
    if (static_cast<int>(barrier.members.size()) < barrier.size) return;
    Barrier arrived = std::move(barrier);
    barriers_.erase(group.key);
    start_group(task, group, std::move(arrived));
  }

  void start_group(TaskId task, const GroupMembership& group, Barrier arrived) {
    const Task& info = graph_.task(task);
    for (std::size_t k = 0; k < arrived.members.size(); ++k) {
      note_start(arrived.members[k], task, arrived.released_by[k], arrived.ready[k]);
    }
    const auto shared = std::make_shared<std::vector<int>>(std::move(arrived.members));
    auto finish_all = [this, task, shared](engine::Engine&) {
      for (const int m : *shared) on_finish(m, task);
    };
    if (replication_.group_start) {
      Work work = replication_.group_start(task, shared->front(), group);
      if (work.asynchronous()) {
        work.start(engine_, std::move(finish_all));
      } else {
        engine_.schedule_after(duration_of(shared->front(), task, work.duration_ps), std::move(finish_all),
                               tag(shared->front(), task, true));
      }
    } else if (info.asynchronous()) {
      graph_.start_hook(task)(engine_, std::move(finish_all));
    } else {
      engine_.schedule_after(duration_of(shared->front(), task, info.duration_ps), std::move(finish_all),
                             tag(shared->front(), task, true));
    }
  }

  // The duration this instance of a fixed task runs for (ExecutionOptions::duration).
  engine::TimePs duration_of(int instance, TaskId task, engine::TimePs nominal_ps) const {
    if (!options_.duration) return nominal_ps;
    const engine::TimePs drawn = options_.duration(instance, task, nominal_ps);
    if (drawn < 0) {
      throw SimulationError(fmt::format("task '{}': a drawn duration of {} ps is negative", graph_.label(task),
                                        drawn));
    }
    return drawn;
  }

  // Bookkeeping of a task start: its time, communication activity, observers.
  void note_start(int instance, TaskId task, TaskId released_by, engine::TimePs ready) {
    const Task& info = graph_.task(task);
    running_start_[stream_index(instance, info.stream)] = engine_.now();
    const int device = graph_.stream_device(info.stream);
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::communication) {
      comm_started(device_index(instance, device));
    }
    notify_start(instance, task, released_by, ready);
  }

  void start(int instance, TaskId task, TaskId released_by, engine::TimePs ready) {
    note_start(instance, task, released_by, ready);
    const Task& info = graph_.task(task);
    if (info.asynchronous()) {
      graph_.start_hook(task)(engine_, [this, instance, task](engine::Engine&) { on_finish(instance, task); });
      return;
    }
    const int device = graph_.stream_device(info.stream);
    const engine::TimePs duration_ps = duration_of(instance, task, info.duration_ps);
    // Kernels slow down when they share the device or it runs slow, so their finish is kept to
    // be rescheduled; a collective that blocks the compute stream (it is communication itself)
    // does not. An unslowed kernel's delay is its duration exactly (ceil(d - 1e-9) = d).
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::compute &&
        info.traits.kind != TaskKind::communication) {
      const std::size_t dev = device_index(instance, device);
      const double speed = speed_[dev];
      Running& run = running_[stream_index(instance, info.stream)];
      run.task = task;
      run.speed = speed;
      run.work_left_ps = speed > 0 ? static_cast<double>(duration_ps) / speed : static_cast<double>(duration_ps);
      run.since_ps = engine_.now();
      run.rate = active_comm_[dev] > 0 ? device_rate_[static_cast<std::size_t>(device)] : 1.0;
      if (speed > 0) schedule_finish(instance, run);
      return;
    }
    engine_.schedule_after(duration_ps, [this, instance, task](engine::Engine&) { on_finish(instance, task); },
                           tag(instance, task, true));
  }

  void schedule_finish(int instance, Running& run) {
    const TaskId task = run.task;
    const auto delay = engine::checked_ps(std::ceil(run.work_left_ps / run.rate - 1e-9), "a task's remaining time");
    run.finish = engine_.schedule_after(std::max<engine::TimePs>(0, delay),
                                        [this, instance, task](engine::Engine&) { on_finish(instance, task); },
                                        tag(instance, task, true));
  }

  // Banks the work a running task did since `since_ps` at its rate (nothing while stalled).
  void bank(Running& run) {
    if (run.speed > 0) {
      run.work_left_ps = std::max(0.0, run.work_left_ps - static_cast<double>(engine_.now() - run.since_ps) * run.rate);
    }
    run.since_ps = engine_.now();
  }

  // The device's compute streams change sharing rate: bank the work done so far and reschedule.
  void set_compute_rate(std::size_t dev, double rate) {
    const int instance = instance_of_device_slot(dev);
    for (const StreamId st : compute_streams_[device_of_device_slot(dev)]) {
      Running& run = running_[stream_index(instance, st)];
      if (run.task < 0 || run.rate == rate) continue;
      bank(run);
      run.rate = rate;
      if (run.speed > 0) {
        engine_.cancel(run.finish);
        schedule_finish(instance, run);
      }
    }
  }

  // A device's speed changes: its running slowable tasks convert their remaining work.
  void change_speed(std::size_t dev, double speed) {
    speed_[dev] = speed;
    const int instance = instance_of_device_slot(dev);
    for (const StreamId st : compute_streams_[device_of_device_slot(dev)]) {
      Running& run = running_[stream_index(instance, st)];
      if (run.task < 0 || run.speed == speed) continue;
      bank(run);
      const double nominal = run.speed > 0 ? run.work_left_ps * run.speed : run.work_left_ps;
      if (run.speed > 0) engine_.cancel(run.finish);
      run.speed = speed;
      run.work_left_ps = speed > 0 ? nominal / speed : nominal;
      if (speed > 0) schedule_finish(instance, run);
    }
  }

  void comm_started(std::size_t dev) {
    const double rate = device_rate_[device_of_device_slot(dev)];
    if (active_comm_[dev]++ == 0 && rate < 1.0) set_compute_rate(dev, rate);
  }
  void comm_finished(std::size_t dev) {
    if (--active_comm_[dev] == 0 && device_rate_[device_of_device_slot(dev)] < 1.0) set_compute_rate(dev, 1.0);
  }

  void on_finish(int instance, TaskId task) {
    const auto t = static_cast<std::size_t>(task);
    const Task& info = graph_.task(task);
    const std::size_t s = stream_index(instance, info.stream);
    if (busy_[s] == 0 || graph_.stream_tasks(info.stream)[head_[s]] != task) {
      throw SimulationError(fmt::format("task '{}' signalled completion twice", graph_.label(task)));
    }
    if (running_[s].task == task) running_[s].task = -1;
    stream_end_[s] = engine_.now();
    const int device = graph_.stream_device(info.stream);
    if (device >= 0 && graph_.stream_role(info.stream) == StreamRole::communication) {
      comm_finished(device_index(instance, device));
    }
    ++finished_;
    busy_[s] = 0;
    ++head_[s];
    notify_end(instance, task, running_start_[s]);
    if (t + 1 < successors_.offset.size()) {
      for (auto i = successors_.offset[t]; i < successors_.offset[t + 1]; ++i) {
        const TaskId next = successors_.items[static_cast<std::size_t>(i)];
        if (--remaining_[task_slot(instance, next)] == 0) try_start(instance, graph_.task(next).stream, task);
      }
    }
    if (t < late_successors_.size()) {
      for (const TaskId next : late_successors_[t]) {
        if (--remaining_[task_slot(instance, next)] == 0) try_start(instance, graph_.task(next).stream, task);
      }
    }
    try_start(instance, info.stream, -1);
    if (finished_ == task_instances() && on_finished_) on_finished_();
  }

  engine::Engine& engine_;
  TaskGraph& graph_;
  ExecutionOptions options_;
  Replication replication_;
  std::vector<ExecutionObserver*> observers_;
  std::function<void()> on_finished_;
  bool started_ = false;
  engine::TimePs start_time_ = 0;
  std::size_t streams_ = 0, devices_ = 0, instances_ = 1, min_devices_ = 0;
  Adjacency successors_;
  std::vector<std::vector<TaskId>> late_successors_;  // per prerequisite: tasks added while running
  std::vector<std::int16_t> remaining_;  // unfinished prerequisites per task x instance
  std::vector<std::size_t> position_;    // per task: its index in its stream's FIFO
  std::vector<std::size_t> stream_size_;  // per stream: tasks given a position so far
  std::vector<std::size_t> head_;        // per stream x instance: index into its FIFO of the next task
  std::vector<std::uint8_t> busy_;       // per stream x instance: a task started or about to start
  std::vector<engine::TimePs> stream_end_;
  std::vector<engine::TimePs> running_start_;  // per stream x instance: start of its current task
  std::size_t finished_ = 0;
  // Compute sharing (ExecutionOptions) and device speed: per device its sharing rate; per
  // device x instance running communication tasks and speed; per stream x instance the running
  // slowable task.
  std::vector<double> device_rate_;
  std::vector<int> active_comm_;
  std::vector<std::vector<StreamId>> compute_streams_;
  std::vector<Running> running_;
  std::vector<double> speed_;
  std::vector<std::pair<std::size_t, double>> initial_speeds_;
  std::vector<PendingProfile> pending_profiles_;
  // Looked up by key, never iterated: its order cannot reach results.
  std::unordered_map<std::uint64_t, Barrier> barriers_;

};

namespace {

/// The first blocked task of each stream of the first blocked instance, and what it waits on.
template <class State>
std::string deadlock_message(const TaskGraph& graph, const State& state) {
  const int instances = state.instances();
  std::string message = fmt::format("task graph deadlocked: {} of {} tasks never ran",
                                    state.task_instances() - state.finished(), state.task_instances());
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
      waiting += fmt::format("{}'{}'", waiting.empty() ? "" : ", ", graph.label(w));
    }
    if (waiting.empty() && graph.task(head).sync != 0) waiting = "the other members of its group";
    message += fmt::format("; {} stream blocked at '{}' waiting for {}", graph.stream_name(static_cast<StreamId>(s)),
                           graph.label(head), waiting);
  }
  return message;
}

}  // namespace

Executor::Executor(engine::Engine& engine, TaskGraph& graph, ExecutionOptions options, Replication replication)
    : graph_(&graph), state_(std::make_unique<State>(engine, graph, std::move(options), std::move(replication))) {}

Executor::~Executor() = default;

void Executor::add_observer(ExecutionObserver& observer) { state_->add_observer(observer); }

void Executor::set_device_speed(int instance, int device, double speed) { state_->set_speed(instance, device, speed); }

void Executor::apply_speed_profile(int instance, int device, const engine::Profile& profile) {
  state_->apply_profile(instance, device, profile);
}

void Executor::on_finished(std::function<void()> callback) { state_->on_finished(std::move(callback)); }

void Executor::start() { state_->start(); }

StreamId Executor::add_stream(std::string name, int device, StreamRole role) {
  const StreamId stream = graph_->add_stream(std::move(name), device, role);
  if (state_->started()) state_->stream_added();
  return stream;
}

TaskId Executor::add_task(StreamId stream, engine::TimePs duration_ps, TaskTraits traits, std::string_view label,
                          std::span<const TaskId> prerequisites) {
  const TaskId task = graph_->add_task(stream, duration_ps, traits, label, prerequisites);
  if (state_->started()) state_->task_added(task, prerequisites);
  return task;
}

TaskId Executor::add_async_task(StreamId stream, AsyncStart start, TaskTraits traits, std::string_view label,
                                std::span<const TaskId> prerequisites) {
  const TaskId task = graph_->add_async_task(stream, std::move(start), traits, label, prerequisites);
  if (state_->started()) state_->task_added(task, prerequisites);
  return task;
}

TaskId Executor::add_work(StreamId stream, Work work, TaskTraits traits, std::string_view label,
                          std::span<const TaskId> prerequisites) {
  if (work.asynchronous()) return add_async_task(stream, std::move(work.start), traits, label, prerequisites);
  return add_task(stream, work.duration_ps, traits, label, prerequisites);
}

std::size_t Executor::tasks_finished() const { return state_->finished(); }

std::size_t Executor::task_instances() const { return state_->task_instances(); }

ExecutionResult Executor::finish() const {
  if (!state_->started()) throw SimulationError("the executor was never started");
  if (state_->finished() != state_->task_instances()) throw SimulationError(deadlock_message(*graph_, *state_));
  return state_->result();
}

ExecutionResult run_graph(engine::Engine& engine, TaskGraph& graph, ExecutionOptions options, Replication replication,
                          std::span<ExecutionObserver* const> observers) {
  Executor executor(engine, graph, std::move(options), std::move(replication));
  for (ExecutionObserver* observer : observers) executor.add_observer(*observer);
  executor.start();
  engine.run();
  return executor.finish();
}

}  // namespace clustersim::exec
