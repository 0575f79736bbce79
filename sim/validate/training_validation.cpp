#include "sim/validate/training_validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <regex>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "models/llm/flop_count.hpp"
#include "models/llm/memory_footprint.hpp"
#include "models/llm/transformer_spec.hpp"
#include "sim/config/units.hpp"
#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/training/training_simulation.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/training_row_settings.hpp"

namespace clustersim::validate {
namespace {

/// The first integer after one of `labels` in free text ("MBS 4", "microbatch 2",
/// "model-parallel size 96"), or nullopt.
std::optional<std::int64_t> integer_after(const std::string& text, const char* labels) {
  const std::regex pattern(fmt::format(R"((?:{})\s*(\d+))", labels), std::regex::icase);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  return std::stoll(match[1].str());
}

/// Virtual stages a row's notes state for its model size: "interleaving m=3 for 175B/530B"
/// (a transcription of a paper table that lists the schedule per model) gives 3 for the rows
/// whose params_b is 175 or 530, nullopt for the others and for notes without such a clause.
std::optional<std::int64_t> interleaving_from_notes(const std::string& notes, const std::string& params_b) {
  static const std::regex clause(R"(interleaving\s+m\s*=\s*(\d+)\s+for\s+([0-9.]+B(?:\s*/\s*[0-9.]+B)*))",
                                 std::regex::icase);
  std::smatch match;
  if (!std::regex_search(notes, match, clause)) return std::nullopt;
  const auto size = parse_number(params_b);
  if (!size) return std::nullopt;
  static const std::regex each(R"(([0-9.]+)B)", std::regex::icase);
  const std::string sizes = match[2].str();
  for (auto it = std::sregex_iterator(sizes.begin(), sizes.end(), each); it != std::sregex_iterator(); ++it) {
    if (parse_number((*it)[1].str()) == size) return std::stoll(match[1].str());
  }
  return std::nullopt;
}

const std::vector<std::string>& supported_metrics() {
  static const std::vector<std::string> metrics = {
      "tflops_per_gpu", "model_tflops_per_gpu", "mfu", "hfu", "pct_of_peak", "aggregate_pflops",
      "tokens_per_s_per_gpu", "throughput_tokens_per_s", "iteration_time_s", "step_time_s",
      "peak_memory_allocated", "peak_memory_reserved", "device_memory_used"};
  return metrics;
}

bool metric_supported(const std::string& metric) {
  return std::find(supported_metrics().begin(), supported_metrics().end(), metric) != supported_metrics().end() ||
         parse_time_to_train_metric(metric).has_value();
}

/// The memory units, as messages list them.
constexpr const char* kMemoryUnits = "GiB, GB, MiB, MB or bytes";


bool notes_match(const std::string& marker, const CsvRow& row) {
  return marker.empty() || row.get("notes").rfind(marker, 0) == 0;
}

ValidationSummary summarise(const std::vector<const ValidationRow*>& rows, std::string conventions) {
  std::vector<std::pair<std::string, double>> errors;
  for (const auto* r : rows) errors.emplace_back(r->id, r->error_pct);
  ValidationSummary s;
  static_cast<ErrorSummary&>(s) = summarise_errors(errors);
  s.conventions = std::move(conventions);
  return s;
}

// Jean Zay's A100 partition (gpu_p5), where BLOOM-176B trained: 8 x A100-SXM4-80GB per node on
// an NVSwitch baseboard (as DGX A100: 300 GB/s per direction; latency and efficiency copied from
// models/data/systems/dgx-a100.yaml), and 4 x 100 Gb/s Omni-Path per node (the dataset row's
// gpu_type; BigScience tr11 README). The Omni-Path fabric is costed with the InfiniBand NIC
// efficiency of the library presets (no Omni-Path calibration exists) as a 2-tier fat-tree of
// 48-port switches (Omni-Path 100 edge switches have 48 ports).
constexpr const char* kJeanZayA100Cluster = R"(  node:
    accelerator: a100-sxm-80gb
    per_node: 8
    scale_up: {fabric: nvswitch, bandwidth: "300 GB/s", latency: "1.8 us", efficiency: 0.772}
  network:
    topology: fat-tree
    tiers: 2
    radix: 48
    nic: {per_node: 4, bandwidth: "100 Gb/s", efficiency: 0.94}
)";

/// Korthikanti et al. 2022 Table 3's run configurations, shared by both Korthikanti sources (the
/// same benchmark runs): its "Micro Batch" column, as transcribed in the rows' source and in
/// Calculon's validation/seqsel/tab5/*.json run files, gives micro-batch 4 for the 22B model
/// (global batch 4 on its single 8-GPU pipeline) and 1 for the others (the source default).
std::vector<PublishedRun> korthikanti_table3_runs() { return {{"GPT-22B", 4, 0, false}}; }

/// hpcaitech/ColossalAI-Pytorch-lightning benchmark/gpt @ 6a82b80 (2022-08): a Hugging Face
/// GPT2LMHeadModel of model.py's size (vocabulary 50,257, tied LM head, gradient
/// checkpointing per block) under PyTorch Lightning's DeepSpeedStrategy(stage=3) with
/// precision 16 and FusedAdam; train.py's defaults: seq 1024, batch 1 a GPU.
SourceConventions colossalai_lightning_conventions() {
  SourceConventions c;
  c.name = "colo2208";
  c.id_prefix = "colo2208";
  c.description =
      "ColossalAI-Pytorch-lightning GPT benchmark (2022-08; benchmark/gpt/{train,model}.py @ 6a82b80): "
      "Hugging Face GPT-2 architecture (4h GeLU MLP with biases, tied LM head, vocabulary 50,257), "
      "activation checkpointing of every block (full recompute), eager attention (unfused softmax), "
      "Lightning DeepSpeedStrategy(stage=3) (ZeRO-3, one collective per parameter tensor), fp16 with "
      "FusedAdam, micro-batch 1 (train.py's --batch_size default)";
  c.system = "dgx-a100";
  c.vocab_size = 50257;
  c.micro_batch = 1;
  c.recompute = "full";
  c.attention = "unfused";
  c.overlap_grad_reduce = true;
  c.zero = 3;
  c.zero3_granularity = "tensor";
  c.precision = "fp16";
  c.tflops_counting = "hardware";
  c.tp_async_backward = false;
  return c;
}

}  // namespace

