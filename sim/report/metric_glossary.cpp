#include "sim/report/metric_glossary.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace clustersim::report {
namespace {

constexpr std::string_view kDistribution = "mean p50 p90 p99 max count; count: requests measured";

/// Every run's keys and the training sections.
/// The training result's link-fault section (after goodput, before provenance).
void add_link_fault_section(std::vector<MetricSection>& sections) {
  sections.push_back(
      {"Link faults", "`link_faults` (training with cluster.network.faults, flow fidelity; absent otherwise): the step "
                      "with the degraded and failed links against the same run on the intact network, the scenario's other "
                      "jobs beside it as in the faulty run",
       {{"link_faults.faults[]", "text", "one line per fault: its name, the cable or switch, when, and its capacity "
                                         "(down and rerouted, or a fraction of the nominal)"},
        {"link_faults.step_time_without_s", "s", "the same step (mode, seed, other jobs) with no faults"},
        {"link_faults.lost_s", "s", "what the faults cost: the step time - step_time_without_s"},
        {"link_faults.lost_share", "fraction", "lost_s / the step time"}}});
}

void add_power_section(std::vector<MetricSection>& sections) {
  sections.push_back(
      {"Power, energy and cost",
       "`power` (training): the step's energy from what its devices did (kernels, collectives alone, waiting)",
       {{"power.device_average_w", "W", "one accelerator's mean power over the step"},
        {"power.device_peak_w", "W", "one accelerator's power while its kernels run, capped at its power limit"},
        {"power.throttle_factor", "fraction", "clock fraction the power limit allows (1: no throttling)"},
        {"power.throttling_applied", "bool", "compute time was divided by throttle_factor (power.apply_throttling)"},
        {"power.devices_average_w", "W", "every accelerator's board power together, the step's mean (GPU-only meters)"},
        {"power.cluster_average_w", "W",
         "the whole cluster's mean power: accelerators, nodes, NICs, switches and power-supply losses"},
        {"power.cluster_peak_w", "W", "every accelerator at its kernel power, plus the rest"},
        {"power.energy_per_step_j", "J", "the cluster's energy for one step (the parts below)"},
        {"power.devices_energy_per_step_j", "J", "the accelerators' part of it"},
        {"power.energy_parts_j.static", "J", "idle power x step time, every accelerator"},
        {"power.energy_parts_j.wait", "J", "time with no kernel and no collective x (wait - idle) power"},
        {"power.energy_parts_j.memory", "J", "kernel time x (memory-bound - idle) power, within the power limit"},
        {"power.energy_parts_j.compute", "J",
         "the matrix units' time at their best rate x (compute - memory-bound) power, within the power limit"},
        {"power.energy_parts_j.communication", "J", "time of collectives alone x (communication - idle) power"},
        {"power.energy_parts_j.nodes", "J", "the nodes' own draw (power.node: CPUs, memory, fans, storage) x step time"},
        {"power.energy_parts_j.network_devices", "J", "NICs and switches: their power x step time"},
        {"power.energy_parts_j.power_supplies", "J", "the nodes' power-supply losses (power.psu_efficiency)"},
        {"power.device_energy_per_token_j", "J", "the accelerators' energy alone per token"},
        {"power.energy_per_token_j", "J", "energy per step / tokens per step"},
        {"power.tokens_per_j", "tokens/J", "tokens per step / energy per step"},
        {"power.model_flops_per_j", "FLOP/J", "performance per watt: model FLOP/s per W"},
        {"power.cost.per_step_usd", "USD", "accelerator-hours of one step x the `cost` price (with prices only)"},
        {"power.cost.per_million_tokens_usd", "USD", "cost of a million trained tokens (with prices only)"}}});
}

void add_training_sections(std::vector<MetricSection>& sections) {
  sections.push_back(
      {"Every run", "The top level of the result document",
       {{"schema_version", "integer", "version of the document's layout; bumped when a field is renamed or removed"},
        {"events", "count", "simulation events the engine processed"},
        {"fingerprint", "text", "16 hex digits hashing the order of events: equal runs have equal fingerprints"},
        {"notes[]", "text", "assumptions, warnings (a setting without effect, and why) and what was approximated"}}});
  sections.push_back(
      {"Calibration", "`calibration` (`clustersim run` with simulation.calibration; absent otherwise): the same "
                      "scenario run again on the library's tables, its headline figures with and without the table",
       {{"calibration.table", "text", "simulation.calibration as resolved"},
        {"calibration.against_default_tables[].name", "text",
         "the figure: training step_time and compute; serving throughput, ttft_p50, tpot_p50"},
        {"calibration.against_default_tables[].unit", "text", "the figure's unit (s, tok/s)"},
        {"calibration.against_default_tables[].calibrated", "unit", "this run's value, in `unit`"},
        {"calibration.against_default_tables[].default_tables", "unit", "the value without the table, in `unit`"},
        {"calibration.against_default_tables[].change_pct", "%", "(calibrated - default_tables) / default_tables"}}});
  sections.push_back(
      {"Training step", "`training` (training runs)",
       {{"training.step_time_s", "s", "one optimizer step: forward, backward and optimizer of every micro-batch"},
        {"training.tokens_per_s", "tokens/s", "global batch x sequence length / step time"},
        {"training.model_tflops_per_gpu", "TFLOP/s", "model FLOPs per step / (step time x accelerators)"},
        {"training.hardware_tflops_per_gpu", "TFLOP/s", "as model_tflops_per_gpu, counting recomputed FLOPs too"},
        {"training.mfu", "fraction", "model FLOPs utilisation: model_tflops_per_gpu / peak_tflops_per_gpu"},
        {"training.hfu", "fraction", "hardware FLOPs utilisation: hardware_tflops_per_gpu / peak_tflops_per_gpu"},
        {"training.peak_tflops_per_gpu", "TFLOP/s", "the accelerator's dense peak at the workload precision"},
        {"training.microbatches_per_pipeline", "count", "micro-batches each pipeline runs per step"},
        {"training.model_flops_per_step", "FLOP",
         "model FLOPs of one step (Megatron convention: matmuls, attention counted non-causal)"},
        {"training.hardware_flops_per_step", "FLOP", "model FLOPs plus the recomputed forward FLOPs"}}});
  sections.push_back(
      {"Step breakdown", "`breakdown` (training): where the critical pipeline stage's step time goes; the parts add "
                         "up to the step time",
       {{"breakdown.compute_s", "s", "compute kernels on the critical stage, including those slowed by overlapped communication"},
        {"breakdown.exposed_tp_s", "s", "tensor-parallel communication not hidden behind compute"},
        {"breakdown.exposed_cp_s", "s", "context-parallel communication not hidden behind compute"},
        {"breakdown.exposed_ep_s", "s", "expert-parallel (MoE all-to-all) communication not hidden behind compute"},
        {"breakdown.exposed_pp_s", "s", "pipeline sends and receives the stage waits for"},
        {"breakdown.exposed_dp_s", "s", "data-parallel / ZeRO collectives not hidden behind the backward pass"},
        {"breakdown.bubble_s", "s", "pipeline bubble: the stage idle, waiting for other stages"},
        {"breakdown.optimizer_s", "s", "the optimizer step"},
        {"breakdown.offload_s", "s", "copies over the host link (offload) not hidden behind compute"},
        {"breakdown.exposed_host_s", "s",
         "the device waiting for its host to issue the next op (workload.host_op_time): at the step's start, "
         "after the gradient-norm sync, and wherever the host falls behind"}}});
  sections.push_back(
      {"Memory", "`memory` (training): per device, on the pipeline stage that needs the most",
       {{"memory.peak_stage", "index", "the pipeline stage whose footprint is reported"},
        {"memory.capacity_bytes", "B", "usable HBM of one accelerator"},
        {"memory.over_capacity_bytes", "B", "total_bytes - capacity_bytes when positive (0: it fits)"},
        {"memory.total_bytes", "B", "the whole footprint: the terms below"},
        {"memory.weights_bytes", "B", "parameters held (after TP/PP split and ZeRO-3 sharding)"},
        {"memory.gradients_bytes", "B", "gradients held (ZeRO-2/3 shard them)"},
        {"memory.optimizer_bytes", "B", "optimizer state: master weights and moments (ZeRO-1+ shard it)"},
        {"memory.activations_bytes", "B", "activations stored for the backward pass of the micro-batches in flight"},
        {"memory.embedding_logits_bytes", "B", "embedding output and logits held on the first / last stage"},
        {"memory.recompute_buffer_bytes", "B", "the buffer one layer's recomputation needs"},
        {"memory.workspace_bytes", "B", "library workspace (cuBLAS, NCCL, attention kernels)"},
        {"memory.fragmentation_bytes", "B", "allocator fragmentation allowance"},
        {"memory.moe_dispatch_bytes", "B", "MoE token dispatch buffers"},
        {"memory.zero3_gathered_bytes", "B", "ZeRO-3 parameters gathered for the layers being computed"},
        {"memory.fp8_weight_cache_bytes", "B", "FP8 copies of the weights kept between micro-batches"},
        {"memory.stages[].stage", "index", "pipeline stage"},
        {"memory.stages[].total_bytes", "B", "that stage's footprint per device"},
        {"memory.stages[].weights_bytes", "B", "that stage's parameters per device"},
        {"memory.stages[].gradients_bytes", "B", "that stage's gradients per device"},
        {"memory.stages[].optimizer_bytes", "B", "that stage's optimizer state per device"},
        {"memory.stages[].activations_bytes", "B", "that stage's stored activations per device"}}});
  add_power_section(sections);
  sections.push_back(
      {"Whole training run", "`training_run` (with `workload.train_tokens`; null otherwise): every step as simulated, "
                             "no restarts or checkpoints",
       {{"training_run.tokens", "tokens", "the token budget"},
        {"training_run.steps", "count", "steps to train it: tokens / tokens per step, rounded up"},
        {"training_run.time_s", "s", "steps x step time"},
        {"training_run.gpu_hours", "h", "accelerators x time, in accelerator-hours"},
        {"training_run.energy_j", "J", "the cluster's energy for the run"},
        {"training_run.cost_usd", "USD", "accelerator-hours x price (null without `cost` prices)"}}});
  sections.push_back(
      {"Network", "`network` (training): link use per tier during the step (flow fidelity)",
       {{"network.fidelity", "text", "the network model: analytical (closed form) or flow (max-min fair flows)"},
        {"network.tiers[].tier", "index", "0 scale-up, 1 endpoint-leaf, 2 leaf-spine, 3 spine-core"},
        {"network.tiers[].name", "text", "the tier's name"},
        {"network.tiers[].links", "count", "directed links of the tier"},
        {"network.tiers[].bytes", "B", "bytes all links of the tier carried during the step"},
        {"network.tiers[].capacity_bytes_per_s", "B/s", "sum of the tier's directed link capacities"},
        {"network.tiers[].mean_utilisation", "fraction", "bytes / (capacity x step time), mean over the tier's links"},
        {"network.tiers[].max_utilisation", "fraction", "the same for the tier's busiest link"},
        {"network.tiers[].peak_utilisation", "fraction",
         "the tier's busiest instant: carried rate / capacity summed over its links, at its maximum during the step"},
        {"network.tiers[].peak_link_utilisation", "fraction", "the busiest instant of any one link of the tier"},
        {"network.utilisation.tier_<N>", "fraction",
         "tier N's four utilisations above as scalars (CSV columns, compare); N as network.tiers[].tier",
         "mean_utilisation max_utilisation peak_utilisation peak_link_utilisation"}}});
  sections.push_back(
      {"Iterations", "`iterations` (training with simulation.iterations > 1 and something random; null otherwise; "
                     "docs/reliability.md, Faults)",
       {{"iterations.iterations", "count", "training steps simulated, each with fresh draws"},
        {"iterations.method", "text", "how they ran: full mode, or the symmetric replay with order statistics"},
        {"iterations.nominal_s", "s", "the step without variability or stragglers"},
        {"iterations.mean_s", "s", "mean step time over the iterations"},
        {"iterations.p50_s", "s", "median step time"},
        {"iterations.p90_s", "s", "90th-percentile step time"},
        {"iterations.p99_s", "s", "99th-percentile step time"},
        {"iterations.max_s", "s", "slowest step"},
        {"iterations.step_times_s[]", "s", "every iteration's step time, in order"},
        {"iterations.simulated_steps", "count",
         "steps simulated (full) or replayed (symmetric) for these figures: the nominal step and each cause "
         "configuration's iterations that draw something"},
        {"iterations.causes[].cause", "text", "a cause of lost time: jitter, device, host noise, network, stragglers"},
        {"iterations.causes[].mean_step_s", "s", "mean step time with this cause alone, the same draws"},
        {"iterations.causes[].lost_s", "s", "mean step time this cause adds alone over the nominal step"},
        {"iterations.causes[].lost_share", "fraction", "lost_s / the nominal step"}}});
  sections.push_back(
      {"Goodput", "`goodput` (training with simulation.failures.enabled; null otherwise): Daly's model of a long run "
                  "under failures, checkpoints and restarts",
       {{"goodput.job_mtbf_s", "s", "mean time between failures of the whole job (every component's rate summed)"},
        {"goodput.checkpoint_bytes", "B", "one checkpoint: weights and optimizer state of every rank"},
        {"goodput.checkpoint_s", "s", "time to write one checkpoint at the storage bandwidth"},
        {"goodput.restart_s", "s", "time from a failure to training again, before lost work is redone"},
        {"goodput.interval_s", "s", "the checkpoint interval used (set, or the optimum)"},
        {"goodput.goodput", "fraction", "share of wall time making progress at that interval"},
        {"goodput.optimal_interval_s", "s", "the interval that maximises goodput (numerical optimum)"},
        {"goodput.optimal_goodput", "fraction", "goodput at the optimal interval"},
        {"goodput.young_interval_s", "s", "Young's interval sqrt(2 C M)"},
        {"goodput.daly_interval_s", "s", "Daly's higher-order interval"},
        {"goodput.checkpoint_lost_share", "fraction", "share of wall time spent writing checkpoints"},
        {"goodput.failure_lost_share", "fraction", "share of wall time lost to failures: restarts and redone work"},
        {"goodput.causes[].cause", "text", "a failing component: gpu, host, nic, network, software"},
        {"goodput.causes[].failures_per_s", "count", "its failure rate for the whole job, per second"},
        {"goodput.causes[].lost_share", "fraction", "share of wall time its failures cost"}}});
  add_link_fault_section(sections);
  sections.push_back(
      {"Provenance", "`provenance` (training): which estimator produced the op times, seconds per step per stage",
       {{"provenance.basis", "text", "what the seconds count (costed ops, uncontended, overlapped communication in full)"},
        {"provenance.critical_stage", "index", "the stage the breakdown reports"},
        {"provenance.stages[].stage", "index", "pipeline stage"},
        {"provenance.stages[].measured_table_s", "s", "op time from a measured calibration table"},
        {"provenance.stages[].fitted_s", "s", "op time from a model fitted to measurements"},
        {"provenance.stages[].roofline_s", "s", "op time from the roofline model"},
        {"provenance.stages[].collective_model_s", "s", "communication time from the collective model"},
        {"provenance.stages[].total_s", "s", "the stage's costed work (not its wall time)"}}});
}

/// Serving and the jobs beside a primary workload.
void add_serving_and_job_sections(std::vector<MetricSection>& sections) {
  sections.push_back(
      {"Serving", "`serving` (serving runs); latency statistics are over completed requests",
       {{"serving.duration_s", "s", "first arrival to last completion"},
        {"serving.requests", "count", "requests sent"},
        {"serving.completed", "count", "requests finished"},
        {"serving.input_tokens", "tokens", "prompt tokens of the completed requests"},
        {"serving.output_tokens", "tokens", "generated tokens of the completed requests"},
        {"serving.throughput_tokens_per_s", "tokens/s", "(input + output tokens) / duration"},
        {"serving.input_tokens_per_s", "tokens/s", "input tokens / duration"},
        {"serving.output_tokens_per_s", "tokens/s", "output tokens / duration"},
        {"serving.requests_per_s", "requests/s", "completed requests / duration"},
        {"serving.ttft_s", "s", "time to first token: first token - arrival", kDistribution},
        {"serving.tpot_s", "s", "time per output token: (last - first token) / (output tokens - 1)", kDistribution},
        {"serving.itl_s", "s", "inter-token latency: every gap between consecutive tokens (histogram, within 0.1 %)",
         "mean p50 p90 p99 max count; count: gaps measured"},
        {"serving.e2e_s", "s", "end to end: last token - arrival", kDistribution},
        {"serving.queue_s", "s", "queueing: first scheduled - arrival", kDistribution},
        {"serving.goodput_requests_per_s", "requests/s",
         "the measured arrival rate x the share of requests meeting every SLO target (without targets: every "
         "completed request): the rate of good requests offered, not diluted by the drain after the last arrival; "
         "all requests at once (offline): good requests / duration"},
        {"serving.rejected", "count",
         "requests refused: a full queue (max_queue), a prompt over the batch budget, or one that cannot fit the KV cache"},
        {"serving.rejected_by_cause", "count",
         "the rejected by cause: a prompt and output beyond the instance's KV blocks, a prompt over "
         "scheduler.max_batched_tokens with chunked prefill off, a full waiting queue (scheduler.max_queue)",
         "kv_capacity token_budget queue_full"},
        {"serving.preemptions", "count", "times a running request was evicted for lack of KV blocks"},
        {"serving.kv_cache_utilisation", "fraction", "used / all KV blocks: time-weighted mean, peak of any instance",
         "mean peak"},
        {"serving.prefix_hit_rate", "fraction",
         "prompt tokens served from the prefix cache (HBM, or a KV-cache tier with kv_offload) / prompt tokens"},
        {"serving.gpu_utilisation", "fraction", "busy accelerator time / (accelerators x duration)"},
        {"serving.accelerators", "count", "accelerators of all pools"},
        {"serving.average_power_w", "W", "mean power of the devices, nodes, NICs, switches and power supplies"},
        {"serving.devices_average_power_w", "W", "the accelerators' board power alone (GPU-only meters)"},
        {"serving.energy_per_token_j", "J", "energy per output token (null without power data)"},
        {"serving.device_energy_per_token_j", "J", "the accelerators' energy alone per output token (null without power data)"},
        {"serving.cost_per_million_tokens", "USD", "cost of a million output tokens (null without `cost` prices)"},
        {"serving.slo.ttft_s", "s", "the TTFT target (0: none)"},
        {"serving.slo.tpot_s", "s", "the TPOT target (0: none)"},
        {"serving.slo.percentile", "percentile", "the percentile the targets apply to (99: p99)"},
        {"serving.slo.met", "bool", "that percentile of TTFT and TPOT within the targets, nothing rejected"},
        {"serving.limiter", "text", "what bounds throughput: KV capacity, arrivals, compute, HBM bandwidth, network, host"},
        {"serving.pools[].name", "text", "the pool's name"},
        {"serving.pools[].role", "text", "mixed, prefill or decode"},
        {"serving.pools[].accelerator", "text", "the pool's accelerator preset"},
        {"serving.pools[].replicas", "count", "model instances"},
        {"serving.pools[].tp", "count", "tensor-parallel degree of an instance"},
        {"serving.pools[].pp", "count", "pipeline-parallel degree of an instance"},
        {"serving.pools[].ep", "count", "expert-parallel degree of an instance"},
        {"serving.pools[].memory_bytes", "B", "per device: usable HBM and its plan", "capacity weights activations kv_cache"},
        {"serving.pools[].kv_bytes_per_token", "B", "KV cache of one token, whole model"},
        {"serving.pools[].kv_blocks", "count", "paged KV-cache blocks of an instance"},
        {"serving.pools[].utilisation", "fraction", "busy time / (instances x duration)"},
        {"serving.pools[].kv_cache_utilisation", "fraction", "used / all KV blocks: time-weighted mean, peak", "mean peak"},
        {"serving.pools[].iterations", "count", "scheduler iterations of all instances"},
        {"serving.pools[].mean_batch_tokens", "tokens", "tokens per iteration, mean"},
        {"serving.pools[].busy_shares", "fraction", "what busy time went to (sums to 1)",
         "compute_bound memory_bound communication host"},
        {"serving.time_series.time_s[]", "s", "sample times, one per simulated second"},
        {"serving.time_series.queued[]", "count", "requests waiting at each sample"},
        {"serving.time_series.kv_cache_utilisation[]", "fraction", "KV blocks in use at each sample"},
        {"serving.time_series.output_tokens_per_s[]", "tokens/s", "output tokens generated in each second"}}});
  sections.push_back(
      {"Serving KV-cache tiers",
       "`serving.kv_offload` (serving runs with workload.kv_offload.tiers; absent otherwise): docs/serving.md, KV-cache "
       "tiers",
       {{"serving.kv_offload.write", "text", "when a prefix is copied to the first tier: write_through or write_back"},
        {"serving.kv_offload.load", "text", "how a hit comes back: async (the request waits) or blocking (its batch waits)"},
        {"serving.kv_offload.hbm_hit_rate", "fraction", "prompt tokens served from HBM's prefix cache / prompt tokens"},
        {"serving.kv_offload.tier_wait_share", "fraction", "blocking loads' share of the iterations' busy time"},
        {"serving.kv_offload.tiers[].tier", "text", "host, cxl, ssd or pool, nearest first"},
        {"serving.kv_offload.tiers[].capacity_bytes", "B",
         "per accelerator, given to the KV cache (the shared `pool` tier: one pool's capacity)"},
        {"serving.kv_offload.tiers[].hits", "count", "requests that loaded part of their prompt from it"},
        {"serving.kv_offload.tiers[].hit_tokens", "tokens", "prompt tokens loaded from it"},
        {"serving.kv_offload.tiers[].hit_rate", "fraction", "prompt tokens loaded from it / prompt tokens"},
        {"serving.kv_offload.tiers[].bytes", "B", "moved, over all of an instance's accelerators: copied in (from HBM "
         "or the tier above), loaded back to HBM, let go (to the next tier or dropped)", "stored loaded evicted"},
        {"serving.kv_offload.tiers[].load_s", "s", "transfer time of its loads (latency + bytes / link, per accelerator)"},
        {"serving.kv_offload.tiers[].prefill_avoided_s", "s",
         "estimate: the prefill its hits' tokens would have cost, each alone less a one-token prefill"},
        {"serving.kv_offload.tiers[].saved_s", "s",
         "estimate: prefill_avoided_s - load_s (negative: recomputing was faster than loading)"}}});
  sections.push_back(
      {"Serving faults",
       "`serving.faults` (serving runs with simulation.variability, cluster.stragglers or simulation.failures; absent "
       "otherwise): docs/reliability.md, Faults in serving",
       {{"serving.faults.instances", "count", "model instances of all pools"},
        {"serving.faults.straggler_instances", "count", "instances with an accelerator on a slow node"},
        {"serving.faults.failures", "count", "instance failures during the run"},
        {"serving.faults.expected_failures", "count", "duration x sum over instances of 1 / (MTBF + restart)"},
        {"serving.faults.instance_mtbf_s", "s", "mean time between failures of one instance (the first pool's; 0: none)"},
        {"serving.faults.restart_s", "s", "downtime after each failure"},
        {"serving.faults.availability", "fraction", "1 - instance downtime / (instances x duration)"},
        {"serving.faults.requeued_requests", "count", "times a failure sent a queued or running request back to the router"},
        {"serving.faults.reprefill_tokens", "tokens", "tokens prefilled again because a failure lost their KV cache"},
        {"serving.faults.useful_work_share", "fraction", "1 - re-prefilled tokens / all tokens the iterations processed"},
        {"serving.faults.lost_shares", "fraction",
         "share of the schedulers' time (instances x duration when pp = 1) each cause cost: kernel and network jitter "
         "(net), host noise, stragglers' slowdown, downtime, re-prefill (token share of its iterations), iterations "
         "a failure cut short",
         "jitter host_noise stragglers downtime reprefill lost_work"}}});
  sections.push_back(
      {"Jobs", "`jobs[]` (scenarios with `jobs:`): each job's metrics as `{value, unit}`; the collective-loop kind's",
       {{"jobs[].name", "text", "the job's name in `jobs:`"},
        {"jobs[].kind", "text", "its workload kind"},
        {"jobs[].notes[]", "text", "what it ran"},
        {"jobs[].metrics.rounds", "count", "collectives started"},
        {"jobs[].metrics.bytes_per_round", "B", "bytes of one collective"},
        {"jobs[].metrics.busy_time", "s", "first round's start to last round's end"},
        {"jobs[].metrics.mean_round_time", "s", "busy time / rounds"},
        {"jobs[].metrics.algorithm_bandwidth", "B/s", "rounds x bytes per round / busy time"}}});
  sections.push_back(
      {"Trace workload", "`workload` of a Chakra trace run (`kind: trace`, docs/chakra.md): its metrics as "
                         "`{value, unit}`",
       {{"workload.kind", "text", "the workload kind (`trace`)"},
        {"workload.notes[]", "text", "the trace, its ranks and how its compute nodes were costed"},
        {"workload.metrics.step_time", "s", "the trace's makespan: first node's start to last node's end"},
        {"workload.metrics.ranks", "count", "ranks the trace ran on"},
        {"workload.metrics.compute_nodes", "count", "compute nodes (COMP_NODE) of all ranks"},
        {"workload.metrics.collectives", "count", "collectives run (one per group and index, not per rank)"},
        {"workload.metrics.transfers", "count", "send/receive pairs run"},
        {"workload.metrics.communicated_bytes", "B",
         "bytes of the collectives (nccl-tests convention) and transfers"},
        {"workload.metrics.busiest_rank_compute_time", "s", "the largest sum of one rank's compute node times"}}});
}

/// The sweep's columns: always the last section.
void add_sweep_section(std::vector<MetricSection>& sections) {
  sections.push_back(
      {"Sweep columns", "`sweep.csv` and `sweep.json` of `clustersim sweep` (docs/sweeps.md): one row per point, the "
                        "unit in the column name",
       {{"gpus", "count", "accelerators of the primary workload"},
        {"step_time_s", "s", "training: training.step_time_s; a trace: workload.metrics.step_time"},
        {"ranks", "count", "a trace: workload.metrics.ranks"},
        {"compute_nodes", "count", "a trace: workload.metrics.compute_nodes"},
        {"collectives", "count", "a trace: workload.metrics.collectives"},
        {"transfers", "count", "a trace: workload.metrics.transfers"},
        {"communicated_bytes_B", "B", "a trace: workload.metrics.communicated_bytes"},
        {"busiest_rank_compute_time_s", "s", "a trace: workload.metrics.busiest_rank_compute_time"},
        {"tokens_per_s", "tokens/s", "training: training.tokens_per_s"},
        {"mfu_fraction", "fraction", "training: training.mfu"},
        {"hfu_fraction", "fraction", "training: training.hfu"},
        {"model_tflops_per_gpu_TFLOP_per_s", "TFLOP/s", "training: training.model_tflops_per_gpu"},
        {"microbatches_per_pipeline", "count", "training: training.microbatches_per_pipeline"},
        {"compute_time_s", "s", "training: breakdown.compute_s"},
        {"exposed_comm_time_s", "s", "training: exposed TP + CP + EP + PP + DP communication"},
        {"pipeline_bubble_time_s", "s", "training: breakdown.bubble_s"},
        {"memory_per_gpu_B", "B", "training: memory.total_bytes"},
        {"memory_capacity_per_gpu_B", "B", "training: memory.capacity_bytes"},
        {"device_power_average_W", "W", "training: power.device_average_w"},
        {"cluster_power_average_W", "W", "power.cluster_average_w (training) or serving.average_power_w"},
        {"cluster_power_peak_W", "W", "training: power.cluster_peak_w"},
        {"energy_per_step_J", "J", "training: power.energy_per_step_j"},
        {"energy_per_token_J", "J", "power.energy_per_token_j (training) or serving.energy_per_token_j (per output token)"},
        {"cost_per_step_USD", "USD", "training: power.cost.per_step_usd"},
        {"cost_per_million_tokens_USD", "USD",
         "power.cost.per_million_tokens_usd (training) or serving.cost_per_million_tokens (output tokens)"},
        {"train_time_s", "s", "training: training_run.time_s"},
        {"train_steps", "count", "training: training_run.steps"},
        {"train_gpu_hours_h", "h", "training: training_run.gpu_hours"},
        {"train_energy_J", "J", "training: training_run.energy_j"},
        {"train_cost_USD", "USD", "training: training_run.cost_usd"},
        {"requests_per_s", "requests/s", "serving: serving.requests_per_s"},
        {"goodput_requests_per_s", "requests/s", "serving: serving.goodput_requests_per_s"},
        {"output_tokens_per_s", "tokens/s", "serving: serving.output_tokens_per_s"},
        {"throughput_tokens_per_s", "tokens/s", "serving: serving.throughput_tokens_per_s"},
        {"completed_requests", "count", "serving: serving.completed"},
        {"rejected_requests", "count", "serving: serving.rejected"},
        {"ttft_p50_s", "s", "serving: serving.ttft_s.p50"},
        {"ttft_p99_s", "s", "serving: serving.ttft_s.p99"},
        {"tpot_p50_s", "s", "serving: serving.tpot_s.p50"},
        {"tpot_p99_s", "s", "serving: serving.tpot_s.p99"},
        {"e2e_p99_s", "s", "serving: serving.e2e_s.p99"},
        {"slo_met_bool", "bool", "serving: serving.slo.met, as 1 or 0"},
        {"kv_utilisation_peak_fraction", "fraction", "serving: serving.kv_cache_utilisation.peak"},
        {"gpu_utilisation_fraction", "fraction", "serving: serving.gpu_utilisation"},
        {"availability_fraction", "fraction", "serving with faults: serving.faults.availability"},
        {"instance_failures", "count", "serving with faults: serving.faults.failures"},
        {"requeued_requests", "count", "serving with faults: serving.faults.requeued_requests"},
        {"job.<name>.rounds", "count", "a job's jobs[].metrics.rounds"},
        {"job.<name>.bytes_per_round_B", "B", "a job's jobs[].metrics.bytes_per_round"},
        {"job.<name>.busy_time_s", "s", "a job's jobs[].metrics.busy_time"},
        {"job.<name>.mean_round_time_s", "s", "a job's jobs[].metrics.mean_round_time"},
        {"job.<name>.algorithm_bandwidth_B_s", "B/s", "a job's jobs[].metrics.algorithm_bandwidth"}}});
}

std::vector<MetricSection> build_sections() {
  std::vector<MetricSection> sections;
  add_training_sections(sections);
  add_serving_and_job_sections(sections);
  add_sweep_section(sections);
  return sections;
}

/// The keys of a statistics object: the words of `fields` before its `;`.
std::vector<std::string_view> field_keys(std::string_view fields) {
  const std::string_view keys = fields.substr(0, fields.find(';'));
  std::vector<std::string_view> out;
  for (std::size_t start = 0; start < keys.size();) {
    std::size_t end = keys.find(' ', start);
    if (end == std::string_view::npos) end = keys.size();
    out.push_back(keys.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool covers_field(std::string_view fields, std::string_view field) {
  const auto keys = field_keys(fields);
  return std::find(keys.begin(), keys.end(), field) != keys.end();
}

void collect_paths(const nlohmann::json& value, const std::string& path,
                   std::vector<std::pair<std::string, std::string>>& out) {
  // A job's metrics and a generic primary workload's (workload_result_json: {value, unit}).
  const bool job_metric = path.rfind("jobs[].metrics.", 0) == 0 || path.rfind("workload.metrics.", 0) == 0;
  if (job_metric && value.is_object() && value.contains("value") && value.contains("unit")) {
    out.emplace_back(path, value.at("unit").get<std::string>());
  } else if (value.is_object()) {
    for (const auto& [key, child] : value.items()) collect_paths(child, path.empty() ? key : path + "." + key, out);
  } else if (value.is_array()) {
    // Every element, so that a key only some elements carry is seen; each path once.
    std::vector<std::pair<std::string, std::string>> elements;
    for (const auto& element : value) collect_paths(element, path + "[]", elements);
    if (value.empty()) elements.emplace_back(path + "[]", "");
    for (auto& element : elements) {
      if (std::find(out.begin(), out.end(), element) == out.end()) out.push_back(std::move(element));
    }
  } else {
    out.emplace_back(path, "");
  }
}

/// `mean p50; count: requests` -> "`mean`, `p50` (count: requests)".
std::string fields_text(std::string_view fields) {
  std::string out;
  for (const std::string_view key : field_keys(fields)) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", key);
  if (const std::size_t semicolon = fields.find(';'); semicolon != std::string_view::npos) {
    out += fmt::format(" ({})", fields.substr(semicolon + 2));
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

const std::vector<MetricSection>& metric_sections() {
  static const std::vector<MetricSection> sections = build_sections();
  return sections;
}

std::vector<const MetricDeclaration*> result_metric_declarations() {
  std::vector<const MetricDeclaration*> out;
  const auto& sections = metric_sections();
  for (std::size_t s = 0; s + 1 < sections.size(); ++s) {
    for (const MetricDeclaration& metric : sections[s].metrics) out.push_back(&metric);
  }
  return out;
}

std::vector<const MetricDeclaration*> sweep_metric_declarations() {
  std::vector<const MetricDeclaration*> out;
  for (const MetricDeclaration& metric : metric_sections().back().metrics) out.push_back(&metric);
  return out;
}

std::string generic_metric_path(std::string_view path) {
  // Per-tier scalars (network.utilisation.tier_2...) are declared once as tier_<N>.
  std::string out;
  constexpr std::string_view kTier = "tier_";
  std::size_t i = 0;
  while (i < path.size()) {
    const bool segment_start = i == 0 || path[i - 1] == '.';
    if (segment_start && path.substr(i, kTier.size()) == kTier) {
      std::size_t j = i + kTier.size();
      while (j < path.size() && path[j] >= '0' && path[j] <= '9') ++j;
      if (j > i + kTier.size() && (j == path.size() || path[j] == '.')) {
        out += "tier_<N>";
        i = j;
        continue;
      }
    }
    out += path[i++];
  }
  return out;
}

const MetricDeclaration* find_metric(const std::vector<const MetricDeclaration*>& declarations,
                                     std::string_view raw_path) {
  const std::string generic = generic_metric_path(raw_path);
  const std::string_view path = generic;
  for (const MetricDeclaration* metric : declarations) {
    if (metric->path == path) return metric;
    if (!metric->fields.empty() && path.size() > metric->path.size() + 1 && path.rfind(metric->path, 0) == 0 &&
        path[metric->path.size()] == '.' && covers_field(metric->fields, path.substr(metric->path.size() + 1))) {
      return metric;
    }
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> result_metric_paths(const nlohmann::json& document) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : document.items()) {
    if (key != "scenario") collect_paths(value, key, out);
  }
  return out;
}

std::string metrics_glossary_markdown() {
  std::string out =
      "# Metrics glossary\n\n"
      "<!-- Generated by `build/release/clustersim docs metrics > docs/metrics.md` from\n"
      "     sim/report/metric_glossary.cpp; tests/sim/report/metric_glossary_test.cpp keeps it true. -->\n\n"
      "Every summary metric `clustersim` writes, with its unit and meaning. The result document\n"
      "(`clustersim run --format json`, `result.json` of `--out`) holds the sections below under the\n"
      "path shown; `--format csv` and `clustersim compare` name its scalars by the same dotted paths\n"
      "(arrays, time series, notes and provenance are left out of the CSV). `[]` stands for every\n"
      "element of an array. `clustersim sweep` writes the columns of the last section. The table\n"
      "`clustersim run` prints shows the same numbers with readable units.\n\n"
      "Units: `s` seconds, `h` hours, `B` bytes, `W` watts, `J` joules, `USD` US dollars, `FLOP`\n"
      "floating-point operations; `fraction` a ratio from 0 to 1 (MFU 0.40 = 40 %), `count` a\n"
      "number of things, `index` a position counted from 0, `bool` true or false, `text` a string.\n"
      "A statistics entry is an object whose keys are listed under *fields*.\n";
  for (const MetricSection& section : metric_sections()) {
    out += fmt::format("\n## {}\n\n{}.\n\n| metric | unit | meaning |\n| --- | --- | --- |\n", section.title,
                       section.where);
    for (const MetricDeclaration& metric : section.metrics) {
      std::string meaning = markdown_cell(metric.meaning);
      if (!metric.fields.empty()) meaning += "; fields: " + fields_text(metric.fields);
      out += fmt::format("| `{}` | {} | {} |\n", metric.path, metric.unit, meaning);
    }
  }
  return out;
}

}  // namespace clustersim::report
