#include "sim/training/training_step.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/platform/resource_limits.hpp"
#include "sim/training/pipeline_schedule.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/training/step_variability.hpp"

namespace clustersim::training {
namespace {

/// The group key and size of a template task's collective for `instance`.
exec::GroupMembership group_membership(const ParallelismConfig& par, const GroupCollective& info, exec::TaskId task,
                                       int instance) {
  const ReplicaIndex r = replica_of(par, instance);
  const int gradient_index = r.c + par.cp * r.d;
  std::uint64_t coordinate = 0;
  int size = 1;
  switch (info.dimension) {
    case GroupDimension::tensor: coordinate = static_cast<std::uint64_t>(gradient_index); size = par.tp; break;
    case GroupDimension::context: coordinate = static_cast<std::uint64_t>(r.t + par.tp * r.d); size = par.cp; break;
    case GroupDimension::expert:
      coordinate = static_cast<std::uint64_t>(r.t + par.tp * (gradient_index / par.ep));
      size = par.ep;
      break;
    case GroupDimension::data: coordinate = static_cast<std::uint64_t>(r.t); size = par.dp * par.cp; break;
    case GroupDimension::expert_data:
      coordinate = static_cast<std::uint64_t>(r.t + par.tp * (gradient_index % par.ep));
      size = par.dp * par.cp / par.ep;
      break;
    case GroupDimension::pipeline:
    case GroupDimension::none: coordinate = static_cast<std::uint64_t>(instance); break;
  }
  return exec::GroupMembership{(static_cast<std::uint64_t>(task) << 32U) | coordinate, size};
}

}  // namespace

TrainingStep::TrainingStep(const TrainingSetup& setup) : setup_(setup) {
  validate_training_setup(setup);
  const TrainingWorkload& w = setup.workload;
  const auto& par = w.parallelism;
  // Fails early (before costing) for schedules that are not implemented.
  check_pipeline(par.schedule, par.pp, 0, w.microbatches_per_pipeline(), par.vp);
  programs_ = build_stage_programs(setup);
}

TrainingStep::~TrainingStep() = default;

exec::Replication TrainingStep::replication(platform::CommRuntime& comm, int instances) const {
  exec::Replication rep;
  rep.instances = instances;
  if (instances == 1 && setup_.mode != platform::SimulationMode::full) return rep;
  const ParallelismConfig& par = setup_.workload.parallelism;
  const StepGraph* step = &step_;
  rep.group_of = [step, &par](int instance, exec::TaskId task) {
    return group_membership(par, step->collective(task), task, instance);
  };
  auto layout = std::make_shared<RankLayout>(par, setup_.placement);
  rep.group_start = [step, &par, layout, &comm](exec::TaskId task, int first, const exec::GroupMembership&) {
    const GroupCollective& info = step->collective(task);
    if (info.dimension == GroupDimension::none) {
      const exec::Task& t = step->graph.task(task);
      return t.asynchronous() ? exec::Work{0, step->graph.start_hook(task)} : exec::Work{t.duration_ps, {}};
    }
    const std::vector<int> members = group_members(par, *layout, info, first);
    return comm.collective(info.kind, std::span<const std::vector<int>>(&members, 1), info.bytes);
  };
  return rep;
}

void TrainingStep::apply_speeds(int instances) {
  const ParallelismConfig& par = setup_.workload.parallelism;
  const RankLayout layout(par, setup_.placement);
  for (int i = 0; i < instances; ++i) {
    const ReplicaIndex r = replica_of(par, i);
    for (int p = 0; p < par.pp; ++p) {
      engine::Profile speed = setup_.accelerator_speed.empty()
                                  ? engine::Profile::constant(1.0)
                                  : setup_.accelerator_speed[static_cast<std::size_t>(layout.rank(r.t, r.c, r.d, p))];
      if (speed == engine::Profile::constant(1.0) && setup_.throttle == 1.0) continue;
      speed.initial *= setup_.throttle;
      for (engine::ProfileChange& change : speed.changes) change.value *= setup_.throttle;
      executor_->apply_speed_profile(i, p, speed);
    }
  }
}

exec::ExecutionOptions TrainingStep::execution_options() const {
  exec::ExecutionOptions options;
  if (setup_.compute_rate_while_communicating < 1.0) {
    options.compute_rate_while_communicating.assign(static_cast<std::size_t>(setup_.workload.parallelism.pp),
                                                    setup_.compute_rate_while_communicating);
  }
  if (setup_.mode == platform::SimulationMode::full) {
    options.duration = duration_hook(step_, {setup_.seed, setup_.iteration, setup_.variability});
  }
  return options;
}

std::vector<engine::TimePs> TrainingStep::nominal_durations() const {
  if (!task_times_ || !executor_ || !executor_->finished()) {
    throw SimulationError("the step's task times were not recorded (TrainingSetup::record_task_times) or it did not end");
  }
  std::vector<engine::TimePs> durations;
  durations.reserve(step_.graph.task_count());
  for (exec::TaskId t = 0; t < static_cast<exec::TaskId>(step_.graph.task_count()); ++t) {
    const exec::Task& task = step_.graph.task(t);
    const auto i = static_cast<std::size_t>(t);
    durations.push_back(task.asynchronous() ? task_times_->end_ps[i] - task_times_->start_ps[i] : task.duration_ps);
  }
  return durations;
}

void TrainingStep::start(platform::Session& session, std::function<void()> on_done) {
  const auto& par = setup_.workload.parallelism;
  const bool full = setup_.mode == platform::SimulationMode::full;
  step_ = build_step_graph(setup_, programs_, session.comm(), full);
  instances_ = full ? par.tp * par.cp * par.dp : 1;
  engine::Engine& engine = session.engine();
  // A step that cannot fit in the events left is refused before it runs (with the estimate),
  // not stopped after simulating most of it: every task of every instance ends in an event.
  const std::int64_t limit = session.options().limits.events;
  const auto tasks = static_cast<std::uint64_t>(step_.graph.task_count());
  const std::uint64_t at_least = tasks * static_cast<std::uint64_t>(instances_);
  if (limit > 0 && engine.events_fired() + at_least > static_cast<std::uint64_t>(limit)) {
    throw EventLimitError(platform::event_limit_message(
        fmt::format("the training step needs at least {} events ({} tasks x {} instances, each ending in one){}", at_least,
                    tasks, instances_,
                    engine.events_fired() > 0 ? fmt::format(" after the {} fired before it", engine.events_fired())
                                              : std::string()),
        session.options().limits));
  }
  executor_ = std::make_unique<exec::Executor>(engine, step_.graph, execution_options(),
                                               replication(session.comm(), instances_));
  if (setup_.record_task_times) {
    task_times_ = std::make_unique<exec::TaskTimesRecorder>(0);
    executor_->add_observer(*task_times_);
  }
  if (!setup_.step_time_only) {
    breakdown_ = std::make_unique<StepBreakdownObserver>(step_.stages, step_.graph.stream_count(), instances_,
                                                         engine.now());
    executor_->add_observer(*breakdown_);
  }
  if (platform::TraceSink* trace = session.trace()) {
    // Streams of device p of instance i run on the accelerator of replica i's stage-p rank.
    const RankLayout layout(par, setup_.placement);
    executor_->add_observer(trace->watch_graph(step_.graph, [layout, par](int instance, int device) {
      const ReplicaIndex r = replica_of(par, instance);
      return layout.rank(r.t, r.c, r.d, device);
    }));
  }
  if (const platform::Session::TaskProgress& progress = session.progress()) {
    progress_ = std::make_unique<exec::TaskCountObserver>(
        step_.graph.task_count() * static_cast<std::size_t>(instances_),
        [progress](std::size_t done, std::size_t total) { progress("tasks", done, total); });
    executor_->add_observer(*progress_);
  }
  apply_speeds(instances_);
  platform::CommRuntime* comm = &session.comm();
  executor_->on_finished([this, comm, on_done = std::move(on_done)] {
    // Bytes carried during the step only (other workloads may go on loading the network).
    if (const topologies::LinkTraffic* traffic = comm->traffic()) step_traffic_ = *traffic;
    if (on_done) on_done();
  });
  executor_->start();
}

std::unique_ptr<platform::WorkloadResult> TrainingStep::finish(platform::Session& session) {
  return std::make_unique<TrainingResult>(result(session));
}

double TrainingStep::step_time_s() const {
  if (!executor_) throw SimulationError("the training step was never started");
  const double seconds = engine::ps_to_seconds(executor_->finish().makespan_ps);
  if (!(seconds > 0)) throw SimulationError("training step simulated in zero time: every op was costed at 0 s");
  return seconds;
}

TrainingResult TrainingStep::result(platform::Session& session) {
  if (!executor_) throw SimulationError("the training step was never started");
  if (!breakdown_) throw SimulationError("the training step kept its time only (TrainingSetup::step_time_only)");
  const TrainingWorkload& w = setup_.workload;
  const auto& par = w.parallelism;
  const exec::ExecutionResult run = executor_->finish();
  // Critical (instance and) stage: the one whose last task ends last (ties: lowest instance,
  // then lowest stage).
  int critical = 0, critical_instance = 0;
  engine::TimePs critical_end = -1;
  const std::size_t stream_count = step_.graph.stream_count();
  for (int i = 0; i < instances_; ++i) {
    for (int p = 0; p < par.pp; ++p) {
      engine::TimePs end = 0;
      for (const exec::StreamId s : step_.stages[static_cast<std::size_t>(p)].all) {
        end = std::max(end, run.stream_end_ps[static_cast<std::size_t>(i) * stream_count + static_cast<std::size_t>(s)]);
      }
      if (end > critical_end) {
        critical_end = end;
        critical = p;
        critical_instance = i;
      }
    }
  }
  TrainingResult result;
  result.kind = "training";
  result.step_time_s = engine::ps_to_seconds(run.makespan_ps);
  if (!(result.step_time_s > 0)) {
    throw SimulationError("training step simulated in zero time: every op was costed at 0 s");
  }
  fill_step_metrics(setup_, programs_, result);
  result.critical_stage = critical;
  for (const StageProgram& program : programs_) {
    result.stage_provenance.push_back(step_seconds_by_provenance(program, result.microbatches));
  }
  result.breakdown = breakdown_->breakdown(critical_instance, critical, step_.graph, run);
  result.fingerprint = session.engine().fingerprint();
  result.events = session.engine().events_fired();
  result.notes = assumption_notes(w, setup_.mode);
  const bool full = setup_.mode == platform::SimulationMode::full;
  if (full) {
    result.mode = "full";
    const ReplicaIndex r = replica_of(par, critical_instance);
    const RankLayout layout(par, setup_.placement);
    result.notes.push_back(fmt::format("critical rank: pipeline stage {} of {}, tp {} cp {} dp {} (global rank {})",
                                       critical, par.pp, r.t, r.c, r.d, layout.rank(r.t, r.c, r.d, critical)));
  } else {
    result.notes.push_back(fmt::format("critical pipeline stage: {} of {}", critical, par.pp));
  }
  platform::CommRuntime& comm = session.comm();
  if (comm.fidelity() == platform::Fidelity::flow) {
    result.fidelity = "flow";
    const topologies::TierUtilisationSeries* series = comm.tier_utilisation();
    result.network_tiers = tier_utilisation(setup_.topology, step_traffic_ ? *step_traffic_ : *comm.traffic(),
                                            result.step_time_s, series);
    if (series != nullptr) result.network_series = series_until(*series, run.makespan_ps);
    result.notes.push_back(fmt::format(
        "network fidelity: flow (collectives as max-min fair flows on one shared network; {}; {} flows)",
        full ? "each group's collective starts its own flows"
             : "every replica group's collectives run, except replicas inside one scale-up domain",
        comm.flows_started()));
  } else {
    result.notes.push_back(
        "network fidelity: analytical (closed-form collectives as the tuner picks them, no contention between them)");
  }
  return result;
}

TrainingResult run_step(const TrainingSetup& setup, platform::Session& session) {
  TrainingStep step(setup);
  step.start(session, {});
  session.engine().run();
  return step.result(session);
}

double run_step_time(const TrainingSetup& setup, platform::Session& session) {
  TrainingSetup time_only = setup;
  time_only.step_time_only = true;
  session.comm().stop_recording_utilisation();
  TrainingStep step(time_only);
  step.start(session, {});
  session.engine().run();
  return step.step_time_s();
}

}  // namespace clustersim::training