const std::vector<SourceConventions>& source_conventions() {
  static const std::vector<SourceConventions> conventions = {
      // SC21 Table 1 per model: the authors' artifact script NVIDIA/Megatron-LM
      // examples/sc21/run_table_1.sh (MBS, --num-layers-per-virtual-pipeline-stage, DDP=torch for
      // the pp = 1 models, DDP=local otherwise; --recompute-method uniform; container
      // nvcr.io/nvidia/pytorch:20.12-py3 in SRUN.sh).
      {.name = "meg21_t1",
       .id_prefix = "meg21_t1",
       .description =
           "Megatron-LM SC21 (Narayanan et al. 2021), Table 1: GPT, vocabulary 51,200, full activation "
           "recompute, no FlashAttention (fused softmax over s x s scores), no sequence parallelism or "
           "distributed optimizer (both 2022), fp16 mixed precision; per model the authors' artifact script "
           "(NVIDIA/Megatron-LM examples/sc21/run_table_1.sh): micro-batch 16 (1.7B, 3.6B, 7.5B), 8 (18.4B), "
           "4 (39.1B), 2 (76.1B, 145.6B), 1 (larger); interleaved 1F1B with 5 layers per virtual stage "
           "(76.1B, 145.6B), 3 (310.1B), 1 (529.6B), plain 1F1B otherwise; PyTorch DDP (gradient all-reduce "
           "overlapped with the last micro-batch's backward) for the pp = 1 models, Megatron's local DDP "
           "(all-reduce after the pipeline flush) for the others; TP all-reduces after the backward GEMMs (the "
           "asynchronous one beside the wgrad GEMM came in 2022)",
       .system = "dgx-a100", .vocab_size = 51200, .micro_batch = 1, .recompute = "full", .attention = "unfused",
       .precision = "fp16", .tflops_counting = "hardware", .tp_async_backward = false,
       .published_runs = {{"GPT-1.7B", 16, 0, true},
                          {"GPT-3.6B", 16, 0, true},
                          {"GPT-7.5B", 16, 0, true},
                          {"GPT-18.4B", 8, 0, true},
                          {"GPT-39.1B", 4, 0, false},
                          {"GPT-76.1B", 2, 5, false},
                          {"GPT-145.6B", 2, 5, false},
                          {"GPT-310.1B", 1, 3, false},
                          {"GPT-529.6B", 1, 1, false},
                          {"GPT-1008.0B", 1, 0, false}}},
      // SC21 Table 2 (Sec. 5.2): the same GPT runs as Table 1; TFLOP/s by the same Eq. 3 (recompute
      // counted) for both schemes; estimated days = 300B tokens / measured tokens per second.
      {.name = "meg21_t2 PTD-P",
       .id_prefix = "meg21_t2",
       .notes_marker = "PTD-P",
       .description =
           "Megatron-LM SC21 Table 2, PTD-P rows: as Table 1 (vocabulary 51,200, full recompute, no "
           "FlashAttention, no sequence parallelism or distributed optimizer, gradient all-reduce after "
           "the flush, TP all-reduces after the backward GEMMs, 1F1B, fp16); tensor parallelism 8 inside the "
           "DGX node (SC21 Sec. 5.1 / Table 1 for these sizes) and pp = model-parallel size / 8; micro-batch "
           "from the notes",
       .system = "dgx-a100", .vocab_size = 51200, .micro_batch = 1, .recompute = "full", .attention = "unfused",
       .precision = "fp16", .tflops_counting = "hardware", .tp_async_backward = false,
       .tp_for_model_parallel_size = 8},
      {.name = "meg21_t2 ZeRO-3",
       .id_prefix = "meg21_t2",
       .notes_marker = "ZeRO-3",
       .description =
           "Megatron-LM SC21 Table 2, ZeRO-3 rows (DeepSpeed ZeRO-3 with the Megatron GPT, 2021): model-"
           "parallel size 1 (tp = pp = 1, dp = GPUs); parameters all-gathered before forward and "
           "backward and gradients reduce-scattered, one collective per parameter tensor (DeepSpeed "
           "2021's partition_parameters.py gathers a prefetched module parameter by parameter; the "
           "Megatron GPT's linears and LayerNorms carry biases: 12 tensors a layer), overlapped with "
           "compute one layer ahead (stage 3 overlap_comm / prefetch), each gather in PyTorch 2021's list form "
           "(all_gather into one tensor per rank: the process group copies the flat result out to each, one "
           "copy kernel per rank); fp16; vocabulary 51,200; no FlashAttention; full activation "
           "recompute (without it the 174.6B model's activations at micro-batch 4 exceed 80 GB, and SC21 "
           "counts these rows' TFLOP/s with the same recompute-inclusive Eq. 3); micro-batch from the notes",
       .system = "dgx-a100", .vocab_size = 51200, .micro_batch = 1, .recompute = "full", .attention = "unfused",
       .overlap_grad_reduce = true, .zero = 3, .zero3_granularity = "tensor", .zero3_list_gathers = true,
       .precision = "fp16",
       .tflops_counting = "hardware", .tp_async_backward = false, .tp_for_model_parallel_size = 8},
      {.name = "korth_",
       .id_prefix = "korth_",
       .description =
           "Korthikanti et al. 2022 (Megatron-LM): GPT, vocabulary 51,200, sequence parallelism with "
           "selective recompute, no FlashAttention, fp16 mixed precision, the backward TP reduce-scatter "
           "beside the wgrad GEMM (Megatron's asynchronous TP communication); the paper's Table 3 run "
           "configurations: micro-batch 4 (22B) or 1 (larger), the interleaved schedule where the rows' "
           "notes give it (\"interleaving m=3 for 175B/530B\")",
       .system = "dgx-a100", .vocab_size = 51200, .micro_batch = 1, .recompute = "selective", .attention = "unfused",
       .sequence_parallel = true, .precision = "fp16", .tflops_counting = "hardware",
       .published_runs = korthikanti_table3_runs()},
      // Korthikanti et al. Table 5's baseline column: the same four benchmark runs with full
      // activation recompute and plain tensor parallelism (all-reduces, no sequence parallelism).
      {.name = "korth5full",
       .id_prefix = "korth5full",
       .description =
           "Korthikanti et al. 2022, Table 5 baseline (the runs of the korth_ rows before their techniques): GPT, "
           "vocabulary 51,200, full activation recompute, tensor parallelism without sequence parallelism (its "
           "backward all-reduce beside the wgrad GEMM), no FlashAttention, fp16 mixed precision; the paper's Table 3 "
           "run configurations: micro-batch 4 (22B) or 1 (larger), the interleaved schedule where the rows' notes "
           "give it (175B, 530B: 3 virtual stages)",
       .system = "dgx-a100", .vocab_size = 51200, .micro_batch = 1, .recompute = "full", .attention = "unfused",
       .precision = "fp16", .tflops_counting = "hardware",
       .published_runs = korthikanti_table3_runs()},
      {.name = "mcore_h100",
       .id_prefix = "mcore_h100",
       .description =
           "Megatron-Core r0.8 weak scaling (NVIDIA/Megatron-LM README, 2024): GPT, vocabulary 131,072, "
           "fused attention (Transformer Engine: cuDNN on Hopper), sequence parallelism, distributed optimizer, "
           "--overlap-grad-reduce/--overlap-param-gather/--tp-comm-overlap (the rows' notes), no recompute, "
           "micro-batch 1, bf16; TFLOP/s are model FLOPs",
       .system = "dgx-h100", .vocab_size = 131072, .micro_batch = 1, .recompute = "none", .attention = "flash",
       .sequence_parallel = true, .overlap_grad_reduce = true, .zero = 1, .precision = "bf16",
       .tflops_counting = "model", .tp_comm_overlap = true},
      // NeMo 24.07 ran Megatron-Core through the NeMo-Framework-Launcher recipes
      // (launcher_scripts/conf/training/<family>/<model>.yaml; for GPT3 at FP8 the
      // <size>_fp8_performance.yaml "best training performance" recipes). Common to all of them:
      // transformer_engine + fp8 (fp8_hybrid: E4M3 forward, E5M2 gradients), fused/flash attention,
      // sequence_parallel true for TP > 1, ub_tp_comm_overlap true, optim distributed_fused_adam or
      // mcore_distributed_optim with overlap_grad_sync and overlap_param_sync true, grad_sync_dtype
      // bf16, overlap_p2p_comm with the interleaved schedule. Model TFLOP/s: Megatron's
      // num_floating_point_operations (GQA, gated MLP, full non-causal attention), which the
      // per-token ratio of the table's two columns reproduces within 0.1 % on every row.
      {.name = "nemo2407",
       .id_prefix = "nemo2407",
       .description =
           "NeMo 24.07 on DGX-H100 at FP8 (NVIDIA/NeMo docs/source/performance/performance_summary.md; "
           "NeMo-Framework-Launcher recipes): Megatron-Core with Transformer Engine FP8 GEMMs (attention in "
           "bf16, Transformer Engine's fused attention: cuDNN on Hopper), sequence parallelism, "
           "TP-communication overlap (ub_tp_comm_overlap), "
           "distributed optimizer with overlapped gradient reduce-scatter and parameter all-gather "
           "(overlap_grad_sync / overlap_param_sync), bf16 gradient reduction, interleaved 1F1B when VP > 1, "
           "micro-batch from the table's MBS, activation recompute as the model's recipe sets it (below); "
           "the recipes' optimizer is distributed_fused_adam (Apex DistributedFusedAdam), which NeMo 24.07 runs "
           "with fp32 moments and the 16-bit remainders of the master weights (store_param_remainders: 10 B a "
           "parameter, megatron_base_model.py) unless the recipe sets optim.dtype (below); "
           "model from the named library preset; TFLOP/s are model FLOPs",
       .system = "dgx-h100", .micro_batch = 1, .recompute = "", .attention = "flash", .sequence_parallel = true,
       .overlap_grad_reduce = true, .zero = 1, .precision = "fp8", .tflops_counting = "model",
       .tp_comm_overlap = true, .named_models = true, .optimizer_master = "remainders"},
      // BigScience tr11-176B-ml.slurm (bigscience-workshop/bigscience train/tr11-176B-ml): TP 4,
      // PP 12, MBS 2, GBS 2048, --bf16, --checkpoint-activations, ZERO_STAGE=0 with the bf16
      // optimizer ("implements its own zero stage 1 equivalent"), --pad-vocab-size-to 250880,
      // DeepSpeed pipeline engine (1F1B; gradients reduced after the flush). Megatron-DeepSpeed
      // counts TFLOP/s with SC21 Eq. 3 (checkpoint_activations_factor 4).
      {.name = "bloom_176b",
       .id_prefix = "bloom_176b",
       .description =
           "BLOOM-176B (BigScience tr11-176B-ml.slurm, Megatron-DeepSpeed 2022) on Jean Zay (8 x A100-80GB "
           "per node, 4 x 100 Gb/s Omni-Path): GPT with 4h gelu MLP, tied embeddings, vocabulary 250,880; "
           "micro-batch 2; full activation recompute (--checkpoint-activations); bf16; bf16 optimizer "
           "sharded over DP (ZeRO-1 equivalent); gradients reduced after the pipeline flush; no "
           "FlashAttention or sequence parallelism (2022); 1F1B with --pp-partition-method "
           "'type:transformer|embedding' (embedding and head count as a layer: 5, 6 x 10, 5 layers per stage); "
           "TFLOP/s by SC21 Eq. 3; TP all-reduces after the backward GEMMs (the fork's 2021 ColumnParallelLinear). "
           "Not modelled: the "
           "run's CUDA_LAUNCH_BLOCKING=1 and Omni-Path's own collective performance",
       .system = "", .cluster_yaml = kJeanZayA100Cluster, .vocab_size = 250880, .micro_batch = 2,
       .recompute = "full", .attention = "unfused", .zero = 1, .precision = "bf16",
       .tflops_counting = "hardware", .tp_async_backward = false, .embedding_counts_as_stage_layer = true},
      colossalai_lightning_conventions(),
  };
  return conventions;
}

