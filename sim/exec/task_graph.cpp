#include "sim/exec/task_graph.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::exec {

std::string_view task_kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::compute: return "compute";
    case TaskKind::communication: return "communication";
    case TaskKind::memory_transfer: return "memory_transfer";
    case TaskKind::host: return "host";
    case TaskKind::idle: return "idle";
  }
  return "compute";
}

std::string TaskGraph::category_name(std::uint8_t category) const {
  return category < category_names_.size() ? category_names_[category] : std::to_string(category);
}

StreamId TaskGraph::add_stream(std::string name, int device, StreamRole role) {
  if (device < -1) throw ConfigError(fmt::format("stream '{}': device must be >= -1, got {}", name, device));
  stream_devices_.push_back(device);
  stream_roles_.push_back(role);
  device_count_ = std::max(device_count_, device + 1);
  stream_names_.push_back(std::move(name));
  stream_tasks_.emplace_back();
  return static_cast<StreamId>(stream_names_.size() - 1);
}

TaskId TaskGraph::add_task(StreamId stream, engine::TimePs duration_ps, TaskTraits traits, std::string_view label,
                           std::initializer_list<TaskId> prerequisites) {
  return add_task(stream, duration_ps, traits, label,
                  std::span<const TaskId>(prerequisites.begin(), prerequisites.size()));
}

TaskId TaskGraph::add_task(StreamId stream, engine::TimePs duration_ps, TaskTraits traits, std::string_view label,
                           std::span<const TaskId> prerequisites) {
  if (stream < 0 || static_cast<std::size_t>(stream) >= stream_names_.size()) {
    throw ConfigError(fmt::format("task '{}': unknown stream {} (graph has {} streams)", label,
                                  stream, stream_names_.size()));
  }
  if (duration_ps < 0) {
    throw ConfigError(
        fmt::format("task '{}': duration must be >= 0 ps, got {} ps", label, duration_ps));
  }
  if (label.size() > kMaxLabel) {
    throw ConfigError(fmt::format("task '{}...': a label of {} bytes is longer than the {} a task may have",
                                  label.substr(0, 40), label.size(), kMaxLabel));
  }
  const auto id = static_cast<TaskId>(tasks_.size());
  for (TaskId prerequisite : prerequisites) {
    if (prerequisite < 0 || prerequisite >= id) {
      throw ConfigError(fmt::format("task '{}': unknown prerequisite task {} (graph has {} tasks)",
                                    label, prerequisite, tasks_.size()));
    }
  }
  Task task;
  task.traits = traits;
  task.duration_ps = duration_ps;
  task.stream = stream;
  task.label_size = static_cast<std::uint32_t>(label.size());
  tasks_.push_back(task);
  // A label never spans two blocks, and a block never grows beyond its capacity (a copied
  // graph's blocks have only the capacity they use).
  if (label_blocks_.empty() || label_blocks_.back().size() + label.size() > label_blocks_.back().capacity()) {
    const std::size_t doubled = label_blocks_.empty() ? 4096 : std::min(2 * label_blocks_.back().capacity(), kLabelBlock);
    label_blocks_.emplace_back().reserve(std::max(doubled, label.size()));
  }
  std::vector<char>& block = label_blocks_.back();
  label_begin_.push_back((label_blocks_.size() - 1) * kLabelBlock + block.size());
  block.insert(block.end(), label.begin(), label.end());
  stream_tasks_[static_cast<std::size_t>(stream)].push_back(id);
  for (TaskId prerequisite : prerequisites) dependencies_.push_back({id, prerequisite});
  return id;
}

TaskId TaskGraph::add_async_task(StreamId stream, AsyncStart start, TaskTraits traits, std::string_view label,
                                 std::initializer_list<TaskId> prerequisites) {
  return add_async_task(stream, std::move(start), traits, label,
                        std::span<const TaskId>(prerequisites.begin(), prerequisites.size()));
}

TaskId TaskGraph::add_async_task(StreamId stream, AsyncStart start, TaskTraits traits, std::string_view label,
                                 std::span<const TaskId> prerequisites) {
  if (!start) throw ConfigError(fmt::format("asynchronous task '{}' has no start hook", label));
  const TaskId id = add_task(stream, 0, traits, label, prerequisites);
  tasks_[static_cast<std::size_t>(id)].async = static_cast<std::int32_t>(start_hooks_.size());
  start_hooks_.push_back(std::move(start));
  return id;
}

TaskId TaskGraph::add_work(StreamId stream, Work work, TaskTraits traits, std::string_view label,
                           std::initializer_list<TaskId> prerequisites) {
  if (work.asynchronous()) return add_async_task(stream, std::move(work.start), traits, label, prerequisites);
  return add_task(stream, work.duration_ps, traits, label, prerequisites);
}

void TaskGraph::set_sync(TaskId task, std::uint8_t sync) {
  check_task(task, "synchronising task");
  tasks_[static_cast<std::size_t>(task)].sync = sync;
}

void TaskGraph::set_release(TaskId task, engine::TimePs release_ps) {
  check_task(task, "released task");
  if (release_ps < 0) {
    throw ConfigError(fmt::format("task '{}': release time must be >= 0 ps, got {} ps",
                                  label(task), release_ps));
  }
  tasks_[static_cast<std::size_t>(task)].release_ps = release_ps;
}

void TaskGraph::check_task(TaskId id, std::string_view role) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tasks_.size()) {
    throw ConfigError(
        fmt::format("dependency {} {} is not a task (graph has {} tasks)", role, id, tasks_.size()));
  }
}

void TaskGraph::add_dependency(TaskId task, TaskId prerequisite) {
  check_task(task, "task");
  check_task(prerequisite, "prerequisite");
  if (task == prerequisite) {
    throw ConfigError(fmt::format("task '{}' cannot depend on itself", label(task)));
  }
  dependencies_.push_back({task, prerequisite});
}

}  // namespace clustersim::exec
