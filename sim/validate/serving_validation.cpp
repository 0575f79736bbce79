#include "sim/validate/serving_validation.hpp"

#include "sim/scenario/preset_library.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <deque>
#include <mutex>
#include <regex>
#include <string_view>

#include "sim/config/config_tree.hpp"
#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/frameworks.hpp"
#include "sim/serving/requests.hpp"
#include "models/llm/parallel_rules.hpp"
#include "sim/serving/serving_workload.hpp"
#include "sim/validate/csv_table.hpp"

namespace clustersim::validate {
namespace {

bool contains(const std::string& text, const char* needle) { return lower_case(text).find(needle) != std::string::npos; }

/// The accelerator and system preset of a row's `gpu_type`.
struct RowSystem {
  const char* needle;  ///< text the gpu_type contains (case-insensitive)
  const char* accelerator;
  const char* system;
};

const std::vector<RowSystem>& row_systems() {
  static const std::vector<RowSystem> systems = {
      {"h100", "h100-sxm", "dgx-h100"},     {"h200", "h200-sxm", "dgx-h200"},
      {"a100", "a100-sxm-80gb", "dgx-a100"}, {"l40s", "l40s", "l40s-pcie-x8"},
      {"mi300x", "mi300x", "mi300x-x8"},     {"mi325x", "mi325x", "mi325x-x8"},
      {"b200", "b200", "dgx-b200"},          {"gb200", "gb200", "gb200-nvl72"},  // gb200 after b200: the last match wins
  };
  return systems;
}

/// A source's stated precision for one of its models, where it differs from the row's column.
struct StatedModelPrecision {
  const char* source;
  const char* row_model;
  RowPrecision precision;
};

const std::vector<StatedModelPrecision>& stated_model_precisions() {
  static const std::vector<StatedModelPrecision> stated = {
      {"azure_ND", "LLAMA 3 405B",
       {"fp8", "bf16", "bf16",
        "the guide's config.json lists Meta-Llama-3.1-405B-FP8 with precision bfloat16: convert_checkpoint.py "
        "--dtype bfloat16 (no quantize.py, so no --kv_cache_dtype fp8) on Meta's FP8 checkpoint, whose weights stay "
        "fp8 (405B in bf16, 810 GB, does not fit 8 x 80 GB)"}},
  };
  return stated;
}

/// MLPerf Inference Server limits per benchmark model (docs/serving-frameworks.md section 4).
struct MlperfServer {
  const char* preset;
  double ttft_s, tpot_s;
  std::int64_t samples;
  const char* benchmark;
};

const std::vector<MlperfServer>& mlperf_servers() {
  static const std::vector<MlperfServer> servers = {
      {"llama-2-70b", 2.0, 0.200, 24576, "llama2-70b (v4.0)"},
      {"mixtral-8x7b", 2.0, 0.200, 15000, "mixtral-8x7b (v4.1)"},
      {"llama-3.1-405b", 6.0, 0.175, 8313, "llama3.1-405b (v5.0)"},
      {"llama-3-8b", 2.0, 0.100, 13368, "llama3.1-8b (v5.1)"},
  };
  return servers;
}

const InferenceSource* find_source(const std::string& id) {
  for (const auto& s : inference_sources()) {
    if (id.rfind(s.id_prefix, 0) == 0) return &s;
  }
  return &default_serving_source();
}

const InferenceModel* find_model(const std::string& row_model) {
  for (const auto& m : inference_models()) {
    if (m.row_model == row_model) return &m;
  }
  // A library preset's name or alias (Hugging Face id, release name); kept for the run.
  const std::string preset = scenario::library_model_named(row_model);
  if (preset.empty()) return nullptr;
  static std::mutex mutex;
  static std::deque<InferenceModel> resolved;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const auto& m : resolved) {
    if (m.row_model == row_model) return &m;
  }
  resolved.push_back({row_model, preset, "the library preset's name or aliases (models/data/llms)"});
  return &resolved.back();
}

/// The framework profile of a row: the source's, else from the row's framework and scenario.
std::optional<std::string> row_framework(const InferenceRow& row, const InferenceSource& source) {
  if (!source.framework.empty()) return source.framework;
  const std::string f = lower_case(row.framework);
  // A release named as "1.0", "v1.1.0", "0.10.2": its major and minor numbers.
  static const std::regex release(R"((?:^|[^0-9.])v?(\d+)\.(\d+))");
  std::smatch m;
  const bool versioned = std::regex_search(f, m, release);
  const int major = versioned ? std::stoi(m[1].str()) : -1, minor = versioned ? std::stoi(m[2].str()) : -1;
  if (f.find("tensorrt-llm") != std::string::npos || f.find("trt-llm") != std::string::npos) {
    if (major >= 1) {  // 1.x: the PyTorch backend (LLM API, trtllm-serve) or trtllm-bench
      return contains(row.scenario, "trtllm-bench") || contains(f, "trtllm-bench") ? "trtllm-bench-1.0" : "trtllm-1.0";
    }
    return contains(row.scenario, "static") || contains(row.scenario, "gptsessionbenchmark") ? "trtllm-static"
                                                                                            : "trtllm-ifb";
  }
  if (f.find("vllm") != std::string::npos) {
    if (major == 0 && minor >= 10) return "vllm-0.10";
    if (f.find("0.8") != std::string::npos) return "vllm-0.8";
    if (f.find("0.6") != std::string::npos) return "vllm-0.6";
  }
  if (f.find("sglang") != std::string::npos) return major == 0 && minor >= 5 ? "sglang-0.5" : "sglang-0.4";
  return std::nullopt;
}

/// The arrivals a row's scenario text states: "request rate R" (a finite number), "burstiness b",
/// "max concurrency C".
struct StatedArrival {
  std::optional<double> rate;
  double burstiness = 1;
  std::optional<long long> concurrency;
  bool constant = false;  ///< "constant intervals": perf_analyzer's default request distribution
};

StatedArrival stated_arrival(const std::string& text) {
  StatedArrival out;
  static const std::regex rate(R"(request rate\s+([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))", std::regex::icase);
  static const std::regex burstiness(R"(burstiness\s+([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))", std::regex::icase);
  static const std::regex concurrency(R"(max concurrency\s+(\d+))", std::regex::icase);
  std::smatch match;
  if (std::regex_search(text, match, rate)) out.rate = std::stod(match[1].str());
  if (std::regex_search(text, match, burstiness)) out.burstiness = std::stod(match[1].str());
  if (std::regex_search(text, match, concurrency)) out.concurrency = std::stoll(match[1].str());
  out.constant = contains(text, "constant interval");
  return out;
}

ServingBenchmark row_benchmark(const InferenceRow& row, const std::string& framework) {
  const StatedArrival arrival = stated_arrival(row.scenario);
  // A server row that states its rate (its latencies at the scheduled rate) runs at that rate.
  if (contains(row.scenario, "server") && !arrival.rate) return ServingBenchmark::server;
  if (arrival.concurrency) return ServingBenchmark::concurrency;
  if (arrival.rate) return ServingBenchmark::rate;
  if (contains(row.scenario, "latency") && row.batch <= 1) return ServingBenchmark::latency;
  if (framework == "trtllm-static" && row.batch > 0) return ServingBenchmark::static_batch;
  return ServingBenchmark::offline;
}

/// A setting one run states in its row's notes as `key=value` (entries separated by ";", "," or
/// spaces): an engine limit that becomes a scheduler key, or the run's KV-cache format or expert
/// parallelism. Each has the values it may take; another value skips the row with the reason.
struct NoteSetting {
  const char* key;
  std::regex valid;
  const char* expected;
  bool scheduler;  ///< written under `scheduler:` as it stands
};

const std::vector<NoteSetting>& note_settings() {
  static const std::vector<NoteSetting> settings = {
      // An MLPerf harness's gpu_batch_size and max_num_tokens, a launch flag of one run.
      {"max_sequences", std::regex(R"(\d+)"), "a whole number", true},
      {"max_batched_tokens", std::regex(R"(\d+)"), "a whole number", true},
      // SGLang's --mem-fraction-static, vLLM's --gpu-memory-utilization.
      {"memory_utilisation", std::regex(R"(0?\.\d+|1(?:\.0*)?)"), "a fraction in (0, 1]", true},
      {"recv_interval", std::regex(R"(\d+)"), "a whole number", true},  // SGLang --scheduler-recv-interval
      {"kv_cache", std::regex("fp8|bf16|fp16"), "one of fp8, bf16, fp16", false},
      {"ep", std::regex(R"(\d+)"), "a whole number", false},  // --ep-size / --ep_size
  };
  return settings;
}

/// The value of `key=value` in a row's notes, or nullopt.
std::optional<std::string> note_value(const std::string& notes, std::string_view key) {
  const auto separator = [](char c) { return c == ';' || c == ',' || std::isspace(static_cast<unsigned char>(c)); };
  for (std::size_t at = notes.find(key); at != std::string::npos; at = notes.find(key, at + 1)) {
    if (at > 0 && !separator(notes[at - 1])) continue;
    std::size_t i = at + key.size();
    while (i < notes.size() && notes[i] == ' ') ++i;
    if (i == notes.size() || notes[i] != '=') continue;
    ++i;
    while (i < notes.size() && notes[i] == ' ') ++i;
    std::size_t end = i;
    while (end < notes.size() && !separator(notes[end])) ++end;
    return notes.substr(i, end - i);
  }
  return std::nullopt;
}

/// Every setting a row's notes state takes one of its values; else false with the reason.
bool valid_note_settings(const InferenceRow& row, std::string& problem) {
  for (const NoteSetting& setting : note_settings()) {
    const auto value = note_value(row.notes, setting.key);
    if (value && !std::regex_match(*value, setting.valid)) {
      problem = fmt::format("notes {}={} is not {}", setting.key, *value, setting.expected);
      return false;
    }
  }
  return true;
}

/// "random range ratio R" in a row's scenario text: vLLM's `benchmark_serving.py --random-range-ratio`
/// as InferenceX's copy of it (utils/bench_serving) and vLLM's before 0.9 read it, lengths drawn
/// uniformly in [R x L, L] around the stated --random-input-len / --random-output-len L.
std::optional<double> stated_range_ratio(const std::string& text) {
  static const std::regex pattern(R"(random[- ]range[- ]ratio\s+([0-9]*\.?[0-9]+))", std::regex::icase);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  return std::stod(match[1].str());
}

/// "N requests" (or prompts, samples) in a row's scenario text.
std::optional<std::int64_t> stated_request_count(const std::string& text) {
  static const std::regex pattern(R"((\d+)\s+(?:requests|prompts|samples))", std::regex::icase);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  return std::stoll(match[1].str());
}

std::optional<RowPrecision> row_precision(const InferenceRow& row, const InferenceSource& source, std::string& problem) {
  for (const auto& stated : stated_model_precisions()) {
    if (source.name.rfind(stated.source, 0) == 0 && stated.row_model == row.model) return stated.precision;
  }
  const std::string p = lower_case(row.precision);
  RowPrecision out;
  if (p.find("fp8") != std::string::npos) {
    out.weights = "fp8";
    out.activations = "fp16";
    out.kv_cache = source.fp8_kv_cache.empty() ? "fp16" : source.fp8_kv_cache;
  } else if (p.find("bfloat16") != std::string::npos || p.find("bf16") != std::string::npos) {
    out.weights = out.activations = out.kv_cache = "bf16";
  } else if (p.find("fp16") != std::string::npos || p.find("float16") != std::string::npos ||
             p.find("half") != std::string::npos) {
    out.weights = out.activations = out.kv_cache = "fp16";
  } else {
    problem = row.precision.empty()
                  ? "the precision is not stated (a precision column of FP8, FP16 or BF16; clustersim import takes it "
                    "as --field precision=BF16)"
                  : fmt::format("precision '{}' is not one of FP8, FP16, BF16", row.precision);
    return std::nullopt;
  }
  // The KV-cache format one run states (notes "kv_cache=fp8"), e.g. a launch flag of that run only.
  if (const auto kv = note_value(row.notes, "kv_cache")) out.kv_cache = *kv;
  return out;
}

std::string duration_text(double seconds) { return fmt::format("{:.6g} ms", seconds * 1e3); }

/// The `scheduler:` keys of a row: the static batch, the source's stated flags, the engine limits
/// the row's notes state, and with vLLM multi-step scheduling the framework's host overhead spread over the steps.
std::string scheduler_yaml(const InferenceRow& row, const InferenceSource& source, const std::string& framework,
                           ServingBenchmark benchmark) {
  std::vector<std::string> keys;
  if (benchmark == ServingBenchmark::static_batch) keys.push_back(fmt::format("max_sequences: {}", row.batch));
  if (benchmark == ServingBenchmark::latency) keys.emplace_back("max_sequences: 1");
  if (!source.stated_scheduler.empty()) keys.push_back(source.stated_scheduler);
  // The engine limits one run states in its notes (note_settings; checked when the row was planned).
  for (const NoteSetting& setting : note_settings()) {
    if (!setting.scheduler || benchmark == ServingBenchmark::static_batch || benchmark == ServingBenchmark::latency ||
        source.stated_scheduler.find(setting.key) != std::string::npos) {
      continue;
    }
    if (const auto value = note_value(row.notes, setting.key)) keys.push_back(fmt::format("{}: {}", setting.key, *value));
  }
  if (source.scheduler_steps > 1) {
    const auto profile = serving::framework_scheduler(serving::framework_names().parse(framework), {});
    keys.push_back(fmt::format("iteration_overhead: {}, iteration_overhead_per_sequence: {}",
                               duration_text(profile.iteration_overhead_s / source.scheduler_steps),
                               duration_text(profile.iteration_overhead_per_sequence_s / source.scheduler_steps)));
  }
  if (keys.empty()) return "";
  return fmt::format("  scheduler: {{{}}}\n", fmt::join(keys, ", "));
}

std::string stated_workload_yaml(const InferenceSource& source) {
  std::string out;
  for (const auto& line : source.stated_workload) out += fmt::format("  {}\n", line);
  return out;
}

/// Requests a row's run sends per instance-set, or nullopt with `problem`.
std::optional<std::int64_t> row_request_count(const InferenceRow& row, const InferenceSource& source,
                                              ServingBenchmark benchmark, int instances, const std::string& preset,
                                              std::string& problem) {
  switch (benchmark) {
    case ServingBenchmark::latency:
      return 1;
    case ServingBenchmark::static_batch:
      return row.batch * instances;
    case ServingBenchmark::offline:
    case ServingBenchmark::server:
    case ServingBenchmark::rate:
    case ServingBenchmark::concurrency: {
      if (row.batch > 0) return row.batch;
      // A row of no documented source: its own "N requests" before the benchmark tool's default.
      if (&source == &default_serving_source()) {
        if (const auto stated = stated_request_count(row.scenario)) return *stated;
      }
      if (source.requests > 0) return source.requests;
      if (const auto stated = stated_request_count(row.scenario)) return *stated;
      if (benchmark == ServingBenchmark::server || source.name.rfind("mlperf", 0) == 0) {
        for (const auto& s : mlperf_servers()) {
          if (preset == s.preset) return s.samples;
        }
      }
      problem = "the row states no request count (batch column, or \"N requests\" in its scenario)";
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view serving_benchmark_name(ServingBenchmark benchmark) {
  switch (benchmark) {
    case ServingBenchmark::static_batch:
      return "static batch";
    case ServingBenchmark::latency:
      return "batch-1 latency";
    case ServingBenchmark::offline:
      return "offline";
    case ServingBenchmark::server:
      return "server";
    case ServingBenchmark::rate:
      return "request rate";
    case ServingBenchmark::concurrency:
      return "concurrency";
  }
  return "offline";
}

std::string_view metric_family_name(MetricFamily family) {
  switch (family) {
    case MetricFamily::throughput:
      return "throughput";
    case MetricFamily::ttft:
      return "TTFT";
    case MetricFamily::tpot:
      return "TPOT";
    case MetricFamily::itl:
      return "ITL";
    case MetricFamily::e2e_latency:
      return "end-to-end latency";
  }
  return "throughput";
}

bool is_inference_dataset(const std::vector<CsvRow>& rows) {
  if (rows.empty()) return false;
  const auto& fields = rows.front().fields;
  return fields.count("input_len") && fields.count("output_len") && fields.count("framework");
}

std::optional<InferenceRow> parse_inference_row(const CsvRow& row, std::string& problem) {
  InferenceRow out;
  out.id = row.get("id");
  out.source = row.get("source");
  out.model = row.get("model");
  out.gpu_type = row.get("gpu_type");
  out.precision = row.get("precision");
  out.framework = row.get("framework");
  out.scenario = row.get("scenario");
  out.metric = row.get("metric");
  out.unit = row.get("unit");
  out.notes = row.get("notes");
  std::vector<std::string> bad;
  // A column's integer, at least `least`; an empty optional column gives `fallback`.
  const auto integer = [&](const char* column, bool required, std::int64_t least, std::int64_t fallback) {
    const std::string& text = row.get(column);
    if (text.empty()) {
      if (required) bad.push_back(fmt::format("{} (empty)", column));
      return fallback;
    }
    const auto value = parse_integer(text);
    if (!value || *value < least) {
      bad.push_back(fmt::format("{} '{}'", column, text));
      return fallback;
    }
    return *value;
  };
  out.gpus = static_cast<int>(integer("gpus", true, 1, 0));
  out.tp = static_cast<int>(integer("tp", false, 1, 0));  // 0: not stated (the sizing rule picks it)
  out.pp = static_cast<int>(integer("pp", false, 1, 1));
  out.dataset = row.get("dataset");
  out.input_len = integer("input_len", out.dataset.empty(), 1, 0);
  out.output_len = integer("output_len", false, 1, 0);
  out.batch = integer("batch", false, 1, 0);
  if (out.id.empty()) bad.emplace_back("id (empty)");
  if (out.model.empty()) bad.emplace_back("model (empty)");
  if (out.metric.empty()) bad.emplace_back("metric (empty)");
  if (const auto value = parse_number(row.get("value")); value && *value > 0) {
    out.value = *value;
  } else {
    bad.push_back(fmt::format("value '{}'", row.get("value")));
  }
  if (!bad.empty()) {
    problem = fmt::format("row has no usable {}", fmt::join(bad, ", "));
    return std::nullopt;
  }
  return out;
}

const InferenceSource& default_serving_source() {
  static const InferenceSource defaults{
      .name = "defaults",
      .id_prefix = "",
      .description =
          "rows of any other source: the framework profile the row's framework column names (docs/serving-frameworks.md "
          "section 7: TensorRT-LLM 1.x -> trtllm-1.0, or trtllm-bench-1.0 when the row says trtllm-bench; older "
          "TensorRT-LLM -> trtllm-ifb, trtllm-static for static batching; vLLM 0.6 / 0.8 / 0.10+; SGLang 0.4 / "
          "0.5); a throughput whose unit does not say per GPU is per system; tokens/s counts input and output tokens "
          "unless the metric says output; an offline or server row without a batch or an \"N requests\" in its "
          "scenario sends 1,000 requests (the --num-prompts default of vLLM's benchmark_serving.py and "
          "`vllm bench serve`)",
      .framework = "",
      .unstated_per_gpu = false,
      .tokens_are_output = false,
      .requests = 1000};
  return defaults;
}

const std::vector<InferenceSource>& inference_sources() {
  static const std::vector<InferenceSource> sources = {
      {.name = "trtllm061_H100",
       .id_prefix = "trtllm061_H100",
       .description =
           "TensorRT-LLM v0.6.1 performance.md (@ 138f96d45f), H100 FP8: gptSessionBenchmark static batch, "
           "throughput = B x OSL / latency, out tok/s per GPU (the header); engines built with --enable_fp8 "
           "--fp8_kv_cache (the document's build commands): fp8 weights and KV cache, fp16 activations",
       .framework = "trtllm-static", .unstated_per_gpu = true, .fp8_kv_cache = "fp8"},
      {.name = "trtllm061_L40S",
       .id_prefix = "trtllm061_L40S",
       .description =
           "TensorRT-LLM performance.md (@ 138f96d45f), L40S FP8, data from v0.5: as the H100 rows (--enable_fp8 "
           "--fp8_kv_cache); the header says out tok/s without per GPU: every row is TP1, so it is the same",
       .framework = "trtllm-static", .unstated_per_gpu = true, .fp8_kv_cache = "fp8"},
      {.name = "trtllm061_A100",
       .id_prefix = "trtllm061_A100",
       .description =
           "TensorRT-LLM v0.6.1 performance.md (@ 138f96d45f), A100 FP16 (the document: remove --enable_fp8 "
           "--fp8_kv_cache on A100): fp16 weights, activations and KV cache; the header says out tok/s without per "
           "GPU: read per GPU, as the H100 table of the same document says and the shared README's check derives "
           "(LLaMA 70B TP4 670 against 2657 per GPU on H100 TP2)",
       .framework = "trtllm-static", .unstated_per_gpu = true},
      {.name = "trtllm05_ttft",
       .id_prefix = "trtllm05_ttft",
       .description =
           "TensorRT-LLM performance.md (@ 138f96d45f) Low Latency tables, data from v0.5: gptSessionBenchmark at "
           "batch 1 with one output token (the context phase and its first token), the same engines as the "
           "throughput tables (H100 and L40S FP8 with an fp8 KV cache, A100 FP16)",
       .framework = "trtllm-static", .fp8_kv_cache = "fp8"},
      {.name = "trtllm_h200launch",
       .id_prefix = "trtllm_h200launch",
       .description =
           "TensorRT-LLM blog H200launch.md, v0.5.0 / TensorRT 9.1.0.4, \"H200 FP8 Max throughput\", out tok/s per "
           "GPU, static batch (largest power of 2 that fits). The blog does not state the KV-cache format; its "
           "engines are taken as the same repository's v0.5-v0.6.1 performance.md recipe (--enable_fp8 "
           "--fp8_kv_cache), the only one whose llama_13b batch of 1024 x (128 + 128) tokens fits 141 GB (its KV "
           "cache is 105 GB in fp8, 210 GB in fp16)",
       .framework = "trtllm-static", .unstated_per_gpu = true, .fp8_kv_cache = "fp8"},
      {.name = "azure_ND",
       .id_prefix = "azure_ND_",
       .description =
           "Azure AI-benchmarking-guide (@ 8fd0c6e), TensorRT-LLM @ a681853d benchmarks/python/benchmark.py -m dec: "
           "static batch; its tokens_per_sec = batch x output_len / latency counts output tokens only "
           "(gpt_benchmark.py), whole system; fp8 models quantized with quantize.py --qformat fp8 --kv_cache_dtype "
           "fp8 (LLMBenchmark.py): fp8 weights and KV cache, fp16 activations (--dtype float16); A100 rows float16; "
           "TensorRT-LLM of 2024 runs decode attention with its XQA kernel (on by default, gpt-attention.md), which "
           "reads a GQA group's K and V once, not per query head as trtllm-static's v0.5-v0.6.1 kernel",
       .framework = "trtllm-static", .tokens_are_output = true, .fp8_kv_cache = "fp8",
       .stated_workload = {"decode_kv_per_query_head: false"}},
      {.name = "azure_mi300x",
       .id_prefix = "azure_mi300x",
       .description =
           "samuel-bohman/AI-benchmarking-guide (@ 3de0c294fd) Benchmarks/AMD/LLMBenchmark.py: vLLM ROCm image "
           "rocm/vllm-dev:20241121-tuned (vLLM 0.6.x, V0 engine) benchmark_throughput.py, 1000 prompts at once, "
           "fixed lengths; stated flags override the vllm-0.6 profile: --max-num-seqs 3000, "
           "--max-num-batched-tokens 131072, --enable-chunked-prefill false, --gpu-memory-utilization 0.90, "
           "--num-scheduler-steps 10 (host overhead of the profile spread over 10 decode steps), --quantization fp8 "
           "--kv-cache-dtype fp8, --dtype half; the recorded field is output tokens/s (vLLM #8914 format), whole "
           "system",
       .framework = "vllm-0.6", .tokens_are_output = true, .fp8_kv_cache = "fp8",
       .stated_scheduler = "max_sequences: 3000, max_batched_tokens: 131072, chunked_prefill: false, "
                           "memory_utilisation: 0.9",
       .scheduler_steps = 10},
      {.name = "dynamo_aiperf",
       .id_prefix = "dynamo_",
       .description =
           "NVIDIA Dynamo docs/pages/features/disaggregated-serving/README.md (ai-dynamo/dynamo @ 1ad47930), "
           "\"Validated results\": image nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0 (vLLM 0.12.0, the walkthrough's "
           "AIConfigurator --backend_version; no profile for 0.12: vllm-0.10, the nearest, whose defaults for these "
           "keys 0.12 keeps), aggregated, stated flags override it: --no-enable-prefix-caching --kv-cache-dtype fp8 "
           "--max-num-seqs 1024 --max-model-len 6000; AIPerf --concurrency 56 (a closed loop of 56), 800 requests "
           "after 40 warm-up, --isl 4000 --osl 500 with stddev 0 and ignore_eos; averages; the frontend routes "
           "round robin (its default router mode; the walkthrough sets none); its own time per request is not "
           "modelled",
       .framework = "vllm-0.10", .fp8_kv_cache = "fp8",
       .stated_scheduler = "max_sequences: 1024, prefix_caching: false",
       .stated_workload = {"router: round_robin"}},
      {.name = "inferencex",
       .id_prefix = "ix_",
       .description =
           "InferenceX (SemiAnalysisAI/InferenceX) single-node runs, one GitHub Actions run each (the row's source), "
           "as the InferenceX app's API snapshot lists them (SemiAnalysisAI/InferenceX-app "
           "packages/app/cypress/fixtures/api/benchmarks.json @ a369c398): its utils/bench_serving/benchmark_serving.py "
           "with --dataset-name random --random-range-ratio 0.8 (lengths uniform in [0.8 L, L]), --ignore-eos, "
           "--request-rate inf, --max-concurrency C, 10 x C prompts after 2 x C warm-up ones (not counted); the "
           "framework release from the run's container image; each row's launch flags (the benchmark script at the "
           "run's date: max running requests, chunked prefill size, memory fraction, KV-cache format) in its notes; "
           "prefix caching off (--disable-radix-cache); tokens/s per GPU count input and output",
       .stated_scheduler = "prefix_caching: false"},
      {.name = "mlperf41_nvidia",
       .id_prefix = "mlperf41_",
       .description =
           "MLPerf Inference v4.1 closed, NVIDIA's harness (TensorRT-LLM in-flight batching): Offline and Server as "
           "the mlperf source; fp8 weights and KV cache (closed/NVIDIA/code/*/tensorrt/README.md: quantize.py --qformat "
           "fp8 --kv_cache_dtype fp8), fp16 activations; each row's engine limits (gpu_batch_size, max_num_tokens of "
           "configs/<benchmark>/<scenario>/__init__.py) in its notes; output tokens, per system",
       .tokens_are_output = true, .fp8_kv_cache = "fp8"},
      {.name = "mlperf",
       .id_prefix = "mlperf",
       .description =
           "MLPerf Inference (mlcommons/inference loadgen): Offline = every sample at once; Server = Poisson "
           "arrivals, the highest rate whose p99 TTFT and p99 TPOT meet the benchmark's limits; tokens/s count "
           "output tokens, per system; framework from the row",
       .tokens_are_output = true},
  };
  return sources;
}

const std::vector<InferenceModel>& inference_models() {
  static const std::vector<InferenceModel> models = {
      {"GPT-J 6B", "gpt-j-6b", "EleutherAI/gpt-j-6b"},
      {"LLaMA 7B", "llama-2-7b", "performance.md's methodology names Llama2-7b"},
      {"LLaMA 70B", "llama-2-70b", "performance.md's methodology names Llama2-70b"},
      {"llama_13b", "llama-2-13b", "H200launch.md: Llama2-13B"},
      {"llama_70b", "llama-2-70b", "H200launch.md: Llama-70B (Llama 2, Nov. 2023)"},
      {"Falcon 180B", "falcon-180b", "tiiuae/falcon-180B"},
      {"LLAMA 3 8B", "llama-3-8b", "Meta-Llama-3-8B (the guide's config.json)"},
      {"LLAMA 3 70B", "llama-3-70b", "Meta-Llama-3-70B (the guide's config.json)"},
      {"LLAMA 3 405B", "llama-3.1-405b", "Meta-Llama-3.1-405B-FP8 (the guide's config.json)"},
      {"Llama 3 405B", "llama-3.1-405b", "Llama 3.1 405B (the MI300X guide)"},
      {"Llama 3.1 8B", "llama-3-8b", "Llama 3.1 8B: Llama 3 8B's layer shapes (RoPE scaling and context differ)"},
      {"Llama 3.1 70B", "llama-3-70b", "Llama 3.1 70B: Llama 3 70B's layer shapes (RoPE scaling and context differ)"},
      {"Mistral 7B", "mistral-7b", "Mistral-7B-v0.1 (the guide's config.json)"},
  };
  return models;
}

std::optional<ServingMetric> parse_serving_metric(const std::string& metric, const std::string& unit,
                                                  const InferenceSource& source) {
  ServingMetric m;
  const std::string u = lower_case(unit);
  const bool unit_per_gpu = u.find("not stated") != std::string::npos
                                ? source.unstated_per_gpu
                                : u.find("/gpu") != std::string::npos || u.find("per gpu") != std::string::npos;
  m.per_gpu = unit_per_gpu;
  using Count = ServingMetric::Count;
  if (metric == "output_tokens_per_s") {
    m.count = Count::output_tokens;
  } else if (metric == "output_tokens_per_s_per_gpu") {
    m.count = Count::output_tokens;
    m.per_gpu = true;
  } else if (metric == "total_output_tokens_per_s") {
    m.count = Count::output_tokens;
    m.per_gpu = false;
  } else if (metric == "throughput_tokens_per_s" || metric == "tokens_per_s") {
    m.count = source.tokens_are_output ? Count::output_tokens : Count::total_tokens;
  } else if (metric == "total_tokens_per_s") {
    m.count = Count::total_tokens;
  } else if (metric == "samples_per_s" || metric == "requests_per_s" || metric == "queries_per_s") {
    m.count = Count::requests;
  } else {
    static const std::regex latency(R"((ttft|tpot|itl|e2e_latency)(?:_(mean|p50|p90|p99))?_(ms|s))");
    std::smatch match;
    if (!std::regex_match(metric, match, latency)) return std::nullopt;
    const std::string family = match[1].str();
    m.family = family == "ttft"   ? MetricFamily::ttft
               : family == "tpot" ? MetricFamily::tpot
               : family == "itl"  ? MetricFamily::itl
                                  : MetricFamily::e2e_latency;
    const std::string statistic = match[2].str();
    m.statistic = statistic == "p50"   ? ServingMetric::Statistic::p50
                  : statistic == "p90" ? ServingMetric::Statistic::p90
                  : statistic == "p99" ? ServingMetric::Statistic::p99
                                       : ServingMetric::Statistic::mean;
    m.seconds_to_unit = match[3].str() == "ms" ? 1e3 : 1.0;
    m.per_gpu = false;
  }
  return m;
}

double predict_serving_metric(const ServingMetric& metric, const serving::ServingResult& result, int gpus) {
  if (metric.family == MetricFamily::throughput) {
    double value = metric.count == ServingMetric::Count::output_tokens  ? result.output_tokens_per_s
                   : metric.count == ServingMetric::Count::total_tokens ? result.throughput_tokens_per_s
                                                                         : result.requests_per_s;
    return metric.per_gpu ? value / gpus : value;
  }
  const serving::Distribution& d = metric.family == MetricFamily::ttft   ? result.ttft_s
                                   : metric.family == MetricFamily::tpot ? result.tpot_s
                                   : metric.family == MetricFamily::itl  ? result.itl_s
                                                                         : result.e2e_s;
  const double seconds = metric.statistic == ServingMetric::Statistic::p50   ? d.p50
                         : metric.statistic == ServingMetric::Statistic::p90 ? d.p90
                         : metric.statistic == ServingMetric::Statistic::p99 ? d.p99
                                                                             : d.mean;
  return seconds * metric.seconds_to_unit;
}

std::optional<ServerLimits> server_limits(const InferenceRow& row, const std::string& preset) {
  static const std::regex ttft(R"(ttft_p99_ms\s*=\s*([0-9.]+))", std::regex::icase);
  static const std::regex tpot(R"(tpot_p99_ms\s*=\s*([0-9.]+))", std::regex::icase);
  std::smatch a, b;
  if (std::regex_search(row.notes, a, ttft) && std::regex_search(row.notes, b, tpot)) {
    return ServerLimits{std::stod(a[1].str()) / 1e3, std::stod(b[1].str()) / 1e3, "the row's notes"};
  }
  for (const auto& s : mlperf_servers()) {
    if (preset == s.preset) return ServerLimits{s.ttft_s, s.tpot_s, fmt::format("MLPerf {} Server", s.benchmark)};
  }
  return std::nullopt;
}

namespace {

/// The parts of a row's mapping that need the row alone; fills `m.skip_reason` and returns
/// false when the row cannot be mapped.
struct RowPlan {
  InferenceRow row;
  std::string framework;
  const RowSystem* system = nullptr;
  RowPrecision precision;
  std::int64_t requests = 0, output_len = 1;
  std::string dataset;  ///< the library length profile the requests draw from; "" for fixed lengths
  std::string lengths_note;  ///< where the lengths came from, when the row names a dataset or a range
  double range_ratio = 1;    ///< stated lengths drawn uniformly in [ratio x L, L]; 1: fixed
  int ep = 1;                ///< expert-parallel ranks of an instance (notes "ep=N"); 1: none
  int instances = 1;
  std::string arrival = "{process: offline}";  ///< rate and concurrency rows: theirs
};

/// The instances of plan.row's tp x pp on its GPUs and the requests they get; false with
/// m.skip_reason when they do not divide or the count is not stated.
bool size_instances(ServingRowMapping& m, RowPlan& plan) {
  const InferenceRow& row = plan.row;
  const int per_instance = row.tp * row.pp;
  if (row.gpus % per_instance != 0) {
    m.skip_reason = fmt::format("{} GPUs is not a whole number of tp {} x pp {} instances", row.gpus, row.tp, row.pp);
    return false;
  }
  plan.instances = row.gpus / per_instance;
  std::string problem;
  const auto requests = row_request_count(row, *m.source, m.benchmark, plan.instances, m.model->preset, problem);
  if (!requests) {
    m.skip_reason = problem;
    return false;
  }
  plan.requests = *requests;
  return true;
}

/// A row that names a dataset instead of its lengths: the library profile's input and output
/// lengths (models/data/datasets), for the benchmarks that send many requests. False with
/// m.skip_reason for a dataset the library has no profile of, or a benchmark of one fixed shape.
bool dataset_lengths(ServingRowMapping& m, RowPlan& plan) {
  const InferenceRow& row = plan.row;
  if (row.dataset.empty()) return true;
  if (row.input_len > 0) {
    plan.lengths_note = fmt::format("lengths as stated (input {}, output {}); dataset '{}' not used", row.input_len,
                                    plan.output_len, row.dataset);
    return true;
  }
  const std::vector<std::string> profiles = serving::dataset_profiles(config::library_data_dir());
  const auto known = std::find_if(profiles.begin(), profiles.end(),
                                  [&](const std::string& p) { return lower_case(p) == lower_case(row.dataset); });
  if (known == profiles.end()) {
    m.skip_reason = fmt::format("dataset '{}' has no length profile in the library ({}): state input_len and "
                                "output_len (the run's mean lengths), or add the profile from a per-request file "
                                "(docs/serving.md)",
                                row.dataset, fmt::join(profiles, ", "));
    return false;
  }
  if (m.benchmark == ServingBenchmark::static_batch || m.benchmark == ServingBenchmark::latency) {
    m.skip_reason = fmt::format("a {} row runs one fixed shape: state input_len (dataset '{}' gives a distribution)",
                                serving_benchmark_name(m.benchmark), row.dataset);
    return false;
  }
  plan.dataset = *known;
  plan.lengths_note = fmt::format("lengths from the dataset profile {} (models/data/datasets)", *known);
  return true;
}

/// A row whose scenario states a random range ratio R: its stated lengths L become uniform
/// draws in [R x L, L]. False with m.skip_reason for a ratio outside (0, 1], a row that names a
/// dataset instead of its lengths, or a benchmark of one fixed shape.
bool ranged_lengths(ServingRowMapping& m, RowPlan& plan) {
  const auto ratio = stated_range_ratio(plan.row.scenario);
  if (!ratio) return true;
  if (!(*ratio > 0 && *ratio <= 1)) {
    m.skip_reason = fmt::format("random range ratio {} is not in (0, 1]", *ratio);
    return false;
  }
  if (!plan.dataset.empty() || m.benchmark == ServingBenchmark::static_batch ||
      m.benchmark == ServingBenchmark::latency) {
    m.skip_reason = "a random range ratio applies to the stated lengths of a benchmark of many requests";
    return false;
  }
  plan.range_ratio = *ratio;
  plan.lengths_note = fmt::format("lengths uniform in [{:g} x stated, stated] (random range ratio)", *ratio);
  return true;
}

/// The expert parallelism one run states (notes "ep=N": the engine's --ep-size / --ep_size over
/// the instance's ranks). False with m.skip_reason when it is not a divisor of tp (an instance's
/// experts spread over at most its ranks, docs/scenario-reference.md pools.ep).
bool stated_expert_parallelism(ServingRowMapping& m, RowPlan& plan) {
  const auto stated = note_value(plan.row.notes, "ep");
  if (!stated) return true;
  const auto ep = parse_integer(*stated);  // digits (note_settings), however many
  if (!ep || *ep < 1 || plan.row.tp == 0 || plan.row.tp % *ep != 0) {
    m.skip_reason = fmt::format("notes ep={} does not divide the instance's tp ({})", *stated,
                                plan.row.tp == 0 ? std::string("not stated") : std::to_string(plan.row.tp));
    return false;
  }
  plan.ep = static_cast<int>(*ep);
  return true;
}

bool plan_row(const CsvRow& csv, ServingRowMapping& m, RowPlan& plan) {
  std::string problem;
  const auto row = parse_inference_row(csv, problem);
  if (!row) {
    m.skip_reason = problem;
    return false;
  }
  plan.row = *row;
  m.source = find_source(row->id);  // a source without conventions of its own: default_serving_source()
  m.model = find_model(row->model);
  if (!m.model) {
    m.skip_reason = fmt::format("model '{}' has no library preset or alias", row->model);
    return false;
  }
  const auto framework = row_framework(*row, *m.source);
  if (!framework) {
    m.skip_reason = fmt::format("framework '{}' has no profile (docs/serving-frameworks.md section 7)", row->framework);
    return false;
  }
  plan.framework = *framework;
  for (const auto& s : row_systems()) {
    if (contains(row->gpu_type, s.needle)) plan.system = &s;
  }
  if (!plan.system) {
    m.skip_reason = fmt::format("gpu_type '{}' has no accelerator and system preset", row->gpu_type);
    return false;
  }
  m.benchmark = row_benchmark(*row, plan.framework);
  m.metric = parse_serving_metric(row->metric, row->unit, *m.source);
  if (!m.metric) {
    m.skip_reason = fmt::format("metric '{}' is not supported", row->metric);
    return false;
  }
  if (!valid_note_settings(*row, problem)) {
    m.skip_reason = problem;
    return false;
  }
  const auto precision = row_precision(*row, *m.source, problem);
  if (!precision) {
    m.skip_reason = problem;
    return false;
  }
  plan.precision = *precision;
  if (row->tp > 0 && !size_instances(m, plan)) return false;
  plan.output_len = row->output_len > 0 ? row->output_len : 1;
  if (!dataset_lengths(m, plan) || !ranged_lengths(m, plan) || !stated_expert_parallelism(m, plan)) return false;
  const StatedArrival arrival = stated_arrival(row->scenario);
  if (arrival.concurrency && arrival.rate) {
    m.skip_reason = fmt::format("requests at {} req/s capped at {} in flight: not modelled (arrivals are either at a "
                                "rate or a fixed number in flight)",
                                *arrival.rate, *arrival.concurrency);
    return false;
  }
  if ((arrival.rate && !(*arrival.rate > 0)) || (arrival.concurrency && *arrival.concurrency < 1) ||
      !(arrival.burstiness > 0)) {
    m.skip_reason = "the scenario states a request rate, burstiness or concurrency that is not positive";
    return false;
  }
  if (m.benchmark == ServingBenchmark::rate) {
    plan.arrival = arrival.constant ? fmt::format("{{process: constant, rate: {:.10g}}}", *arrival.rate)
                   : arrival.burstiness == 1
                       ? fmt::format("{{process: poisson, rate: {:.10g}}}", *arrival.rate)
                       : fmt::format("{{process: gamma, rate: {:.10g}, cv: {:.10g}}}", *arrival.rate,
                                     1 / std::sqrt(arrival.burstiness));
  } else if (m.benchmark == ServingBenchmark::concurrency) {
    plan.arrival = fmt::format("{{process: closed_loop, clients: {}}}", *arrival.concurrency);
  }
  if (m.benchmark == ServingBenchmark::server) {
    m.limits = server_limits(*row, m.model->preset);
    if (!m.limits) {
      m.skip_reason = "a server row needs its p99 TTFT and TPOT limits (notes \"ttft_p99_ms=X; tpot_p99_ms=Y\", or an "
                      "MLPerf benchmark model)";
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

std::string row_scenario_yaml(const ServingRowMapping& m, const RowPlan& plan);

/// A row without tp: the smallest tp (1, 2, 4, ... within its GPUs, valid for the model's heads)
/// at which the weights take at most half of the memory the framework may use per device
/// (memory_utilisation x HBM, the simulator's own memory plan), leaving the other half for the
/// KV cache and activations. Sets plan.row.tp and the instances, or m.skip_reason.
bool size_tp(ServingRowMapping& m, RowPlan& plan) {
  std::string tried;
  for (int tp = 1; tp * plan.row.pp <= plan.row.gpus; tp *= 2) {
    plan.row.tp = tp;
    if (plan.row.gpus % (tp * plan.row.pp) != 0) continue;
    ServingRowMapping candidate = m;
    if (!size_instances(candidate, plan)) {
      m.skip_reason = candidate.skip_reason;
      return false;
    }
    const auto scenario = scenario::load_scenario_from_string(row_scenario_yaml(m, plan), plan.row.id + ".yaml");
    const auto* spec = dynamic_cast<const serving::ServingSpec*>(scenario.workload.get());
    if (spec == nullptr || spec->pools.empty()) throw SimulationError("a serving row's scenario has no serving pool");
    if (models::tensor_parallel_problem(spec->model, tp)) continue;
    double share = 1.0;  // of the usable memory, taken by the weights
    try {
      const serving::InstanceMemory memory =
          serving::plan_instance_memory(*spec, spec->pools.front(), scenario.platform.cluster.accelerator);
      share = memory.capacity > 0 ? memory.weights / memory.capacity : 1.0;
    } catch (const models::DoesNotFitError&) {
      share = 1.0;  // no room for one KV block
    }
    if (share <= 0.5) {
      m.note += fmt::format("{}tp {} by the sizing rule (the smallest at which the weights take at most half of the "
                            "usable memory: {:.0f} %)",
                            m.note.empty() ? "" : "; ", tp, share * 100);
      return true;
    }
    tried += fmt::format("{}tp {}: {}", tried.empty() ? "" : ", ", tp,
                         share >= 1.0 ? std::string("no room for the KV cache") : fmt::format("{:.0f} %", share * 100));
  }
  m.skip_reason = fmt::format("no tp is stated and none on its {} GPUs leaves the weights at most half of the usable "
                              "memory, the sizing rule ({}); state the row's tp",
                              plan.row.gpus, tried.empty() ? "no tp divides them" : tried);
  return false;
}

}  // namespace

ServingRowMapping map_serving_row(const CsvRow& csv) {
  ServingRowMapping m;
  RowPlan plan;
  if (!plan_row(csv, m, plan)) return m;
  m.note = plan.precision.note.empty() || plan.lengths_note.empty() ? plan.precision.note + plan.lengths_note
                                                                     : plan.precision.note + "; " + plan.lengths_note;
  if (plan.row.tp == 0 && !size_tp(m, plan)) return m;
  m.scenario_yaml = row_scenario_yaml(m, plan);
  return m;
}

namespace {

/// A side's lengths: the dataset profile's, the row's fixed length, or uniform draws in
/// [range_ratio x length, length].
std::string lengths_yaml(const std::string& dataset, std::int64_t length, double range_ratio) {
  if (!dataset.empty()) return fmt::format("{{distribution: dataset, dataset: {}}}", dataset);
  if (range_ratio < 1) {
    const auto low = std::max<std::int64_t>(1, static_cast<std::int64_t>(range_ratio * static_cast<double>(length)));
    return fmt::format("{{distribution: uniform, min: {}, max: {}}}", low, length);
  }
  return fmt::format("{{distribution: fixed, value: {}}}", length);
}

/// The scenario of a planned row.
std::string row_scenario_yaml(const ServingRowMapping& m, const RowPlan& plan) {
  const InferenceRow& row = plan.row;
  const std::string arrival = m.benchmark == ServingBenchmark::server ? "{process: poisson, rate: 1}" : plan.arrival;
  const std::string slo =
      m.limits ? fmt::format("  slo: {{ttft: {}, tpot: {}, percentile: 99}}\n", duration_text(m.limits->ttft_s),
                             duration_text(m.limits->tpot_s))
               : "";
  return fmt::format(
      R"yaml(schema_version: 1
name: {id}
description: "built by clustersim validate from dataset row {id} ({benchmark})"
include: [systems/{system}.yaml]
cluster:
  nodes: {nodes}
workload:
  kind: serving
  model: {model}
  framework: {framework}
{stated}  precision: {{weights: {weights}, activations: {activations}, kv_cache: {kv}}}
  pools:
    main: {{replicas: {replicas}, tp: {tp}, pp: {pp}{ep}}}
{scheduler}  requests:
    count: {count}
    arrival: {arrival}
    input: {input}
    output: {output}
{slo}simulation: {{seed: 1}}
)yaml",
      fmt::arg("id", row.id), fmt::arg("benchmark", serving_benchmark_name(m.benchmark)),
      fmt::arg("system", plan.system->system),
      fmt::arg("nodes", (row.gpus + kAcceleratorsPerNode - 1) / kAcceleratorsPerNode),
      fmt::arg("model", m.model->preset),
      fmt::arg("framework", plan.framework), fmt::arg("stated", stated_workload_yaml(*m.source)),
      fmt::arg("weights", plan.precision.weights),
      fmt::arg("activations", plan.precision.activations), fmt::arg("kv", plan.precision.kv_cache),
      fmt::arg("replicas", plan.instances), fmt::arg("tp", row.tp), fmt::arg("pp", row.pp),
      fmt::arg("ep", plan.ep > 1 ? fmt::format(", ep: {}", plan.ep) : std::string()),
      fmt::arg("scheduler", scheduler_yaml(row, *m.source, plan.framework, m.benchmark)),
      fmt::arg("count", plan.requests), fmt::arg("arrival", arrival),
      fmt::arg("input", lengths_yaml(plan.dataset, row.input_len, plan.range_ratio)),
      fmt::arg("output", lengths_yaml(plan.dataset, plan.output_len, plan.range_ratio)), fmt::arg("slo", slo));
}

}  // namespace

namespace {

std::unique_ptr<serving::ServingResult> run_serving(const std::string& yaml, const std::string& file_name,
                                                    const std::vector<std::string>& overrides) {
  const auto scenario = scenario::load_scenario_from_string(yaml, file_name, overrides);
  runner::RunResult run = runner::run_scenario(scenario);
  auto* result = dynamic_cast<serving::ServingResult*>(run.primary.get());
  if (result == nullptr) throw SimulationError("the row's scenario did not produce a serving result");
  run.primary.release();
  return std::unique_ptr<serving::ServingResult>(result);
}

}  // namespace

ServerSearch search_server_rate(const std::string& scenario_yaml, const std::string& file_name,
                                const ServerLimits& limits, const std::vector<std::string>& overrides) {
  ServerSearch search;
  std::vector<std::string> slo = {"workload.slo.ttft=" + duration_text(limits.ttft_s),
                                  "workload.slo.tpot=" + duration_text(limits.tpot_s), "workload.slo.percentile=99"};
  slo.insert(slo.end(), overrides.begin(), overrides.end());
  const auto at_rate = [&](double rate) {
    ++search.runs;
    std::vector<std::string> at = slo;
    at.push_back(fmt::format("workload.requests.arrival.rate={:.9g}", rate));
    return run_serving(scenario_yaml, file_name, at);
  };
  // No rate above the offline one (every request at once) can be sustained.
  std::vector<std::string> offline_overrides = overrides;
  offline_overrides.emplace_back("workload.requests.arrival.process=offline");
  auto offline = run_serving(scenario_yaml, file_name, offline_overrides);
  ++search.runs;
  double hi = offline->requests_per_s;
  double lo = hi / 64;
  auto passing = at_rate(lo);
  if (!passing->slo_met) return search;  // even a light load misses the limits
  while (hi - lo > 0.01 * hi) {
    const double mid = 0.5 * (lo + hi);
    auto result = at_rate(mid);
    if (result->slo_met) {
      lo = mid;
      passing = std::move(result);
    } else {
      hi = mid;
    }
  }
  search.rate_per_s = lo;
  search.result = std::move(passing);
  return search;
}

namespace {

ServingSummary summarise(const std::vector<const ServingValidationRow*>& rows, std::string group) {
  std::vector<std::pair<std::string, double>> errors;
  for (const auto* r : rows) errors.emplace_back(r->id, r->error_pct);
  ServingSummary s;
  static_cast<ErrorSummary&>(s) = summarise_errors(errors);
  s.group = std::move(group);
  return s;
}

/// A static batch the memory model could not admit at once: how many requests the first batch took.
std::string admission_note(const serving::ServingResult& result) {
  std::int64_t first = 0;
  for (const auto& record : result.records) {
    if (!record.rejected && record.scheduled_s <= record.request.arrival_s) ++first;
  }
  if (first >= result.completed) return "";
  return fmt::format("the memory model admits only {} of the {} requests at once (the published run held them all)",
                     first, result.completed);
}

/// Simulates one mapped row; fills `out` (predicted, duration, note) or returns the skip reason.
std::optional<std::string> simulate_row(const ServingRowMapping& m, const InferenceRow& row, const std::string& file,
                                        const std::vector<std::string>& overrides, ServingValidationRow& out) {
  try {
    std::unique_ptr<serving::ServingResult> result;
    if (m.benchmark == ServingBenchmark::server) {
      ServerSearch search = search_server_rate(*m.scenario_yaml, file, *m.limits, overrides);
      if (!search.result) {
        return fmt::format("misses the p99 limits (TTFT {:.0f} ms, TPOT {:.0f} ms) even at a light load",
                           m.limits->ttft_s * 1e3, m.limits->tpot_s * 1e3);
      }
      result = std::move(search.result);
      out.note = fmt::format("highest passing rate {:.4g} req/s ({} runs; limits from {})", search.rate_per_s,
                             search.runs, m.limits->source);
    } else {
      result = run_serving(*m.scenario_yaml, file, overrides);
      if (m.benchmark == ServingBenchmark::static_batch) out.note = admission_note(*result);
    }
    if (result->rejected > 0) {
      return fmt::format("{} of {} requests do not fit the KV cache the memory model leaves", result->rejected,
                         result->requests);
    }
    out.predicted = predict_serving_metric(*m.metric, *result, row.gpus);
    out.duration_s = result->duration_s;
  } catch (const Error& e) {
    return fmt::format("simulation failed: {}", e.what());
  }
  if (!m.note.empty()) out.note = out.note.empty() ? m.note : out.note + "; " + m.note;
  return std::nullopt;
}

}  // namespace

ServingValidationReport validate_serving_dataset(const std::filesystem::path& dataset) {
  return validate_serving_rows(read_csv_file(dataset), dataset.string());
}

ServingValidationReport validate_serving_rows(const std::vector<CsvRow>& rows, const std::string& dataset,
                                              const std::filesystem::path& calibration) {
  require_columns(rows, dataset, {"id", "metric", "value"});
  std::vector<std::string> overrides;
  if (!calibration.empty()) overrides.push_back("simulation.calibration=" + std::filesystem::absolute(calibration).string());
  ServingValidationReport report;
  report.dataset = dataset;
  std::vector<const InferenceSource*> used_sources;
  std::vector<const InferenceModel*> used_models;
  for (const auto& csv : rows) {
    const std::string& id = csv.get("id");
    const ServingRowMapping m = map_serving_row(csv);
    if (!m.scenario_yaml) {
      report.skipped.push_back({id, m.skip_reason});
      continue;
    }
    std::string problem;
    const InferenceRow row = *parse_inference_row(csv, problem);
    ServingValidationRow out;
    out.id = id;
    out.metric = row.metric;
    out.unit = row.unit;
    out.source = m.source->name;
    out.family = m.metric->family;
    out.measured = row.value;
    if (const auto skip = simulate_row(m, row, fmt::format("{}#{}", std::filesystem::path(dataset).filename().string(), id),
                                       overrides, out)) {
      report.skipped.push_back({id, *skip});
      continue;
    }
    out.error_pct = 100.0 * (out.predicted - out.measured) / out.measured;
    if (std::find(used_sources.begin(), used_sources.end(), m.source) == used_sources.end()) {
      used_sources.push_back(m.source);
    }
    if (std::find(used_models.begin(), used_models.end(), m.model) == used_models.end()) used_models.push_back(m.model);
    report.rows.push_back(std::move(out));
  }
  std::vector<const ServingValidationRow*> all;
  for (const auto& r : report.rows) all.push_back(&r);
  report.summary = summarise(all, "");
  for (const MetricFamily family : {MetricFamily::throughput, MetricFamily::ttft, MetricFamily::tpot,
                                    MetricFamily::itl, MetricFamily::e2e_latency}) {
    std::vector<const ServingValidationRow*> of;
    for (const auto& r : report.rows) {
      if (r.family == family) of.push_back(&r);
    }
    if (!of.empty()) report.per_family.push_back(summarise(of, std::string(metric_family_name(family))));
  }
  std::vector<const InferenceSource*> sources;
  for (const auto& source : inference_sources()) sources.push_back(&source);
  sources.push_back(&default_serving_source());
  for (const InferenceSource* source : sources) {
    std::vector<const ServingValidationRow*> of;
    for (const auto& r : report.rows) {
      if (r.source == source->name) of.push_back(&r);
    }
    if (!of.empty()) report.per_source.push_back(summarise(of, source->name));
    if (std::find(used_sources.begin(), used_sources.end(), source) != used_sources.end()) {
      report.assumptions.push_back(fmt::format("{}: {}", source->name, source->description));
    }
  }
  for (const InferenceModel* model : used_models) {  // the dataset table's, then the library's names and aliases
    report.assumptions.push_back(
        fmt::format("model {} = library preset {} ({})", model->row_model, model->preset, model->why));
  }
  return report;
}

namespace {

/// Issue 15's targets: median error per family, and no row worse than 30 %.
std::string target_text(const ServingSummary& s) {
  const double target = s.group == "throughput" ? 10 : s.group == "TTFT" ? 15 : 0;
  if (target == 0) return "";
  return fmt::format("  (target: median <= {:.0f} %, no row > 30 %: {})", target,
                     s.median_pct <= target && s.max_pct <= 30 ? "met" : "not met");
}

}  // namespace

std::string render_serving_validation_table(const ServingValidationReport& report) {
  std::string out = fmt::format("dataset {}\n", report.dataset);
  out += fmt::format("{:<34} {:<28} {:>10} {:>10} {:>9}\n", "id", "metric", "measured", "predicted", "error");
  for (const auto& r : report.rows) {
    out += fmt::format("{:<34} {:<28} {:>10.4g} {:>10.4g} {:>+8.1f}%{}\n", r.id, r.metric, r.measured, r.predicted,
                       r.error_pct, r.note.empty() ? "" : "  *");
  }
  append_notes_and_skipped(out, report.rows, report.skipped, 34);
  if (!report.assumptions.empty()) {
    out += "assumed (each source's stated settings and documented framework defaults; never chosen per row):\n";
    for (const auto& a : report.assumptions) out += fmt::format("  {}\n", a);
  }
  if (report.summary.rows == 0) {
    out += "no row could be compared\n";
    return out;
  }
  for (const auto& p : report.per_source) {
    out += fmt::format("  {:<18} rows {:>3}  MAPE {:6.2f} %  median {:6.2f} %  worst {:6.2f} % ({})\n", p.group, p.rows,
                       p.mape_pct, p.median_pct, p.max_pct, p.worst_id);
  }
  for (const auto& p : report.per_family) {
    out += fmt::format("{:<20} rows {:>3}  MAPE {:6.2f} %  median {:6.2f} %  worst {:6.2f} % ({}){}\n", p.group, p.rows,
                       p.mape_pct, p.median_pct, p.max_pct, p.worst_id, target_text(p));
  }
  const auto& s = report.summary;
  out += fmt::format("rows {}  MAPE {:.2f} %  median {:.2f} %  worst {:.2f} % ({})\n", s.rows, s.mape_pct, s.median_pct,
                     s.max_pct, s.worst_id);
  return out;
}

nlohmann::json serving_validation_json(const ServingValidationReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : report.rows) {
    rows.push_back({{"id", r.id}, {"metric", r.metric}, {"unit", r.unit}, {"family", metric_family_name(r.family)},
                    {"measured", r.measured}, {"predicted", r.predicted}, {"error_pct", r.error_pct},
                    {"duration_s", r.duration_s}, {"source", r.source}, {"note", r.note}});
  }
  const auto group_json = [](const ServingSummary& s) {
    nlohmann::json j = summary_json(s);
    if (!s.group.empty()) j["group"] = s.group;
    return j;
  };
  nlohmann::json per_family = nlohmann::json::array();
  for (const auto& p : report.per_family) per_family.push_back(group_json(p));
  nlohmann::json per_source = nlohmann::json::array();
  for (const auto& p : report.per_source) per_source.push_back(group_json(p));
  return {{"schema_version", 1},
          {"dataset", report.dataset},
          {"summary", group_json(report.summary)},
          {"per_family", per_family},
          {"per_source", per_source},
          {"rows", rows},
          {"skipped", skipped_json(report.skipped)},
          {"assumptions", report.assumptions}};
}

}  // namespace clustersim::validate