const SourceConventions& default_conventions() {
  // The mcore_h100 entry unchanged in every setting (validated on 27 rows of Megatron-Core's own
  // H100 runs), so the defaults are those of one documented, current framework stack; only where
  // the cluster, precision and model come from differs (the row's gpu_type, precision and model).
  static const SourceConventions defaults = [] {
    SourceConventions d;
    for (const auto& c : source_conventions()) {
      if (c.name == "mcore_h100") d = c;
    }
    d.name = "defaults";
    d.id_prefix.clear();
    d.system.clear();
    d.system_from_gpu_type = true;
    d.description =
        "rows of any other source take the settings of the mcore_h100 entry (Megatron-Core r0.8 weak-scaling runs, "
        "NVIDIA/Megatron-LM README, 2024) on the system preset their gpu_type names: Transformer Engine fused "
        "attention (flash: the accelerator's fused family), sequence parallelism (acts when tp > 1), distributed "
        "optimizer (ZeRO-1), gradient reduce-scatter and parameter all-gather overlapped with compute, TP-"
        "communication overlap when tp > 1, asynchronous backward TP communication, no activation recompute, "
        "micro-batch 1, 1F1B (interleaved when vp > 1); precision from the row's precision column, else bf16; the "
        "model preset the model column names, else a GPT (4h GeLU MLP, multi-head attention, vocabulary 131,072) "
        "from layers / hidden / heads; TFLOP/s are model FLOPs";
    return d;
  }();
  return defaults;
}

const std::vector<NamedModel>& named_models() {
  static const std::vector<NamedModel> models = {
      {"nemo2407", "GPT3-5B", "nemo-gpt3-5b", "selective",
       "NeMo-Framework-Launcher conf/training/gpt3/5b_fp8_performance.yaml (activations_checkpoint_granularity: "
       "selective = core attention recomputed)"},
      {"nemo2407", "GPT3-20B", "nemo-gpt3-20b", "selective", "conf/training/gpt3/20b_fp8_performance.yaml"},
      {"nemo2407", "GPT3-175B", "gpt3-175b", "selective", "conf/training/gpt3/175b_fp8_performance.yaml"},
      {"nemo2407", "LLAMA2-7B", "llama-2-7b", "none",
       "conf/training/llama/llama2_7b.yaml (activations_checkpoint_granularity: null)"},
      {"nemo2407", "LLAMA2-13B", "llama-2-13b", "none", "conf/training/llama/llama2_13b.yaml"},
      {"nemo2407", "LLAMA2-70B", "llama-2-70b", "none", "conf/training/llama/llama2_70b.yaml"},
      {"nemo2407", "LLAMA3-8B", "llama-3-8b", "none", "conf/training/llama/llama3_8b.yaml"},
      {"nemo2407", "LLAMA3-70B", "llama-3-70b", "none", "conf/training/llama/llama3_70b.yaml"},
      {"nemo2407", "Nemotron-8B", "nemotron-8b", "none", "conf/training/nemotron/nemotron_8b.yaml"},
      {"nemo2407", "Nemotron-22B", "nemotron-22b", "none", "conf/training/nemotron/nemotron_22b.yaml"},
      // optim {name: distributed_fused_adam, dtype: bf16} in the recipe of 24.07 (until the launcher
      // moved it to mcore_distributed_optim, 2024-11-25): NeMo's megatron_base_model.py (r2.0.0rc1)
      // passes that dtype to Apex DistributedFusedAdam as the state's, and with it equal to the
      // model's stores no master weights (store_params False): bf16 m and v, 4 B a parameter.
      {"nemo2407", "Nemotron-340B", "nemotron-4-340b", "none",
       "conf/training/nemotron/nemotron_340b.yaml (optim distributed_fused_adam, dtype bf16: bf16 moments, no master "
       "weights)",
       "none", "bf16"},
  };
  return models;
}

const std::vector<SourceSkip>& source_skips() {
  static const std::vector<SourceSkip> skips = {
      {"opt_175b", "",
       "OPT-175B (arXiv:2205.01068) states FSDP + TP 8 on 992 GPUs and a 2M-token batch, but not the global "
       "batch in sequences, the micro-batch, the activation recompute or how its 147 TFLOP/s are counted; "
       "no documented metaseq defaults fill them"},
      {"fa2_e2e", "no FlashAttention",
       "FlashAttention-2 Table 1's Megatron-LM baseline: the paper states neither its TP/PP/DP split, "
       "micro-batch, global batch nor recompute"},
      {"fa2_e2e", "FlashAttention-2",
       "FlashAttention-2 Table 1 runs: the row states no global batch or split, and the flash-attention "
       "repository's recipes (training/configs/experiment/pile/gpt3*-flash*.yaml: DDP + ZeRO-1) choose the "
       "per-GPU batch from the GPU memory, which the row did not capture"},
      {"fa2_e2e", "FlashAttention",
       "FlashAttention-1 rows: the compute model has one fused-attention kernel efficiency and cannot tell "
       "FlashAttention-1 from -2; and the row states no global batch or split"},
  };
  return skips;
}

std::optional<TimeToTrainMetric> parse_time_to_train_metric(const std::string& metric) {
  static const std::regex pattern(R"((est_days|est_hours|gpu_hours)_([0-9]+(?:\.[0-9]+)?)([KMBT]?)_tokens)");
  std::smatch match;
  if (!std::regex_match(metric, match, pattern)) return std::nullopt;
  TimeToTrainMetric out;
  const std::string kind = match[1].str();
  out.unit = kind == "est_days" ? TimeToTrainMetric::Unit::days
             : kind == "est_hours" ? TimeToTrainMetric::Unit::hours
                                   : TimeToTrainMetric::Unit::gpu_hours;
  const std::string suffix = match[3].str();
  const double scale = suffix == "K" ? 1e3 : suffix == "M" ? 1e6 : suffix == "B" ? 1e9 : suffix == "T" ? 1e12 : 1.0;
  out.tokens = std::stod(match[2].str()) * scale;
  return out;
}

