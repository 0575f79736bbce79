#include "sim/training/step_breakdown.hpp"

#include <algorithm>
#include <vector>

#include "sim/engine/time.hpp"

namespace clustersim::training {

StepBreakdown stage_breakdown(const exec::TaskGraph& graph, const exec::ExecutionResult& run,
                              exec::StreamId compute_stream,
                              std::span<const exec::StreamId> stage_streams) {
  using engine::TimePs;
  using exec::TaskKind;
  const auto at = [](exec::TaskId id) { return static_cast<std::size_t>(id); };

  // Latest-finishing prerequisite of each task on the compute stream.
  std::vector<exec::TaskId> binding(graph.task_count(), -1);
  for (const exec::Dependency& d : graph.dependencies()) {
    if (graph.task(d.task).stream != compute_stream) continue;
    exec::TaskId& current = binding[at(d.task)];
    if (current < 0 || run.end_ps[at(d.prerequisite)] > run.end_ps[at(current)]) current = d.prerequisite;
  }

  TimePs compute = 0, tp = 0, cp = 0, ep = 0, pp = 0, dp = 0, bubble = 0, optimizer = 0;
  auto attribute_gap = [&](TimePs gap, TaskKind kind) {
    if (kind == TaskKind::dp_comm) dp += gap;
    else if (kind == TaskKind::pp_comm) pp += gap;
    else if (kind == TaskKind::cp_comm) cp += gap;  // flow fidelity: KV exchange on its own stream
    else if (kind == TaskKind::tp_comm) tp += gap;
    else if (kind == TaskKind::ep_comm) ep += gap;
    else bubble += gap;
  };
  TimePs previous_end = run.start_time_ps;
  for (exec::TaskId id : graph.stream_tasks(compute_stream)) {
    const TimePs start = run.start_ps[at(id)];
    const TimePs gap = start - previous_end;
    if (gap > 0) {
      const exec::TaskId cause = binding[at(id)];
      const TaskKind kind = cause >= 0 ? graph.task(cause).kind : TaskKind::other;
      if (kind == TaskKind::pp_comm) {
        const TimePs in_flight_from = std::max(previous_end, run.start_ps[at(cause)]);
        pp += start - in_flight_from;
        bubble += in_flight_from - previous_end;
      } else {
        attribute_gap(gap, kind);
      }
    }
    const TimePs duration = run.end_ps[at(id)] - start;
    switch (graph.task(id).kind) {
      case TaskKind::compute:
      case TaskKind::recompute: compute += duration; break;
      case TaskKind::tp_comm: tp += duration; break;
      case TaskKind::cp_comm: cp += duration; break;
      case TaskKind::ep_comm: ep += duration; break;
      case TaskKind::pp_comm: pp += duration; break;
      case TaskKind::dp_comm: dp += duration; break;
      case TaskKind::optimizer: optimizer += duration; break;
      case TaskKind::other: compute += duration; break;
    }
    previous_end = run.end_ps[at(id)];
  }
  // Tail: other streams of the stage finishing after its compute stream.
  TimePs stage_end = previous_end;
  TaskKind last_kind = TaskKind::other;
  for (exec::StreamId stream : stage_streams) {
    const auto tasks = graph.stream_tasks(stream);
    if (tasks.empty()) continue;
    const exec::TaskId last = tasks.back();
    if (run.end_ps[at(last)] > stage_end) {
      stage_end = run.end_ps[at(last)];
      last_kind = graph.task(last).kind;
    }
  }
  attribute_gap(stage_end - previous_end, last_kind);

  StepBreakdown breakdown;
  breakdown.compute_s = engine::ps_to_seconds(compute);
  breakdown.exposed_tp_s = engine::ps_to_seconds(tp);
  breakdown.exposed_cp_s = engine::ps_to_seconds(cp);
  breakdown.exposed_ep_s = engine::ps_to_seconds(ep);
  breakdown.exposed_pp_s = engine::ps_to_seconds(pp);
  breakdown.exposed_dp_s = engine::ps_to_seconds(dp);
  breakdown.bubble_s = engine::ps_to_seconds(bubble);
  breakdown.optimizer_s = engine::ps_to_seconds(optimizer);
  return breakdown;
}

}  // namespace clustersim::training
