// The training workload kind: its keys (`workload.*` when `kind: training`) and their reading
// into a training::TrainingWorkload, with the checks between them and the platform.
#include <algorithm>
#include <string>

#include "models/llm/pipeline_split.hpp"
#include "sim/scenario/preset_readers.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/scenario/scenario_schema.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::scenario {

using config::ConfigNode;
using config::Dimension;
using config::Field;
using config::Problems;
using config::SchemaReader;
using config::boolean_field;
using config::enum_field;
using config::integer_field;
using config::list_field;
using config::number_field;
using config::object_field;
using config::parse_integer;
using config::quantity_field;
using config::string_or_object_field;
namespace {

std::vector<Field> training_fields() {
  std::vector<Field> parallelism_fields{
      integer_field("tp", "tensor parallel degree").range(1, 1e6).def("1"),
      integer_field("pp", "pipeline parallel stages").range(1, 1e6).def("1"),
      integer_field("dp", "data parallel replicas; unset: accelerators / (tp x pp x cp)").range(1, 1e9),
      integer_field("cp", "context parallel degree").range(1, 1e6).def("1"),
      integer_field("ep", "expert parallel degree").range(1, 1e6).def("1"),
      integer_field("vp", "virtual pipeline chunks per stage (interleaved schedule)").range(1, 1e6).def("1"),
      boolean_field("sequence_parallel", "Megatron sequence parallelism").def("true"),
      enum_field("schedule", {"1f1b", "gpipe", "interleaved"}, "pipeline schedule").def("1f1b"),
      integer_field("zero", "ZeRO stage").range(0, 3).def("1"),
      enum_field("zero3_granularity", {"layer", "tensor"},
                 "what ZeRO-3 all-gathers and reduce-scatters at a time: layer = a whole layer (FSDP units, "
                 "Megatron-FSDP); tensor = each parameter tensor on its own (DeepSpeed stage 3 as of 2021), "
                 "one collective's latency each")
          .def("layer"),
      boolean_field("zero3_list_gathers",
                    "ZeRO-3 parameter all-gathers return one tensor per rank (PyTorch's list-form all_gather, "
                    "DeepSpeed stage 3 in 2021): one copy kernel per rank after each gather")
          .def("false"),
      list_field("stage_layers",
                 "transformer layers of each pipeline stage, integers >= 1 summing to the model's layers (e.g. "
                 "fewer on the first and last stage, which also hold the embedding and LM head): pp counts, one "
                 "per stage (interleaved: each divisible by vp, split evenly over the stage's chunks), or, "
                 "interleaved, pp x vp counts, one per virtual stage (chunk c of stage p is entry c x pp + p); "
                 "unset: an even split"),
  };
  return {
      string_or_object_field("model", model_fields(),
                             "model name (the scenario's `models:` map, then the library) or inline "
                             "Hugging Face fields")
          .need(),
      integer_field("seq_len", "tokens per sequence").range(1, 1e9).need(),
      integer_field("global_batch", "sequences per optimizer step").range(1, 1e12).need(),
      integer_field("micro_batch", "sequences per micro-batch").range(1, 1e9).def("1"),
      enum_field("precision", {"fp32", "tf32", "bf16", "fp16", "fp8"}, "math precision").def("bf16"),
      object_field("parallelism", parallelism_fields, "parallel split"),
      enum_field("recompute", {"none", "selective", "full"}, "activation recomputation").def("selective"),
      enum_field("attention", {"flash", "fa2", "fa3", "cudnn", "unfused"},
                 "attention kernel: flash = the fused family the accelerator preset names (attention.kernel); "
                 "fa2 / fa3 / cudnn = that fused family (docs/models.md \"Fused attention\"); unfused = score "
                 "matrix through HBM")
          .def("flash"),
      boolean_field("overlap_grad_reduce", "DP gradient reduction overlaps backward").def("true"),
      boolean_field("tp_comm_overlap",
                    "Transformer Engine TP-communication overlap with its default userbuffer methods: ring-exchange "
                    "all-gathers, pipelined forward reduce-scatters (4 splits), bulk backward overlap (needs "
                    "sequence parallelism; docs/models.md)")
          .def("false"),
      boolean_field("tp_async_backward",
                    "Megatron's asynchronous backward TP communication: a column-parallel linear's input-gradient "
                    "all-reduce (reduce-scatter with sequence parallelism) runs beside its weight-gradient GEMM "
                    "(Megatron-LM since 2022); false: after it (Megatron-LM 2021, Megatron-DeepSpeed)")
          .def("true"),
      number_field("train_tokens",
                   "tokens of a whole training run (e.g. 15e12): the report adds its steps, days, GPU-hours, "
                   "energy and cost; unset: not reported")
          .positive(),
      enum_field("gradient_reduce_dtype", {"bf16", "fp32"}, "gradient element type in the DP reduction")
          .def("bf16"),
      object_field("moe",
                   {number_field("capacity_factor",
                                 "tokens an expert accepts = capacity_factor x tokens x top-k / experts (per "
                                 "routing rank, Megatron-Core); the rest are dropped; 0: no capacity, dropless")
                        .range(0, 1e6)
                        .def("0"),
                    number_field("imbalance",
                                 "busiest expert's tokens / mean tokens per expert (>= 1, at most experts / "
                                 "top-k); the busiest expert-parallel rank sets the pace")
                        .range(1, 1e6)
                        .def("1")},
                   "mixture-of-experts routing (MoE models only)"),
      object_field("offload",
                   {boolean_field("optimizer", "optimizer state in host memory, streamed over the host link")
                        .def("false"),
                    boolean_field("activations", "stored activations in host memory").def("false")},
                   "host-memory offloading (needs the accelerator's memory.host_bandwidth)"),
      object_field("memory",
                   {quantity_field("workspace", Dimension::bytes,
                                   "per device: CUDA context, cuBLAS workspace, NCCL buffers")
                        .def("1 GiB"),
                    number_field("fragmentation", "caching-allocator reserved / allocated").range(1, 10).def("1.1"),
                    number_field("zero3_max_live_parameters",
                                 "ZeRO-3: cap on gathered parameters live at once, prefetch included; the module "
                                 "computed is held whole even above it (DeepSpeed stage3_max_live_parameters)")
                        .range(0, 1e15)
                        .def("1e9"),
                    number_field("zero3_prefetch_bucket_parameters",
                                 "ZeRO-3: parameters prefetched ahead (DeepSpeed stage3_prefetch_bucket_size)")
                        .range(0, 1e15)
                        .def("5e8"),
                    number_field("zero3_reduce_bucket_parameters",
                                 "ZeRO-3: gradient elements reduce-scattered at once (DeepSpeed reduce_bucket_size)")
                        .range(0, 1e15)
                        .def("5e8")},
                   "device-memory overheads of the footprint check"),
  };
}

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

/// The parallel split; dp, when unset, fills the accelerators the others leave.
void read_parallelism(const WorkloadReadContext& c, training::ParallelismConfig& par) {
  const SchemaReader& reader = c.reader;
  const std::string base = c.key("parallelism.");
  const auto degree = [&](const char* key) { return static_cast<int>(reader.integer(base + key).value_or(1)); };
  par.tp = degree("tp");
  par.pp = degree("pp");
  par.cp = degree("cp");
  par.ep = degree("ep");
  par.vp = degree("vp");
  par.zero = static_cast<int>(reader.integer(base + "zero").value_or(1));
  par.zero3_granularity = reader.string(base + "zero3_granularity").value_or("layer") == "tensor"
                              ? training::Zero3Granularity::tensor
                              : training::Zero3Granularity::layer;
  par.zero3_list_gathers = reader.boolean(base + "zero3_list_gathers").value_or(false);
  par.sequence_parallel = reader.boolean(base + "sequence_parallel").value_or(true);
  const std::string stage_layers_key = base + "stage_layers";
  if (const ConfigNode* list = reader.node(stage_layers_key); list != nullptr && !c.problems.bad(stage_layers_key)) {
    const std::vector<ConfigNode> items = list->is_sequence() ? list->items : std::vector<ConfigNode>{*list};
    for (const ConfigNode& item : items) {
      const std::optional<std::int64_t> layers = parse_integer(item.text);
      if (!layers || *layers < 1 || *layers > 1000000) {
        c.problems.add(item.position, stage_layers_key,
                       "layers of a pipeline stage must be an integer in [1, 1000000], got " + item.describe());
      } else {
        par.stage_layers.push_back(static_cast<int>(*layers));
      }
    }
  }
  const std::string schedule = reader.string(base + "schedule").value_or("1f1b");
  par.schedule = schedule == "gpipe"         ? training::PipelineSchedule::gpipe
                 : schedule == "interleaved" ? training::PipelineSchedule::interleaved
                                             : training::PipelineSchedule::one_f_one_b;
  const std::int64_t model_split = static_cast<std::int64_t>(par.tp) * par.pp * par.cp;
  par.dp = reader.has(base + "dp") ? degree("dp")
                                   : static_cast<int>(std::max<std::int64_t>(
                                         1, c.accelerators / std::max<std::int64_t>(1, model_split)));
}

/// The workload's own keys (model and parallelism aside).
void read_options(const WorkloadReadContext& c, training::TrainingWorkload& w) {
  const SchemaReader& reader = c.reader;
  w.seq_len = reader.integer(c.key("seq_len")).value_or(0);
  w.global_batch = reader.integer(c.key("global_batch")).value_or(0);
  w.micro_batch = reader.integer(c.key("micro_batch")).value_or(1);
  w.precision = models::parse_dtype(reader.string(c.key("precision")).value_or("bf16"));  // schema-checked
  const std::string recompute = reader.string(c.key("recompute")).value_or("selective");
  w.recompute = recompute == "none"   ? training::Recompute::none
                : recompute == "full" ? training::Recompute::full
                                      : training::Recompute::selective;
  const std::string attention = reader.string(c.key("attention")).value_or("flash");  // schema-checked
  w.attention = attention == "unfused" ? training::AttentionKernel::unfused
                : attention == "fa2"   ? training::AttentionKernel::fa2
                : attention == "fa3"   ? training::AttentionKernel::fa3
                : attention == "cudnn" ? training::AttentionKernel::cudnn
                                       : training::AttentionKernel::flash;
  w.overlap_grad_reduce = reader.boolean(c.key("overlap_grad_reduce")).value_or(true);
  w.tp_comm_overlap = reader.boolean(c.key("tp_comm_overlap")).value_or(false);
  w.tp_async_backward = reader.boolean(c.key("tp_async_backward")).value_or(true);
  w.train_tokens = reader.number(c.key("train_tokens")).value_or(0);
  w.grad_bytes_per_param = reader.string(c.key("gradient_reduce_dtype")).value_or("bf16") == "fp32" ? 4 : 2;
  w.moe.capacity_factor = reader.number(c.key("moe.capacity_factor")).value_or(0.0);
  w.moe.imbalance = reader.number(c.key("moe.imbalance")).value_or(1.0);
  training::MemoryOptions& memory = w.memory;
  memory.offload_optimizer = reader.boolean(c.key("offload.optimizer")).value_or(false);
  memory.offload_activations = reader.boolean(c.key("offload.activations")).value_or(false);
  memory.workspace_bytes = reader.quantity(c.key("memory.workspace")).value_or(0.0);
  memory.fragmentation = reader.number(c.key("memory.fragmentation")).value_or(1.1);
  memory.zero3_max_live_parameters = reader.number(c.key("memory.zero3_max_live_parameters")).value_or(1e9);
  memory.zero3_prefetch_bucket_parameters = reader.number(c.key("memory.zero3_prefetch_bucket_parameters")).value_or(5e8);
  memory.zero3_reduce_bucket_parameters = reader.number(c.key("memory.zero3_reduce_bucket_parameters")).value_or(5e8);
}

/// Checks between the split, the model and the accelerators.
void check_split(const WorkloadReadContext& c, const training::TrainingWorkload& w, bool model_ok,
                 const ConfigNode* model_entry, const std::string& model_path) {
  const auto& par = w.parallelism;
  const auto& model = w.model;
  Problems& problems = c.problems;
  const std::string tp = c.key("parallelism.tp"), pp = c.key("parallelism.pp"), dp = c.key("parallelism.dp"),
                    cp = c.key("parallelism.cp"), vp = c.key("parallelism.vp");
  auto at = [&](const std::string& path) { return c.reader.position(path); };
  if (c.platform_ok && c.accelerators >= 0 && !problems.any_bad(tp, pp, dp, cp, "cluster.nodes", "cluster.node.per_node")) {
    const std::int64_t world = static_cast<std::int64_t>(par.tp) * par.pp * par.cp * par.dp;
    const int all = c.platform.cluster.accelerator_count();
    if (world != c.accelerators) {
      const std::string key = c.reader.has(dp) ? dp : tp;
      problems.add(at(key), key,
                   "tp x pp x dp x cp = " + std::to_string(par.tp) + " x " + std::to_string(par.pp) + " x " +
                       std::to_string(par.dp) + " x " + std::to_string(par.cp) + " = " + std::to_string(world) +
                       ", but the cluster has " + std::to_string(c.accelerators) + " accelerators (" +
                       std::to_string(c.platform.cluster.network.nodes) + " nodes x " +
                       std::to_string(c.platform.cluster.network.accelerators_per_node) +
                       (all > c.accelerators ? " - " + std::to_string(all - c.accelerators) + " of the jobs" : "") +
                       ")");
    }
  }
  if (!model_ok) return;
  if (model.attention == models::AttentionKind::mha && model.hidden_size % model.num_attention_heads != 0) {
    problems.add(model_entry->find("hidden_size")->position, model_path + ".hidden_size",
                 "hidden_size " + std::to_string(model.hidden_size) + " is not divisible by num_attention_heads " +
                     std::to_string(model.num_attention_heads));
  }
  if (!problems.bad(tp)) {
    if (model.num_attention_heads % par.tp != 0) {
      problems.add(at(tp), tp,
                   "num_attention_heads " + std::to_string(model.num_attention_heads) + " is not divisible by tp " +
                       std::to_string(par.tp));
    }
    if (model.num_key_value_heads % par.tp != 0 && par.tp % model.num_key_value_heads != 0) {
      problems.add(at(tp), tp,
                   "num_key_value_heads " + std::to_string(model.num_key_value_heads) + " and tp " +
                       std::to_string(par.tp) + " must divide one another");
    }
  }
  const std::string key = c.key("parallelism.stage_layers");
  if (!problems.any_bad(pp, vp, key)) {
    const int chunks = par.schedule == training::PipelineSchedule::interleaved ? par.vp : 1;
    try {
      (void)models::PipelineSplit(model.num_hidden_layers, par.pp, chunks, par.stage_layers);
    } catch (const ConfigError& e) {
      // An even split that does not divide is pp's (or vp's) fault; a listed split, its own.
      const std::string where = c.reader.has(key) ? key : c.reader.has(pp) || !c.reader.has(vp) ? pp : vp;
      problems.add(at(where), where, e.what());
    }
  }
}

/// Checks between the workload's own keys.
void check_options(const WorkloadReadContext& c, const training::TrainingWorkload& w, bool model_ok) {
  const auto& par = w.parallelism;
  const auto& model = w.model;
  Problems& problems = c.problems;
  const std::string tp = c.key("parallelism.tp"), pp = c.key("parallelism.pp"), dp = c.key("parallelism.dp"),
                    cp = c.key("parallelism.cp"), vp = c.key("parallelism.vp"), ep = c.key("parallelism.ep"),
                    sched = c.key("parallelism.schedule");
  auto at = [&](const std::string& path) { return c.reader.position(path); };
  if (!problems.any_bad(dp, c.key("micro_batch"), c.key("global_batch"), tp, pp, cp) && w.global_batch > 0 &&
      w.global_batch % (static_cast<std::int64_t>(par.dp) * w.micro_batch) != 0) {
    problems.add(at(c.key("global_batch")), c.key("global_batch"),
                 "global_batch " + std::to_string(w.global_batch) + " is not divisible by dp x micro_batch = " +
                     std::to_string(par.dp) + " x " + std::to_string(w.micro_batch));
  }
  if (!problems.any_bad(cp, c.key("seq_len")) && w.seq_len > 0) {
    const std::int64_t divisor = par.cp > 1 ? 2 * par.cp : 1;
    if (w.seq_len % divisor != 0) {
      problems.add(at(c.key("seq_len")), c.key("seq_len"),
                   "seq_len " + std::to_string(w.seq_len) + " is not divisible by 2 x cp = " + std::to_string(divisor) +
                       " (context parallelism splits each sequence into 2 x cp chunks)");
    }
  }
  if (!problems.any_bad(vp, sched)) {
    if (par.vp > 1 && par.schedule != training::PipelineSchedule::interleaved) {
      problems.add(at(vp), vp,
                   "vp = " + std::to_string(par.vp) + " needs schedule 'interleaved', got '" +
                       c.reader.string(sched).value_or("1f1b") + "'");
    } else if (par.vp == 1 && par.schedule == training::PipelineSchedule::interleaved) {
      problems.add(at(sched), sched, "schedule 'interleaved' needs vp > 1 (virtual pipeline chunks per stage)");
    }
  }
  if (w.tp_comm_overlap && par.tp > 1 && !par.sequence_parallel && !problems.bad(tp)) {
    problems.add(at(c.key("tp_comm_overlap")), c.key("tp_comm_overlap"),
                 "tp_comm_overlap needs sequence parallelism (workload.parallelism.sequence_parallel: true), as in "
                 "Megatron-Core");
  }
  if (!problems.bad(ep) && par.ep > 1 && model_ok) {
    if (!model.is_moe()) {
      problems.add(at(ep), ep,
                   "expert parallelism needs a mixture-of-experts model (ep = " + std::to_string(par.ep) +
                       "; model '" + model.name + "' sets no num_local_experts / n_routed_experts)");
    } else if (model.moe.num_experts % par.ep != 0) {
      problems.add(at(ep), ep,
                   "ep " + std::to_string(par.ep) + " does not divide the " + std::to_string(model.moe.num_experts) +
                       " experts of model '" + model.name + "'");
    } else if (!problems.any_bad(dp, cp) && (static_cast<std::int64_t>(par.dp) * par.cp) % par.ep != 0) {
      problems.add(at(ep), ep,
                   "ep " + std::to_string(par.ep) + " does not divide dp x cp = " + std::to_string(par.dp) + " x " +
                       std::to_string(par.cp) +
                       " (the expert-parallel group is carved out of the data-parallel ranks, as in Megatron-Core)");
    }
  }
  if (c.reader.has(c.key("moe")) && !problems.bad(c.key("moe")) && model_ok) {
    if (!model.is_moe()) {
      problems.add(at(c.key("moe")), c.key("moe"),
                   "workload.moe applies only to mixture-of-experts models; model '" + model.name +
                       "' has no experts");
    } else {
      try {
        w.moe.validate(model.moe);
      } catch (const ConfigError& e) {
        problems.add(at(c.key("moe.imbalance")), c.key("moe.imbalance"), e.what());
      }
    }
  }
}

/// Checks between the workload and the platform it runs on.
void check_platform(const WorkloadReadContext& c, const training::TrainingWorkload& w) {
  if (!c.platform_ok) return;
  Problems& problems = c.problems;
  auto at = [&](const std::string& path) { return c.reader.position(path); };
  const models::AcceleratorSpec& accelerator = c.platform.cluster.accelerator;
  const std::string precision_key = c.key("precision");
  if (!problems.bad(precision_key) && accelerator.peak_flops_per_s.find(w.precision) == accelerator.peak_flops_per_s.end()) {
    std::string available;
    for (const auto& [format, dtype] : kPeakFormats) {
      if (accelerator.peak_flops_per_s.count(dtype)) available += (available.empty() ? "" : ", ") + std::string(format);
    }
    const std::string precision(models::dtype_name(w.precision));
    problems.add(at(precision_key), precision_key,
                 "precision " + precision + " needs a " + precision + " peak, but accelerator '" + accelerator.name +
                     "' has none (it has: " + available + ")");
  }
  const bool offloads = w.memory.offload_optimizer || w.memory.offload_activations;
  const auto& levels = c.platform.cluster.memory_levels;
  const bool has_host = std::any_of(levels.begin(), levels.end(),
                                    [](const models::MemoryLevel& l) { return l.kind == models::MemoryLevelKind::host; });
  if (offloads && !has_host) {
    const std::string key = w.memory.offload_optimizer ? c.key("offload.optimizer") : c.key("offload.activations");
    problems.add(at(key), key,
                 "offloading needs host memory, but accelerator '" + accelerator.name +
                     "' sets no memory.host_capacity and memory.host_bandwidth");
  }
  if (!c.platform.cluster.stragglers.nodes.empty() && c.simulation.mode != platform::SimulationMode::full &&
      !problems.bad("simulation.mode")) {
    problems.add(at("cluster.stragglers"), "cluster.stragglers",
                 "stragglers need simulation.mode: full (symmetric mode simulates one representative rank per "
                 "stage, which cannot be slower than its replicas)");
  }
}

std::shared_ptr<const platform::WorkloadSpec> read_training(const WorkloadReadContext& c) {
  auto w = std::make_shared<training::TrainingWorkload>();
  std::string model_path, model_name;
  const ConfigNode* model_entry = find_model(c, model_path, model_name);
  if (model_entry != nullptr) w->model = read_model(*model_entry, model_path, model_name, c.problems);
  const bool model_ok = model_entry != nullptr && !c.problems.bad(model_path) && w->model.num_attention_heads > 0 &&
                        w->model.num_key_value_heads > 0 && w->model.num_hidden_layers > 0;
  read_options(c, *w);
  read_parallelism(c, w->parallelism);
  check_split(c, *w, model_ok, model_entry, model_path);
  check_options(c, *w, model_ok);
  check_platform(c, *w);
  return w;
}

}  // namespace

WorkloadKind training_workload_kind() {
  WorkloadKind kind;
  kind.name = "training";
  kind.help = "one optimizer step of a data/tensor/pipeline/context/expert-parallel training job";
  kind.fields = training_fields();
  kind.read = read_training;
  // Its rank layout starts at accelerator 0: it is the primary workload, the jobs take the rest.
  kind.can_be_job = false;
  return kind;
}

}  // namespace clustersim::scenario