std::optional<double> predict_metric(const std::string& metric, const std::string& unit,
                                     const std::string& tflops_counting, const StepMeasures& step) {
  const double t = step.step_time_s;
  const double gpu_seconds = t * step.gpus;  // per step, all GPUs
  const double counted = tflops_counting == "hardware" ? step.hardware_flops_per_step : step.model_flops_per_step;
  const double fraction = unit == "%" ? 100.0 : 1.0;
  if (metric == "tflops_per_gpu") return counted / gpu_seconds / 1e12;
  if (metric == "model_tflops_per_gpu") return step.model_flops_per_step / gpu_seconds / 1e12;
  if (metric == "aggregate_pflops") return counted / t / 1e15;
  if (metric == "pct_of_peak") return 100.0 * counted / gpu_seconds / step.peak_flops_per_s;
  if (metric == "mfu") return fraction * step.model_flops_per_step / gpu_seconds / step.peak_flops_per_s;
  if (metric == "hfu") return fraction * step.hardware_flops_per_step / gpu_seconds / step.peak_flops_per_s;
  if (metric == "tokens_per_s_per_gpu") return step.tokens_per_step / gpu_seconds;
  if (metric == "throughput_tokens_per_s") return step.tokens_per_step / t;
  if (metric == "iteration_time_s" || metric == "step_time_s") return t;
  if (const auto ttt = parse_time_to_train_metric(metric)) {
    const double seconds = ttt->tokens / (step.tokens_per_step / t);
    switch (ttt->unit) {
      case TimeToTrainMetric::Unit::days:
        return seconds / 86400.0;
      case TimeToTrainMetric::Unit::hours:
        return seconds / 3600.0;
      case TimeToTrainMetric::Unit::gpu_hours:
        return seconds / 3600.0 * step.gpus;
    }
  }
  return std::nullopt;
}

std::optional<MemoryQuantity> parse_memory_metric(const std::string& metric) {
  if (metric == "peak_memory_allocated") return MemoryQuantity::allocated;
  if (metric == "peak_memory_reserved") return MemoryQuantity::reserved;
  if (metric == "device_memory_used") return MemoryQuantity::device_used;
  return std::nullopt;
}

std::optional<double> memory_unit_bytes(const std::string& unit) {
  if (unit == "GiB") return config::kGiB;
  if (unit == "MiB") return 1024.0 * 1024.0;
  if (unit == "GB") return 1e9;
  if (unit == "MB") return 1e6;
  if (unit == "bytes" || unit == "B") return 1.0;
  return std::nullopt;
}

std::optional<double> predict_memory_metric(const std::string& metric, const std::string& unit,
                                            const MemoryMeasures& memory) {
  const auto quantity = parse_memory_metric(metric);
  const auto per_unit = memory_unit_bytes(unit);
  if (!quantity || !per_unit) return std::nullopt;
  switch (*quantity) {
    case MemoryQuantity::allocated:
      return memory.allocated_bytes / *per_unit;
    case MemoryQuantity::reserved:
      return memory.reserved_bytes / *per_unit;
    case MemoryQuantity::device_used:
      return memory.used_bytes / *per_unit;
  }
  return std::nullopt;
}

/// The `models:` entry (indented, without the `models:` line) of a row that spells its model out
/// (layers, hidden, heads), shown as dataset row `id`: Megatron GPT with a 4h gelu MLP and
/// biases; tied or untied embeddings as the row's stated parameter count decides when it has one
/// (whichever of the two counts is nearer it), otherwise tied, Megatron GPT's default.
std::string row_model_yaml(const CsvRow& row, const SourceConventions& conv, const std::string& model_name,
                           const std::string& id, std::int64_t hidden_size, std::int64_t layer_count,
                           std::int64_t head_count, std::int64_t seq_len) {
  models::TransformerSpec spec;
  spec.name = model_name;
  spec.hidden_size = hidden_size;
  spec.num_hidden_layers = layer_count;
  spec.num_attention_heads = head_count;
  spec.num_key_value_heads = head_count;
  spec.intermediate_size = 4 * hidden_size;
  spec.vocab_size = conv.vocab_size;
  spec.hidden_act = models::Activation::gelu;
  spec.linear_bias = true;
  spec.tie_word_embeddings = true;
  bool tied = true;
  std::string tie_source;
  if (const auto stated = parse_number(row.get("params_b")); stated && *stated > 0) {
    const double tied_b = spec.total_parameters() / 1e9;
    spec.tie_word_embeddings = false;
    const double untied_b = spec.total_parameters() / 1e9;
    tied = std::abs(tied_b - *stated) <= std::abs(untied_b - *stated);
    tie_source = fmt::format("; {} embeddings: the row's {}B is nearer the {} count ({:.2f}B) than the {} ({:.2f}B)",
                             tied ? "tied" : "untied", row.get("params_b"), tied ? "tied" : "untied",
                             tied ? tied_b : untied_b, tied ? "untied" : "tied", tied ? untied_b : tied_b);
  }
  return fmt::format(
      R"(  {name}:
    source: "dataset row {id}{tie_source}"
    hidden_size: {h}
    num_hidden_layers: {L}
    num_attention_heads: {a}
    intermediate_size: {ffn}
    vocab_size: {V}
    max_position_embeddings: {s}
    hidden_act: gelu
    linear_bias: true
    tie_word_embeddings: {tied}
)",
      fmt::arg("name", model_name), fmt::arg("id", id), fmt::arg("tie_source", tie_source), fmt::arg("h", hidden_size),
      fmt::arg("L", layer_count), fmt::arg("a", head_count), fmt::arg("ffn", 4 * hidden_size),
      fmt::arg("V", conv.vocab_size), fmt::arg("s", seq_len), fmt::arg("tied", tied ? "true" : "false"));
}

/// A row's parallel layout beyond tp, pp and dp: the published run it matches, the virtual
/// stages, context parallelism, and the uneven stage layers of sources that count the
/// embedding and LM head as pipeline layers.
struct RowSplit {
  const PublishedRun* published = nullptr;
  std::int64_t vp = 1, cp = 1;
  std::string stage_layers;  ///< ", stage_layers: [...]" or empty
};

/// The stated degrees of a row, and the accelerators of one node of its cluster.
struct RowDegrees {
  std::int64_t tp = 1, pp = 1, dp = 1, gpus = 1, per_node = kAcceleratorsPerNode;
};

/// Fills `split`; returns why the row cannot be simulated, if it cannot. The row's own vp and
/// stage_layers columns (`settings`) win over the published run, the notes and the source's
/// stage split.
std::optional<std::string> row_split(const CsvRow& row, const SourceConventions& conv,
                                     std::optional<std::int64_t> layers, const RowDegrees& d,
                                     const RowSettings& settings, RowSplit& split) {
  for (const auto& run : conv.published_runs) {
    if (run.model == row.get("model")) split.published = &run;
  }
  const PublishedRun* published = split.published;
  std::optional<std::int64_t> published_vp;
  if (!settings.vp && published && published->layers_per_virtual_stage > 0 && layers) {
    const std::int64_t per_stage = *layers / d.pp;
    if (*layers % d.pp != 0 || per_stage % published->layers_per_virtual_stage != 0) {
      return fmt::format("{} layers over pp {} do not split into virtual stages of {} layers", *layers, d.pp,
                         published->layers_per_virtual_stage);
    }
    published_vp = per_stage / published->layers_per_virtual_stage;
  }
  const std::string& notes = row.get("notes");
  split.vp = settings.vp.value_or(
      published_vp.value_or(interleaving_from_notes(notes, row.get("params_b")).value_or(1)));
  split.cp = parse_integer(row.get("cp")).value_or(1);
  if (d.gpus % d.per_node != 0) {
    return fmt::format("{} GPUs is not a whole number of {}-GPU nodes", d.gpus, d.per_node);
  }
  if (d.tp * d.pp * d.dp * split.cp != d.gpus) {
    return fmt::format("tp {} x pp {} x dp {} x cp {} = {} is not the row's {} GPUs", d.tp, d.pp, d.dp, split.cp,
                       d.tp * d.pp * d.dp * split.cp, d.gpus);
  }
  if (!settings.stage_layers.empty()) {
    split.stage_layers = fmt::format(", stage_layers: [{}]", fmt::join(settings.stage_layers, ", "));
  } else if (conv.embedding_counts_as_stage_layer && d.pp > 1 && layers) {
    const std::int64_t units = *layers + 2;  // embedding + layers + LM head
    if (units % d.pp != 0 || split.vp > 1) {
      return fmt::format("{} layers + embedding + head do not spread evenly over pp {} x vp {}", *layers, d.pp,
                         split.vp);
    }
    std::vector<std::int64_t> per_stage(static_cast<std::size_t>(d.pp), units / d.pp);
    per_stage.front() -= 1;
    per_stage.back() -= 1;
    split.stage_layers = fmt::format(", stage_layers: [{}]", fmt::join(per_stage, ", "));
  }
  return std::nullopt;
}

