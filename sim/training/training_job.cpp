#include "sim/training/training_job.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/llm/fit_remedy.hpp"
#include "sim/config/units.hpp"
#include "sim/engine/error.hpp"
#include "sim/platform/energy.hpp"

namespace clustersim::training {
namespace {

/// The power, energy and cost report. `throttle` < 1: the step ran at that clock fraction (the
/// power limit applied in the timeline), which the report states in place of its own factor.
void fill_power_report(const TrainingWorkload& w, const platform::Platform& platform, double throttle,
                       TrainingResult& result) {
  if (!platform::has_power_data(platform)) {
    result.notes.push_back("power: the accelerator preset has no power.tdp; no power or energy report");
    return;
  }
  const double gpus = result.gpus;
  const platform::PeriodEnergy energy = step_energy(w, platform, result);
  auto& report = result.power;
  report.throttle_factor = throttle < 1.0 ? throttle : energy.device.throttle_factor;
  report.throttling_applied = throttle < 1.0;
  const models::DeviceEnergy& device = energy.device;
  const models::ClusterEnergy& cluster = energy.cluster;
  report.computed = true;
  report.device_average_w = device.average_power_w;
  report.device_peak_w = device.kernel_power_w;
  report.devices_average_w = cluster.devices_average_power_w;
  report.cluster_average_w = cluster.average_power_w;
  report.cluster_peak_w = cluster.peak_power_w;
  report.energy_per_step_j = cluster.total_j;
  report.devices_j = cluster.devices_j;
  report.static_j = device.static_j * gpus;
  report.wait_j = device.wait_j * gpus;
  report.memory_j = device.memory_j * gpus;
  report.compute_j = device.compute_j * gpus;
  report.communication_j = device.communication_j * gpus;
  report.nodes_j = cluster.nodes_j;
  report.network_j = cluster.network_j;
  report.psu_loss_j = cluster.psu_loss_j;
  report.energy_per_token_j = cluster.energy_per_token_j;
  report.device_energy_per_token_j = cluster.device_energy_per_token_j;
  report.tokens_per_j = cluster.tokens_per_j;
  report.model_flops_per_j = cluster.flops_per_j;
  if (device.throttle_factor < 1.0 && !report.throttling_applied) {
    result.notes.push_back(fmt::format("power: the kernels would draw {:.0f} W at full clock, above the {:.0f} W limit; "
                                       "the clock would throttle to {:.1f} % (reported only; set power.apply_throttling "
                                       "to apply)",
                                       device.unthrottled_kernel_power_w, device.kernel_power_w,
                                       100.0 * device.throttle_factor));
  }
  if (const auto note = platform::power_coverage_note(platform)) result.notes.push_back(*note);
  if (const auto note = platform::optics_note(platform)) result.notes.push_back(*note);
  if (energy.cost) {
    report.cost_computed = true;
    report.cost_per_step_usd = energy.cost->total_usd;
    report.usd_per_million_tokens = energy.cost->usd_per_million_tokens;
  }
}

}  // namespace

models::DeviceActivity step_activity(const TrainingWorkload& w, const TrainingResult& result) {
  const StepBreakdown& b = result.breakdown;
  models::DeviceActivity activity;
  activity.period_s = result.step_time_s;
  const double exposed = b.exposed_tp_s + b.exposed_cp_s + b.exposed_ep_s + b.exposed_pp_s + b.exposed_dp_s;
  activity.kernel_s = std::min(b.compute_s + b.optimizer_s, result.step_time_s);
  activity.communication_s = std::clamp(exposed, 0.0, result.step_time_s - activity.kernel_s);
  if (result.gpus > 0) activity.matrix_flops[w.precision] = result.hardware_flops_per_step / result.gpus;
  return activity;
}

platform::PeriodEnergy step_energy(const TrainingWorkload& w, const platform::Platform& platform,
                                   const TrainingResult& result) {
  const double tokens = static_cast<double>(w.global_batch * w.seq_len);
  const platform::DeviceWork devices{&platform.cluster().accelerator, step_activity(w, result),
                                     static_cast<double>(result.gpus), std::nullopt};
  return platform::period_energy(platform, {devices}, tokens, result.model_flops_per_step);
}

void fill_memory_report(const models::StageFootprint& peak, double capacity_bytes, MemoryReport& report) {
  report.computed = true;
  report.capacity_bytes = capacity_bytes;
  report.peak_stage = peak.stage;
  report.total_bytes = peak.total_bytes;
  report.weights_bytes = peak.weights_bytes;
  report.gradients_bytes = peak.gradients_bytes;
  report.optimizer_bytes = peak.optimizer_bytes;
  report.activations_bytes = peak.activations_bytes;
  report.embedding_logits_bytes = peak.embedding_head_bytes;
  report.recompute_buffer_bytes = peak.recompute_buffer_bytes;
  report.workspace_bytes = peak.workspace_bytes;
  report.fragmentation_bytes = peak.fragmentation_bytes;
  report.moe_dispatch_bytes = peak.moe_dispatch_bytes;
  report.zero3_gathered_bytes = peak.zero3_gathered_bytes;
  report.fp8_weight_cache_bytes = peak.fp8_weight_cache_bytes;
}

void fill_run_report(double train_tokens, TrainingResult& result) {
  if (!(train_tokens > 0)) return;
  const double tokens_per_step = result.tokens_per_s * result.step_time_s;
  TrainingRunReport& run = result.run;
  run.computed = true;
  run.tokens = train_tokens;
  run.steps = static_cast<std::int64_t>(std::ceil(train_tokens / tokens_per_step - 1e-9));
  const double steps = static_cast<double>(run.steps);
  run.time_s = steps * result.step_time_s;
  run.gpu_hours = run.time_s * result.gpus / 3600.0;
  if (result.power.computed) run.energy_j = steps * result.power.energy_per_step_j;
  if (result.power.cost_computed) {
    run.cost_computed = true;
    run.cost_usd = steps * result.power.cost_per_step_usd;
  }
}

models::GoodputReport training_goodput(const models::FailureSpec& failures, const TrainingWorkload& workload,
                                       const models::TrainingFootprint& footprint, int per_node, int nics_per_node) {
  const ParallelismConfig& par = workload.parallelism;
  const double gradient_group = static_cast<double>(par.dp * par.cp);
  // Replicas over the gradient group share one copy unless ZeRO shards it over them.
  const double weight_copies = par.zero >= 3 ? 1.0 : gradient_group;
  const double optimizer_copies = par.zero >= 1 ? 1.0 : gradient_group;
  double total = 0, per_rank_max = 0;
  for (const models::StageFootprint& stage : footprint.stages) {
    const double per_rank = stage.weights_bytes / weight_copies + stage.optimizer_bytes / optimizer_copies;
    total += per_rank * static_cast<double>(par.tp) * gradient_group;
    per_rank_max = std::max(per_rank_max, per_rank);
  }
  const double gpus = static_cast<double>(par.tp * par.cp * par.dp * par.pp);
  const double hosts = std::ceil(gpus / per_node);
  const models::JobComponents components{gpus, hosts, hosts * nics_per_node};
  return models::goodput_report(failures, components, total, per_rank_max * per_node);
}

void TrainingResult::compare_with_intact(const platform::WorkloadResult& intact,
                                         const topologies::NetworkFaultPlan& plan) {
  const auto* baseline = dynamic_cast<const TrainingResult*>(&intact);
  if (baseline == nullptr) throw SimulationError("the intact-network run of a training step is not a training result");
  const double without_s = baseline->step_time_s;
  LinkFaultCost& cost = link_faults;
  cost.computed = true;
  cost.step_time_without_s = without_s;
  cost.lost_s = step_time_s - without_s;
  cost.lost_share = step_time_s > 0 ? cost.lost_s / step_time_s : 0;
  cost.faults.clear();
  for (const topologies::LinkFault& fault : plan.faults) {
    std::string what = fault.down() ? fmt::format("down, rerouted {} s later ({})",
                                                  engine::ps_to_seconds(plan.reroute_delay_ps),
                                                  topologies::reroute_policy_names().name(plan.policy))
                                    : fmt::format("at {} of its bandwidth", fault.scale);
    if (fault.until_ps) what += fmt::format(" until {} s", engine::ps_to_seconds(*fault.until_ps));
    cost.faults.push_back(fmt::format("{}: {} from {} s, {}", fault.name, fault.element,
                                      engine::ps_to_seconds(fault.at_ps), what));
  }
  std::string names;
  for (const std::string& line : cost.faults) names += (names.empty() ? "" : "; ") + line;
  // Among the run's own notes, before the scenario's warnings and notices the runner appended.
  const auto before = std::find_if(notes.begin(), notes.end(), [](const std::string& note) {
    return note.rfind("warning: ", 0) == 0 || note.rfind("notice: ", 0) == 0;
  });
  notes.insert(before, fmt::format("link faults ({}): step {:.6g} s, {:.6g} s on the intact network: they cost "
                                   "{:.6g} s ({:.2f} % of the step)",
                                   names, step_time_s, without_s, cost.lost_s, 100.0 * cost.lost_share));
}

TrainingJob::TrainingJob(const TrainingWorkload& workload, const platform::Platform& platform,
                         const platform::Allocation& allocation, const platform::SessionOptions& options)
    : workload_(workload),
      platform_(platform),
      inputs_(footprint_inputs(workload)),
      footprint_(models::training_footprint(inputs_)),
      setup_(training_setup(workload, platform, allocation, options)),
      options_(options) {
  if (!platform.link_faults().empty() && options.fidelity == platform::Fidelity::flow &&
      setup_.mode == platform::SimulationMode::symmetric) {
    // A fault slows the flows that cross it only: the replicas of a collective or a pipeline
    // send no longer take the same time, so one representative per stage cannot stand for all.
    setup_.mode = platform::SimulationMode::full;
    mode_notes_.push_back(
        "simulation.mode: full instead of symmetric: cluster.network.faults break the symmetry between replicas "
        "(only the flows crossing a degraded or failed link slow down), so every rank is simulated");
  }
  iteration_settings_.variability = options.variability;
  iteration_settings_.iterations = options.iterations;
  iteration_settings_.stragglers = platform.cluster().stragglers;
  iteration_settings_.nodes = platform.cluster().network.nodes;
  iteration_settings_.per_node = platform.cluster().network.accelerators_per_node;
  // Full mode's iterations and the throttle calibration run the step alone on the platform
  // (its link faults under flow), with the run's fidelity and limits.
  const SessionFactory session = [this] { return std::make_unique<platform::Session>(platform_, options_); };
  iteration_settings_.session = session;
  // Symmetric mode's iterations replay the step's graph at the times its tasks took.
  setup_.record_task_times =
      needs_iterations(iteration_settings_) && setup_.mode == platform::SimulationMode::symmetric;
  // Memory first: a job that does not fit is an error, never simulated.
  if (workload.enforce_memory_fit) {
    if (const auto message = models::does_not_fit_message(inputs_, platform.cluster().accelerator.hbm_capacity_bytes)) {
      throw models::DoesNotFitError(*message, "parallelism");
    }
  }
  if (platform.spec().apply_throttling && platform::has_power_data(platform)) {
    // The clock the power limit allows is set by the power the step draws at full clock: the
    // step is simulated once alone at full clock (on the platform's network, faults included)
    // to find it, then runs (beside the platform's other workloads) with every accelerator at
    // that clock, so compute stretches in the timeline and the overlaps around it react.
    const TrainingResult full_clock = run_step(setup_, *session());
    setup_.throttle = std::min(1.0, step_energy(workload, platform, full_clock).throttle_factor);
  }
  step_ = std::make_unique<TrainingStep>(setup_);
}

void TrainingJob::start(platform::Session& session, std::function<void()> on_done) {
  step_->start(session, std::move(on_done));
}

std::unique_ptr<platform::WorkloadResult> TrainingJob::finish(platform::Session& session) {
  auto result = std::make_unique<TrainingResult>(step_->result(session));
  fill_memory_report(footprint_.peak(), platform_.cluster().accelerator.hbm_capacity_bytes, result->memory);
  for (const models::StageFootprint& stage : footprint_.stages) {
    result->memory.stages.push_back({stage.stage, stage.total_bytes, stage.weights_bytes, stage.gradients_bytes,
                                     stage.optimizer_bytes,
                                     stage.activations_bytes + stage.embedding_head_bytes + stage.recompute_buffer_bytes});
  }
  const double over = footprint_.peak().total_bytes - platform_.cluster().accelerator.hbm_capacity_bytes;
  if (!workload_.enforce_memory_fit && over > 0) {
    result->notes.push_back(fmt::format(
        "memory: pipeline stage {} needs {:.1f} GiB of {:.1f} GiB, {:.1f} GiB over capacity; simulated anyway "
        "(workload.enforce_memory_fit: false): a real run would not start",
        footprint_.peak().stage, footprint_.peak().total_bytes / config::kGiB,
        platform_.cluster().accelerator.hbm_capacity_bytes / config::kGiB, over / config::kGiB));
  }
  for (const std::string& note : mode_notes_) result->notes.push_back(note);
  fill_power_report(workload_, platform_, setup_.throttle, *result);
  // The faults' cost: the runner runs the scenario again on the intact network and calls
  // TrainingResult::compare_with_intact. That run reports its step alone.
  if (session.intact_baseline()) return result;
  if (needs_iterations(iteration_settings_)) {
    result->iterations = simulate_iterations(setup_, iteration_settings_, *step_);
  }
  if (options_.failures.enabled) {
    result->goodput_computed = true;
    result->goodput = training_goodput(options_.failures, workload_, footprint_, iteration_settings_.per_node,
                                       platform_.cluster().network.scale_out.nics_per_node);
  }
  fill_run_report(workload_.train_tokens, *result);
  return result;
}

std::unique_ptr<platform::Workload> TrainingWorkload::instantiate(const platform::Platform& platform,
                                                                  const platform::Allocation& allocation,
                                                                  const platform::SessionOptions& options) const {
  return std::make_unique<TrainingJob>(*this, platform, allocation, options);
}

}  // namespace clustersim::training
