#pragma once
/// `clustersim validate --dataset` for published LLM-inference measurements (the columns of
/// validation/data/ground_truth_inference.csv): each row becomes a serving scenario, written as
/// YAML text as the training validation writes its own, run with runner::run_scenario, and its
/// metric is computed the way the row's benchmark tool counts it, then compared.
///
/// Settings a row leaves unstated come only from the framework table
/// (sim/serving/frameworks.cpp, docs/serving-frameworks.md section 7); what a source states for
/// all of its runs (build or launch flags published with the numbers) is applied from that
/// source's conventions (InferenceSource), never chosen per row.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/serving/serving_workload.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/error_summary.hpp"

namespace clustersim::validate {

/// How a row's number was measured.
enum class ServingBenchmark {
  /// B requests prefilled together, then decoded together to the last token; nothing joins the
  /// batch while it runs (TensorRT-LLM's gptSessionBenchmark and benchmarks/python/benchmark.py).
  static_batch,
  /// One request alone on an idle engine (batch-1 first-token latency).
  latency,
  /// Every request submitted at once to a continuous-batching engine (vLLM benchmark_throughput,
  /// MLPerf Offline).
  offline,
  /// MLPerf Server: Poisson arrivals; the reported figure is the one at the highest rate whose
  /// p99 TTFT and p99 TPOT meet the benchmark's limits.
  server,
  /// Requests at a stated rate ("request rate R req/s" in the scenario text; Poisson, or gamma
  /// gaps of "burstiness b": vllm bench serve --request-rate R --burstiness b).
  rate,
  /// A stated number of requests in flight, each sent when one finishes ("max concurrency C"
  /// with no finite rate: vllm bench serve --max-concurrency C).
  concurrency,
};
std::string_view serving_benchmark_name(ServingBenchmark benchmark);

/// One row of an inference dataset, parsed.
struct InferenceRow {
  std::string id, source, model, gpu_type, precision, framework, scenario, metric, unit, notes;
  int gpus = 0;
  int tp = 1, pp = 1;             ///< an empty pp means 1
  std::int64_t input_len = 0;     ///< tokens per request; 0 with `dataset`: the profile's lengths
  std::int64_t output_len = 0;    ///< tokens per request; 0: unstated (a first-token row generates one)
  /// A dataset whose length profile gives the requests' lengths where input_len and output_len
  /// are empty (the `dataset` column: a library profile of models/data/datasets).
  std::string dataset;
  std::int64_t batch = 0;         ///< requests in the static batch; 0: unstated (continuous batching)
  double value = 0;               ///< the measurement, in `unit`
};

/// Parses one CSV row. nullopt, with `problem` saying what is wrong, when a required column
/// (id, model, gpus, gpu_type, input_len unless the row names a dataset, metric, value) is
/// missing or is not a number.
std::optional<InferenceRow> parse_inference_row(const CsvRow& row, std::string& problem);

/// Is this dataset in the inference format (it has input_len, output_len and framework
/// columns)? The training format has none of them.
bool is_inference_dataset(const std::vector<CsvRow>& rows);

/// A source's conventions: how its tool counts, and what it states for all of its runs. One
/// entry per source family, keyed by row-id prefix (first match wins).
struct InferenceSource {
  std::string name{};          ///< key in the report, e.g. "trtllm061_H100"
  std::string id_prefix{};     ///< rows whose id starts with this
  std::string description{};   ///< tool, version, and where each stated setting comes from
  /// workload.framework: whose defaults fill what is unstated; "" reads it from the row's
  /// framework and scenario columns (TensorRT-LLM static batch -> trtllm-static, else
  /// trtllm-ifb; vLLM 0.6 / 0.8; SGLang).
  std::string framework{};
  /// A throughput whose unit does not say per GPU or per system is per GPU (true) or per
  /// system (false).
  bool unstated_per_gpu = false;
  /// The tool's "tokens/s" (metrics tokens_per_s and throughput_tokens_per_s) counts output
  /// tokens only, not input + output.
  bool tokens_are_output = false;
  /// The KV-cache format of the rows whose weights are fp8: "fp8" when the source's build or
  /// launch flags say so, "" for the framework's default (the activations' format).
  std::string fp8_kv_cache{};
  /// Scheduler keys the source's runs state (their launch flags), as a YAML flow-mapping body
  /// (e.g. "max_sequences: 3000, chunked_prefill: false"); "" for none.
  std::string stated_scheduler{};
  /// Workload keys the source's runs state beyond the scheduler (one YAML line each under
  /// `workload:`, e.g. "decode_kv_per_query_head: false"); empty: none.
  std::vector<std::string> stated_workload{};
  /// vLLM multi-step scheduling the runs state (--num-scheduler-steps); 1: none. The host work
  /// of one scheduling step is spread over this many decode iterations.
  int scheduler_steps = 1;
  /// Requests a run sends when the row has no batch: 0 reads "N requests" from the row's
  /// scenario column.
  std::int64_t requests = 0;
};

/// The documented source conventions, in match order.
const std::vector<InferenceSource>& inference_sources();

/// The one set of conventions for rows whose id matches no documented source (reported as
/// "defaults"): the framework from the row's framework column, per-system throughput unless the
/// unit says per GPU, 1,000 requests where the row states no count (vLLM's benchmark default).
const InferenceSource& default_serving_source();

/// A dataset `model` name mapped to a library preset (models/data/llms).
struct InferenceModel {
  std::string row_model;  ///< as the dataset names it, e.g. "LLaMA 7B"
  std::string preset;     ///< e.g. "llama-2-7b"
  std::string why;        ///< the mapping's source
};
const std::vector<InferenceModel>& inference_models();

/// A row's precision from its `precision` column and its source: the weights' format, the
/// activations' and the KV cache's.
struct RowPrecision {
  std::string weights, activations, kv_cache;
  std::string note;  ///< "" or how a source-stated exception applies
};

/// What a metric measures, for the summary: throughput (tokens, samples or requests per
/// second), TTFT, TPOT, ITL, or end-to-end latency.
enum class MetricFamily { throughput, ttft, tpot, itl, e2e_latency };
std::string_view metric_family_name(MetricFamily family);

/// A metric name, read with the row's unit and its source's conventions.
struct ServingMetric {
  MetricFamily family = MetricFamily::throughput;
  enum class Count { output_tokens, total_tokens, requests };
  Count count = Count::output_tokens;  ///< throughput: what is counted
  bool per_gpu = false;                ///< throughput: divided by the row's GPUs
  enum class Statistic { mean, p50, p90, p99 };
  Statistic statistic = Statistic::mean;  ///< latencies
  double seconds_to_unit = 1;             ///< latencies: 1e3 for milliseconds
};

/// Parses `metric` (docs/validation.md lists every name): output_tokens_per_s,
/// output_tokens_per_s_per_gpu, total_output_tokens_per_s, throughput_tokens_per_s, tokens_per_s,
/// samples_per_s, requests_per_s, and ttft / tpot / itl [_p50 | _p90 | _p99] _ms | _s and
/// e2e_latency [...] _s | _ms. nullopt for any other name.
std::optional<ServingMetric> parse_serving_metric(const std::string& metric, const std::string& unit,
                                                  const InferenceSource& source);

/// The predicted value of `metric` from a serving run on `gpus` accelerators.
double predict_serving_metric(const ServingMetric& metric, const serving::ServingResult& result, int gpus);

/// MLPerf Server latency limits (p99 TTFT and p99 TPOT).
struct ServerLimits {
  double ttft_s = 0, tpot_s = 0;
  std::string source;
};
/// The row's limits: stated in its notes ("ttft_p99_ms=2000; tpot_p99_ms=200"), else the MLPerf
/// benchmark's of the row's model (docs/serving-frameworks.md section 4); nullopt when neither.
std::optional<ServerLimits> server_limits(const InferenceRow& row, const std::string& preset);

/// A row mapped to a scenario, or the reason it cannot be.
struct ServingRowMapping {
  std::optional<std::string> scenario_yaml;
  std::string skip_reason;
  const InferenceSource* source = nullptr;
  const InferenceModel* model = nullptr;
  ServingBenchmark benchmark = ServingBenchmark::static_batch;
  std::optional<ServingMetric> metric;
  std::optional<ServerLimits> limits;  ///< server rows
  std::string note;                    ///< "" or what the comparison should be read with
};
/// Builds a row's scenario: one pool of gpus / (tp x pp) instances of the row's model on the
/// row's accelerator (one node of its system preset per 8 GPUs), fixed input and output lengths,
/// the row's precision, the source's framework and stated settings; offline and static-batch
/// rows send every request at time 0 (count = batch x instances, or the source's request
/// count), latency rows one request, server rows Poisson arrivals (the rate is searched).
ServingRowMapping map_serving_row(const CsvRow& row);

/// One compared row.
struct ServingValidationRow {
  std::string id, metric, unit, source;
  MetricFamily family = MetricFamily::throughput;
  double measured = 0, predicted = 0;
  double error_pct = 0;  ///< (predicted - measured) / measured x 100
  double duration_s = 0; ///< the simulated run (the passing run's, for a server row)
  std::string note;
};

struct SkippedServingRow {
  std::string id, reason;
};

/// MAPE, median and worst absolute error of a group of rows.
struct ServingSummary : ErrorSummary {
  std::string group;  ///< a metric family or a source name; "" for all rows
};

struct ServingValidationReport {
  std::string dataset;
  std::vector<ServingValidationRow> rows;
  std::vector<SkippedServingRow> skipped;
  ServingSummary summary;
  std::vector<ServingSummary> per_family;  ///< throughput, TTFT, ... (families with rows)
  std::vector<ServingSummary> per_source;  ///< in inference_sources() order
  std::vector<std::string> assumptions;    ///< conventions applied, one line per source and model
};

/// Rate search of a server row: the highest Poisson rate (requests/s) of `scenario_yaml` at
/// which the run's p99 TTFT and p99 TPOT meet `limits` (set as its workload.slo), by bisection
/// between 1/64 of the offline rate (every request at once) and the offline rate, to 1 % of the
/// rate. The passing run's result, or none when even 1/64 of the offline rate misses them.
struct ServerSearch {
  double rate_per_s = 0;
  int runs = 0;
  std::unique_ptr<serving::ServingResult> result;
};
/// `overrides` (e.g. "simulation.calibration=FILE") apply to every run of the search.
ServerSearch search_server_rate(const std::string& scenario_yaml, const std::string& file_name,
                                const ServerLimits& limits, const std::vector<std::string>& overrides = {});

/// Runs every row of the dataset; every row is compared or skipped with its reason.
ServingValidationReport validate_serving_dataset(const std::filesystem::path& dataset);
/// The same on rows already read (an imported benchmark output); `dataset` names them.
/// `calibration`: a calibration table every row's scenario runs on (simulation.calibration);
/// empty: the library's default tables.
ServingValidationReport validate_serving_rows(const std::vector<CsvRow>& rows, const std::string& dataset,
                                              const std::filesystem::path& calibration = {});

/// Text: per-row measured, predicted, error; skipped rows; assumptions; then median and worst
/// per metric family, per source, and overall, with the targets.
std::string render_serving_validation_table(const ServingValidationReport& report);
/// JSON: {summary, per_family[], per_source[], rows[], skipped[], assumptions[]}.
nlohmann::json serving_validation_json(const ServingValidationReport& report);

}  // namespace clustersim::validate