namespace {

/// Columns of the format that hold a count: when given, a whole number >= 1.
constexpr const char* kCountColumns[] = {"layers", "hidden", "heads", "seq_len", "global_batch", "gpus",
                                         "tp",     "pp",     "dp",    "cp",      "ep"};

std::string metric_choices() {
  return fmt::format("{}, est_days_<N>_tokens, est_hours_<N>_tokens or gpu_hours_<N>_tokens (N a number with an "
                     "optional K, M, B or T)",
                     fmt::join(supported_metrics(), ", "));
}

/// What is wrong with the format's own columns of a row, each as "column 'X': ...".
void check_row_columns(const CsvRow& row, std::vector<std::string>& problems) {
  const std::string& metric = row.get("metric");
  if (!metric_supported(metric)) {
    problems.push_back(fmt::format("column 'metric': '{}' is not a supported metric: one of {}", metric,
                                   metric_choices()));
  } else if (parse_memory_metric(metric) && !memory_unit_bytes(row.get("unit"))) {
    problems.push_back(fmt::format("column 'unit': '{}' is not a memory unit: one of {} (metric {})", row.get("unit"),
                                   kMemoryUnits, metric));
  }
  for (const char* column : kCountColumns) {
    const std::string& text = row.get(column);
    const auto value = parse_integer(text);
    if (!text.empty() && (!value || *value < 1)) {
      problems.push_back(fmt::format("column '{}': '{}' is not a whole number >= 1", column, text));
    }
  }
  const std::string& params = row.get("params_b");
  if (const auto value = parse_number(params); !params.empty() && (!value || *value <= 0)) {
    problems.push_back(fmt::format("column 'params_b': '{}' is not a number > 0 (billions of parameters)", params));
  }
  const auto measured = parse_number(row.get("value"));
  if (!measured || *measured <= 0) {
    problems.push_back(fmt::format("column 'value': '{}' is not a positive number (the measurement, in the row's unit)",
                                   row.get("value")));
  }
}

std::string model_key(const std::string& name) { return scenario::model_name_key(name); }

/// The preset the row's `model` column names: the --base scenario's `models:` first, then the
/// library's names and aliases; "" for none.
std::string model_preset_named(const std::string& model, const BaseCluster* base) {
  if (model.empty()) return "";
  if (base) {
    const std::string key = model_key(model);
    for (const auto& name : base->model_names) {
      if (model_key(name) == key) return name;
    }
  }
  return scenario::library_model_named(model);
}

/// The model families whose layers are not a GPT's (gated SwiGLU MLP, grouped-query attention,
/// experts): a row naming one of them is never built as a GeLU GPT with multi-head attention.
std::optional<std::string> non_gpt_family(const std::string& model) {
  std::string key = model_key(model);
  if (const auto slash = key.rfind('/'); slash != std::string::npos) key = key.substr(slash + 1);  // a Hugging Face id
  if (key.rfind("meta", 0) == 0) key = key.substr(4);  // "Meta-Llama-3-8B"
  for (const char* family : {"llama", "mistral", "mixtral", "qwen", "gemma", "deepseek", "phi", "falcon", "nemotron"}) {
    if (key.rfind(family, 0) == 0) return std::string(family);
  }
  return std::nullopt;
}

/// A row of default_conventions(): its system (unless --base gives the cluster), its model
/// preset, and its precision (returned). Each thing it cannot resolve is a problem.
std::string resolve_own_row(const CsvRow& row, const BaseCluster* base, RowMapping& mapping) {
  if (!base) {
    const std::string& gpu_type = row.get("gpu_type");
    if (const auto system = system_for_gpu_type(gpu_type)) {
      mapping.system = *system;
    } else {
      mapping.problems.push_back(fmt::format("column 'gpu_type': '{}' names no system preset: one of {} (or give "
                                             "the cluster with --base SCENARIO)",
                                             gpu_type, gpu_type_choices()));
    }
  }
  const std::string& model = row.get("model");
  mapping.model_preset = model_preset_named(model, base);
  // A model that cannot be resolved skips its row (with the reason); the file's other rows run.
  if (mapping.model_preset.empty() &&
      (row.get("layers").empty() || row.get("hidden").empty() || row.get("heads").empty())) {
    mapping.skip_reason = fmt::format(
        "column 'model': '{}' names no model preset or alias ({}{}) and the row does not state layers, hidden and "
        "heads to build a GPT from (add the model under `models:` in a --base scenario, or an alias to its library "
        "preset)",
        model, fmt::join(scenario::library_names(scenario::LibraryKind::models), ", "),
        base ? "; or one of the --base scenario's models" : "");
  } else if (const auto family = mapping.model_preset.empty() ? non_gpt_family(model) : std::nullopt) {
    mapping.skip_reason = fmt::format(
        "column 'model': '{}' names a {} model the library has no preset or alias for; its layers and heads would "
        "build a GPT (GeLU MLP, multi-head attention), which a {} model is not (gated MLP, grouped-query "
        "attention): add it under `models:` in a --base scenario with its config.json values",
        model, family->c_str(), family->c_str());
  }
  return read_row_precision(row, mapping.problems).value_or("bf16");
}

/// Everything a row's scenario says, resolved.
struct RowScenario {
  std::string id, include, models, cluster, model;
  std::int64_t seq = 0, batch = 0, micro_batch = 1, tp = 1, pp = 1, dp = 1, cp = 1, vp = 1;
  std::string ep, stage_layers, precision, recompute, attention, framework{"megatron"}, cross_entropy{"auto"};
  std::string optimizer_master{"fp32"}, optimizer_moments{"fp32"};
  std::string gradient_reduce_dtype;  ///< "" unless the row sets it
  bool sequence_parallel = false, overlap_grad_reduce = false, tp_comm_overlap = false, tp_async_backward = true;
  int zero = 0;
  std::string zero3;  ///< ", zero3_granularity: ..., zero3_list_gathers: ..." or ""
};

std::string render_row_scenario(const RowScenario& r) {
  return fmt::format(
      R"(schema_version: 1
name: {id}
description: "built by clustersim validate from dataset row {id}"
{include}{models}{cluster}workload:
  kind: training
  model: {model}
  seq_len: {s}
  global_batch: {B}
  micro_batch: {mb}
  precision: {precision}
  parallelism: {{tp: {tp}, pp: {pp}, dp: {dp}, cp: {cp}{ep}, vp: {vp}, sequence_parallel: {sp}, schedule: {schedule}, zero: {zero}{zero3}{stage_layers}}}
  recompute: {recompute}
  attention: {attention}
  overlap_grad_reduce: {overlap}
  tp_comm_overlap: {tp_overlap}
  tp_async_backward: {tp_async}
  framework: {framework}
  cross_entropy: {cross_entropy}
  optimizer: {{master_weights: {master}, moments: {moments}}}
{reduce_dtype})",
      fmt::arg("id", r.id), fmt::arg("include", r.include), fmt::arg("models", r.models),
      fmt::arg("cluster", r.cluster), fmt::arg("model", r.model), fmt::arg("s", r.seq), fmt::arg("B", r.batch),
      fmt::arg("mb", r.micro_batch), fmt::arg("precision", r.precision), fmt::arg("tp", r.tp), fmt::arg("pp", r.pp),
      fmt::arg("dp", r.dp), fmt::arg("cp", r.cp), fmt::arg("ep", r.ep), fmt::arg("vp", r.vp),
      fmt::arg("sp", r.sequence_parallel), fmt::arg("schedule", r.vp > 1 ? "interleaved" : "1f1b"),
      fmt::arg("zero", r.zero), fmt::arg("zero3", r.zero3), fmt::arg("stage_layers", r.stage_layers),
      fmt::arg("recompute", r.recompute), fmt::arg("attention", r.attention),
      fmt::arg("overlap", r.overlap_grad_reduce), fmt::arg("tp_overlap", r.tp_comm_overlap),
      fmt::arg("tp_async", r.tp_async_backward), fmt::arg("framework", r.framework),
      fmt::arg("master", r.optimizer_master), fmt::arg("moments", r.optimizer_moments),
      fmt::arg("cross_entropy", r.cross_entropy), fmt::arg("reduce_dtype", r.gradient_reduce_dtype.empty() ? std::string()
                                                     : "  gradient_reduce_dtype: " + r.gradient_reduce_dtype + "\n"));
}

