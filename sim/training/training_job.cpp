#include "sim/training/training_job.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/power/training_activity.hpp"
#include "sim/engine/error.hpp"
#include "sim/platform/energy.hpp"

namespace clustersim::training {
namespace {

/// Lengthens the step by `extra_s` of exposed time and rescales every rate derived from it.
void add_exposed_time(TrainingResult& result, double extra_s) {
  if (!(extra_s > 0)) return;
  const double scale = result.step_time_s / (result.step_time_s + extra_s);
  result.step_time_s += extra_s;
  result.tokens_per_s *= scale;
  result.model_tflops_per_gpu *= scale;
  result.hardware_tflops_per_gpu *= scale;
  result.mfu *= scale;
  result.hfu *= scale;
}

/// Host-link time of offloading, exposed on the step. Optimizer state is streamed in and out
/// once per step (the full-duplex link overlaps the two directions) before the optimizer can
/// run, so it is all exposed. Activations are written in the forward and read back in the
/// backward of every micro-batch; the copies overlap compute, so only the excess over the
/// stage's compute time is exposed.
double offload_time_s(const TrainingWorkload& workload, const models::FootprintInputs& inputs,
                      const models::MemoryHierarchy& memory, const TrainingResult& result) {
  double exposed = 0;
  if (workload.memory.offload_optimizer) {
    models::FootprintInputs resident = inputs;
    resident.offload_optimizer = false;
    double largest = 0;
    for (int p = 0; p < inputs.pp; ++p) largest = std::max(largest, models::stage_footprint(resident, p).optimizer_bytes);
    exposed += memory.offload_transfer_time_s(largest, models::MemoryLevelKind::host);
  }
  if (workload.memory.offload_activations) {
    const double layers = static_cast<double>(inputs.model.num_hidden_layers) / inputs.pp;
    const double per_microbatch = layers * models::layer_activation_bytes(inputs);
    const double one_way = memory.offload_transfer_time_s(per_microbatch, models::MemoryLevelKind::host) *
                           static_cast<double>(inputs.microbatches);
    exposed += std::max(0.0, one_way - result.breakdown.compute_s);
  }
  return exposed;
}

void fill_power_report(const TrainingWorkload& w, const platform::Platform& platform,
                       const models::FootprintInputs& inputs, TrainingResult& result) {
  if (!platform::has_power_data(platform)) {
    result.notes.push_back("power: the accelerator preset has no power.tdp; no power or energy report");
    return;
  }
  const double gpus = result.gpus;
  const double busy = result.breakdown.compute_s > 0 ? result.breakdown.compute_s : result.step_time_s;
  const auto activity_for = [&](double step_s, double busy_s) {
    return models::estimate_training_activity(inputs, platform.cluster().network.accelerators_per_node,
                                              w.grad_bytes_per_param, result.hardware_flops_per_step / gpus,
                                              w.precision, step_s, busy_s);
  };
  const double tokens = static_cast<double>(w.global_batch * w.seq_len);
  platform::PeriodEnergy energy =
      platform::period_energy(platform, activity_for(result.step_time_s, busy), gpus, tokens, result.model_flops_per_step);
  auto& report = result.power;
  report.throttle_factor = energy.device.throttle_factor;
  if (platform.spec().apply_throttling && energy.device.throttle_factor < 1.0) {
    const double extra = busy * (1.0 / energy.device.throttle_factor - 1.0);
    add_exposed_time(result, extra);
    result.breakdown.compute_s += extra;
    energy = platform::period_energy(platform, activity_for(result.step_time_s, result.breakdown.compute_s), gpus,
                                     tokens, result.model_flops_per_step);
    report.throttling_applied = true;
  }
  const models::DeviceEnergy& device = energy.device;
  const models::ClusterEnergy& cluster = energy.cluster;
  report.computed = true;
  report.device_average_w = device.average_power_w;
  report.device_peak_w = device.peak_power_w;
  report.cluster_average_w = cluster.average_power_w;
  report.cluster_peak_w = cluster.peak_power_w;
  report.energy_per_step_j = cluster.total_j;
  report.static_j = device.static_j * gpus;
  report.compute_j = device.compute_j * gpus;
  report.memory_j = device.memory_total_j() * gpus;
  report.link_j = device.link_j * gpus;
  report.network_j = cluster.network_j;
  report.energy_per_token_j = cluster.energy_per_token_j;
  report.tokens_per_j = cluster.tokens_per_j;
  report.model_flops_per_j = cluster.flops_per_j;
  if (device.throttle_factor < 1.0 && !report.throttling_applied) {
    result.notes.push_back(fmt::format("power: dynamic power exceeds TDP; the clock would throttle to {:.1f} % "
                                       "(reported only; set power.apply_throttling to apply)",
                                       100.0 * device.throttle_factor));
  }
  if (energy.cost) {
    report.cost_computed = true;
    report.cost_per_step_usd = energy.cost->total_usd;
    report.usd_per_million_tokens = energy.cost->usd_per_million_tokens;
  }
}

}  // namespace

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

models::FootprintInputs footprint_inputs(const TrainingWorkload& w) {
  const auto& p = w.parallelism;
  models::FootprintInputs in;
  in.model = w.model;
  in.seq_len = w.seq_len;
  in.micro_batch = w.micro_batch;
  in.microbatches = std::max<std::int64_t>(1, w.microbatches_per_pipeline());
  in.tp = p.tp;
  in.pp = p.pp;
  in.dp = p.dp;
  in.cp = p.cp;
  in.vp = p.vp;
  in.ep = p.ep;
  in.moe = w.moe;
  in.sequence_parallel = p.sequence_parallel && p.tp > 1;
  in.schedule = p.schedule;
  in.stage_layers = p.stage_layers;
  in.zero = p.zero;
  in.recompute = w.recompute;
  in.flash_attention = w.attention != AttentionKernel::unfused;
  in.activation_bytes_per_element = models::stored_element_bytes(w.precision);
  in.weight_bytes_per_param = models::stored_element_bytes(w.precision);
  // Megatron-Core's gradient buffer: fp32 when the reduction is in fp32, else the parameter
  // dtype (docs/models.md "Memory").
  in.gradient_bytes_per_param = std::max(w.grad_bytes_per_param, in.weight_bytes_per_param);
  in.fp8 = w.precision == models::Dtype::fp8;
  in.offload_optimizer = w.memory.offload_optimizer;
  in.offload_activations = w.memory.offload_activations;
  in.workspace_bytes = w.memory.workspace_bytes;
  in.fragmentation = w.memory.fragmentation;
  in.zero3_max_live_parameters = w.memory.zero3_max_live_parameters;
  in.zero3_prefetch_bucket_parameters = w.memory.zero3_prefetch_bucket_parameters;
  in.zero3_reduce_bucket_parameters = w.memory.zero3_reduce_bucket_parameters;
  return in;
}

TrainingJob::TrainingJob(const TrainingWorkload& workload, const platform::Platform& platform,
                         const platform::Allocation& allocation, const platform::SessionOptions& options)
    : workload_(workload),
      platform_(platform),
      inputs_(footprint_inputs(workload)),
      footprint_(models::training_footprint(inputs_)),
      setup_(training_setup(workload, platform, allocation, options)) {
  // Memory first: a job that does not fit is an error, never simulated.
  if (workload.enforce_memory_fit) models::check_fits(footprint_, platform.cluster().accelerator.hbm_capacity_bytes);
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
  const double offload_s = offload_time_s(workload_, inputs_, platform_.memory(), *result);
  if (offload_s > 0) {
    add_exposed_time(*result, offload_s);
    result->breakdown.offload_s = offload_s;
  }
  fill_power_report(workload_, platform_, inputs_, *result);
  fill_run_report(workload_.train_tokens, *result);
  return result;
}

std::unique_ptr<platform::Workload> TrainingWorkload::instantiate(const platform::Platform& platform,
                                                                  const platform::Allocation& allocation,
                                                                  const platform::SessionOptions& options) const {
  return std::make_unique<TrainingJob>(*this, platform, allocation, options);
}

}  // namespace clustersim::training
