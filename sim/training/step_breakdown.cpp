#include "sim/training/step_breakdown.hpp"

#include <algorithm>

#include "sim/training/op_kind.hpp"

namespace clustersim::training {

StepBreakdownObserver::StepBreakdownObserver(const std::vector<StageStreams>& stages, std::size_t stream_count,
                                             int instances, engine::TimePs start_ps)
    : stages_(stages), instances_(static_cast<std::size_t>(instances)) {
  compute_stage_.assign(stream_count, -1);
  watch_.assign(stream_count, Watch::none);
  for (std::size_t p = 0; p < stages_.size(); ++p) {
    compute_stage_[static_cast<std::size_t>(stages_[p].compute)] = static_cast<int>(p);
    watch_[static_cast<std::size_t>(stages_[p].compute)] = Watch::compute;
    for (const exec::StreamId s : stages_[p].sends) watch_[static_cast<std::size_t>(s)] = Watch::send;
    if (stages_[p].host >= 0) watch_[static_cast<std::size_t>(stages_[p].host)] = Watch::host;
  }
  run_start_ = start_ps;
  Account fresh;
  fresh.previous_end = start_ps;
  accounts_.assign(stages_.size() * instances_, fresh);
  ended_start_.assign(stream_count * instances_, 0);
  host_start_.assign(stream_count * instances_, 0);
  host_cause_.assign(stream_count * instances_, kNoCause);
}

void StepBreakdownObserver::attribute_gap(Account& account, engine::TimePs gap, std::uint8_t kind) const {
  switch (static_cast<OpKind>(kind)) {
    case OpKind::dp_comm: account.dp += gap; break;
    case OpKind::pp_comm: account.pp += gap; break;
    case OpKind::cp_comm: account.cp += gap; break;  // flow fidelity: KV exchange on its own stream
    case OpKind::tp_comm: account.tp += gap; break;
    case OpKind::ep_comm: account.ep += gap; break;
    case OpKind::offload: account.offload += gap; break;
    case OpKind::host: account.host += gap; break;
    default: account.bubble += gap; break;
  }
}

void StepBreakdownObserver::on_task_start(const exec::TaskEvent& event) {
  const exec::Task& task = event.info();
  const auto s = static_cast<std::size_t>(task.stream);
  if (s < watch_.size() && watch_[s] == Watch::host) {
    const std::size_t h = stream_index(event.instance, task.stream);
    host_start_[h] = event.start_ps;
    host_cause_[h] = event.released_by < 0 ? kNoCause : event.graph->task(event.released_by).traits.category;
    return;
  }
  if (s >= compute_stage_.size() || compute_stage_[s] < 0) return;
  Account& account = accounts_[account_index(event.instance, compute_stage_[s])];
  if (event.start_ps <= account.previous_end) return;
  // A task its host had not issued yet when it was ready waited for the issue (host time), and
  // after it only for the other members of its group (bubble); before it was ready, for what
  // released it.
  const engine::TimePs issued_at = run_start_ + task.release_ps;
  engine::TimePs caused_until = event.start_ps;
  if (issued_at > event.ready_ps) {
    caused_until = std::max(account.previous_end, event.ready_ps);
    const engine::TimePs host_until = std::min(event.start_ps, issued_at);
    if (host_until > caused_until) account.host += host_until - caused_until;
    account.bubble += event.start_ps - std::max(host_until, caused_until);
  }
  attribute_cause(account, event, caused_until);
}

void StepBreakdownObserver::attribute_cause(Account& account, const exec::TaskEvent& event, engine::TimePs until) {
  const engine::TimePs gap = until - account.previous_end;
  if (gap <= 0) return;
  if (event.released_by < 0) {
    account.bubble += gap;
    return;
  }
  const exec::Task& cause = event.graph->task(event.released_by);
  const std::uint8_t kind = cause.traits.category;
  if (static_cast<OpKind>(kind) == OpKind::pp_comm) {
    // The transfer just ended, so its stream's last ended task is it.
    const engine::TimePs cause_start = ended_start_[stream_index(event.instance, cause.stream)];
    const engine::TimePs in_flight_from = std::min(until, std::max(account.previous_end, cause_start));
    account.pp += until - in_flight_from;
    account.bubble += in_flight_from - account.previous_end;
  } else if (static_cast<OpKind>(kind) == OpKind::host) {
    // The host issued the op just now: the device waited for the host while it ran, and before
    // that for whatever the host itself waited for (the gradients, before the optimizer).
    const std::size_t h = stream_index(event.instance, cause.stream);
    const engine::TimePs issuing_from = std::min(until, std::max(account.previous_end, host_start_[h]));
    account.host += until - issuing_from;
    if (issuing_from > account.previous_end) {
      const std::uint8_t before = host_cause_[h];
      if (before == kNoCause) {
        account.host += issuing_from - account.previous_end;
      } else {
        attribute_gap(account, issuing_from - account.previous_end, before);
      }
    }
  } else {
    attribute_gap(account, gap, kind);
  }
}

void StepBreakdownObserver::on_task_end(const exec::TaskEvent& event) {
  const exec::Task& task = event.info();
  const auto s = static_cast<std::size_t>(task.stream);
  if (s >= watch_.size() || watch_[s] == Watch::none) return;  // (a stream added while running: not a stage's)
  if (watch_[s] == Watch::send) {
    ended_start_[stream_index(event.instance, task.stream)] = event.start_ps;
    return;
  }
  if (watch_[s] == Watch::host) return;
  Account& account = accounts_[account_index(event.instance, compute_stage_[s])];
  const engine::TimePs duration = event.end_ps - event.start_ps;
  switch (static_cast<OpKind>(task.traits.category)) {
    case OpKind::compute:
    case OpKind::recompute:
    case OpKind::other: account.compute += duration; break;
    case OpKind::tp_comm: account.tp += duration; break;
    case OpKind::cp_comm: account.cp += duration; break;
    case OpKind::ep_comm: account.ep += duration; break;
    case OpKind::pp_comm: account.pp += duration; break;
    case OpKind::dp_comm: account.dp += duration; break;
    case OpKind::optimizer: account.optimizer += duration; break;
    case OpKind::offload: account.offload += duration; break;  // (never on a compute stream)
    case OpKind::host: break;                                   // (never on a compute stream)
  }
  account.previous_end = event.end_ps;
}

StepBreakdown StepBreakdownObserver::breakdown(int instance, int stage, const exec::TaskGraph& graph,
                                               const exec::ExecutionResult& run) const {
  Account account = accounts_[account_index(instance, stage)];
  // Tail: other streams of the stage finishing after its compute stream.
  engine::TimePs stage_end = account.previous_end;
  std::uint8_t last_kind = static_cast<std::uint8_t>(OpKind::other);
  const std::size_t streams = graph.stream_count();
  for (const exec::StreamId s : stages_[static_cast<std::size_t>(stage)].all) {
    const auto tasks = graph.stream_tasks(s);
    if (tasks.empty()) continue;
    const engine::TimePs end =
        run.stream_end_ps[static_cast<std::size_t>(instance) * streams + static_cast<std::size_t>(s)];
    if (end > stage_end) {
      stage_end = end;
      last_kind = graph.task(tasks.back()).traits.category;
    }
  }
  attribute_gap(account, stage_end - account.previous_end, last_kind);
  StepBreakdown breakdown;
  breakdown.compute_s = engine::ps_to_seconds(account.compute);
  breakdown.exposed_tp_s = engine::ps_to_seconds(account.tp);
  breakdown.exposed_cp_s = engine::ps_to_seconds(account.cp);
  breakdown.exposed_ep_s = engine::ps_to_seconds(account.ep);
  breakdown.exposed_pp_s = engine::ps_to_seconds(account.pp);
  breakdown.exposed_dp_s = engine::ps_to_seconds(account.dp);
  breakdown.bubble_s = engine::ps_to_seconds(account.bubble);
  breakdown.optimizer_s = engine::ps_to_seconds(account.optimizer);
  breakdown.offload_s = engine::ps_to_seconds(account.offload);
  breakdown.exposed_host_s = engine::ps_to_seconds(account.host);
  return breakdown;
}

}  // namespace clustersim::training