/// The include, models and cluster text of a row's scenario: the --base scenario's platform, or
/// the system preset (the source's or the gpu_type's) or the source's inline cluster.
void row_platform(const SourceConventions& conv, const RowMapping& mapping, const BaseCluster* base,
                  std::int64_t nodes, const std::string& row_model_entry, RowScenario& r) {
  const std::string model_entries = (base ? base->model_entries_yaml : std::string()) + row_model_entry;
  r.models = model_entries.empty() ? "" : "models:\n" + model_entries;
  if (base) {
    r.include = base->sections_yaml;
    r.cluster = fmt::format("cluster:\n  nodes: {}\n{}", nodes, base->cluster_entries_yaml);
    return;
  }
  const std::string& system = conv.system_from_gpu_type ? mapping.system : conv.system;
  r.include = system.empty() ? "" : fmt::format("include: [systems/{}.yaml]\n", system);
  r.cluster = fmt::format("cluster:\n  nodes: {}\n{}", nodes, conv.cluster_yaml);
}

}  // namespace

RowMapping map_training_row(const CsvRow& row, const BaseCluster* base) {
  RowMapping mapping;
  const std::string& id = row.get("id");
  if (id.empty()) {
    mapping.problems.emplace_back("column 'id' is empty (every row needs an id)");
    return mapping;
  }
  for (const auto& skip : source_skips()) {
    if (id.rfind(skip.id_prefix, 0) == 0 && notes_match(skip.notes_marker, row)) {
      mapping.skip_reason = skip.reason;
      return mapping;
    }
  }
  mapping.conventions = &default_conventions();
  for (const auto& c : source_conventions()) {
    if (id.rfind(c.id_prefix, 0) == 0 && notes_match(c.notes_marker, row)) {
      mapping.conventions = &c;
      break;
    }
  }
  const auto& conv = *mapping.conventions;
  const bool own = conv.system_from_gpu_type;
  check_row_columns(row, mapping.problems);
  const RowSettings settings = read_row_settings(row, mapping.problems);
  mapping.columns_set = settings.columns_set;
  const std::string precision = own ? resolve_own_row(row, base, mapping) : conv.precision;
  if (!mapping.problems.empty() || !mapping.skip_reason.empty()) return mapping;
  // A row that cannot be mapped: a documented source's publication leaves it out (skipped, with
  // the reason); in a user's own rows it is a mistake in the file (a problem).
  const auto cannot = [&](std::string reason) {
    if (own) {
      mapping.problems.push_back(std::move(reason));
    } else {
      mapping.skip_reason = std::move(reason);
    }
    return mapping;
  };
  const std::string& notes = row.get("notes");
  std::vector<std::string> missing;
  auto need = [&missing](const auto& value, const char* name) {
    if (!value) missing.emplace_back(name);
  };
  std::optional<std::int64_t> layers, hidden, heads;
  if (conv.named_models) {
    for (const auto& named : named_models()) {
      if (named.conventions == conv.name && named.row_model == row.get("model")) mapping.named_model = &named;
    }
    if (!mapping.named_model) {
      return cannot(fmt::format("model '{}' has no library preset for source '{}'", row.get("model"), conv.name));
    }
  } else if (mapping.model_preset.empty()) {
    layers = parse_integer(row.get("layers"));
    hidden = parse_integer(row.get("hidden"));
    heads = parse_integer(row.get("heads"));
    need(layers, "layers");
    need(hidden, "hidden");
    need(heads, "heads");
  }
  const auto seq = parse_integer(row.get("seq_len"));
  const auto batch = parse_integer(row.get("global_batch"));
  const auto gpus = parse_integer(row.get("gpus"));
  auto tp = parse_integer(row.get("tp"));
  auto pp = parse_integer(row.get("pp"));
  const auto dp = parse_integer(row.get("dp"));
  if (!tp && !pp && conv.tp_for_model_parallel_size > 0) {
    // SC21 Table 2 gives only the model-parallel size t x p.
    if (const auto mp = integer_after(notes, "model-parallel size")) {
      if (*mp == 1) {
        tp = 1;
        pp = 1;
      } else if (*mp % conv.tp_for_model_parallel_size == 0) {
        tp = conv.tp_for_model_parallel_size;
        pp = *mp / conv.tp_for_model_parallel_size;
      }
    }
  }
  need(seq, "seq_len");
  need(batch, "global_batch");
  need(gpus, "gpus");
  need(tp, "tp");
  need(pp, "pp");
  need(dp, "dp");
  if (!missing.empty()) return cannot(fmt::format("row does not state {}", fmt::join(missing, ", ")));
  const std::int64_t per_node = base ? base->accelerators_per_node : kAcceleratorsPerNode;
  RowSplit split;
  if (const auto problem = row_split(row, conv, layers, {*tp, *pp, *dp, *gpus, per_node}, settings, split)) {
    return cannot(*problem);
  }
  const PublishedRun* published = split.published;

  RowScenario r;
  r.seq = *seq;
  r.batch = *batch;
  r.micro_batch = settings.micro_batch.value_or(integer_after(notes, "MBS|micro-?batch")
                                                    .value_or(published && published->micro_batch > 0
                                                                  ? published->micro_batch
                                                                  : conv.micro_batch));
  r.precision = precision;
  r.tp = *tp;
  r.pp = *pp;
  r.dp = *dp;
  r.cp = split.cp;
  r.vp = split.vp;
  if (const auto ep = parse_integer(row.get("ep"))) r.ep = fmt::format(", ep: {}", *ep);
  r.sequence_parallel = settings.sequence_parallel.value_or(conv.sequence_parallel);
  r.zero = static_cast<int>(settings.zero.value_or(conv.zero));
  if (r.zero == 3) {
    r.zero3 = fmt::format(", zero3_granularity: {}, zero3_list_gathers: {}", conv.zero3_granularity,
                          conv.zero3_list_gathers);
  }
  r.stage_layers = split.stage_layers;
  r.recompute = settings.recompute.value_or(conv.recompute.empty() ? mapping.named_model->recompute
                                                                    : conv.recompute);
  r.attention = settings.attention.value_or(conv.attention);
  r.overlap_grad_reduce = settings.overlap_grad_reduce.value_or(
      published ? published->overlap_grad_reduce : conv.overlap_grad_reduce);
  r.tp_comm_overlap =
      settings.tp_comm_overlap.value_or(conv.tp_comm_overlap && r.sequence_parallel && *tp > 1);
  r.tp_async_backward = conv.tp_async_backward;
  r.framework = settings.framework.value_or(conv.framework);
  const NamedModel* recipe = mapping.named_model;
  r.optimizer_master = settings.optimizer_master.value_or(
      recipe && !recipe->optimizer_master.empty() ? recipe->optimizer_master : conv.optimizer_master);
  r.optimizer_moments = settings.optimizer_moments.value_or(
      recipe && !recipe->optimizer_moments.empty() ? recipe->optimizer_moments : conv.optimizer_moments);
  r.cross_entropy = settings.cross_entropy.value_or("auto");
  r.gradient_reduce_dtype = settings.gradient_reduce_dtype.value_or("");
  // The row's scenario under a name: its id for the scenario shown and run, a common one for the
  // configuration that decides which rows share a simulation.
  const auto named = [&](const std::string& name) {
    RowScenario out = r;
    out.id = name;
    std::string model_entry;  // a GPT built from the row's shape, when no preset is named
    if (!mapping.model_preset.empty()) {
      out.model = mapping.model_preset;  // by name: the base scenario's models, then the library
    } else if (mapping.named_model) {
      out.model = mapping.named_model->preset;
    } else {
      out.model = name + "-model";
      model_entry = row_model_yaml(row, conv, out.model, name, *hidden, *layers, *heads, *seq);
    }
    row_platform(conv, mapping, base, *gpus / per_node, model_entry, out);
    return render_row_scenario(out);
  };
  mapping.scenario_yaml = named(id);
  mapping.configuration = named("row");
  return mapping;
}

