#pragma once
/// What one simulated training step produced.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/provenance.hpp"
#include "models/reliability/goodput.hpp"
#include "sim/engine/statistics.hpp"
#include "sim/platform/workload.hpp"
#include "topologies/link_utilisation.hpp"

namespace clustersim::training {

/// Where the step's wall time went, on the critical (slowest) pipeline stage.
/// The parts add up to the step time.
struct StepBreakdown {
  double compute_s = 0;       ///< forward, backward and recompute kernels
  double exposed_tp_s = 0;    ///< tensor-parallel collectives not hidden behind compute
  double exposed_cp_s = 0;    ///< context-parallel exchanges not hidden
  double exposed_ep_s = 0;    ///< expert-parallel all-to-all (MoE dispatch / combine) not hidden
  double exposed_pp_s = 0;    ///< pipeline send/recv time the stage waited on
  double exposed_dp_s = 0;    ///< gradient reduction left after the last backward
  double bubble_s = 0;        ///< pipeline fill/drain idle time
  double optimizer_s = 0;     ///< optimizer step
  double offload_s = 0;       ///< exposed host-link transfers of offloaded optimizer state / activations
  double exposed_host_s = 0;  ///< the device waiting for the host to dispatch its next op
};

/// Device memory of one pipeline stage's devices, bytes (the main terms).
struct StageMemory {
  int stage = 0;
  double total_bytes = 0;
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  ///< with the embedding/logits and recompute buffers
};

/// Device memory of the largest pipeline stage (models/llm/memory_footprint.hpp), bytes,
/// and the main terms of every stage.
struct MemoryReport {
  bool computed = false;
  double capacity_bytes = 0;   ///< HBM per device
  int peak_stage = 0;          ///< pipeline stage with the largest footprint
  double total_bytes = 0;      ///< sum of the terms below
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double embedding_logits_bytes = 0;
  double recompute_buffer_bytes = 0;
  double workspace_bytes = 0;
  double fragmentation_bytes = 0;
  double moe_dispatch_bytes = 0;    ///< one MoE layer's all-to-all buffers
  double zero3_gathered_bytes = 0;  ///< ZeRO-3: whole weights/gradient of the modules in use
  double fp8_weight_cache_bytes = 0;  ///< FP8: Transformer Engine's cached fp8 weights and transposes
  std::vector<StageMemory> stages;  ///< every pipeline stage, in order
};

/// A whole training run of `tokens` tokens at the simulated step (workload.train_tokens):
/// steps = ceil(tokens / tokens per step), every step as simulated (no restarts, failures,
/// evaluation or checkpoint time).
struct TrainingRunReport {
  bool computed = false;
  double tokens = 0;
  std::int64_t steps = 0;
  double time_s = 0;
  double gpu_hours = 0;
  double energy_j = 0;      ///< cluster energy (devices, NICs, switches), no facility overhead
  bool cost_computed = false;
  double cost_usd = 0;
};

/// The step time one cause of variability adds on its own (simulation.iterations).
struct CauseLoss {
  std::string cause;       ///< "jitter" (kernels and network), "host_noise", "stragglers"
  double mean_step_s = 0;  ///< mean step time with only this cause
  double lost_s = 0;       ///< mean_step_s - the nominal step time
  double lost_share = 0;   ///< lost_s / the mean step time with every cause
};

/// The step time over many iterations with fresh draws (sim/training/step_iterations.hpp).
struct StepStatistics {
  bool computed = false;
  int iterations = 0;
  double nominal_s = 0;              ///< without any draw
  engine::Distribution step_s;       ///< mean, p50, p90, p99 and max of the step time
  std::vector<double> step_times_s;  ///< per iteration, in iteration order
  std::vector<CauseLoss> causes;     ///< each active cause alone
  std::string method;                ///< how the iterations ran (full, or symmetric replay)
  /// Steps simulated (full mode) or replayed (symmetric) for these figures: the nominal step,
  /// then each iteration of each cause configuration that draws something.
  int simulated_steps = 0;
};

/// Power, energy and cost of one step (models/power). Device figures are for an average
/// device; cluster figures include NICs and scale-out switches.
struct PowerReport {
  bool computed = false;
  double device_average_w = 0;       ///< one device of the critical stage, over the step
  double device_peak_w = 0;          ///< its draw while kernels run, capped at the power limit
  double throttle_factor = 1;        ///< clock fraction the power limit allows (1: no throttling)
  bool throttling_applied = false;   ///< compute time was divided by throttle_factor
  double devices_average_w = 0;      ///< every accelerator together (board power: what nvidia-smi sums to)
  double cluster_average_w = 0;      ///< devices, nodes, NICs, switches and power-supply losses
  double cluster_peak_w = 0;
  double energy_per_step_j = 0;      ///< whole cluster
  double devices_j = 0;              ///< the accelerators' part of it
  // The devices' energy by activity class, whole cluster (models/power/power_model.hpp).
  double static_j = 0;               ///< idle power x step time
  double wait_j = 0;                 ///< no kernel, above idle
  double memory_j = 0;               ///< kernels at the memory-bound level, above idle
  double compute_j = 0;              ///< the matrix units' share above the memory-bound level
  double communication_j = 0;        ///< collectives alone, above idle
  double nodes_j = 0;                ///< the nodes' own draw (power.node)
  double network_j = 0;              ///< NIC and switch power x step time
  double psu_loss_j = 0;             ///< the nodes' power-supply losses (power.psu_efficiency)
  double energy_per_token_j = 0;
  double device_energy_per_token_j = 0;  ///< the accelerators' energy alone per token
  double tokens_per_j = 0;
  double model_flops_per_j = 0;      ///< performance per watt: model FLOP/s per W
  bool cost_computed = false;
  double cost_per_step_usd = 0;
  double usd_per_million_tokens = 0;
};

/// Link utilisation of one network tier over the step (flow fidelity): per directed link,
/// bytes carried / (bytes_per_s x step time). Tiers as in topologies::Link::tier (0 =
/// scale-up, 1 = accelerator/NIC to leaf, 2 = leaf to spine, ...).
struct TierUtilisation {
  int tier = 0;
  std::int64_t links = 0;        ///< directed links of the tier
  double bytes = 0;              ///< carried by all links of the tier during the step
  double capacity_bytes_per_s = 0;  ///< sum of the tier's directed link capacities
  double mean_utilisation = 0;   ///< mean over the tier's links (fraction)
  double max_utilisation = 0;    ///< busiest link of the tier (fraction)
  /// Highest aggregate utilisation of the tier at any instant of the step: its summed flow
  /// rate / its summed line rate (fraction; topologies/link_utilisation.hpp).
  double peak_utilisation = 0;
  /// Highest utilisation any one link of the tier reached at any instant of the step.
  double peak_link_utilisation = 0;
};

/// Seconds by the estimator that produced them, indexed by models::Provenance.
struct ProvenanceSeconds {
  std::array<double, models::kProvenanceCount> seconds{};
  double& operator[](models::Provenance provenance) { return seconds[static_cast<std::size_t>(provenance)]; }
  double operator[](models::Provenance provenance) const { return seconds[static_cast<std::size_t>(provenance)]; }
  /// Sum over every estimator.
  double total_s() const {
    double total = 0;
    for (const double s : seconds) total += s;
    return total;
  }
};

/// What `cluster.network.faults` cost the step (flow fidelity): the step reported, which ran with
/// them, against the same step on the intact network.
struct LinkFaultCost {
  bool computed = false;
  double step_time_without_s = 0;  ///< the same step (mode, seed, other jobs) with no faults
  double lost_s = 0;               ///< the reported step time - step_time_without_s
  double lost_share = 0;           ///< lost_s / the reported step time
  std::vector<std::string> faults;  ///< one line per fault: name, element, time, capacity
};

/// Summary of one training step (the training workload's result; its notes are the
/// assumptions the run made, shown in reports).
struct TrainingResult : platform::WorkloadResult {
  /// Step time and its kernel (compute) time.
  std::vector<platform::Metric> headline() const override {
    return {{"step_time", step_time_s, "s"}, {"compute", breakdown.compute_s, "s"}};
  }
  double step_time_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     ///< model FLOPs (no recompute), whole job
  double hardware_flops_per_step = 0;  ///< FLOPs actually executed (with recompute), whole job
  double model_tflops_per_gpu = 0;     ///< model FLOPs / step time / GPUs, in TFLOP/s
  double hardware_tflops_per_gpu = 0;  ///< hardware FLOPs / step time / GPUs, in TFLOP/s
  double mfu = 0;                      ///< model TFLOP/s per GPU / peak (fraction)
  double hfu = 0;                      ///< hardware TFLOP/s per GPU / peak (fraction)
  double peak_tflops_per_gpu = 0;      ///< the peak MFU and HFU are measured against
  std::int64_t microbatches = 0;       ///< per pipeline
  int gpus = 0;
  StepBreakdown breakdown;
  std::uint64_t fingerprint = 0;       ///< engine event fingerprint
  std::uint64_t events = 0;            ///< events fired
  MemoryReport memory;                 ///< filled by the runner before simulating
  PowerReport power;                   ///< filled by the runner after simulating
  TrainingRunReport run;               ///< filled by the runner when train_tokens is set
  StepStatistics iterations;           ///< simulation.iterations / variability / stragglers' probability
  bool goodput_computed = false;       ///< simulation.failures.enabled
  models::GoodputReport goodput;       ///< failures, checkpoints and goodput of a long run
  LinkFaultCost link_faults;           ///< cluster.network.faults: the step with and without them
  std::string fidelity = "analytical"; ///< network fidelity used: analytical | flow
  std::string mode = "symmetric";      ///< ranks simulated: symmetric | full
  std::vector<TierUtilisation> network_tiers;  ///< flow fidelity only, by tier; empty otherwise
  /// Flow fidelity only: every tier's utilisation over the step, [0, step end) (the trace's
  /// counters and the report's chart); empty otherwise.
  topologies::TierUtilisationSeries network_series;
  /// Per pipeline stage: its op time per step by estimator (step_seconds_by_provenance).
  std::vector<ProvenanceSeconds> stage_provenance;
  int critical_stage = 0;  ///< the pipeline stage whose last task ended last

  /// Fills link_faults (and a note) from the same step on the intact network, beside the same
  /// other jobs: what the faults cost.
  void compare_with_intact(const platform::WorkloadResult& intact, const topologies::NetworkFaultPlan& plan) override;
  bool compares_with_intact() const override { return true; }
};

}  // namespace clustersim::training
