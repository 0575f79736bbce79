#pragma once
/// `clustersim validate --dataset`: map rows of published training measurements to scenarios,
/// predict each row's metric, and report per-row error and MAPE / median / worst, overall and
/// per source.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/validate/base_cluster.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/error_summary.hpp"

namespace clustersim::validate {

/// Settings a source leaves unstated, filled from that source's documented framework defaults
/// of its era (never chosen per row). One entry per source family, keyed by row-id prefix and,
/// where one source mixes schemes (SC21 Table 2: ZeRO-3 and PTD-P), by how the notes start.
/// A run configuration a source published for one of its models (its authors' launch script),
/// applied to that model's rows instead of the source defaults. A setting the row itself states
/// ("MBS n" in its notes, its vp column) still wins.
struct PublishedRun {
  std::string model{};                         ///< the rows' `model` column, e.g. "GPT-18.4B"
  std::int64_t micro_batch = 0;                ///< 0: the source default
  std::int64_t layers_per_virtual_stage = 0;   ///< > 0: interleaved, vp = layers / pp / this
  bool overlap_grad_reduce = false;            ///< gradient all-reduce overlapped with the backward
};

struct SourceConventions {
  std::string name{};           ///< key in the report, e.g. "meg21_t2 ZeRO-3"
  std::string id_prefix{};      ///< rows whose id starts with this use these conventions
  std::string notes_marker{};   ///< "" or text the row's notes must start with
  std::string description{};    ///< framework, era and where the defaults come from
  /// System preset (models/data/systems) for the row's gpu_type, or "" when `cluster_yaml`
  /// describes the cluster inline.
  std::string system{};
  /// Inline `cluster:` body (node and network, without `nodes:`) for a system that has no
  /// 8-NIC library preset; used when `system` is "".
  std::string cluster_yaml{};
  /// Vocabulary of the GPT built from the row's layers / hidden / heads; unused when the model
  /// comes from a named preset.
  std::int64_t vocab_size = 0;
  std::int64_t micro_batch = 1;  ///< when the notes state no "MBS n" / "microbatch n"
  std::string recompute{};      ///< none | selective | full; "" = the named model's recipe
  std::string attention{};      ///< flash | unfused
  std::string framework{"megatron"};  ///< workload.framework: whose memory conventions apply
  bool sequence_parallel = false;
  bool overlap_grad_reduce = false;
  int zero = 0;
  /// ZeRO-3 collectives: "layer" (one per layer) or "tensor" (one per parameter tensor).
  std::string zero3_granularity{"layer"};
  /// ZeRO-3 all-gathers in PyTorch's list form (one copy kernel per rank after each gather).
  bool zero3_list_gathers = false;
  std::string precision{};      ///< bf16 | fp16 | fp8
  /// How the source counts `tflops_per_gpu`: "hardware" (recompute counted, SC21 Eq. 3) or
  /// "model" (Megatron-Core / NeMo model FLOPs).
  std::string tflops_counting{};
  bool tp_comm_overlap = false;  ///< Transformer Engine TP-communication overlap (when tp > 1)
  /// Megatron's asynchronous backward TP reduction beside the wgrad GEMM (Megatron-LM 2022 on);
  /// false for 2021 Megatron-LM and Megatron-DeepSpeed (workload.tp_async_backward).
  bool tp_async_backward = true;
  /// The model is the library preset named for the row's `model` column (named_models()), not a
  /// GPT built from the row's layers / hidden / heads.
  bool named_models = false;
  /// > 0: a row without tp/pp takes them from "model-parallel size N" in its notes: N == 1 gives
  /// tp = pp = 1; otherwise tp = this and pp = N / tp.
  int tp_for_model_parallel_size = 0;
  /// Megatron-DeepSpeed `--pp-partition-method 'type:transformer|embedding'`: the embedding and
  /// the tied LM head each count as one layer when layers are spread evenly over the stages, so
  /// the first and last stages hold one transformer layer fewer (workload.stage_layers).
  bool embedding_counts_as_stage_layer = false;
  /// Per-model run configurations the source published (empty: none); see PublishedRun.
  std::vector<PublishedRun> published_runs{};
  /// Rows of a source with no conventions of its own (default_conventions()): the system is the
  /// preset the row's gpu_type names, the precision the row's `precision` column, the model the
  /// preset its `model` column names (else a GPT from its shape); a row that cannot be mapped is
  /// an error in the user's file, not a skipped row.
  bool system_from_gpu_type = false;
  /// workload.optimizer: master_weights (fp32 | remainders | none) and moments (fp32 | bf16).
  std::string optimizer_master{"fp32"};
  std::string optimizer_moments{"fp32"};
};

/// The documented conventions, in match order.
const std::vector<SourceConventions>& source_conventions();

/// The one set of defaults for rows whose id matches no source_conventions() entry: the
/// `mcore_h100` entry (Megatron-Core's published H100 runs, 2024) on the row's own system.
const SourceConventions& default_conventions();

/// A row's named model mapped to a library preset, with the setting its framework recipe fixes.
struct NamedModel {
  std::string conventions;  ///< SourceConventions::name it belongs to
  std::string row_model;    ///< the dataset's `model` column, e.g. "LLAMA2-7B"
  std::string preset;       ///< library preset (models/data/llms), e.g. "llama-2-7b"
  std::string recompute;    ///< none | selective | full, as the recipe sets it
  std::string recipe;       ///< the recipe file the settings come from
  /// The recipe's optimizer state where it differs from its source's conventions (workload.
  /// optimizer master_weights and moments); "" = the conventions'.
  std::string optimizer_master{};
  std::string optimizer_moments{};
};

/// Named models of the sources whose rows give a model name instead of its shape.
const std::vector<NamedModel>& named_models();

/// Sources (or parts of one) that cannot be mapped, with the precise reason.
struct SourceSkip {
  std::string id_prefix;
  std::string notes_marker;  ///< "" or text the row's notes must start with (first match wins)
  std::string reason;
};
const std::vector<SourceSkip>& source_skips();

/// A time-to-train metric, `est_days_<N>_tokens`, `est_hours_<N>_tokens` or
/// `gpu_hours_<N>_tokens`, N a number with an optional K / M / B / T suffix (e.g. 300B, 10T).
struct TimeToTrainMetric {
  enum class Unit { days, hours, gpu_hours };
  double tokens = 0;
  Unit unit = Unit::days;
};
/// Parses a time-to-train metric name; nullopt for any other name.
std::optional<TimeToTrainMetric> parse_time_to_train_metric(const std::string& metric);

/// What one simulated step gives a metric conversion.
struct StepMeasures {
  double step_time_s = 0;
  double tokens_per_step = 0;  ///< global_batch x seq_len
  double gpus = 0;
  double model_flops_per_step = 0;     ///< Megatron model FLOPs (no recompute)
  double hardware_flops_per_step = 0;  ///< model FLOPs + recomputed FLOPs
  double peak_flops_per_s = 0;         ///< dense peak of the run's precision, one GPU
};

/// The predicted value of `metric` (docs/validation.md defines each), in the row's unit ("%"
/// gives mfu / hfu in percent). `tflops_counting` is the source's convention for
/// `tflops_per_gpu`, `pct_of_peak` and `aggregate_pflops`. nullopt for an unknown metric.
std::optional<double> predict_metric(const std::string& metric, const std::string& unit,
                                     const std::string& tflops_counting, const StepMeasures& step);

/// A device-memory metric of a training row, compared with the closed-form footprint
/// (models::training_footprint) of the row's peak pipeline stage; no step is simulated for it.
enum class MemoryQuantity {
  /// `peak_memory_allocated`: torch.cuda.max_memory_allocated (Megatron's "max allocated", NeMo's
  /// max_memory_allocated): the footprint's allocated terms, without allocator fragmentation,
  /// workspace, NCCL buffers or the CUDA context.
  allocated,
  /// `peak_memory_reserved`: torch.cuda.max_memory_reserved (torchtitan's logged "memory"):
  /// the allocated terms plus the caching allocator's fragmentation, without the workspace
  /// term (CUDA context, NCCL buffers, cuBLAS workspace).
  reserved,
  /// `device_memory_used`: nvidia-smi / NVML used memory of the process: the whole footprint,
  /// the workspace term included.
  device_used,
};
/// The memory metric `metric` names; nullopt for any other name.
std::optional<MemoryQuantity> parse_memory_metric(const std::string& metric);
/// Bytes in one `unit` of a memory row: GiB, MiB (binary), GB, MB (decimal) or bytes; nullopt
/// for any other unit. nvidia-smi's "MiB" column is binary: write it as MiB.
std::optional<double> memory_unit_bytes(const std::string& unit);

/// What the footprint of a row's peak stage gives a memory metric, bytes per device.
struct MemoryMeasures {
  double allocated_bytes = 0;  ///< every allocated term (weights ... fp8 weight cache)
  double reserved_bytes = 0;   ///< allocated + fragmentation
  double used_bytes = 0;       ///< reserved + workspace (the footprint's total)
  double capacity_bytes = 0;   ///< the accelerator's HBM capacity
  int peak_stage = 0;          ///< the pipeline stage with the largest footprint
};

/// The predicted value of a memory metric in the row's unit; nullopt for another metric or a
/// unit that is not a memory unit.
std::optional<double> predict_memory_metric(const std::string& metric, const std::string& unit,
                                            const MemoryMeasures& memory);

/// One compared row.
struct ValidationRow {
  std::string id;
  std::string metric;
  std::string unit;
  double measured = 0;
  double predicted = 0;
  double error_pct = 0;  ///< (predicted - measured) / measured x 100
  double step_time_s = 0;  ///< 0 for a memory row (no step is simulated for it)
  bool memory = false;     ///< a memory metric, compared with the footprint alone
  std::string conventions;  ///< SourceConventions::name of the conventions used
  /// "" or what the comparison should be read with, e.g. that the memory model puts the
  /// published (and so fitting) run above device memory.
  std::string note;
};

/// A row that could not be mapped, with the reason.
struct SkippedRow {
  std::string id;
  std::string reason;
};

struct ValidationSummary : ErrorSummary {
  std::string conventions;  ///< "" for the whole dataset, else a SourceConventions::name
};

struct ValidationReport {
  std::string dataset;
  std::vector<ValidationRow> rows;
  std::vector<SkippedRow> skipped;
  ValidationSummary summary;
  std::vector<ValidationSummary> per_source;  ///< in source_conventions() order, compared sources only
  std::vector<std::string> assumptions;  ///< conventions applied, one line per source family / named model
};

/// Builds the scenario YAML for a row, or returns why it cannot be mapped: `problems` for what is
/// wrong in the row itself (an unknown metric, a value that is not a number, an invalid optional
/// column, and for rows of default_conventions() an unknown gpu_type or model or an incomplete
/// split), `skip_reason` for a row of a documented source that its publication leaves unmappable.
struct RowMapping {
  std::optional<std::string> scenario_yaml;
  /// The scenario under a name common to all rows: rows with equal ones (a run's TFLOP/s, % of
  /// peak and PF/s rows) share one simulation. Set with scenario_yaml.
  std::string configuration;
  std::string skip_reason;
  /// Each "column 'X': what is wrong (the valid choices)" or a sentence about the row; the caller
  /// adds file and line.
  std::vector<std::string> problems;
  const SourceConventions* conventions = nullptr;
  const NamedModel* named_model = nullptr;  ///< set when the model is a named preset of a source
  /// Rows of default_conventions(): the preset (the --base scenario's `models:` or the library)
  /// the `model` column names; "" when the model is a GPT built from the row's shape.
  std::string model_preset;
  /// Rows of default_conventions() without --base: the system preset of the row's gpu_type.
  std::string system;
  std::vector<std::string> columns_set;  ///< optional columns the row sets (training_row_settings.hpp)
};

/// Maps one row. Precedence, highest first: the row's optional columns (micro_batch, vp,
/// stage_layers, recompute, sequence_parallel, zero, attention, tp_comm_overlap,
/// overlap_grad_reduce); what its notes state ("MBS n", "interleaving m=n for ...") and the run
/// its source published for that model; its source's conventions, or default_conventions().
/// With `base`, the cluster is the base scenario's for every row (nodes = GPUs / its node size).
RowMapping map_training_row(const CsvRow& row, const BaseCluster* base = nullptr);

/// How validate_training_dataset runs.
struct TrainingValidationOptions {
  const BaseCluster* base = nullptr;  ///< --base: the cluster of every row
  /// A calibration table every row's scenario runs on (simulation.calibration); empty: the
  /// library's default tables.
  std::filesystem::path calibration;
  int threads = 0;                    ///< simulations at once; 0: every core
  /// Called after each simulation with the rows done and the rows to simulate (rows of one
  /// configuration share a simulation); calls are serialised, never concurrent.
  std::function<void(int done_rows, int total_rows)> on_progress;
};

/// Runs every row of the dataset, the simulations in parallel, the report in file order (the
/// same as one thread's). Rows are never dropped silently: each is compared or skipped with its
/// reason. Throws ConfigError listing every row problem (file:line: ...) before simulating any.
ValidationReport validate_training_dataset(const std::filesystem::path& dataset,
                                           const TrainingValidationOptions& options = {});

/// Text table: per-row measured, predicted, error; then skipped rows; then the assumptions;
/// then MAPE/median/max per source and overall.
std::string render_validation_table(const ValidationReport& report);
/// JSON: {summary{mape_pct, median_pct, max_pct, worst_id, rows}, per_source[], rows[],
/// skipped[], assumptions[]}.
nlohmann::json validation_json(const ValidationReport& report);

}  // namespace clustersim::validate
