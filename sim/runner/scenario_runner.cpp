#include "sim/runner/scenario_runner.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "models/memory/memory_footprint.hpp"
#include "models/memory/memory_hierarchy.hpp"
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "models/power/training_activity.hpp"
#include "sim/engine/error.hpp"
#include "sim/training/training_simulation.hpp"
#include "topologies/topology.hpp"

namespace clustersim::runner {
namespace {

models::RecomputePolicy recompute_policy(training::Recompute recompute) {
  switch (recompute) {
    case training::Recompute::none: return models::RecomputePolicy::none;
    case training::Recompute::selective: return models::RecomputePolicy::selective;
    case training::Recompute::full: return models::RecomputePolicy::full;
  }
  return models::RecomputePolicy::selective;
}

models::ScheduleKind schedule_kind(training::PipelineSchedule schedule) {
  switch (schedule) {
    case training::PipelineSchedule::gpipe: return models::ScheduleKind::gpipe;
    case training::PipelineSchedule::one_f_one_b: return models::ScheduleKind::one_f_one_b;
    case training::PipelineSchedule::interleaved: return models::ScheduleKind::interleaved;
  }
  return models::ScheduleKind::one_f_one_b;
}

/// Lengthens the step by `extra_s` of exposed time and rescales every rate derived from it.
void add_exposed_time(training::TrainingResult& result, double extra_s) {
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
double offload_time_s(const scenario::Scenario& scenario, const models::FootprintInputs& inputs,
                      const models::MemoryHierarchy& memory, const training::TrainingResult& result) {
  double exposed = 0;
  if (scenario.memory.offload_optimizer) {
    models::FootprintInputs resident = inputs;
    resident.offload_optimizer = false;
    double largest = 0;
    for (int p = 0; p < inputs.pp; ++p) largest = std::max(largest, models::stage_footprint(resident, p).optimizer_bytes);
    exposed += memory.offload_transfer_time_s(largest, models::MemoryLevelKind::host);
  }
  if (scenario.memory.offload_activations) {
    const double layers = static_cast<double>(inputs.model.num_hidden_layers) / inputs.pp;
    const double per_microbatch = layers * models::layer_activation_bytes(inputs);
    const double one_way = memory.offload_transfer_time_s(per_microbatch, models::MemoryLevelKind::host) *
                           static_cast<double>(inputs.microbatches);
    exposed += std::max(0.0, one_way - result.breakdown.compute_s);
  }
  return exposed;
}

void fill_power_report(const scenario::Scenario& scenario, const topologies::Topology& topology,
                       const models::FootprintInputs& inputs, const models::MemoryHierarchy& memory,
                       training::TrainingResult& result) {
  const auto& w = scenario.training;
  const auto& power = scenario.cluster.power;
  if (!(power.tdp_w > 0)) {
    result.notes.push_back("power: the accelerator preset has no power.tdp; no power or energy report");
    return;
  }
  const double gpus = result.gpus;
  const double busy = result.breakdown.compute_s > 0 ? result.breakdown.compute_s : result.step_time_s;
  const auto activity_for = [&](double step_s, double busy_s) {
    return models::estimate_training_activity(inputs, scenario.cluster.network.accelerators_per_node,
                                              w.grad_bytes_per_param, result.hardware_flops_per_step / gpus,
                                              w.precision, step_s, busy_s);
  };
  models::DeviceEnergy device = models::device_energy(power, memory, activity_for(result.step_time_s, busy));
  auto& report = result.power;
  report.throttle_factor = device.throttle_factor;
  if (scenario.power.apply_throttling && device.throttle_factor < 1.0) {
    const double extra = busy * (1.0 / device.throttle_factor - 1.0);
    add_exposed_time(result, extra);
    result.breakdown.compute_s += extra;
    device = models::device_energy(power, memory, activity_for(result.step_time_s, result.breakdown.compute_s));
    report.throttling_applied = true;
  }
  const auto& net = scenario.cluster.network;
  const double nics = static_cast<double>(net.nodes) * net.scale_out.nics_per_node;
  const auto summary = topology.summary();
  // The scale-up fabric counts one switch plane per node; its power is part of the node.
  const double scale_out_switches = static_cast<double>(std::max<std::int64_t>(0, summary.switches - net.nodes));
  const double tokens = static_cast<double>(w.global_batch * w.seq_len);
  const models::ClusterEnergy cluster = models::cluster_energy({device}, gpus, power, nics, scale_out_switches,
                                                               result.step_time_s, tokens, result.model_flops_per_step);
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
  if (scenario.cost.any()) {
    const models::StepCost cost = models::step_cost(scenario.cost, result.step_time_s, gpus, cluster.total_j, tokens);
    report.cost_computed = true;
    report.cost_per_step_usd = cost.total_usd;
    report.usd_per_million_tokens = cost.usd_per_million_tokens;
  }
}

}  // namespace

void fill_memory_report(const models::StageFootprint& peak, double capacity_bytes, training::MemoryReport& report) {
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

void fill_run_report(double train_tokens, training::TrainingResult& result) {
  if (!(train_tokens > 0)) return;
  const double tokens_per_step = result.tokens_per_s * result.step_time_s;
  training::TrainingRunReport& run = result.run;
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

std::vector<int> placement_map(scenario::Placement placement, const topologies::ClusterNetworkSpec& network) {
  if (placement == scenario::Placement::packed) return {};
  const int nodes = network.nodes;
  const int per_node = network.accelerators_per_node;
  if (nodes < 1 || per_node < 1) {
    throw ConfigError(fmt::format("placement needs nodes >= 1 and per_node >= 1, got {} and {}", nodes, per_node));
  }
  std::vector<int> map(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(per_node));
  for (std::size_t r = 0; r < map.size(); ++r) {
    const int rank = static_cast<int>(r);
    map[r] = (rank % nodes) * per_node + rank / nodes;
  }
  return map;
}

double compute_rate_while_communicating(const scenario::Scenario& scenario) {
  const int units = scenario.cluster.accelerator.compute_units;
  if (units <= 0 || scenario.simulation.overlap_sms <= 0) return 1.0;
  if (scenario.simulation.overlap_sms >= units) {
    throw ConfigError(fmt::format("simulation.comm.overlap_sms {} must be below the accelerator's {} compute units",
                                  scenario.simulation.overlap_sms, units));
  }
  return 1.0 - static_cast<double>(scenario.simulation.overlap_sms) / units;
}

models::FootprintInputs footprint_inputs(const scenario::Scenario& scenario) {
  const auto& w = scenario.training;
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
  in.moe = scenario.training.moe;
  in.sequence_parallel = p.sequence_parallel && p.tp > 1;
  in.schedule = schedule_kind(p.schedule);
  in.stage_layers = p.stage_layers;
  in.zero = p.zero;
  in.recompute = recompute_policy(w.recompute);
  in.flash_attention = w.attention != training::AttentionKernel::unfused;
  in.activation_bytes_per_element = models::output_dtype_bytes(w.precision);
  in.weight_bytes_per_param = models::dtype_bytes(w.precision) >= 4 ? 4.0 : 2.0;
  // Megatron-Core's gradient buffer: fp32 when the reduction is in fp32, else the parameter
  // dtype (docs/models.md "Memory").
  in.gradient_bytes_per_param = std::max(w.grad_bytes_per_param, in.weight_bytes_per_param);
  in.fp8 = w.precision == models::Dtype::fp8;
  in.offload_optimizer = scenario.memory.offload_optimizer;
  in.offload_activations = scenario.memory.offload_activations;
  in.workspace_bytes = scenario.memory.workspace_bytes;
  in.fragmentation = scenario.memory.fragmentation;
  in.zero3_max_live_parameters = scenario.memory.zero3_max_live_parameters;
  in.zero3_prefetch_bucket_parameters = scenario.memory.zero3_prefetch_bucket_parameters;
  in.zero3_reduce_bucket_parameters = scenario.memory.zero3_reduce_bucket_parameters;
  return in;
}

training::TrainingSetup training_setup(const scenario::Scenario& scenario, const training::TrainingWorkload& workload,
                                       const models::ComputeModel& compute, const models::CollectiveModel& collectives,
                                       const topologies::Topology& topology) {
  training::TrainingSetup setup{workload, compute, collectives, topology, scenario.simulation.seed};
  setup.fidelity = scenario.simulation.fidelity == scenario::Fidelity::flow ? training::NetworkFidelity::flow
                                                                            : training::NetworkFidelity::analytical;
  setup.background = scenario.cluster.background;
  setup.compute_rate_while_communicating = compute_rate_while_communicating(scenario);
  setup.mode = scenario.simulation.mode == scenario::SimulationMode::full ? training::SimulationMode::full
                                                                          : training::SimulationMode::symmetric;
  const auto& stragglers = scenario.cluster.stragglers;
  if (!stragglers.nodes.empty()) {
    const int per_node = scenario.cluster.network.accelerators_per_node;
    setup.accelerator_speed.assign(static_cast<std::size_t>(scenario.cluster.accelerator_count()), 1.0);
    for (const int node : stragglers.nodes) {
      for (int a = node * per_node; a < (node + 1) * per_node; ++a) {
        setup.accelerator_speed[static_cast<std::size_t>(a)] = stragglers.compute_speed;
      }
    }
  }
  // The training job's nodes: all of them, less those of a background job (whole nodes only
  // when scattering, so that the round-robin stays inside the job's nodes).
  topologies::ClusterNetworkSpec job_network = scenario.cluster.network;
  if (setup.background.gpus > 0 && scenario.cluster.placement == scenario::Placement::scattered) {
    const int per_node = job_network.accelerators_per_node;
    if (setup.background.gpus % per_node != 0) {
      throw ConfigError(fmt::format("cluster.placement 'scattered' with cluster.background needs whole nodes: "
                                    "{} background accelerators is not a multiple of {} per node",
                                    setup.background.gpus, per_node));
    }
    job_network.nodes -= setup.background.gpus / per_node;
  }
  setup.placement = placement_map(scenario.cluster.placement, job_network);
  return setup;
}

std::vector<training::StageProgram> stage_programs(const scenario::Scenario& scenario) {
  const auto topology = topologies::Topology::build(scenario.cluster.network);
  const models::ComputeModel compute(scenario.cluster.accelerator);
  const models::CollectiveModel collectives(topology, scenario.simulation.comm,
                                            models::collective_hardware(scenario.cluster.accelerator));
  const training::TrainingSetup setup = training_setup(scenario, scenario.training, compute, collectives, topology);
  training::validate_training_setup(setup);
  return training::build_stage_programs(setup);
}

training::TrainingResult run_training(const scenario::Scenario& scenario) {
  return run_training(scenario, MemoryFit::enforce);
}

training::TrainingResult run_training(const scenario::Scenario& scenario, MemoryFit fit) {
  // Memory first: a scenario that does not fit is an error, never simulated.
  const models::FootprintInputs inputs = footprint_inputs(scenario);
  const models::TrainingFootprint footprint = models::training_footprint(inputs);
  const double capacity = scenario.cluster.accelerator.hbm_capacity_bytes;
  if (fit == MemoryFit::enforce) models::check_fits(footprint, capacity);
  const models::MemoryHierarchy memory(scenario.cluster.memory_levels, scenario.cluster.host_link);

  const auto topology = topologies::Topology::build(scenario.cluster.network);
  const models::ComputeModel compute(scenario.cluster.accelerator);
  const models::CollectiveModel collectives(topology, scenario.simulation.comm,
                                            models::collective_hardware(scenario.cluster.accelerator));
  const training::TrainingSetup setup = training_setup(scenario, scenario.training, compute, collectives, topology);
  training::TrainingResult result = training::simulate_training_step(setup);
  fill_memory_report(footprint.peak(), capacity, result.memory);
  for (const models::StageFootprint& stage : footprint.stages) {
    result.memory.stages.push_back({stage.stage, stage.total_bytes, stage.weights_bytes, stage.gradients_bytes,
                                    stage.optimizer_bytes,
                                    stage.activations_bytes + stage.embedding_head_bytes + stage.recompute_buffer_bytes});
  }

  const double offload_s = offload_time_s(scenario, inputs, memory, result);
  if (offload_s > 0) {
    add_exposed_time(result, offload_s);
    result.breakdown.offload_s = offload_s;
  }
  fill_power_report(scenario, topology, inputs, memory, result);
  fill_run_report(scenario.training.train_tokens, result);
  return result;
}

}  // namespace clustersim::runner