namespace {

/// One simulated configuration; rows of one configuration (TFLOP/s, % of peak, PF/s, tokens/s)
/// share it.
struct Simulated {
  StepMeasures step;
  MemoryMeasures memory;  ///< the footprint of the peak stage (every configuration)
  models::TransformerSpec model;
  std::string memory_note;
  std::string error;  ///< why the scenario did not load or run; "" when it did
};

/// Loads one row scenario, computes its footprint and, when `needs_step` (a row of it has a
/// step metric), runs its step. Touches nothing shared, so any number run at once.
Simulated simulate_row_scenario(const std::string& yaml, const std::string& name, bool needs_step,
                                const std::vector<std::string>& overrides) {
  Simulated sim;
  try {
    auto scenario = scenario::load_scenario_from_string(yaml, name, overrides);
    // The footprint is closed-form (the one the runner reports and checks): memory rows need
    // no step. The published runs fitted, so the step is timed and the footprint reported
    // even where the memory model disagrees; the row says so (ValidationRow::note).
    const models::TrainingFootprint footprint =
        models::training_footprint(training::footprint_inputs(scenario.training()));
    const models::StageFootprint& peak = footprint.peak();
    sim.memory.used_bytes = peak.total_bytes;
    sim.memory.reserved_bytes = peak.total_bytes - peak.workspace_bytes;
    sim.memory.allocated_bytes = sim.memory.reserved_bytes - peak.fragmentation_bytes;
    sim.memory.capacity_bytes = scenario.platform.cluster.accelerator.hbm_capacity_bytes;
    sim.memory.peak_stage = peak.stage;
    if (sim.memory.used_bytes > sim.memory.capacity_bytes) {
      sim.memory_note = fmt::format("memory model puts stage {} at {:.1f} GiB of {:.1f} GiB (the published run fitted)",
                                    peak.stage, sim.memory.used_bytes / config::kGiB, sim.memory.capacity_bytes / config::kGiB);
    }
    sim.model = scenario.training().model;
    if (!needs_step) return sim;
    auto timed = scenario.training();
    timed.enforce_memory_fit = false;
    scenario.set_training(timed);
    const auto result = runner::run_training(scenario);
    const auto& w = scenario.training();
    // FLOPs in the published convention (models/llm/flop_count.hpp): Megatron model FLOPs,
    // plus one forward of the layers (full recompute) or of the attention cores (selective).
    const double tokens = static_cast<double>(w.global_batch * w.seq_len);
    double recomputed_per_token = 0;
    if (w.recompute == training::Recompute::full) {
      recomputed_per_token = models::layers_flops_per_token_fwd(w.model, w.seq_len);
    } else if (w.recompute == training::Recompute::op) {
      // The recomputed matmuls: K, the output projection and one h x f matrix (up / fc2).
      const double h = static_cast<double>(w.model.hidden_size);
      const double kv = static_cast<double>(w.model.num_key_value_heads * w.model.head_dim());
      recomputed_per_token = 2.0 * static_cast<double>(w.model.num_hidden_layers) *
                             (h * kv + h * h + h * static_cast<double>(w.model.intermediate_size));
    } else if (w.recompute == training::Recompute::selective) {
      recomputed_per_token = static_cast<double>(w.model.num_hidden_layers) *
                             models::attention_core_flops_per_token_fwd(w.model, w.seq_len);
    }
    sim.step.step_time_s = result.step_time_s;
    sim.step.tokens_per_step = tokens;
    sim.step.gpus = static_cast<double>(scenario.platform.cluster.accelerator_count());
    sim.step.model_flops_per_step = tokens * models::model_flops_per_token_training(w.model, w.seq_len);
    sim.step.hardware_flops_per_step = sim.step.model_flops_per_step + tokens * recomputed_per_token;
    sim.step.peak_flops_per_s = scenario.platform.cluster.accelerator.peak_for(w.precision);
    sim.model = w.model;
  } catch (const Error& e) {
    sim.error = e.what();
  }
  return sim;
}

/// The distinct configurations of the mapped rows, in the order of their first row.
struct ScenarioSet {
  std::vector<std::string> yamls;     ///< the scenario of each configuration's first row
  std::vector<std::string> names;     ///< "<file>#<id of that row>", for positions in messages
  std::vector<int> rows;              ///< rows that share each scenario
  std::vector<bool> needs_step;       ///< a row of the scenario compares a step metric
  std::vector<std::size_t> of_row;    ///< per dataset row: its scenario, or npos
};

/// Runs every scenario of `set`, at most `threads` at once (0: every core). Each result lands in
/// its own slot, so the report built from them does not depend on the order they finish in.
std::vector<Simulated> simulate_all(const ScenarioSet& set, const TrainingValidationOptions& options) {
  std::vector<Simulated> simulated(set.yamls.size());
  int total_rows = 0;
  for (const int n : set.rows) total_rows += n;
  std::mutex progress_mutex;
  int done_rows = 0;
  std::vector<std::string> overrides;
  if (!options.calibration.empty()) {
    overrides.push_back("simulation.calibration=" + std::filesystem::absolute(options.calibration).string());
  }
  if (options.on_progress) options.on_progress(0, total_rows);  // the work starts now
  tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    // One scenario per task (a simulation takes milliseconds to seconds), so the cores share
    // the long ones.
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, set.yamls.size(), 1),
        [&](const tbb::blocked_range<std::size_t>& range) {
          for (std::size_t i = range.begin(); i != range.end(); ++i) {
            simulated[i] = simulate_row_scenario(set.yamls[i], set.names[i], set.needs_step[i], overrides);
            if (!options.on_progress) continue;
            const std::lock_guard<std::mutex> lock(progress_mutex);
            done_rows += set.rows[i];
            options.on_progress(done_rows, total_rows);
          }
        },
        tbb::simple_partitioner());
  });
  return simulated;
}

/// What the compared rows used, for the report's assumptions: conventions, named models, and
/// for rows of default_conventions() the gpu_type and model mappings; the optional columns set.
struct UsedSettings {
  std::vector<const SourceConventions*> conventions;
  std::vector<const NamedModel*> named;
  std::vector<std::string> own_lines;      ///< rows of default_conventions(), first use first
  std::map<std::string, int> columns_set;  ///< column -> rows that set it

  void record(const CsvRow& row, const RowMapping& mapping) {
    const auto& conv = *mapping.conventions;
    if (std::find(conventions.begin(), conventions.end(), &conv) == conventions.end()) conventions.push_back(&conv);
    if (mapping.named_model && std::find(named.begin(), named.end(), mapping.named_model) == named.end()) {
      named.push_back(mapping.named_model);
    }
    if (conv.system_from_gpu_type && !mapping.system.empty()) {
      add(fmt::format("{}: gpu_type '{}' = system preset {}", conv.name, row.get("gpu_type"), mapping.system));
    }
    if (conv.system_from_gpu_type && !mapping.model_preset.empty()) {
      add(fmt::format("{}: model '{}' = preset {}", conv.name, row.get("model"), mapping.model_preset));
    }
    for (const auto& column : mapping.columns_set) ++columns_set[column];
  }

 private:
  void add(const std::string& line) {
    if (std::find(own_lines.begin(), own_lines.end(), line) == own_lines.end()) own_lines.push_back(line);
  }
};

