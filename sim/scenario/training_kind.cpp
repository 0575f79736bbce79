// The training workload kind: its keys (`workload.*` when `kind: training`), declared once and
// bound to training::TrainingWorkload, and what they cannot say: the model lookup, dp's default,
// and the checks between the split, the model and the platform.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "models/llm/parallel_rules.hpp"
#include "models/llm/transformer_keys.hpp"
#include "models/llm/pipeline_split.hpp"
#include "sim/scenario/preset_readers.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/scenario/scenario_schema.hpp"
#include "sim/scenario/training_kind.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::scenario {
namespace {

using config::ConfigNode;
using config::Declarations;
using config::Dimension;
using config::member;
using config::Problems;
using training::MemoryOptions;
using training::OptimizerState;
using training::ParallelismConfig;
using training::TrainingWorkload;

Declarations<ParallelismConfig> parallelism_keys() {
  using P = ParallelismConfig;
  Declarations<P> keys;
  keys.integer("tp", &P::tp, "tensor parallel degree").range(1, 1e6);
  keys.integer("pp", &P::pp, "pipeline parallel stages").range(1, 1e6);
  keys.integer("dp", &P::dp, "data parallel replicas; unset: accelerators / (tp x pp x cp)").range(1, 1e9).optional();
  keys.integer("cp", &P::cp, "context parallel degree").range(1, 1e6);
  keys.integer("ep", &P::ep, "expert parallel degree").range(1, 1e6);
  keys.integer("vp", &P::vp, "virtual pipeline chunks per stage (interleaved schedule)").range(1, 1e6);
  keys.boolean("sequence_parallel", &P::sequence_parallel, "Megatron sequence parallelism");
  keys.enumeration("schedule", &P::schedule, training::pipeline_schedule_names(), "pipeline schedule");
  keys.integer("zero", &P::zero, "ZeRO stage").range(0, 3);
  keys.enumeration("zero3_granularity", &P::zero3_granularity, training::zero3_granularity_names(),
                   "what ZeRO-3 all-gathers and reduce-scatters at a time: layer = a whole layer (FSDP units, "
                   "Megatron-FSDP); tensor = each parameter tensor on its own (DeepSpeed stage 3 as of 2021), one "
                   "collective's latency each");
  keys.boolean("zero3_list_gathers", &P::zero3_list_gathers,
               "ZeRO-3 parameter all-gathers return one tensor per rank (PyTorch's list-form all_gather, DeepSpeed "
               "stage 3 in 2021): one copy kernel per rank after each gather");
  keys.integer_list("stage_layers", &P::stage_layers, "layers of a pipeline stage", 1, 1e6,
                    "transformer layers of each pipeline stage, integers >= 1 summing to the model's layers (e.g. "
                    "fewer on the first and last stage, which also hold the embedding and LM head): pp counts, one "
                    "per stage (interleaved: each divisible by vp, split evenly over the stage's chunks), or, "
                    "interleaved, pp x vp counts, one per virtual stage (chunk c of stage p is entry c x pp + p); "
                    "unset: an even split");
  return keys;
}

Declarations<TrainingWorkload> memory_keys() {
  Declarations<MemoryOptions> memory;
  memory.quantity("workspace", &MemoryOptions::workspace_bytes, Dimension::bytes,
                  "per device: CUDA context, cuBLAS workspace, NCCL buffers");
  memory.number("fragmentation", &MemoryOptions::fragmentation, "caching-allocator reserved / allocated").range(1, 10);
  memory.number("zero3_max_live_parameters", &MemoryOptions::zero3_max_live_parameters,
                "ZeRO-3: cap on gathered parameters live at once, prefetch included; the module computed is held "
                "whole even above it (DeepSpeed stage3_max_live_parameters)")
      .range(0, 1e15);
  memory.number("zero3_prefetch_bucket_parameters", &MemoryOptions::zero3_prefetch_bucket_parameters,
                "ZeRO-3: parameters prefetched ahead (DeepSpeed stage3_prefetch_bucket_size)")
      .range(0, 1e15);
  memory.number("zero3_reduce_bucket_parameters", &MemoryOptions::zero3_reduce_bucket_parameters,
                "ZeRO-3: gradient elements reduce-scattered at once (DeepSpeed reduce_bucket_size)")
      .range(0, 1e15);
  Declarations<TrainingWorkload> offload;
  offload.boolean("optimizer", member(&TrainingWorkload::memory, &MemoryOptions::offload_optimizer),
                  "optimizer state in host memory, streamed over the host link");
  offload.boolean("activations", member(&TrainingWorkload::memory, &MemoryOptions::offload_activations),
                  "stored activations in host memory");
  offload.enumeration("target", member(&TrainingWorkload::memory, &MemoryOptions::offload_target),
                      training::offload_target_names(),
                      "where the state goes: host (the accelerator's memory.host_*), or pool (cluster.memory_pool, its "
                      "port shared by the job's accelerators attached to it)");
  Declarations<OptimizerState> optimizer;
  optimizer.enumeration("master_weights", &OptimizerState::master_bytes,
                        config::NameTable<double>("master weights", {{"fp32", 4.0}, {"remainders", 2.0}, {"none", 0.0}}),
                        "the weights the update is applied to: fp32 = a separate fp32 copy (Megatron-Core's distributed "
                        "optimizer); remainders = the 16-bit remainders that make it with the bf16 parameter (Apex "
                        "DistributedFusedAdam store_param_remainders: NeMo with an fp32 optimizer and a bf16 model); "
                        "none = the working parameters themselves (NeMo's optim.dtype equal to the model's)");
  optimizer.enumeration("moments", &OptimizerState::moment_bytes,
                        config::NameTable<double>("moment dtype", {{"fp32", 4.0}, {"bf16", 2.0}}),
                        "Adam's m and v (NeMo optim.dtype; Megatron-Core --exp-avg-dtype / --exp-avg-sq-dtype)");
  Declarations<TrainingWorkload> keys;
  keys.object("optimizer", &TrainingWorkload::optimizer, optimizer,
              "the optimizer state per parameter of its shard (device memory, checkpoint size, the optimizer step's "
              "memory traffic)");
  keys.object("offload", offload, "host-memory offloading (needs the accelerator's memory.host_bandwidth)");
  keys.object("memory", &TrainingWorkload::memory, memory, "device-memory overheads of the footprint check");
  return keys;
}

Declarations<TrainingWorkload> declare_training_keys() {
  using W = TrainingWorkload;
  Declarations<models::MoeRuntime> moe;
  moe.number("capacity_factor", &models::MoeRuntime::capacity_factor,
             "tokens an expert accepts = capacity_factor x tokens x top-k / experts (per routing rank, "
             "Megatron-Core); the rest are dropped; 0: no capacity, dropless")
      .range(0, 1e6);
  moe.number("imbalance", &models::MoeRuntime::imbalance,
             "busiest expert's tokens / mean tokens per expert (>= 1, at most experts / top-k); the busiest "
             "expert-parallel rank sets the pace")
      .range(1, 1e6);
  Declarations<W> keys;
  keys.declare(config::string_or_object_field("model", models::transformer_keys().fields(),
                                              "model name (the scenario's `models:` map, then the library) or inline "
                                              "Hugging Face fields"))
      .need();
  keys.integer("seq_len", &W::seq_len, "tokens per sequence").range(1, 1e9).need();
  keys.integer("global_batch", &W::global_batch, "sequences per optimizer step").range(1, 1e12).need();
  keys.integer("micro_batch", &W::micro_batch, "sequences per micro-batch").range(1, 1e9);
  keys.enumeration("precision", &W::precision, models::dtype_names().only({"fp32", "tf32", "bf16", "fp16", "fp8"}),
                   "math precision");
  keys.object("parallelism", &W::parallelism, parallelism_keys(), "parallel split");
  keys.enumeration("recompute", &W::recompute, training::recompute_names(),
                   "activation recomputation: none; selective = Megatron's (attention core); full = each layer from "
                   "its input; op = torchtitan's per-op policy (saves attention and every other matmul output)");
  keys.enumeration("framework", &W::framework, training::training_framework_names(),
                   "whose memory conventions the footprint follows: megatron (Megatron-Core / NeMo: Transformer "
                   "Engine fp8 weight caching, fused vocab-parallel cross-entropy) or torchtitan (FSDP2, torchao "
                   "Float8 casts per use, cross_entropy on fp32 logits); kernels are costed alike");
  keys.enumeration("cross_entropy", &W::cross_entropy, training::cross_entropy_names(),
                   "the loss kernel, for the last stage's memory (per logit: saved for the backward + live while "
                   "the loss runs): auto = the framework's (megatron: fused, torchtitan: eager); fused = Megatron's "
                   "vocab-parallel kernel (4 + 2 B); eager = PyTorch cross_entropy(logits.float()) (4 + 8 B); "
                   "compiled = the same under torch.compile, as torchtitan runs it with compile on (2 + 2 B)");
  keys.enumeration("attention", &W::attention, training::attention_kernel_names(),
                   "attention kernel: flash = the fused family the accelerator preset names (attention.kernel); fa2 / "
                   "fa3 / cudnn / fa4 / fused_sdpa / pallas = that fused family, which must run on the accelerator's "
                   "matrix path (docs/models.md \"Fused attention\"); unfused = score matrix through HBM");
  keys.boolean("overlap_grad_reduce", &W::overlap_grad_reduce, "DP gradient reduction overlaps backward");
  keys.boolean("tp_comm_overlap", &W::tp_comm_overlap,
               "Transformer Engine TP-communication overlap with its default userbuffer methods: ring-exchange "
               "all-gathers, pipelined forward reduce-scatters (4 splits), bulk backward overlap (needs sequence "
               "parallelism; docs/models.md)");
  keys.boolean("tp_async_backward", &W::tp_async_backward,
               "Megatron's asynchronous backward TP communication: a column-parallel linear's input-gradient "
               "all-reduce (reduce-scatter with sequence parallelism) runs beside its weight-gradient GEMM "
               "(Megatron-LM since 2022); false: after it (Megatron-LM 2021, Megatron-DeepSpeed)");
  keys.number("train_tokens", &W::train_tokens,
              "tokens of a whole training run (e.g. 15e12): the report adds its steps, days, GPU-hours, energy and "
              "cost; unset: not reported")
      .positive()
      .optional();
  keys.enumeration("gradient_reduce_dtype", &W::grad_bytes_per_param,
                   config::NameTable<double>("gradient reduce dtype", {{"bf16", 2.0}, {"fp32", 4.0}}),
                   "gradient element type in the DP reduction");
  keys.object("moe", &W::moe, moe, "mixture-of-experts routing (MoE models only)");
  keys.boolean("fp8_params", &W::fp8_params,
               "FP8 primary weights (Megatron-Core --fp8-param-gather, NeMo fp8_params): the layers' weights are "
               "kept only in fp8 and the distributed optimizer all-gathers them as fp8 (needs precision fp8)");
  keys.number("dropout", &W::dropout,
              "the run's hidden and attention dropout probability (Megatron-LM default 0.1); unset: the model's "
              "hidden_dropout / attention_dropout. Only stored masks (memory) depend on it")
      .range(0, 0.999)
      .optional();
  keys.quantity("host_op_time", &W::host_op_time, config::Dimension::seconds,
                "host time to dispatch one op (framework Python, dispatcher, kernel launch): each rank's host runs "
                "ahead of its device and a kernel starts no earlier than the host has issued it; the device waits " +
                fmt::format("where the host falls behind (breakdown.exposed_host_s). Unset: the framework's ({:.0f} "
                            "us, plain PyTorch eager measured on an H200 host; docs/models.md \"Host dispatch\"); 0: "
                            "the host never gates",
                            training::kFrameworkHostOpTimeS * 1e6))
      .range(0, 1)
      .optional();
  keys.boolean("enforce_memory_fit", &W::enforce_memory_fit,
               "a footprint over the accelerator's memory is an error before anything runs; false: simulate it "
               "anyway and report the overflow (memory.over_capacity_bytes, a note)");
  keys.splice(memory_keys());
  return keys;
}

/// Reports a broken rule of models/llm/parallel_rules.hpp at its key (relative to the workload).
void report(const WorkloadReadContext& c, const std::optional<config::RuleProblem>& problem) {
  if (problem) c.problems.add(c.position(problem->key), c.key(problem->key), problem->message);
}

/// tp x pp x dp x cp against the accelerators the workload gets.
void check_world_size(const WorkloadReadContext& c, const TrainingWorkload& w) {
  const auto& par = w.parallelism;
  if (!c.platform_ok || c.accelerators < 0 ||
      c.problems.any_bad(c.key("parallelism.tp"), c.key("parallelism.pp"), c.key("parallelism.dp"),
                         c.key("parallelism.cp"), "cluster.nodes", "cluster.node.per_node")) {
    return;
  }
  const std::int64_t world = static_cast<std::int64_t>(par.tp) * par.pp * par.cp * par.dp;
  const int all = c.platform.cluster.accelerator_count();
  if (world == c.accelerators) return;
  const std::string key = c.has("parallelism.dp") ? "parallelism.dp" : "parallelism.tp";
  c.problems.add(c.position(key), c.key(key),
                 "tp x pp x dp x cp = " + std::to_string(par.tp) + " x " + std::to_string(par.pp) + " x " +
                     std::to_string(par.dp) + " x " + std::to_string(par.cp) + " = " + std::to_string(world) +
                     ", but the cluster has " + std::to_string(c.accelerators) + " accelerators (" +
                     std::to_string(c.platform.cluster.network.nodes) + " nodes x " +
                     std::to_string(c.platform.cluster.network.accelerators_per_node) +
                     (all > c.accelerators ? " - " + std::to_string(all - c.accelerators) + " of the jobs" : "") +
                     ")");
}

/// Checks between the split and the model.
void check_split(const WorkloadReadContext& c, const TrainingWorkload& w, const ConfigNode* model_entry,
                 const std::string& model_path) {
  const auto& par = w.parallelism;
  const auto& model = w.model;
  Problems& problems = c.problems;
  if (model.attention == models::AttentionKind::mha && model.hidden_size % model.num_attention_heads != 0) {
    problems.add(model_entry->find("hidden_size")->position, model_path + ".hidden_size",
                 "hidden_size " + std::to_string(model.hidden_size) + " is not divisible by num_attention_heads " +
                     std::to_string(model.num_attention_heads));
  }
  if (!problems.bad(c.key("parallelism.tp"))) report(c, models::tensor_parallel_problem(model, par.tp));
  const std::string pp = c.key("parallelism.pp"), vp = c.key("parallelism.vp"), key = c.key("parallelism.stage_layers");
  if (!problems.any_bad(pp, vp, key)) {
    const int chunks = par.schedule == training::PipelineSchedule::interleaved ? par.vp : 1;
    try {
      (void)models::PipelineSplit(model.num_hidden_layers, par.pp, chunks, par.stage_layers);
    } catch (const ConfigError& e) {
      // An even split that does not divide is pp's (or vp's) fault; a listed split, its own.
      const char* where = c.has("parallelism.stage_layers")                           ? "parallelism.stage_layers"
                          : c.has("parallelism.pp") || !c.has("parallelism.vp") ? "parallelism.pp"
                                                                                  : "parallelism.vp";
      problems.add(c.position(where), c.key(where), e.what());
    }
  }
}

/// Checks between the workload's own keys (and the model's experts).
void check_options(const WorkloadReadContext& c, const TrainingWorkload& w, bool model_ok) {
  const auto& par = w.parallelism;
  Problems& problems = c.problems;
  const auto bad = [&](auto... keys) { return problems.any_bad(c.key(keys)...); };
  if (!bad("parallelism.dp", "micro_batch", "global_batch", "parallelism.tp", "parallelism.pp", "parallelism.cp")) {
    report(c, models::batch_split_problem(w.global_batch, par.dp, w.micro_batch));
  }
  if (!bad("parallelism.cp", "seq_len")) report(c, models::context_parallel_problem(w.seq_len, par.cp));
  if (!bad("parallelism.vp", "parallelism.schedule")) {
    report(c, models::virtual_pipeline_problem(par.vp, training::pipeline_schedule_names().name(par.schedule),
                                               par.schedule == training::PipelineSchedule::interleaved));
  }
  if (w.fp8_params && w.precision != models::Dtype::fp8 && !bad("precision")) {
    problems.add(c.position("fp8_params"), c.key("fp8_params"),
                 "fp8_params keeps the weights in fp8, which needs precision: fp8 (the workload's precision is " +
                     std::string(models::dtype_name(w.precision)) + ")");
  }
  if (w.tp_comm_overlap && par.tp > 1 && !par.sequence_parallel && !bad("parallelism.tp")) {
    problems.add(c.position("tp_comm_overlap"), c.key("tp_comm_overlap"),
                 "tp_comm_overlap needs sequence parallelism (workload.parallelism.sequence_parallel: true), as in "
                 "Megatron-Core");
  }
  if (model_ok && !bad("parallelism.ep", "parallelism.dp", "parallelism.cp")) {
    report(c, models::expert_parallel_problem(w.model, par.ep, par.dp, par.cp));
  }
  if (model_ok && !bad("recompute")) report(c, models::recompute_policy_problem(w.model, w.recompute));
  if (c.has("moe") && !bad("moe") && model_ok) {
    if (!w.model.is_moe()) {
      problems.add(c.position("moe"), c.key("moe"),
                   "workload.moe applies only to mixture-of-experts models; model '" + w.model.name +
                       "' has no experts");
    } else {
      try {
        w.moe.validate(w.model.moe);
      } catch (const ConfigError& e) {
        problems.add(c.position("moe.imbalance"), c.key("moe.imbalance"), e.what());
      }
    }
  }
}

/// Checks between the workload and the platform it runs on.
/// The op classes of a training step whose time has no measurement on the accelerator
/// (notice_roofline_estimates): the layers' GEMMs in the training precision (and bf16 for the
/// ones fp8 / fp4 leave unquantised), fused attention in its format and family.
void notice_training_estimates(const WorkloadReadContext& c, const TrainingWorkload& w) {
  const models::AcceleratorSpec& accelerator = c.platform.cluster.accelerator;
  const bool low_precision = w.precision == models::Dtype::fp8 || w.precision == models::Dtype::fp4;
  std::vector<CostedOpClass> classes{{models::OpClass::gemm, w.precision, std::nullopt}};
  if (low_precision) classes.push_back({models::OpClass::gemm, models::Dtype::bf16, std::nullopt});
  if (w.attention != training::AttentionKernel::unfused) {
    classes.push_back({models::OpClass::attention, low_precision ? models::Dtype::bf16 : w.precision,
                       training::explicit_family(w.attention).value_or(accelerator.attention_kernel)});
  }
  notice_roofline_estimates(c, accelerator, classes);
}

void check_platform(const WorkloadReadContext& c, const TrainingWorkload& w) {
  if (!c.platform_ok) return;
  Problems& problems = c.problems;
  const models::AcceleratorSpec& accelerator = c.platform.cluster.accelerator;
  if (!problems.bad(c.key("precision")) && !accelerator.peak_flops_per_s.count(w.precision)) {
    std::string available;
    for (const auto& [dtype, peak] : accelerator.peak_flops_per_s) {
      available += (available.empty() ? "" : ", ") + std::string(models::dtype_name(dtype));
    }
    const std::string precision(models::dtype_name(w.precision));
    problems.add(c.position("precision"), c.key("precision"),
                 "precision " + precision + " needs a " + precision + " peak, but accelerator '" + accelerator.name +
                     "' has none (it has: " + available + ")");
  }
  const bool offloads = w.memory.offload_optimizer || w.memory.offload_activations;
  const auto& levels = c.platform.cluster.memory_levels;
  const bool has_host = std::any_of(levels.begin(), levels.end(),
                                    [](const models::MemoryLevel& l) { return l.kind == models::MemoryLevelKind::host; });
  const bool to_pool = w.memory.offload_target == training::OffloadTarget::pool;
  c.warn_unless(offloads, "offload.target", "neither offload.optimizer nor offload.activations is on");
  if (offloads && to_pool && !c.platform.cluster.memory_pool.on()) {
    problems.add(c.position("offload.target"), c.key("offload.target"),
                 "offload.target: pool needs a memory pool, and cluster.memory_pool sets none",
                 "set cluster.memory_pool {accelerators, capacity, bandwidth, link_bandwidth}, or target: host");
  }
  if (offloads && !to_pool && !has_host) {
    const char* key = w.memory.offload_optimizer ? "offload.optimizer" : "offload.activations";
    problems.add(c.position(key), c.key(key),
                 "offloading needs host memory, but accelerator '" + accelerator.name +
                     "' sets no memory.host_capacity and memory.host_bandwidth");
  }
  const std::optional<models::AttentionKernelFamily> family = training::explicit_family(w.attention);
  if (family && !problems.bad(c.key("attention")) &&
      !models::runs_on(*family, accelerator.matrix_path)) {
    problems.add(c.position("attention"), c.key("attention"),
                 "attention kernel family " + std::string(models::attention_kernel_family_name(*family)) +
                     " does not run on accelerator '" + accelerator.name + "' (matrix path " +
                     std::string(models::matrix_path_name(accelerator.matrix_path)) +
                     "); families that run there: " + models::families_on_text(accelerator.matrix_path));
  } else {
    notice_training_estimates(c, w);
  }
  if (!c.platform.cluster.stragglers.nodes.empty() && c.simulation.mode != platform::SimulationMode::full &&
      !problems.bad("simulation.mode")) {
    problems.add(config::position_of(c.root, "cluster.stragglers"), "cluster.stragglers",
                 "stragglers need simulation.mode: full (symmetric mode simulates one representative rank per "
                 "stage, which cannot be slower than its replicas)");
  }
  if (!c.platform.cluster.network.scale_out.faults.empty() && c.simulation.fidelity != platform::Fidelity::flow &&
      !problems.any_bad("simulation.fidelity", "cluster.network.faults")) {
    problems.add(config::position_of(c.root, "cluster.network.faults"), "cluster.network.faults",
                 "degraded and failed links need simulation.fidelity: flow (the analytical fidelity costs each "
                 "collective in closed form on intact links: it cannot stall, reroute or share a degraded link)");
  }
}

/// Variability, straggler and failure keys that the rest of the scenario leaves without effect.
void warn_ineffective_faults(const WorkloadReadContext& c) {
  if (c.path != "workload") return;
  const platform::Stragglers& stragglers = c.platform.cluster.stragglers;
  const bool random = c.simulation.variability.any() || (c.platform_ok && stragglers.probability > 0);
  if (!random) {
    warn_no_effect(c.root, c.problems, "simulation.iterations",
                   "nothing is drawn (no simulation.variability, no cluster.stragglers.probability): every "
                   "iteration would be the nominal step");
  }
  warn_idle_fault_settings(c.root, c.problems, c.simulation, c.platform_ok ? &stragglers : nullptr,
                           "no goodput is computed");
}

/// Keys a scenario writes that the rest of it makes ineffective: warnings (the result's notes),
/// never silently ignored.
void warn_ineffective(const WorkloadReadContext& c, const TrainingWorkload& w) {
  const auto& par = w.parallelism;
  const std::string tp_why = "parallelism.tp is 1, so there are no tensor-parallel collectives";
  for (const char* key : {"tp_comm_overlap", "tp_async_backward", "parallelism.sequence_parallel"}) {
    c.warn_unless(par.tp > 1 || c.problems.bad(c.key("parallelism.tp")), key, tp_why);
  }
  const bool data_parallel = par.dp * par.cp > 1;
  c.warn_unless(data_parallel || c.problems.bad(c.key("parallelism.dp")), "overlap_grad_reduce",
                "dp x cp is 1, so there is no gradient reduction");
  c.warn_unless(!data_parallel || par.zero <= 1, "overlap_grad_reduce",
                "ZeRO " + std::to_string(par.zero) + " reduce-scatters every micro-batch's gradients during its "
                "backward");
  const std::string zero_why = "parallelism.zero is " + std::to_string(par.zero) + "; only ZeRO 3 reads it";
  for (const char* key : {"parallelism.zero3_granularity", "parallelism.zero3_list_gathers",
                          "memory.zero3_max_live_parameters", "memory.zero3_prefetch_bucket_parameters",
                          "memory.zero3_reduce_bucket_parameters"}) {
    c.warn_unless(par.zero == 3 || c.problems.bad(c.key("parallelism.zero")), key, zero_why);
  }
  warn_ineffective_faults(c);
  if (c.platform_ok && !(c.platform.cluster.accelerator.tdp_w > c.platform.cluster.accelerator.idle_w)) {
    warn_no_effect(c.root, c.problems, "power.apply_throttling",
                   "accelerator '" + c.platform.cluster.accelerator.name +
                       "' has no power.tdp, so there is no throttle factor to apply");
  }
}

/// What the declarations cannot say: the model, dp's default, the checks.
void complete_training(const WorkloadReadContext& c, TrainingWorkload& w) {
  std::string model_path, model_name;
  const ConfigNode* model_entry = find_model(c, model_path, model_name);
  if (model_entry != nullptr) w.model = read_model(*model_entry, model_path, model_name, c.problems);
  if (w.dropout >= 0) w.model.hidden_dropout = w.model.attention_dropout = w.dropout;
  const bool model_ok = model_entry != nullptr && !c.problems.bad(model_path) && w.model.num_attention_heads > 0 &&
                        w.model.num_key_value_heads > 0 && w.model.num_hidden_layers > 0;
  auto& par = w.parallelism;
  if (!c.has("parallelism.dp")) {
    const std::int64_t model_split = static_cast<std::int64_t>(par.tp) * par.pp * par.cp;
    par.dp = static_cast<int>(std::max<std::int64_t>(1, c.accelerators / std::max<std::int64_t>(1, model_split)));
  }
  check_world_size(c, w);
  if (model_ok) check_split(c, w, model_entry, model_path);
  check_options(c, w, model_ok);
  check_platform(c, w);
  warn_ineffective(c, w);
}

}  // namespace

