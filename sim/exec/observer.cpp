#include "sim/exec/observer.hpp"

namespace clustersim::exec {

void TaskTimesRecorder::grow(const TaskGraph& graph) {
  if (start_ps.size() < graph.task_count()) {
    start_ps.resize(graph.task_count(), -1);
    end_ps.resize(graph.task_count(), -1);
  }
  if (stream_busy_ps.size() < graph.stream_count()) {
    stream_busy_ps.resize(graph.stream_count(), 0);
    stream_end_ps.resize(graph.stream_count(), 0);
    stream_slowdown_ps.resize(graph.stream_count(), 0);
  }
}

void TaskTimesRecorder::on_task_start(const TaskEvent& event) {
  if (event.instance != instance_) return;
  grow(*event.graph);
  start_ps[static_cast<std::size_t>(event.task)] = event.start_ps;
}

void TaskTimesRecorder::on_task_end(const TaskEvent& event) {
  if (event.instance != instance_) return;
  const TaskGraph& graph = *event.graph;
  grow(graph);
  const Task& task = event.info();
  const auto s = static_cast<std::size_t>(task.stream);
  end_ps[static_cast<std::size_t>(event.task)] = event.end_ps;
  const bool fixed = !task.asynchronous() && task.sync == 0;
  const engine::TimePs took = event.end_ps - event.start_ps;
  stream_busy_ps[s] += fixed ? task.duration_ps : took;
  stream_end_ps[s] = event.end_ps;
  const bool slowable = fixed && graph.stream_role(task.stream) == StreamRole::compute &&
                        graph.stream_device(task.stream) >= 0 && task.traits.kind != TaskKind::communication;
  if (slowable) stream_slowdown_ps[s] += took - task.duration_ps;
}

TaskCountObserver::TaskCountObserver(std::size_t total,
                                     std::function<void(std::size_t done, std::size_t total)> report,
                                     std::size_t every)
    : total_(total), report_(std::move(report)), every_(every > 0 ? every : 1) {
  if (report_) report_(0, total_);
}

void TaskCountObserver::on_task_end(const TaskEvent& /*event*/) {
  ++done_;
  if (done_ > total_) total_ = done_;
  if (report_ && (done_ % every_ == 0 || done_ == total_)) report_(done_, total_);
}

}  // namespace clustersim::exec
