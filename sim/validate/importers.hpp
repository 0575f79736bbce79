#pragma once
/// Importers: benchmark tools' own outputs turned into rows of the project's validation CSVs
/// (`clustersim import KIND FILE...`, and `validate` / `collective --compare` reading such files
/// directly). What the tool's file does not say (the GPU, the tensor-parallel size, the framework
/// version) comes from fields the user gives (`--field key=value`) or from the file's metadata
/// under the same names; a row left without it is skipped by `validate` with that reason.
///
/// * `vllm-bench`: the result JSON of `vllm bench serve --save-result` (and of the older
///   `benchmarks/benchmark_serving.py`): one row per metric it reports (request and token
///   throughputs; mean, median and p90 / p99 of TTFT, TPOT, ITL and end-to-end latency) in the
///   columns of validation/data/ground_truth_inference.csv.
/// * `sglang-bench`: `python -m sglang.bench_serving --output-file`: JSON lines, one run each
///   (the same metrics, SGLang's key names).
/// * `trtllm-bench`: `trtllm-bench throughput --report_json FILE` (TensorRT-LLM 1.x): request
///   and token throughputs, end-to-end latency percentiles, and with `--streaming` TTFT and TPOT.
/// * `genai-perf`: NVIDIA GenAI-Perf's `profile_export_genai_perf.json` (and AIPerf's
///   `profile_export_aiperf.json`, the same layout): TTFT, inter-token latency (its per-request
///   mean gap: TPOT), request latency, request and output-token throughput. Their CSV exports
///   too, which state neither the model nor the load (`--field model=`, `--field scenario=`).
/// * `mlperf`: MLPerf Inference LoadGen's `mlperf_log_summary.txt` (Offline, Server; Interactive
///   is a Server run with tighter limits): the run's samples/s and tokens/s, the TTFT and TPOT
///   limits of its test parameters; the benchmark (model) from the path
///   (`results/<system>/llama2-70b-99/Offline/...`); with the submission's `systems/<system>.json`
///   among the files, its accelerator and count.
/// * `nccl-tests`: the stdout of nccl-tests / rccl-tests (`all_reduce_perf` ...): per message size
///   an in-place `busbw` and `time_us` row in the columns of ground_truth_kernels.csv.
/// * `megatron-log`: a Megatron-LM training log (rank 0's stdout of pretrain_gpt.py): the model
///   shape and layout from the arguments block it prints, the median iteration time of the logged
///   intervals after the first, and the largest `max allocated` / `max reserved` of its memory
///   reports, in the columns of ground_truth_training.csv (and the launch columns it states).
/// * `nemo-log`: a NeMo training log (rank 0's stdout): the `train_step_timing in s` of NeMo 2.0's
///   progress lines ("Training epoch E, iteration I/N | ... | train_step_timing in s: X"), of
///   NeMo 1.x's progress bar ("..., train_step_timing in s=X]") or of its DLLogger lines ("DLLL
///   {...}"): the median step after the first, in the training columns; NeMo prints no model
///   or layout block, so those come from fields (`--field model=... gpus=... tp=...`).
/// * `kineto`: PyTorch profiler traces (Chrome-trace JSON): one calibration-table row per
///   operator shape (sim/validate/trace_import.hpp), in the columns of
///   docs/calibration-format.md; `--field accelerator=` when the trace's GPU name is ambiguous.
/// * `nsys`: Nsight Systems `nsys stats --report nvtx_gpu_proj_trace --format csv` of a run under
///   emit_nvtx(record_shapes=True): the same rows from PyTorch's NVTX ranges (calibration_from_nsys;
///   `--field accelerator=` and `--field dtype=` are required: the report states neither).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/name_table.hpp"
#include "sim/validate/csv_table.hpp"

namespace clustersim::validate {

enum class ImportKind {
  vllm_bench,
  sglang_bench,
  trtllm_bench,
  genai_perf,
  mlperf,
  nccl_tests,
  megatron_log,
  nemo_log,
  kineto,
  nsys
};

/// vllm-bench, sglang-bench, trtllm-bench, genai-perf, mlperf, nccl-tests, megatron-log, nemo-log, kineto, nsys.
const config::NameTable<ImportKind>& import_kind_names();

/// Rows in the columns of one of the project's datasets.
struct ImportedRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  ///< in `columns`' order
  std::vector<std::string> notes;              ///< what the importer assumed, per file
};

/// The columns of validation/data/ground_truth_inference.csv (and `dataset`, a library length
/// profile a row may name instead of its lengths) and of ground_truth_kernels.csv.
const std::vector<std::string>& inference_columns();
const std::vector<std::string>& kernel_columns();
/// The columns of validation/data/ground_truth_training.csv and the optional launch columns a
/// Megatron-LM log states (micro_batch, recompute, sequence_parallel, zero, framework).
const std::vector<std::string>& training_columns();
/// The columns of a calibration table (models::kCalibrationHeader).
const std::vector<std::string>& calibration_columns();

/// Reads `file` as `kind`'s output and appends its rows. `fields` (column -> value) fill or
/// override columns the file does not state. Throws ConfigError naming the file, line and
/// column for a malformed file, and the key for a missing or mistyped value.
void import_file(ImportKind kind, const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                 ImportedRows& out);

/// Imports `files` in order (import_file); for `mlperf`, a `.json` among them is the submission's
/// systems/<name>.json, whose accelerator and count fill every summary's row; for `kineto` and
/// `nsys`, one row per operator shape over all the files (the median of every instance).
void import_files(ImportKind kind, const std::vector<std::filesystem::path>& files,
                  const std::map<std::string, std::string>& fields, ImportedRows& out);

/// The kind of a tool output recognised by its content (a JSON object with vLLM's or SGLang's
/// result keys, nccl-tests' header), or nullopt (e.g. a CSV).
std::optional<ImportKind> detect_import_kind(const std::filesystem::path& file);

/// RFC 4180 text of the rows, header first.
std::string rows_csv(const ImportedRows& rows);

/// The rows as parsed CSV rows (what validate reads), each at line 2, 3, ... of that text.
std::vector<CsvRow> as_csv_rows(const ImportedRows& rows, std::string_view name);

/// A dataset file: a CSV as it is, or a tool output recognised by detect_import_kind imported
/// with no fields (what `validate` and `collective --compare` read).
std::vector<CsvRow> read_dataset_rows(const std::filesystem::path& file);

}  // namespace clustersim::validate