/// The model the workload names (the scenario's `models:` map, then the library) or defines
/// inline; nullptr (with a problem) when there is none.
const ConfigNode* find_model(const WorkloadReadContext& c, std::string& model_path, std::string& model_name) {
  const ConfigNode* model_node = c.root.find_path(c.key("model"));
  model_path = c.key("model");
  model_name = "inline";
  if (model_node != nullptr && model_node->is_mapping()) return model_node;
  if (model_node == nullptr || !model_node->is_scalar()) return nullptr;
  model_name = model_node->text;
  model_path = "models." + model_name;
  const ConfigNode* models_map = c.root.find("models");
  const ConfigNode* entry = models_map != nullptr && models_map->is_mapping() ? models_map->find(model_name) : nullptr;
  if (entry == nullptr) {
    std::vector<std::string> names = library_names(LibraryKind::models, c.data_dir);
    if (models_map != nullptr && models_map->is_mapping()) {
      for (const auto& key : models_map->keys()) names.push_back(key);
    }
    c.problems.add(model_node->position, c.key("model"), "unknown model '" + model_name + "'",
                   unknown_name_hint(model_name, names));
  }
  return entry;
}

const Declarations<TrainingWorkload>& training_keys() {
  static const Declarations<TrainingWorkload> keys = declare_training_keys();
  return keys;
}

WorkloadKind training_workload_kind() {
  WorkloadKind kind = declared_workload_kind<TrainingWorkload>(
      "training", "one optimizer step of a data/tensor/pipeline/context/expert-parallel training job",
      training_keys(), complete_training);
  // Its rank layout starts at accelerator 0: it is the primary workload, the jobs take the rest.
  kind.can_be_job = false;
  return kind;
}

}  // namespace clustersim::scenario
