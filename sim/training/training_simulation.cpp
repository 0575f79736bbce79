// One optimizer step: the stages' programs, the setup's checks and the step's metrics. The
// step itself runs as a TrainingStep (training_step.hpp) on a platform session.
#include "sim/training/training_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/llm/parallel_rules.hpp"
#include "models/llm/pipeline_split.hpp"
#include "sim/engine/error.hpp"
#include "sim/training/gradient_buckets.hpp"
#include "sim/training/rank_layout.hpp"

namespace clustersim::training {
namespace {

void validate_speeds(const TrainingSetup& setup) {
  if (!(setup.throttle > 0 && setup.throttle <= 1)) {
    throw ConfigError(fmt::format("the throttle factor must be in (0, 1], got {}", setup.throttle));
  }
  if (setup.accelerator_speed.empty()) return;
  if (setup.accelerator_speed.size() != static_cast<std::size_t>(setup.topology.accelerator_count())) {
    throw ConfigError(fmt::format("accelerator_speed lists {} accelerators, the topology has {}",
                                  setup.accelerator_speed.size(), setup.topology.accelerator_count()));
  }
  bool nominal = true;
  for (const engine::Profile& speed : setup.accelerator_speed) {
    engine::check_profile(speed, "accelerator compute speed", 0.0, true);
    if (speed.initial > 1 || std::any_of(speed.changes.begin(), speed.changes.end(),
                                         [](const engine::ProfileChange& c) { return c.value > 1; })) {
      throw ConfigError(fmt::format("accelerator compute speed must be in (0, 1], got {}", speed.initial));
    }
    nominal = nominal && speed == engine::Profile::constant(1.0);
  }
  if (!nominal && setup.mode != platform::SimulationMode::full) {
    throw ConfigError("per-accelerator compute speeds (stragglers) need simulation mode 'full': symmetric mode "
                      "simulates one representative rank per stage and cannot place a slow one");
  }
}

}  // namespace

namespace {

/// Which ranks the step simulates (`simulation.mode`).
std::string mode_note(const TrainingWorkload& w, platform::SimulationMode mode) {
  const auto& par = w.parallelism;
  if (mode == platform::SimulationMode::full) {
    const int replicas = par.tp * par.cp * par.dp;
    return fmt::format("full mode: all {} (tp, cp, dp) replicas of the {}-stage pipeline simulated ({} ranks); "
                       "collectives start when every member rank reaches them",
                       replicas, par.pp, replicas * par.pp);
  }
  return "symmetric mode: one representative rank per pipeline stage (its tp, cp and dp replicas behave alike); "
         "collectives costed on its real rank groups";
}

/// How the tensor-parallel collectives sit beside the compute (stage_program.cpp's header);
/// empty without tensor parallelism.
std::string tensor_parallel_note(const TrainingWorkload& w) {
  const auto& par = w.parallelism;
  if (par.tp <= 1) return {};
  const bool sequence_parallel = par.sequence_parallel;
  if (w.tp_comm_overlap && sequence_parallel) {
    return fmt::format(
        "TP-comm overlap (Transformer Engine userbuffers): each layer's TP all-gathers run as ring exchanges on the "
        "copy engines beside the GEMM they feed{}, forward reduce-scatters pipelined with their GEMM in 4 splits "
        "(the last split exposed), backward reduce-scatters in bulk beside the wgrad GEMM; the GEMMs beside "
        "pipelined and bulk transfers run on 16 fewer SMs; the embedding's and LM head's TP collectives are not "
        "overlapped this way",
        w.precision == models::Dtype::fp8 ? " (fp8 elements)" : "");
  }
  std::vector<std::string> beside;
  if (sequence_parallel) beside.push_back("the wgrad-input all-gather beside the dgrad GEMM");
  if (w.tp_async_backward) {
    beside.push_back(fmt::format("the input-gradient {} of column-parallel linears beside their wgrad GEMM "
                                 "(tp_async_backward)",
                                 sequence_parallel ? "reduce-scatter" : "all-reduce"));
  }
  std::string text = "no TP-comm overlap (workload.tp_comm_overlap: false): TP collectives block the compute stream";
  for (std::size_t i = 0; i < beside.size(); ++i) {
    text += (i == 0 ? ", except " : " and ") + beside[i];
  }
  return text;
}

/// When the gradient reduction and the parameter gather of ZeRO 0 and 1 run (ZeRO 2 and 3
/// have notes of their own); empty without data parallelism.
std::string data_parallel_note(const TrainingWorkload& w) {
  const auto& par = w.parallelism;
  if (par.dp * par.cp <= 1 || par.zero >= 2) return {};
  const bool gathers = par.zero == 1;  // the distributed optimizer's parameter all-gather
  if (w.overlap_grad_reduce) {
    // The gradient group is dp x cp ranks (data_parallel.cpp): Megatron sizes buckets by it.
    return fmt::format("gradient reduction overlapped with the last backward in buckets of {:.0f}M parameters "
                       "(max(40M, 1M x dp x cp = {})){}",
                       megatron_bucket_parameters(static_cast<int>(par.dp * par.cp)) / 1e6, par.dp * par.cp,
                       gathers ? "; parameter all-gather overlapped with the step's first forward" : "");
  }
  return std::string("gradient reduction after the last backward, not overlapped") +
         (gathers ? "; parameter all-gather after the optimizer" : "");
}

}  // namespace

std::vector<std::string> assumption_notes(const TrainingWorkload& w, platform::SimulationMode mode) {
  std::vector<std::string> notes;
  notes.push_back(mode_note(w, mode));
  if (w.framework == TrainingFramework::torchtitan) {
    notes.push_back("framework torchtitan: the memory footprint follows its conventions (no fp8 weight copies kept; "
                    "with TP the LM head saves its gathered input); "
                    "kernels and collectives are costed as for Megatron-Core");
  }
  if (w.framework != TrainingFramework::megatron || w.cross_entropy != CrossEntropy::automatic) {
    static const char* const kLoss[] = {"fused (Megatron's vocab-parallel cross-entropy)",
                                        "eager (PyTorch cross_entropy on fp32 logits)",
                                        "compiled (cross_entropy under torch.compile)"};
    notes.push_back(fmt::format("cross-entropy kernel {}: sets the last stage's memory only; the loss is costed as "
                                "passes over fp32 logits whichever kernel runs",
                                kLoss[static_cast<int>(loss_kernel(w.cross_entropy, w.framework))]));
  }
  if (w.recompute == Recompute::op) {
    notes.push_back("recompute op (torchtitan's per-op checkpointing): the backward recomputes each layer's norms, "
                    "elementwise ops and every other matmul (K, output projection and up / fc2), not attention");
  }
  if (std::string tp = tensor_parallel_note(w); !tp.empty()) notes.push_back(std::move(tp));
  notes.push_back("model FLOPs follow the Megatron convention (matmuls only, attention counted "
                  "non-causal); MFU/HFU use the dense peak of the workload precision");
  if (std::string dp = data_parallel_note(w); !dp.empty()) notes.push_back(std::move(dp));
  if (w.host_op_time_s() > 0) {
    notes.push_back(fmt::format(
        "host dispatch: each rank's host issues every op in program order, {:.0f} us each ({}), ahead of its "
        "device; a kernel starts no earlier than it is issued, and the host waits for the gradients before the "
        "optimizer (gradient-norm read-back)",
        w.host_op_time_s() * 1e6,
        w.host_op_time >= 0 ? "workload.host_op_time" : "the framework's default; docs/models.md \"Host dispatch\""));
  } else {
    notes.push_back("host dispatch not modelled (workload.host_op_time: 0): every kernel is issued in time");
  }
  if (w.parallelism.zero == 2) {
    notes.push_back("ZeRO 2: gradients reduce-scattered every micro-batch, parameters gathered after the optimizer");
  }
  if (w.parallelism.zero == 3) {
    notes.push_back("ZeRO 3 (FSDP): every micro-batch gathers each unit's parameters before its forward and "
                    "backward (one unit prefetched) and reduce-scatters its gradients");
  }
  if (w.parallelism.cp > 1) {
    notes.push_back("context-parallel KV exchange overlapped with attention; only the excess is exposed");
  }
  if (w.model.tie_word_embeddings && w.parallelism.pp > 1) {
    notes.push_back("tied embedding gradient all-reduce between first and last stage not modelled");
  }
  return notes;
}


std::vector<TierUtilisation> tier_utilisation(const topologies::Topology& topology,
                                              const topologies::LinkTraffic& traffic, double step_time_s,
                                              const topologies::TierUtilisationSeries* series) {
  if (!(step_time_s > 0)) throw ConfigError(fmt::format("step time must be > 0 s, got {}", step_time_s));
  const auto& links = topology.links();
  if (traffic.bytes.size() != links.size()) {
    throw ConfigError(fmt::format("traffic covers {} links, the topology has {}", traffic.bytes.size(), links.size()));
  }
  std::map<int, TierUtilisation> tiers;
  for (std::size_t i = 0; i < links.size(); ++i) {
    TierUtilisation& t = tiers[links[i].tier];
    t.tier = links[i].tier;
    ++t.links;
    t.bytes += traffic.bytes[i];
    t.capacity_bytes_per_s += links[i].bytes_per_s;
    const double u = traffic.bytes[i] / (links[i].bytes_per_s * step_time_s);
    t.mean_utilisation += u;
    t.max_utilisation = std::max(t.max_utilisation, u);
  }
  std::vector<TierUtilisation> out;
  const engine::TimePs step_end_ps = engine::seconds_to_ps(step_time_s);
  for (auto& [tier, t] : tiers) {
    t.mean_utilisation /= static_cast<double>(t.links);
    if (series != nullptr && step_end_ps > 0) {
      const auto found = std::find(series->tiers.begin(), series->tiers.end(), tier);
      if (found != series->tiers.end()) {
        const auto index = static_cast<std::size_t>(found - series->tiers.begin());
        t.peak_utilisation = series->peak(index, 0, step_end_ps);
        t.peak_link_utilisation = series->peak_link(index, step_end_ps);
      }
    }
    out.push_back(t);
  }
  return out;
}

topologies::TierUtilisationSeries series_until(const topologies::TierUtilisationSeries& series, engine::TimePs end_ps) {
  // Only the samples before end_ps are copied.
  const auto end = std::lower_bound(series.times_ps.begin(), series.times_ps.end(), end_ps);
  const auto count = end - series.times_ps.begin();
  const auto head = [count](const auto& values) { return std::decay_t<decltype(values)>(values.begin(), values.begin() + count); };
  topologies::TierUtilisationSeries kept;
  kept.tiers = series.tiers;
  kept.tier_line_bytes_per_s = series.tier_line_bytes_per_s;
  kept.times_ps = head(series.times_ps);
  for (const auto& values : series.utilisation) kept.utilisation.push_back(head(values));
  for (const auto& values : series.changed_link_peak) kept.changed_link_peak.push_back(head(values));
  return kept;
}

void validate_training_setup(const TrainingSetup& setup) {
  const TrainingWorkload& w = setup.workload;
  const ParallelismConfig& p = w.parallelism;
  w.model.validate();
  auto positive = [](std::int64_t value, const char* name) {
    if (value < 1) throw ConfigError(fmt::format("{} must be >= 1, got {}", name, value));
  };
  positive(p.tp, "tp");
  positive(p.pp, "pp");
  positive(p.dp, "dp");
  positive(p.cp, "cp");
  positive(p.vp, "vp");
  positive(w.seq_len, "seq_len");
  positive(w.global_batch, "global_batch");
  positive(w.micro_batch, "micro_batch");
  positive(p.ep, "ep");
  // The split's rules are the loader's (models/llm/parallel_rules.hpp), with the same text.
  config::throw_if(models::expert_parallel_problem(w.model, p.ep, p.dp, p.cp));
  if (p.zero < 0 || p.zero > 3) throw ConfigError(fmt::format("zero must be 0..3, got {}", p.zero));
  if (p.zero == 3 && p.zero3_granularity == Zero3Granularity::tensor &&
      (w.model.is_moe() || w.model.attention == models::AttentionKind::mla)) {
    throw ConfigError(fmt::format("zero3_granularity tensor is modelled for dense MHA/GQA layers; model '{}' has {}",
                                  w.model.name, w.model.is_moe() ? "mixture-of-experts layers" : "MLA attention"));
  }
  if (!(w.grad_bytes_per_param > 0)) {
    throw ConfigError(fmt::format("grad_bytes_per_param must be positive, got {}", w.grad_bytes_per_param));
  }
  config::throw_if(models::virtual_pipeline_problem(p.vp, pipeline_schedule_names().name(p.schedule),
                                                    p.schedule == PipelineSchedule::interleaved));
  config::throw_if(models::batch_split_problem(w.global_batch, p.dp, w.micro_batch));
  // Throws when the layers do not split over the (virtual) stages as given.
  (void)models::PipelineSplit(w.model.num_hidden_layers, p.pp,
                              p.schedule == PipelineSchedule::interleaved ? p.vp : 1, p.stage_layers);
  config::throw_if(models::tensor_parallel_problem(w.model, p.tp));
  config::throw_if(models::context_parallel_problem(w.seq_len, p.cp));
  validate_speeds(setup);
  const int accelerators = setup.job_accelerators();
  if (accelerators < 1 || accelerators > setup.topology.accelerator_count()) {
    throw ConfigError(fmt::format("the job's {} accelerators are not in [1, {}] (the topology's)", accelerators,
                                  setup.topology.accelerator_count()));
  }
  if (p.world_size() != accelerators) {
    const bool whole = accelerators == setup.topology.accelerator_count();
    throw ConfigError(fmt::format("tp * pp * dp * cp = {} * {} * {} * {} = {} does not match {}", p.tp, p.pp, p.dp,
                                  p.cp, p.world_size(),
                                  whole ? fmt::format("the topology's {} accelerators", accelerators)
                                        : fmt::format("the {} accelerators the other jobs leave the training job",
                                                      accelerators)));
  }
}

void fill_step_metrics(const TrainingSetup& setup, const std::vector<StageProgram>& programs,
                       TrainingResult& result) {
  const TrainingWorkload& w = setup.workload;
  const auto& par = w.parallelism;
  result.microbatches = w.microbatches_per_pipeline();
  result.gpus = par.world_size();
  result.tokens_per_s = static_cast<double>(w.global_batch * w.seq_len) / result.step_time_s;
  const double replicas = static_cast<double>(par.tp * par.cp * par.dp);
  result.model_flops_per_step = 0;
  result.hardware_flops_per_step = 0;
  for (const StageProgram& program : programs) {
    const double mbs = static_cast<double>(result.microbatches);
    result.model_flops_per_step += per_microbatch_flops(program, true) * mbs * replicas;
    result.hardware_flops_per_step += per_microbatch_flops(program, false) * mbs * replicas;
  }
  const double gpus = static_cast<double>(result.gpus);
  result.model_tflops_per_gpu = result.model_flops_per_step / result.step_time_s / gpus / 1e12;
  result.hardware_tflops_per_gpu = result.hardware_flops_per_step / result.step_time_s / gpus / 1e12;
  result.peak_tflops_per_gpu = setup.compute.spec().peak_for(w.precision) / 1e12;
  result.mfu = result.model_tflops_per_gpu / result.peak_tflops_per_gpu;
  result.hfu = result.hardware_tflops_per_gpu / result.peak_tflops_per_gpu;
}

double zero3_gather_copies_s(const TrainingSetup& setup, double bytes, std::size_t ranks) {
  const auto& par = setup.workload.parallelism;
  if (!(par.zero == 3 && par.zero3_list_gathers) || ranks < 2 || !(bytes > 0)) return 0.0;
  models::ElementwiseShape copy;
  copy.bytes_read = bytes / static_cast<double>(ranks);
  copy.bytes_written = copy.bytes_read;
  return static_cast<double>(ranks) * setup.compute.elementwise(copy).time_s;
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
  in.fp8_params = w.fp8_params && in.fp8;
  in.fp8_weight_cache = w.framework == TrainingFramework::megatron;
  in.loss = loss_kernel(w.cross_entropy, w.framework);
  in.gathered_head_input = w.framework == TrainingFramework::torchtitan;
  in.hidden_dropout = w.model.hidden_dropout;
  in.attention_dropout = w.model.attention_dropout;
  in.offload_optimizer = w.memory.offload_optimizer;
  in.offload_activations = w.memory.offload_activations;
  in.workspace_bytes = w.memory.workspace_bytes;
  in.fragmentation = w.memory.fragmentation;
  in.persistent_state_unfragmented = w.framework == TrainingFramework::megatron;
  in.optimizer_bytes_per_param = w.optimizer.bytes_per_param();
  in.zero3_max_live_parameters = w.memory.zero3_max_live_parameters;
  in.zero3_prefetch_bucket_parameters = w.memory.zero3_prefetch_bucket_parameters;
  in.zero3_reduce_bucket_parameters = w.memory.zero3_reduce_bucket_parameters;
  return in;
}

namespace {

/// One accelerator's transfer of `bytes` to or from where offloaded state lives. A shared pool:
/// every accelerator of the job attached to it moves the same bytes at the same moment (the
/// ranks of a step are symmetric), so each gets its link or its share of the pool's port.
double offload_transfer_s(const TrainingSetup& setup, double bytes) {
  if (setup.workload.memory.offload_target == OffloadTarget::host) {
    return setup.memory->offload_transfer_time_s(bytes, models::MemoryLevelKind::host);
  }
  const platform::MemoryPoolSpec& pool = *setup.memory_pool;
  const int sharing = std::max(1, std::min(pool.accelerators, setup.accelerators));
  if (bytes <= 0) return 0;
  return pool.latency_s + bytes / std::min(pool.link_bytes_per_s, pool.bytes_per_s / sharing);
}

/// The transfers of an offloading workload to host memory or a shared pool
/// (StageProgram::optimizer_offload_ps, activation_offload_ps).
void cost_offload(const TrainingSetup& setup, StageProgram& program) {
  const MemoryOptions& memory = setup.workload.memory;
  if (!memory.offload_optimizer && !memory.offload_activations) return;
  const bool to_pool = memory.offload_target == OffloadTarget::pool;
  if (!to_pool && setup.memory == nullptr) {
    throw ConfigError("offloading needs the platform's memory hierarchy (host memory and its link)");
  }
  if (to_pool && (setup.memory_pool == nullptr || !setup.memory_pool->on())) {
    throw ConfigError("offload.target: pool needs cluster.memory_pool");
  }
  models::FootprintInputs inputs = footprint_inputs(setup.workload);
  if (memory.offload_optimizer) {
    inputs.offload_optimizer = false;  // the state as it would sit on the device
    const double bytes = models::stage_footprint(inputs, program.stage).optimizer_bytes;
    if (to_pool) {
      // The pool holds the optimizer state of every accelerator attached to it.
      const platform::MemoryPoolSpec& pool = *setup.memory_pool;
      const int sharing = std::max(1, std::min(pool.accelerators, setup.accelerators));
      if (bytes * sharing > pool.capacity_bytes) {
        throw models::DoesNotFitError(fmt::format(
            "the optimizer state offloaded to the memory pool does not fit: {} accelerators x {:.1f} GiB (stage {}) "
            "need {:.1f} GiB of a pool's {:.1f} GiB (cluster.memory_pool.capacity)",
            sharing, bytes / (1024.0 * 1024 * 1024), program.stage, bytes * sharing / (1024.0 * 1024 * 1024),
            pool.capacity_bytes / (1024.0 * 1024 * 1024)));
      }
    }
    program.optimizer_offload_ps = engine::seconds_to_ps(offload_transfer_s(setup, bytes));
  }
  if (memory.offload_activations) {
    const double per_layer = models::layer_activation_bytes(inputs);
    for (int c = 0; c < program.chunks; ++c) {
      const double bytes = static_cast<double>(program.layers(c)) * per_layer;
      program.activation_offload_ps.push_back(engine::seconds_to_ps(offload_transfer_s(setup, bytes)));
    }
  }
}

}  // namespace

std::vector<StageProgram> build_stage_programs(const TrainingSetup& setup) {
  const auto& par = setup.workload.parallelism;
  const RankLayout layout(par, setup.placement);
  std::vector<StageProgram> programs;
  programs.reserve(static_cast<std::size_t>(par.pp));
  const models::TransformerForwardOps description = training_forward_ops(setup.workload);
  for (int p = 0; p < par.pp; ++p) {
    programs.push_back(build_stage_program(setup.workload, setup.compute, setup.collectives, layout, p, description));
    cost_offload(setup, programs.back());
  }
  return programs;
}

std::vector<int> placement_map(platform::Placement placement, int nodes, int per_node) {
  if (placement == platform::Placement::packed) return {};
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

TrainingSetup training_setup(const TrainingWorkload& workload, const platform::Platform& platform,
                             const platform::Allocation& allocation, const platform::SessionOptions& options) {
  TrainingSetup setup{workload, platform.compute(), platform.collectives(), platform.topology(), options.seed};
  setup.mode = options.mode;
  setup.accelerators = allocation.count;
  setup.compute_rate_while_communicating = platform.compute_rate_while_communicating();
  setup.memory = &platform.memory();
  setup.memory_pool = &platform.cluster().memory_pool;
  if (platform.has_speed_changes()) {
    for (int a = 0; a < platform.accelerator_count(); ++a) setup.accelerator_speed.push_back(platform.accelerator_speed(a));
  }
  const auto& network = platform.cluster().network;
  const int per_node = network.accelerators_per_node;
  const platform::Placement placement = platform.cluster().placement;
  if (placement == platform::Placement::scattered && (allocation.first % per_node != 0 || allocation.count % per_node != 0)) {
    throw ConfigError(fmt::format("cluster.placement 'scattered' needs the training job on whole nodes: it has {} "
                                  "accelerators from accelerator {}, with {} per node (the other jobs take the rest)",
                                  allocation.count, allocation.first, per_node));
  }
  // The round-robin stays inside the job's nodes.
  setup.placement = placement_map(placement, allocation.count / per_node, per_node);
  return setup;
}

}  // namespace clustersim::training