/// Fills the report's summaries (overall, then per source in source_conventions() order, the
/// defaults last) and its assumptions from what the compared rows used.
void summarise_report(const UsedSettings& used, const BaseCluster* base, ValidationReport& report) {
  std::vector<const ValidationRow*> all;
  for (const auto& r : report.rows) all.push_back(&r);
  report.summary = summarise(all, "");
  std::vector<const SourceConventions*> every;
  for (const auto& conv : source_conventions()) every.push_back(&conv);
  every.push_back(&default_conventions());
  for (const auto* conv : every) {
    std::vector<const ValidationRow*> of_source;
    for (const auto& r : report.rows) {
      if (r.conventions == conv->name) of_source.push_back(&r);
    }
    if (!of_source.empty()) report.per_source.push_back(summarise(of_source, conv->name));
  }
  if (base) {
    report.assumptions.push_back(fmt::format(
        "--base {}: every row runs on its cluster, accelerator ({}) and presets, {} accelerators a node (nodes = "
        "the row's GPUs / {}); its workload is not used",
        base->file, base->accelerator, base->accelerators_per_node, base->accelerators_per_node));
  }
  for (const auto* conv : every) {
    if (std::find(used.conventions.begin(), used.conventions.end(), conv) == used.conventions.end()) continue;
    report.assumptions.push_back(fmt::format("{}: {}", conv->name, conv->description));
    for (const auto& named : named_models()) {
      if (named.conventions != conv->name ||
          std::find(used.named.begin(), used.named.end(), &named) == used.named.end()) {
        continue;
      }
      report.assumptions.push_back(fmt::format("{}: {} = library preset {}, recompute {} ({})", conv->name,
                                               named.row_model, named.preset, named.recompute, named.recipe));
    }
    if (conv == &default_conventions()) {
      for (const auto& line : used.own_lines) report.assumptions.push_back(line);
    }
  }
  if (!used.columns_set.empty()) {
    std::vector<std::string> counts;
    for (const auto& c : row_setting_columns()) {
      const auto it = used.columns_set.find(c.column);
      if (it != used.columns_set.end()) {
        counts.push_back(fmt::format("{} ({} row{})", c.column, it->second, it->second == 1 ? "" : "s"));
      }
    }
    report.assumptions.push_back(fmt::format(
        "set by the rows' own columns, over their notes, published runs and the conventions above: {}",
        fmt::join(counts, ", ")));
  }
}

}  // namespace

ValidationReport validate_training_dataset(const std::filesystem::path& dataset,
                                           const TrainingValidationOptions& options) {
  ValidationReport report;
  report.dataset = dataset.string();
  const auto rows = read_csv_file(dataset);
  require_columns(rows, report.dataset, {"id", "metric", "value"});
  // Every row is mapped first: a problem in any row stops the run before a simulation, and all
  // of them are reported at once.
  std::vector<RowMapping> mappings;
  std::vector<std::string> problems;
  ScenarioSet set;
  std::map<std::string, std::size_t> scenario_index;
  for (const auto& row : rows) {
    mappings.push_back(map_training_row(row, options.base));
    for (const auto& p : mappings.back().problems) {
      problems.push_back(fmt::format("{}:{}: {}", report.dataset, row.line, p));
    }
    set.of_row.push_back(std::string::npos);
    const auto& mapping = mappings.back();
    if (!mapping.scenario_yaml) continue;
    const auto [it, inserted] = scenario_index.try_emplace(mapping.configuration, set.yamls.size());
    if (inserted) {
      set.yamls.push_back(*mapping.scenario_yaml);
      set.names.push_back(fmt::format("{}#{}", dataset.filename().string(), row.get("id")));
      set.rows.push_back(0);
      set.needs_step.push_back(false);
    }
    ++set.rows[it->second];
    if (!parse_memory_metric(row.get("metric"))) set.needs_step[it->second] = true;
    set.of_row.back() = it->second;
  }
  if (!problems.empty()) {
    throw ConfigError(fmt::format("{} row problem{} (docs/validation.md, \"Validating your own measurements\"):\n{}",
                                  problems.size(), problems.size() == 1 ? "" : "s", fmt::join(problems, "\n")));
  }
  const std::vector<Simulated> simulated = simulate_all(set, options);

  UsedSettings used;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& mapping = mappings[i];
    const std::string& id = row.get("id");
    if (!mapping.scenario_yaml) {
      report.skipped.push_back({id, mapping.skip_reason});
      continue;
    }
    const auto& sim = simulated[set.of_row[i]];
    if (!sim.error.empty()) {
      report.skipped.push_back({id, fmt::format("simulation failed: {}", sim.error)});
      continue;
    }
    if (mapping.named_model || !mapping.model_preset.empty()) {
      // A row that names its model and also states the shape must agree with the preset.
      const auto stated = [&row](const char* column, std::int64_t preset) {
        const auto value = parse_integer(row.get(column));
        return !value || *value == preset;
      };
      if (!stated("layers", sim.model.num_hidden_layers) || !stated("hidden", sim.model.hidden_size) ||
          !stated("heads", sim.model.num_attention_heads)) {
        report.skipped.push_back(
            {id, fmt::format("row's layers/hidden/heads {}/{}/{} disagree with preset '{}' ({}/{}/{})",
                             row.get("layers"), row.get("hidden"), row.get("heads"), sim.model.name,
                             sim.model.num_hidden_layers, sim.model.hidden_size, sim.model.num_attention_heads)});
        continue;
      }
    }
    const auto& conv = *mapping.conventions;
    const std::string& metric = row.get("metric");
    const bool memory = parse_memory_metric(metric).has_value();
    const auto predicted = memory ? predict_memory_metric(metric, row.get("unit"), sim.memory)
                                  : predict_metric(metric, row.get("unit"), conv.tflops_counting, sim.step);
    if (!predicted) {  // map_training_row already checked; kept so a new metric cannot slip through
      report.skipped.push_back({id, fmt::format("metric '{}' is not supported", metric)});
      continue;
    }
    const double measured = *parse_number(row.get("value"));  // map_training_row checked it
    ValidationRow out;
    out.id = id;
    out.metric = metric;
    out.unit = row.get("unit");
    out.measured = measured;
    out.predicted = *predicted;
    out.error_pct = 100.0 * (*predicted - measured) / measured;
    out.step_time_s = memory ? 0.0 : sim.step.step_time_s;
    out.memory = memory;
    out.conventions = conv.name;
    out.note = sim.memory_note;
    used.record(row, mapping);
    report.rows.push_back(std::move(out));
  }

  summarise_report(used, options.base, report);
  return report;
}

std::string render_validation_table(const ValidationReport& report) {
  std::string out = fmt::format("dataset {}\n", report.dataset);
  out += fmt::format("{:<22} {:<22} {:>12} {:>12} {:>9}  {}\n", "id", "metric", "measured", "predicted", "error",
                     "step time");
  for (const auto& r : report.rows) {
    const std::string step = r.memory ? fmt::format("footprint ({})", r.unit) : fmt::format("{:.3f} s", r.step_time_s);
    out += fmt::format("{:<22} {:<22} {:>12.4g} {:>12.4g} {:>+8.1f}%  {}{}\n", r.id, r.metric, r.measured,
                       r.predicted, r.error_pct, step, r.note.empty() ? "" : "  *");
  }
  append_notes_and_skipped(out, report.rows, report.skipped, 24);
  if (!report.assumptions.empty()) {
    out += "assumed (documented framework defaults; never chosen per row):\n";
    for (const auto& a : report.assumptions) out += fmt::format("  {}\n", a);
  }
  const auto& s = report.summary;
  if (s.rows == 0) {
    out += "no row could be compared\n";
    return out;
  }
  for (const auto& p : report.per_source) {
    out += fmt::format("  {:<18} rows {:>3}  MAPE {:6.2f} %  median {:6.2f} %  worst {:6.2f} % ({})\n", p.conventions,
                       p.rows, p.mape_pct, p.median_pct, p.max_pct, p.worst_id);
  }
  out += fmt::format("rows {}  MAPE {:.2f} %  median {:.2f} %  worst {:.2f} % ({})\n", s.rows, s.mape_pct,
                     s.median_pct, s.max_pct, s.worst_id);
  return out;
}

nlohmann::json validation_json(const ValidationReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : report.rows) {
    rows.push_back({{"id", r.id}, {"metric", r.metric}, {"unit", r.unit}, {"measured", r.measured},
                    {"predicted", r.predicted}, {"error_pct", r.error_pct},
                    {"step_time_s", r.step_time_s}, {"footprint_only", r.memory}, {"conventions", r.conventions},
                    {"note", r.note}});
  }
  const auto source_json = [](const ValidationSummary& s) {
    nlohmann::json j = summary_json(s);
    if (!s.conventions.empty()) j["conventions"] = s.conventions;
    return j;
  };
  nlohmann::json per_source = nlohmann::json::array();
  for (const auto& p : report.per_source) per_source.push_back(source_json(p));
  return {{"schema_version", 1},
          {"dataset", report.dataset},
          {"summary", source_json(report.summary)},
          {"per_source", per_source},
          {"rows", rows},
          {"skipped", skipped_json(report.skipped)},
          {"assumptions", report.assumptions}};
}

}  // namespace clustersim::validate
