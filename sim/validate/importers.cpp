#include "sim/validate/importers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/engine/error.hpp"
#include "sim/validate/error_summary.hpp"
#include "sim/validate/json_text.hpp"
#include "sim/validate/trace_import.hpp"

namespace clustersim::validate {
namespace {

using nlohmann::json;

std::string number_text(double value) { return fmt::format("{:.10g}", value); }

/// The field given on the command line, else the file's own value under one of `keys` (vLLM's
/// --metadata lands at the top level), else "".
std::string stated(const std::map<std::string, std::string>& fields, const json& object, const std::string& column,
                   std::initializer_list<const char*> keys) {
  if (const auto it = fields.find(column); it != fields.end()) return it->second;
  for (const char* key : keys) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    if (it->is_number()) return number_text(it->get<double>());
  }
  return "";
}

/// A required number of the result object; ConfigError naming the key otherwise.
double number(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) {
    throw ConfigError(fmt::format("{}: key '{}' {}", where, key,
                                  it == object.end() ? "is missing" : "is not a number"));
  }
  return it->get<double>();
}

/// The request rate as the tools write it: a number, or "inf" (every request at once).
double request_rate(const json& object, const std::string& where) {
  const auto it = object.find("request_rate");
  if (it == object.end() || it->is_null()) return INFINITY;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string text = it->get<std::string>();
    if (text == "inf" || text == "Infinity") return INFINITY;
    try {
      std::size_t used = 0;
      const double value = std::stod(text, &used);
      if (used == text.size()) return value;
    } catch (const std::exception&) {
    }
  }
  throw ConfigError(fmt::format("{}: key 'request_rate' must be a number or \"inf\", got {}", where, it->dump()));
}

enum class Tool { vllm, sglang };

struct ServingMetricKey {
  std::string key;     ///< in the tool's result
  std::string metric;  ///< the dataset's metric
  std::string unit;
};

/// Metrics both tools report, by key: vLLM's e2el is SGLang's e2e_latency.
std::vector<ServingMetricKey> serving_metric_keys(Tool tool) {
  std::vector<ServingMetricKey> keys = {
      {"request_throughput", "requests_per_s", "req/s system"},
      {"output_throughput", "output_tokens_per_s", "tok/s system"},
      {tool == Tool::vllm ? "total_token_throughput" : "total_throughput", "total_tokens_per_s", "tok/s system"},
  };
  struct Family {
    const char* tool_name;
    const char* metric;
  };
  const Family families[] = {{"ttft", "ttft"},
                             {"tpot", "tpot"},
                             {"itl", "itl"},
                             {tool == Tool::vllm ? "e2el" : "e2e_latency", "e2e_latency"}};
  for (const Family& f : families) {
    const std::pair<const char*, const char*> statistics[] = {
        {"mean", ""}, {"median", "_p50"}, {"p90", "_p90"}, {"p99", "_p99"}};
    for (const auto& [statistic, suffix] : statistics) {
      keys.push_back({fmt::format("{}_{}_ms", statistic, f.tool_name), fmt::format("{}{}_ms", f.metric, suffix), "ms"});
    }
  }
  return keys;
}

/// Appends a row given by column (missing columns empty).
void append_row(ImportedRows& out, const std::map<std::string, std::string>& row) {
  std::vector<std::string> values;
  values.reserve(out.columns.size());
  for (const std::string& column : out.columns) {
    const auto field = row.find(column);
    values.push_back(field == row.end() ? "" : field->second);
  }
  out.rows.push_back(std::move(values));
}

/// Appends `row` (the run's shared columns) as the row of one metric: id `<stem>_<metric>`.
void append_metric_row(ImportedRows& out, std::map<std::string, std::string>& row, const std::string& stem,
                       const std::string& metric, double value, const std::string& unit) {
  row["id"] = fmt::format("{}_{}", stem, metric);
  row["metric"] = metric;
  row["value"] = number_text(value);
  row["unit"] = unit;
  append_row(out, row);
}

/// One run of vllm bench serve / sglang.bench_serving: a row per metric it reports.
void import_serving_run(Tool tool, const json& run, const std::string& file, const std::string& stem,
                        const std::string& where, const std::map<std::string, std::string>& fields, ImportedRows& out) {
  if (!run.is_object()) throw ConfigError(fmt::format("{}: a result must be a JSON object", where));
  const double completed = number(run, "completed", where);
  if (!(completed >= 1)) throw ConfigError(fmt::format("{}: key 'completed' is {}: no request finished", where, completed));
  const double input_tokens = number(run, "total_input_tokens", where);
  const double output_tokens = number(run, "total_output_tokens", where);
  const double rate = request_rate(run, where);
  const std::string tool_name = tool == Tool::vllm ? "vllm bench serve" : "sglang.bench_serving";
  std::string model = stated(fields, run, "model", {"model_id", "model", "tokenizer_id"});
  if (const auto info = run.find("server_info"); model.empty() && info != run.end() && info->is_object()) {
    model = stated({}, *info, "", {"model_path", "served_model_name"});
  }
  if (model.empty()) throw ConfigError(fmt::format("{}: no model: key 'model_id' is missing (or give --field model=...)", where));
  const auto prompts = run.find("num_prompts");
  const double requests = prompts != run.end() && prompts->is_number() ? prompts->get<double>() : completed;
  std::string scenario = tool_name + ": ";
  const auto concurrency = run.find("max_concurrency");
  const bool capped = concurrency != run.end() && concurrency->is_number();
  if (capped) scenario += fmt::format("max concurrency {}, ", concurrency->get<long long>());
  if (std::isinf(rate)) {
    if (!capped) scenario += "offline (request rate inf), ";
  } else {
    const auto burst = run.find("burstiness");
    const double burstiness = burst != run.end() && burst->is_number() ? burst->get<double>() : 1.0;
    scenario += fmt::format("request rate {} req/s, burstiness {}, ", number_text(rate), number_text(burstiness));
  }
  scenario += fmt::format("{} requests", number_text(requests));
  const std::string tp = stated(fields, run, "tp", {"tp", "tensor_parallel_size", "tp_size"});
  const std::string pp = stated(fields, run, "pp", {"pp", "pipeline_parallel_size", "pp_size"});
  std::string gpus = stated(fields, run, "gpus", {"gpus", "num_gpus"});
  if (gpus.empty() && !tp.empty()) {
    // One server, as the benchmark client talks to one endpoint.
    try {
      gpus = std::to_string(std::stoi(tp) * (pp.empty() ? 1 : std::stoi(pp)));
    } catch (const std::exception&) {
      gpus = "";
    }
  }
  std::string framework = stated(fields, run, "framework", {"framework"});
  if (framework.empty()) {
    // The file names the backend but not its version: the row says so, and validate asks for it.
    const std::string backend = stated({}, run, "", {"backend", "endpoint_type"});
    framework = tool == Tool::vllm ? (backend.empty() || backend == "vllm" || backend == "openai" ? "vLLM" : backend)
                                   : (backend.empty() ? "SGLang" : backend);
  }
  std::string notes = fmt::format("imported by clustersim import {} from {}; input_len and output_len are the means "
                                  "of {} completed requests",
                                  tool == Tool::vllm ? "vllm-bench" : "sglang-bench", file, number_text(completed));
  if (const auto lens = run.find("input_lens"); lens != run.end() && lens->is_array() && !lens->empty()) {
    double lo = INFINITY, hi = 0;
    for (const auto& v : *lens) {
      if (v.is_number()) {
        lo = std::min(lo, v.get<double>());
        hi = std::max(hi, v.get<double>());
      }
    }
    if (hi > lo) notes += fmt::format(" (inputs {} to {} tokens: the comparison runs fixed lengths)", number_text(lo), number_text(hi));
  }
  const auto failed = run.find("failed");
  const double failures = failed != run.end() && failed->is_number() ? failed->get<double>() : requests - completed;
  if (failures > 0) notes += fmt::format("; {} requests failed", number_text(failures));
  const std::string dataset = stated(fields, run, "dataset", {"dataset_name"});
  if (!dataset.empty()) notes += fmt::format("; dataset {}", dataset);
  const std::string source =
      fields.contains("source")
          ? fields.at("source")
          : fmt::format("{} result {}{}", tool_name, std::filesystem::path(file).filename().string(),
                        run.contains("date") && run["date"].is_string() ? " (" + run["date"].get<std::string>() + ")" : "");
  // benchmark_serving.py before burstiness (2024) wrote mean_e2el_ms and median_e2el_ms swapped.
  const bool swapped_e2el = tool == Tool::vllm && !run.contains("burstiness");
  if (swapped_e2el && run.contains("mean_e2el_ms")) notes += "; end-to-end latency not imported (mean and median swapped by benchmark_serving.py of 2024)";
  for (const ServingMetricKey& k : serving_metric_keys(tool)) {
    if (swapped_e2el && k.metric.rfind("e2e_latency", 0) == 0) continue;
    const auto it = run.find(k.key);
    if (it == run.end() || it->is_null()) continue;
    if (!it->is_number()) throw ConfigError(fmt::format("{}: key '{}' is not a number", where, k.key));
    const std::map<std::string, std::string> row = {
        {"id", fmt::format("{}_{}", stem, k.metric)},
        {"source", source},
        {"model", model},
        {"gpus", gpus},
        {"gpu_type", stated(fields, run, "gpu_type", {"gpu_type", "gpu"})},
        {"tp", tp},
        {"pp", pp},
        {"precision", stated(fields, run, "precision", {"precision", "dtype"})},
        {"framework", framework},
        {"scenario", scenario},
        {"input_len", number_text(std::round(input_tokens / completed))},
        {"output_len", number_text(std::round(output_tokens / completed))},
        {"metric", k.metric},
        {"value", number_text(it->get<double>())},
        {"unit", k.unit},
        {"notes", notes}};
    append_row(out, row);
  }
}

/// One JSON object per non-blank line: each a run.
void import_lines(Tool tool, const std::string& text, const std::filesystem::path& file,
                  const std::map<std::string, std::string>& fields, ImportedRows& out) {
  std::istringstream lines(text);
  std::string line;
  int number = 0, runs = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json run = parse_json(line, file.string(), number);
    ++runs;
    import_serving_run(tool, run, file.string(), fmt::format("{}_{}", file.stem().string(), runs),
                       fmt::format("{}:{}", file.string(), number), fields, out);
  }
  if (runs == 0) throw ConfigError(fmt::format("{}: no result (one JSON object per run)", file.string()));
}

/// A number at `path` inside `object`, or nullopt.
std::optional<double> nested_number(const json& object, std::initializer_list<const char*> path) {
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return std::nullopt;
    const auto it = at->find(key);
    if (it == at->end()) return std::nullopt;
    at = &*it;
  }
  return at->is_number() ? std::optional<double>(at->get<double>()) : std::nullopt;
}

/// The object at `key` of `object`, or an empty one.
const json& section(const json& object, const char* key) {
  static const json kEmpty = json::object();
  const auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}


/// The dataset precision of an engine's quantization and dtype ("" when neither says).
std::string engine_precision(const json& engine) {
  std::string quantization = stated({}, engine, "", {"quantization"});
  std::transform(quantization.begin(), quantization.end(), quantization.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (!quantization.empty() && quantization != "NONE" && quantization != "NO_QUANT") return quantization;
  const std::string dtype = stated({}, engine, "", {"dtype"});
  if (dtype == "bfloat16") return "BF16";
  if (dtype == "float16") return "FP16";
  return dtype;
}

void import_trtllm(const std::filesystem::path& file, const std::map<std::string, std::string>& fields, ImportedRows& out) {
  const std::string where = file.string();
  const json report = parse_json(read_text(file), where, 1);
  if (!report.is_object() || !report.contains("performance")) {
    throw ConfigError(fmt::format("{}: no 'performance' section: not a trtllm-bench --report_json file", where));
  }
  const json& engine = section(report, "engine");
  const json& world = section(report, "world_info");
  const json& requests_info = section(report, "request_info");
  const json& dataset = section(report, "dataset");
  const std::string model = stated(fields, engine, "model", {"model"});
  if (model.empty()) throw ConfigError(fmt::format("{}: no model: key 'engine.model' is missing (or give --field model=...)", where));
  const auto requests = nested_number(requests_info, {"num_requests"}) ? nested_number(requests_info, {"num_requests"})
                                                                        : nested_number(dataset, {"num_requests"});
  const auto isl = nested_number(requests_info, {"avg_input_length"}) ? nested_number(requests_info, {"avg_input_length"})
                                                                         : nested_number(dataset, {"avg_isl"});
  const auto osl = nested_number(requests_info, {"avg_output_length"}) ? nested_number(requests_info, {"avg_output_length"})
                                                                          : nested_number(dataset, {"avg_osl"});
  if (!requests || !isl || !osl) {
    throw ConfigError(fmt::format("{}: keys 'request_info.num_requests', 'avg_input_length' and 'avg_output_length' "
                                  "(or dataset's) are needed",
                                  where));
  }
  const std::string version = stated({}, engine, "", {"version"});
  const std::string backend = stated({}, engine, "", {"backend"});
  std::map<std::string, std::string> row = {
      {"source", fields.contains("source") ? fields.at("source")
                                            : fmt::format("trtllm-bench report {}", file.filename().string())},
      {"model", model},
      {"gpus", stated(fields, world, "gpus", {"world_size"})},
      {"gpu_type", fields.contains("gpu_type") ? fields.at("gpu_type") : stated({}, section(report, "machine"), "", {"name"})},
      {"tp", stated(fields, world, "tp", {"tp_size"})},
      {"pp", stated(fields, world, "pp", {"pp_size"})},
      {"precision", fields.contains("precision") ? fields.at("precision") : engine_precision(engine)},
      {"framework", fields.contains("framework")
                        ? fields.at("framework")
                        : fmt::format("TensorRT-LLM {} (trtllm-bench{})", version.empty() ? "?" : version,
                                      backend.empty() ? "" : ", " + backend + " backend")},
      {"scenario", fields.contains("scenario")
                       ? fields.at("scenario")
                       : fmt::format("trtllm-bench throughput: offline (every request at once), {} requests",
                                     number_text(*requests))},
      {"input_len", number_text(std::round(*isl))},
      {"output_len", number_text(std::round(*osl))},
      {"notes", fmt::format("imported by clustersim import trtllm-bench from {}; input_len and output_len are the "
                            "dataset's means; max_batch_size {}, max_num_tokens {}, KV cache {}",
                            where, stated({}, world, "", {"max_batch_size"}), stated({}, world, "", {"max_num_tokens"}),
                            stated({}, engine, "", {"kv_cache_dtype"}))}};
  if (version.empty()) row["notes"] += "; the report states no TensorRT-LLM version (give --field framework=...)";
  const std::string stem = file.stem().string();
  const auto emit = [&](const std::string& metric, std::optional<double> value, const char* unit) {
    if (!value) return;
    append_metric_row(out, row, stem, metric, *value, unit);
  };
  const json& performance = section(report, "performance");
  emit("requests_per_s", nested_number(performance, {"request_throughput_req_s"}), "req/s system");
  emit("output_tokens_per_s", nested_number(performance, {"system_output_throughput_tok_s"}), "tok/s system");
  emit("total_tokens_per_s", nested_number(performance, {"system_total_throughput_tok_s"}), "tok/s system");
  const json& streaming = section(report, "streaming_metrics");
  const std::pair<const char*, const json*> families[] = {
      {"e2e_latency", &section(performance, "request_latency_percentiles_ms")},
      {"ttft", &section(streaming, "ttft_percentiles")},
      {"tpot", &section(streaming, "tpot_percentiles")}};
  for (const auto& [family, percentiles] : families) {
    emit(fmt::format("{}_ms", family), nested_number(*percentiles, {"average"}), "ms");
    for (const char* p : {"p50", "p90", "p99"}) emit(fmt::format("{}_{}_ms", family, p), nested_number(*percentiles, {p}), "ms");
  }
}

/// GenAI-Perf's (and AIPerf's) CSV export as the JSON export's layout: each "Name (unit)" row of
/// the statistics section becomes {unit, avg, p50, ...}, each of the "Metric,Value" section
/// {unit, avg}; "1,234.56" thousands separators and N/A handled. Keys: the JSON's metric names.
json genai_perf_csv(const std::string& text, const std::string& where) {
  static const std::pair<const char*, const char*> names[] = {
      {"time to first token", "time_to_first_token"}, {"request latency", "request_latency"},
      {"inter token latency", "inter_token_latency"}, {"output sequence length", "output_sequence_length"},
      {"input sequence length", "input_sequence_length"}, {"output token throughput per user", ""},
      {"output token throughput", "output_token_throughput"}, {"request throughput", "request_throughput"},
      {"request count", "request_count"}};
  // Sections are separated by blank lines and each has its own header: each is read by the
  // project's CSV reader, the lines before it kept blank so rows keep their line numbers.
  json profile = json::object();
  std::istringstream lines(text);
  std::string section, padding;
  const auto read_section = [&] {
    if (section.empty()) return;
    for (const CsvRow& row : parse_csv(padding + section, where)) {
      std::string name = row.get("Metric"), unit;
      const std::string label = name;
      if (const auto open = name.rfind(" ("); open != std::string::npos && name.back() == ')') {
        unit = name.substr(open + 2, name.size() - open - 3);
        name = name.substr(0, open);
      }
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      const char* key = nullptr;
      for (const auto& [known, json_key] : names) {
        if (name == known) key = json_key;
      }
      if (key == nullptr || *key == '\0') continue;
      json metric = {{"unit", unit == "per sec" ? "requests/sec" : unit}};
      for (const auto& [column, text_value] : row.fields) {
        std::string value = text_value;
        value.erase(std::remove(value.begin(), value.end(), ','), value.end());
        if (column == "Metric" || value.empty() || value == "N/A") continue;
        try {
          std::size_t used = 0;
          const double v = std::stod(value, &used);
          if (used != value.size()) throw std::invalid_argument(value);
          metric[column == "Value" ? "avg" : column] = v;
        } catch (const std::exception&) {
          throw ConfigError(fmt::format("{}:{}: '{}' of {} is '{}', not a number", where, row.line, column, label,
                                        text_value));
        }
      }
      profile[key] = metric;
    }
    section.clear();
  };
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r,") == std::string::npos) {
      read_section();
      continue;
    }
    if (section.empty()) padding.assign(static_cast<std::size_t>(number - 1), '\n');
    section += line + "\n";
  }
  read_section();
  return profile;
}

void import_genai_perf(const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                       ImportedRows& out) {
  const std::string where = file.string();
  const std::string text = read_text(file);
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool csv = first != std::string::npos && text[first] != '{';
  const json profile = csv ? genai_perf_csv(text, where) : parse_json(text, where, 1);
  if (csv && (!fields.contains("model") || !fields.contains("scenario"))) {
    throw ConfigError(fmt::format("{}: a GenAI-Perf CSV export states neither the model nor the load: import it with "
                                  "--field model=... --field scenario=\"genai-perf: max concurrency N, M requests\" "
                                  "(or use the JSON export)",
                                  where));
  }
  if (!profile.is_object() || !profile.contains("request_throughput")) {
    throw ConfigError(fmt::format("{}: no 'request_throughput' metric: not a GenAI-Perf / AIPerf profile export JSON", where));
  }
  const json& config = section(profile, "input_config");
  // The model: input_config.model_names (GenAI-Perf since 2025-03, AIPerf's endpoint), or the flat `model`.
  std::string model = fields.contains("model") ? fields.at("model") : "";
  for (const json* holder : {&config, &section(config, "endpoint")}) {
    for (const char* key : {"model_names", "model"}) {
      const auto it = holder->find(key);
      if (!model.empty() || it == holder->end()) continue;
      if (it->is_string()) model = it->get<std::string>();
      if (it->is_array() && !it->empty() && it->front().is_string()) model = it->front().get<std::string>();
    }
  }
  if (model.empty()) throw ConfigError(fmt::format("{}: no model: key 'input_config.model_names' is missing (or give --field model=...)", where));
  // The load: perf_analyzer's stimulus (GenAI-Perf), loadgen (AIPerf) or the flat arguments.
  const json& stimulus = section(section(config, "perf_analyzer"), "stimulus");
  const json& loadgen = section(config, "loadgen");
  std::optional<double> concurrency, rate;
  for (const json* holder : {&stimulus, &loadgen, &config}) {
    if (!concurrency) concurrency = nested_number(*holder, {"concurrency"});
    if (!rate) rate = nested_number(*holder, {"request_rate"});
  }
  const auto count = nested_number(profile, {"request_count", "avg"});
  const auto isl = nested_number(profile, {"input_sequence_length", "avg"});
  const auto osl = nested_number(profile, {"output_sequence_length", "avg"});
  if (!count || !isl || !osl) {
    throw ConfigError(fmt::format("{}: metrics 'request_count', 'input_sequence_length' and 'output_sequence_length' "
                                  "(their avg) are needed",
                                  where));
  }
  std::string scenario = "genai-perf: ";
  if (rate && *rate > 0) {
    // perf_analyzer's request-rate mode sends at constant intervals unless told otherwise.
    scenario += fmt::format("request rate {} req/s, constant intervals, ", number_text(*rate));
  } else if (concurrency && *concurrency > 0) {
    scenario += fmt::format("max concurrency {}, ", number_text(*concurrency));
  } else if (!fields.contains("scenario")) {
    throw ConfigError(fmt::format("{}: the load (input_config's concurrency or request_rate) is not stated: give "
                                  "--field scenario=\"genai-perf: max concurrency N, M requests\"",
                                  where));
  }
  scenario += fmt::format("{} requests", number_text(*count));
  std::map<std::string, std::string> row = {
      {"source", fields.contains("source") ? fields.at("source")
                                            : fmt::format("GenAI-Perf profile export {}", file.filename().string())},
      {"model", model},
      {"gpus", stated(fields, profile, "gpus", {})},
      {"gpu_type", stated(fields, profile, "gpu_type", {})},
      {"tp", stated(fields, profile, "tp", {})},
      {"pp", stated(fields, profile, "pp", {})},
      {"precision", stated(fields, profile, "precision", {})},
      {"framework", stated(fields, profile, "framework", {})},
      {"scenario", fields.contains("scenario") ? fields.at("scenario") : scenario},
      {"input_len", number_text(std::round(*isl))},
      {"output_len", number_text(std::round(*osl))},
      {"notes", fmt::format("imported by clustersim import genai-perf from {}; input_len and output_len are the means "
                            "of {} requests; inter_token_latency (per request (latency - TTFT) / (output - 1)) is "
                            "compared as TPOT",
                            where, number_text(*count))}};
  if (row["gpus"].empty() && !row["tp"].empty()) row["gpus"] = row["tp"];
  const std::string stem = file.stem().string();
  const auto emit = [&](const std::string& metric, const char* key, const char* statistic, const char* unit) {
    const auto value = nested_number(profile, {key, statistic});
    if (!value) return;
    const json& metric_object = section(profile, key);
    const std::string stated_unit = stated({}, metric_object, "", {"unit"});
    if (std::string(unit) == "ms" && stated_unit != "ms") {
      throw ConfigError(fmt::format("{}: metric '{}' is in '{}', expected ms", where, key, stated_unit));
    }
    append_metric_row(out, row, stem, metric, *value, unit);
  };
  emit("requests_per_s", "request_throughput", "avg", "req/s system");
  emit("output_tokens_per_s", "output_token_throughput", "avg", "tok/s system");
  const std::pair<const char*, const char*> families[] = {
      {"ttft", "time_to_first_token"}, {"tpot", "inter_token_latency"}, {"e2e_latency", "request_latency"}};
  for (const auto& [family, key] : families) {
    emit(fmt::format("{}_ms", family), key, "avg", "ms");
    for (const char* p : {"p50", "p90", "p99"}) emit(fmt::format("{}_{}_ms", family, p), key, p, "ms");
  }
}

/// MLPerf benchmark directory names -> the model (a library preset or alias).
std::string mlperf_model(const std::filesystem::path& file) {
  static const std::pair<const char*, const char*> benchmarks[] = {
      {"llama3.1-405b", "llama-3.1-405b"}, {"llama3.1-8b", "llama-3.1-8b"}, {"llama2-70b", "llama-2-70b"},
      {"mixtral-8x7b", "mixtral-8x7b"},    {"gptj", "GPT-J 6B"}};
  for (const auto& part : file) {
    for (const auto& [prefix, model] : benchmarks) {
      if (part.string().rfind(prefix, 0) == 0) return model;
    }
  }
  return "";
}

/// A submission's systems/<name>.json: accelerator name and count, framework.
struct MlperfSystem {
  std::string gpu_type, gpus, framework;
};

MlperfSystem read_mlperf_system(const std::filesystem::path& file) {
  const json system = parse_json(read_text(file), file.string(), 1);
  if (!system.is_object() || !system.contains("accelerator_model_name")) {
    throw ConfigError(fmt::format("{}: no 'accelerator_model_name': not an MLPerf systems/<name>.json", file.string()));
  }
  MlperfSystem out;
  out.gpu_type = stated({}, system, "", {"accelerator_model_name"});
  if (out.gpu_type.rfind("NVIDIA ", 0) == 0) out.gpu_type = out.gpu_type.substr(7);
  const auto count = [&](const char* key) {
    const std::string text = stated({}, system, "", {key});
    try {
      return text.empty() ? 0 : std::stoi(text);
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("{}: key '{}' is '{}', not a count", file.string(), key, text));
    }
  };
  const int per_node = count("accelerators_per_node"), nodes = count("number_of_nodes");
  if (per_node > 0) out.gpus = std::to_string(per_node * std::max(nodes, 1));
  out.framework = stated({}, system, "", {"framework"});
  return out;
}

void import_mlperf(const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                   const MlperfSystem& system, ImportedRows& out) {
  const std::string where = file.string();
  std::istringstream lines(read_text(file));
  std::map<std::string, std::string> values;  // "key : value" lines, first occurrence
  std::map<std::string, int> line_of;
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto trim = [](std::string s) {
      const auto first = s.find_first_not_of(" \t\r");
      const auto last = s.find_last_not_of(" \t\r");
      return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
    };
    const std::string key = trim(line.substr(0, colon));
    if (!values.contains(key)) {
      values[key] = trim(line.substr(colon + 1));
      line_of[key] = number;
    }
  }
  const std::string scenario_name = values["Scenario"];
  if (scenario_name != "Offline" && scenario_name != "Server") {
    throw ConfigError(fmt::format("{}: no 'Scenario : Offline' or 'Server' line: not an LLM mlperf_log_summary.txt of "
                                  "those scenarios{}",
                                  where, scenario_name.empty() ? "" : " (it says '" + scenario_name + "')"));
  }
  if (values["Mode"] != "PerformanceOnly") {
    throw ConfigError(fmt::format("{}: 'Mode : {}': only PerformanceOnly runs have performance figures", where, values["Mode"]));
  }
  const auto number_at = [&](const std::string& key) -> std::optional<double> {
    const auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    try {
      std::size_t used = 0;
      const double value = std::stod(it->second, &used);
      if (used == it->second.size()) return value;
    } catch (const std::exception&) {
    }
    const std::string& line_text = it->second;
    throw ConfigError(fmt::format("{}:{}: '{}' is '{}', not a number", where, line_of[key], key, line_text));
  };
  const std::string model = fields.contains("model") ? fields.at("model") : mlperf_model(file);
  if (model.empty()) {
    throw ConfigError(fmt::format("{}: the path names no MLPerf LLM benchmark (results/<system>/llama2-70b-99/...): "
                                  "give --field model=...",
                                  where));
  }
  const auto samples = number_at("performance_sample_count");
  const bool server = scenario_name == "Server";
  std::string scenario = fields.contains("scenario")
                             ? fields.at("scenario")
                             : fmt::format("MLPerf {}, {} samples", server ? "Server" : "Offline",
                                           samples ? number_text(*samples) : std::string("?"));
  std::string notes = fmt::format("imported by clustersim import mlperf from {}; LoadGen result {}", where,
                                  values["Result is"].empty() ? "not stated" : values["Result is"]);
  if (server) {
    const auto ttft = number_at("ttft_latency (ns)"), tpot = number_at("tpot_latency (ns)");
    if (ttft && tpot) notes += fmt::format("; ttft_p99_ms={}; tpot_p99_ms={}", number_text(*ttft / 1e6), number_text(*tpot / 1e6));
  }
  if (!fields.contains("input_len") && !fields.contains("dataset")) {
    notes += "; the lengths are the dataset's (give --field input_len= and output_len=, or --field dataset= a "
             "library length profile: MLPerf's OpenOrca and CNN-DailyMail have none yet)";
  }
  std::map<std::string, std::string> row = {
      {"source", fields.contains("source") ? fields.at("source") : fmt::format("MLPerf Inference summary {}", where)},
      {"model", model},
      {"gpus", fields.contains("gpus") ? fields.at("gpus") : system.gpus},
      {"gpu_type", fields.contains("gpu_type") ? fields.at("gpu_type") : system.gpu_type},
      {"tp", fields.contains("tp") ? fields.at("tp") : ""},
      {"pp", fields.contains("pp") ? fields.at("pp") : ""},
      {"precision", fields.contains("precision") ? fields.at("precision") : ""},
      {"framework", fields.contains("framework") ? fields.at("framework") : system.framework},
      {"scenario", scenario},
      {"input_len", fields.contains("input_len") ? fields.at("input_len") : ""},
      {"output_len", fields.contains("output_len") ? fields.at("output_len") : ""},
      {"notes", notes}};
  // The system's id: the results/<system>/<benchmark>/<scenario> folders, else the file's stem.
  std::string stem = file.stem().string();
  if (file.has_parent_path()) {
    std::vector<std::string> parts;
    for (const auto& part : file.parent_path()) parts.push_back(part.string());
    for (std::size_t i = 0; i + 2 < parts.size(); ++i) {
      if (parts[i] == "results") stem = fmt::format("{}_{}_{}", parts[i + 1], parts[i + 2], parts[i + 3 < parts.size() ? i + 3 : i + 2]);
    }
  }
  const auto emit = [&](const char* metric, const std::string& key, const char* unit) {
    const auto value = number_at(key);
    if (!value) return;
    append_metric_row(out, row, stem, metric, *value, unit);
  };
  const std::size_t before = out.rows.size();
  emit("samples_per_s", server ? "Completed samples per second" : "Samples per second", "samples/s system");
  emit("output_tokens_per_s", server ? "Completed tokens per second" : "Tokens per second", "tok/s system");
  if (out.rows.size() == before) {
    throw ConfigError(fmt::format("{}: no '{}' line (GPT-J's inferred tokens are not imported)", where,
                                  server ? "Completed samples per second" : "Samples per second"));
  }
  // A Server run's p99 latencies hold at the rate it was scheduled at: rows of their own, whose
  // scenario states that rate (validate runs Poisson arrivals at it instead of searching).
  const auto scheduled = server ? number_at("Scheduled samples per second") : std::nullopt;
  if (scheduled && !fields.contains("scenario")) {
    row["scenario"] = fmt::format("MLPerf Server at its scheduled rate: request rate {}, {} samples",
                                  number_text(*scheduled), samples ? number_text(*samples) : std::string("?"));
    const auto emit_ms = [&](const char* metric, const std::string& key) {
      if (const auto ns = number_at(key)) append_metric_row(out, row, stem, metric, *ns / 1e6, "ms");
    };
    emit_ms("ttft_p99_ms", "99.00 percentile first token latency (ns)");
    emit_ms("tpot_p99_ms", "99.00 percentile time to output token (ns)");
  }
}

void import_vllm(const std::filesystem::path& file, const std::map<std::string, std::string>& fields, ImportedRows& out) {
  const std::string text = read_text(file);
  // --save-result writes one indented object; --append-result adds one object per line.
  std::istringstream lines(text);
  int objects = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    if (first != std::string::npos && line[first] == '{' && line[last] == '}') ++objects;
  }
  if (objects > 1) {
    import_lines(Tool::vllm, text, file, fields, out);
    return;
  }
  const json run = parse_json(text, file.string(), 1);
  import_serving_run(Tool::vllm, run, file.string(), file.stem().string(), file.string(), fields, out);
}

void import_sglang(const std::filesystem::path& file, const std::map<std::string, std::string>& fields, ImportedRows& out) {
  import_lines(Tool::sglang, read_text(file), file, fields, out);
}

/// nccl-tests' binary name -> the dataset's kernel word.
std::string collective_word(const std::string& binary) {
  static const std::pair<const char*, const char*> words[] = {
      {"all_reduce", "all-reduce"},     {"all_gather", "all-gather"}, {"reduce_scatter", "reduce-scatter"},
      {"alltoall", "all-to-all"},       {"broadcast", "broadcast"},   {"sendrecv", "send-recv"},
      {"reduce_perf", "reduce"},        {"gather_perf", "gather"},    {"scatter_perf", "scatter"},
      {"hypercube", "hypercube"}};
  for (const auto& [name, word] : words) {
    if (binary.find(name) != std::string::npos) return word;
  }
  return "";
}

std::string dtype_word(const std::string& type) {
  if (type == "float") return "fp32";
  if (type == "half") return "fp16";
  if (type == "bfloat16") return "bf16";
  if (type == "double") return "fp64";
  return type;
}

void import_nccl(const std::filesystem::path& file, const std::map<std::string, std::string>& fields, ImportedRows& out) {
  const std::string text = read_text(file);
  std::istringstream lines(text);
  std::string line;
  int number = 0, ranks = 0;
  std::string binary, device;
  struct Point {
    int line;
    std::string text;
    std::vector<std::string> values;
  };
  std::vector<Point> points;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("#", 0) == 0) {
      if (const auto at = line.find("Collective test starting:"); at != std::string::npos) {
        std::istringstream rest(line.substr(at + 25));
        rest >> binary;
      }
      if (line.find(" Rank ") != std::string::npos && line.find(" device ") != std::string::npos) {
        ++ranks;
        if (const auto bracket = line.find("] "); device.empty() && bracket != std::string::npos) {
          device = line.substr(bracket + 2);
          if (device.rfind("NVIDIA ", 0) == 0) device = device.substr(7);
          while (!device.empty() && device.back() == ' ') device.pop_back();
        }
      }
      continue;
    }
    std::istringstream words(line);
    std::vector<std::string> values;
    for (std::string w; words >> w;) values.push_back(w);
    if (values.empty()) continue;
    if (values.size() < 13) {
      // Not a result line (a warning, a banner of another tool): only lines of numbers matter.
      if (std::isdigit(static_cast<unsigned char>(values.front().front())) == 0) continue;
      throw ConfigError(fmt::format("{}:{}:1: a result line has {} fields; nccl-tests writes 13 (size count type "
                                    "redop root, then time algbw busbw #wrong out of place and in place)",
                                    file.string(), number, values.size()));
    }
    points.push_back({number, line, std::move(values)});
  }
  if (points.empty()) {
    throw ConfigError(fmt::format("{}: no result lines: not the stdout of an nccl-tests / rccl-tests binary", file.string()));
  }
  std::string kernel = fields.contains("kernel") ? fields.at("kernel") : collective_word(binary);
  if (kernel.empty()) {
    throw ConfigError(fmt::format("{}: the output does not name its collective (no \"# Collective test starting:\" "
                                  "line): give it with --field kernel=all-reduce",
                                  file.string()));
  }
  if (kernel.find('(') == std::string::npos) kernel += " (nccl-tests/rccl-tests, in-place)";
  const std::string gpu = fields.contains("gpu_type") ? fields.at("gpu_type") : device;
  const std::string gpus = fields.contains("num_gpus") ? fields.at("num_gpus") : ranks > 0 ? std::to_string(ranks) : "";
  const std::string source =
      fields.contains("source") ? fields.at("source") : fmt::format("nccl-tests output {}", file.filename().string());
  const std::string stem = file.stem().string();
  for (const Point& p : points) {
    // A number where one belongs, or an error at its column.
    const std::string& source_line = p.text;
    const auto check = [&](std::size_t index, const char* what) {
      const std::string& v = p.values[index];
      try {
        std::size_t used = 0;
        const double value = std::stod(v, &used);
        if (used == v.size() && std::isfinite(value)) return value;
      } catch (const std::exception&) {
      }
      // The field's column in the line.
      std::size_t at = 0;
      for (std::size_t i = 0; i <= index; ++i) {
        at = source_line.find_first_not_of(" \t", at);
        if (i < index) at = source_line.find_first_of(" \t", at);
      }
      throw ConfigError(fmt::format("{}:{}:{}: {} '{}' is not a number", file.string(), p.line, at + 1, what, v));
    };
    const double bytes = check(0, "size");
    const double time_us = check(9, "in-place time");
    const double busbw = check(11, "in-place busbw");
    const std::string size = number_text(bytes);
    const std::string type = dtype_word(p.values[2]);
    for (const auto& [metric, value, unit] :
         {std::tuple{"busbw", busbw, "GB/s"}, std::tuple{"time_us", time_us, "us"}}) {
      const std::map<std::string, std::string> row = {{"id", fmt::format("{}_{}_{}", stem, size, metric)},
                                                      {"source", source},
                                                      {"gpu_type", gpu},
                                                      {"kernel", kernel},
                                                      {"dtype", type},
                                                      {"num_gpus", gpus},
                                                      {"message_bytes", size},
                                                      {"metric", metric},
                                                      {"value", number_text(value)},
                                                      {"unit", unit},
                                                      {"notes", fmt::format("imported by clustersim import nccl-tests "
                                                                            "from {} line {}",
                                                                            file.string(), p.line)}};
      append_row(out, row);
    }
  }
}

}  // namespace

const config::NameTable<ImportKind>& import_kind_names() {
  static const config::NameTable<ImportKind> names(
      "import kind",
      {{"vllm-bench", ImportKind::vllm_bench},
       {"sglang-bench", ImportKind::sglang_bench},
       {"trtllm-bench", ImportKind::trtllm_bench},
       {"genai-perf", ImportKind::genai_perf},
       {"mlperf", ImportKind::mlperf},
       {"nccl-tests", ImportKind::nccl_tests},
       {"megatron-log", ImportKind::megatron_log},
       {"nemo-log", ImportKind::nemo_log},
       {"kineto", ImportKind::kineto},
       {"nsys", ImportKind::nsys}});
  return names;
}

const std::vector<std::string>& inference_columns() {
  static const std::vector<std::string> columns = {"id",        "source",    "model",   "params_b", "gpus",   "gpu_type",
                                                   "tp",        "pp",        "precision", "framework", "scenario",
                                                   "input_len", "output_len", "batch",  "metric",   "value",  "unit",
                                                   "notes",     "dataset"};
  return columns;
}

const std::vector<std::string>& training_columns() {
  static const std::vector<std::string> columns = {
      "id",      "source", "model", "params_b", "layers",    "hidden", "heads", "seq_len",     "global_batch",
      "gpus",    "gpu_type", "tp",  "pp",       "dp",        "cp",     "ep",    "vp",          "precision",
      "metric",  "value",  "unit",  "notes",    "micro_batch", "recompute", "sequence_parallel", "zero", "framework"};
  return columns;
}

const std::vector<std::string>& calibration_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> names;
    std::string_view header = models::kCalibrationHeader;
    for (std::size_t start = 0; start <= header.size();) {
      const std::size_t comma = std::min(header.find(',', start), header.size());
      names.emplace_back(header.substr(start, comma - start));
      start = comma + 1;
    }
    return names;
  }();
  return columns;
}

const std::vector<std::string>& kernel_columns() {
  static const std::vector<std::string> columns = {"id",      "source",  "gpu_type", "kernel",    "dtype",         "m",
                                                   "n",       "k",       "seq_len",  "head_dim",  "batch",         "num_gpus",
                                                   "message_bytes", "metric", "value", "unit", "notes"};
  return columns;
}

namespace {

/// The rows' columns for `kind` (the same for every file of one output) and the fields' check.
/// Megatron-LM's training log: `_print_args`'s block (megatron/training/arguments.py: "  name
/// ..... value" between its dashed title lines), training_log's iteration lines ("iteration N/
/// M | ... | elapsed time per iteration (ms): X |", megatron/training/training.py) and
/// report_memory's lines ("[Rank r] (...) memory (MB) | allocated: ... | max allocated: ... |
/// reserved: ... | max reserved: ...").
void import_megatron_log(const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                         ImportedRows& out) {
  const std::string where = file.string();
  std::istringstream lines(read_text(file));
  std::map<std::string, std::string> args;
  std::vector<double> intervals_ms;
  std::vector<std::int64_t> iterations;
  double max_allocated = 0, max_reserved = 0;
  bool in_args = false, saw_args = false;
  static const std::regex arg_line(R"(^\s+(\S+) \.+ (.*?)\s*$)");
  // Numbers as training_log and report_memory print them ({:.1f}, {:.2f}): digits, one point.
  static const std::regex iteration_line(R"(iteration\s+(\d+)/\s*\d+ \|.*elapsed time per iteration \(ms\): (\d+(?:\.\d+)?) \|)");
  static const std::regex memory_line(
      R"(memory \(MB\) \| allocated: [0-9.]+ \| max allocated: (\d+(?:\.\d+)?) \| reserved: [0-9.]+ \| max reserved: (\d+(?:\.\d+)?)(?: |$))");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (line.find("------------------------ arguments ------------------------") != std::string::npos) {
      in_args = saw_args = true;
    } else if (line.find("end of arguments") != std::string::npos) {
      in_args = false;
    } else if (in_args && std::regex_match(line, m, arg_line)) {
      args[m[1].str()] = m[2].str();
    } else if (std::regex_search(line, m, iteration_line)) {
      iterations.push_back(std::stoll(m[1].str()));
      intervals_ms.push_back(std::stod(m[2].str()));
    } else if (std::regex_search(line, m, memory_line)) {
      max_allocated = std::max(max_allocated, std::stod(m[1].str()));
      max_reserved = std::max(max_reserved, std::stod(m[2].str()));
    }
  }
  if (!saw_args) {
    throw ConfigError(fmt::format("{}: no '------------------------ arguments ------------------------' block: not a "
                                  "Megatron-LM training log (rank 0's stdout)",
                                  where));
  }
  const auto integer = [&](const char* key, std::optional<std::int64_t> fallback = std::nullopt) -> std::int64_t {
    const auto it = args.find(key);
    if (it == args.end() || it->second == "None") {
      if (fallback) return *fallback;
      throw ConfigError(fmt::format("{}: the arguments block has no '{}'", where, key));
    }
    try {
      std::size_t used = 0;
      const long long value = std::stoll(it->second, &used);
      if (used == it->second.size()) return value;
    } catch (const std::exception&) {
    }
    throw ConfigError(fmt::format("{}: argument '{}' is '{}', not an integer", where, key, it->second));
  };
  const auto flag = [&](const char* key) { return args.contains(key) && args.at(key) == "True"; };
  if (intervals_ms.size() < 2) {
    throw ConfigError(fmt::format("{}: {} iteration line(s) with 'elapsed time per iteration (ms)': the first interval "
                                  "includes start-up, so at least two are needed",
                                  where, intervals_ms.size()));
  }
  const std::int64_t tp = integer("tensor_model_parallel_size", 1), pp = integer("pipeline_model_parallel_size", 1);
  const std::int64_t cp = integer("context_parallel_size", 1), world = integer("world_size");
  if (world % (tp * pp * cp) != 0) {
    throw ConfigError(fmt::format("{}: world_size {} is not a multiple of tp {} x pp {} x cp {}", where, world, tp, pp, cp));
  }
  std::map<std::string, std::string> row;
  row["source"] = fmt::format("Megatron-LM training log {}", where);
  const bool gated = flag("swiglu");
  const std::int64_t heads = integer("num_attention_heads");
  const std::int64_t groups = flag("group_query_attention") ? integer("num_query_groups", heads) : heads;
  std::vector<std::string> notes = {"clustersim import megatron-log"};
  if (fields.contains("model")) {
    row["model"] = fields.at("model");
  } else if (gated || groups != heads) {
    // The shape columns build a GPT (GeLU, multi-head attention): not this model. Left empty,
    // validate skips the row and says why.
    notes.push_back(fmt::format("the model has {}{} query groups of {} heads: give --field model=<library preset> "
                                "(the layers, hidden and heads columns would build a GeLU GPT with multi-head "
                                "attention)",
                                gated ? "a SwiGLU MLP and " : "", groups, heads));
  }
  if (!row.contains("model") && !(gated || groups != heads)) {
    row["layers"] = std::to_string(integer("num_layers"));
    row["hidden"] = std::to_string(integer("hidden_size"));
    row["heads"] = std::to_string(heads);
  }
  row["seq_len"] = std::to_string(integer("seq_length"));
  row["global_batch"] = std::to_string(integer("global_batch_size"));
  row["micro_batch"] = std::to_string(integer("micro_batch_size", 1));
  row["gpus"] = std::to_string(world);
  row["tp"] = std::to_string(tp);
  row["pp"] = std::to_string(pp);
  row["cp"] = std::to_string(cp);
  row["dp"] = std::to_string(world / (tp * pp * cp));
  row["ep"] = std::to_string(integer("expert_model_parallel_size", 1));
  if (const std::int64_t vp = integer("virtual_pipeline_model_parallel_size", 0); vp > 1) row["vp"] = std::to_string(vp);
  const auto fp8 = args.find("fp8");
  row["precision"] = fp8 != args.end() && fp8->second != "None" ? "fp8" : flag("bf16") ? "bf16" : flag("fp16") ? "fp16" : "fp32";
  const auto granularity = args.find("recompute_granularity");
  row["recompute"] = granularity == args.end() || granularity->second == "None" ? "none" : granularity->second;
  row["sequence_parallel"] = flag("sequence_parallel") ? "true" : "false";
  row["zero"] = flag("use_distributed_optimizer") ? "1" : "0";
  row["framework"] = "megatron";
  for (const auto& [column, value] : fields) row[column] = value;
  // The first logged interval includes start-up (compilation, allocator warm-up, the first
  // all-gathers): the step is the median of the others.
  const std::size_t n = intervals_ms.size() - 1;
  const double median_ms = median(std::vector<double>(intervals_ms.begin() + 1, intervals_ms.end()));
  notes.push_back(fmt::format("iteration time: the median of {} logged intervals (iterations {} to {}; the first, "
                              "to iteration {}, includes start-up)",
                              n, iterations[1], iterations.back(), iterations.front()));
  if (!fields.contains("gpu_type")) notes.push_back("the log does not name the GPU: give --field gpu_type=");
  row["notes"] = fmt::format("{}", fmt::join(notes, "; "));
  const std::string stem = file.stem().string();
  append_metric_row(out, row, stem, "iteration_time_s", median_ms / 1e3, "s");
  if (max_allocated > 0) {
    row["notes"] += "; memory: the largest 'max allocated' / 'max reserved' of the ranks' reports (MiB)";
    append_metric_row(out, row, stem, "peak_memory_allocated", max_allocated, "MiB");
    append_metric_row(out, row, stem, "peak_memory_reserved", max_reserved, "MiB");
  }
  out.notes.push_back(fmt::format("{}: {}", where, fmt::join(notes, "; ")));
}

/// The median of the steps after the first (which includes start-up), and the note saying so.
std::pair<double, std::string> steady_median(std::vector<std::pair<std::int64_t, double>> steps, const char* what) {
  std::sort(steps.begin(), steps.end());
  std::vector<double> steady;
  for (std::size_t i = 1; i < steps.size(); ++i) steady.push_back(steps[i].second);
  const std::size_t n = steady.size();
  return {median(std::move(steady)),
          fmt::format("{}: the median of {} logged steps ({} to {}; the first, {}, includes start-up)", what, n,
                      steps[1].first, steps.back().first, steps.front().first)};
}

/// NeMo's training log: NeMo 2.0's progress printer ("Training epoch 0, iteration 1/249 | ... |
/// global_step: 1 | ... | train_step_timing in s: 2.505"), NeMo 1.x's progress bar ("...,
/// global_step=99.00, consumed_samples=25600.0, train_step_timing in s=3.130]", rewritten in place
/// with carriage returns) and the DLLogger lines ("DLLL {... "data": {"global_step": 16.0,
/// "train_step_timing in s": 92.3 ...}}"). A step logged more than once keeps its last value.
void import_nemo_log(const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                     ImportedRows& out) {
  const std::string where = file.string();
  const std::string text = read_text(file);
  static const std::regex printer(R"(global_step: (\d+) \|.*train_step_timing in s: (\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))");
  static const std::regex bar(R"(global_step=(\d+)(?:\.\d+)?,.*train_step_timing in s=(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))");
  static const std::regex batch(R"(global_batch_size: (\d+))");
  std::map<std::int64_t, double> step_s;
  std::string global_batch;
  int next_line = 1;  // 1-based; carriage returns (a progress bar's rewrites) stay on one line
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find_first_of("\r\n", start), text.size());
    const std::string line = text.substr(start, end - start);
    const int line_number = next_line;
    if (end < text.size() && text[end] == '\n') ++next_line;
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, printer) || std::regex_search(line, m, bar)) {
      step_s[std::stoll(m[1].str())] = std::stod(m[2].str());
      if (std::smatch b; std::regex_search(line, b, batch)) global_batch = b[1].str();
    } else if (const auto dl = line.find("DLLL {"); dl != std::string::npos) {
      const json record = parse_json(std::string_view(line).substr(dl + 5), where, line_number);
      const auto data = record.find("data");
      if (data == record.end() || !data->is_object() || !data->contains("train_step_timing in s")) continue;
      const json& step = data->contains("global_step") ? (*data)["global_step"] : record.value("step", json());
      if (!step.is_number() || !(*data)["train_step_timing in s"].is_number()) {
        throw ConfigError(fmt::format("{}:{}: a DLLogger record whose global_step or train_step_timing in s is not a "
                                      "number",
                                      where, line_number));
      }
      step_s[static_cast<std::int64_t>(step.get<double>())] = (*data)["train_step_timing in s"].get<double>();
    }
  }
  if (step_s.size() < 2) {
    throw ConfigError(fmt::format("{}: {} step(s) with 'train_step_timing in s': not a NeMo training log, or too "
                                  "short (the first step includes start-up, so at least two are needed)",
                                  where, step_s.size()));
  }
  const auto [median_s, note] = steady_median({step_s.begin(), step_s.end()}, "step time");
  std::map<std::string, std::string> row;
  row["source"] = fmt::format("NeMo training log {}", where);
  row["framework"] = "megatron";  // NeMo trains on Megatron-Core
  if (!global_batch.empty()) row["global_batch"] = global_batch;
  for (const auto& [column, value] : fields) row[column] = value;
  std::vector<std::string> notes = {"clustersim import nemo-log", note};
  std::vector<std::string> missing;
  for (const char* column : {"model", "gpus", "gpu_type", "tp", "pp", "seq_len", "global_batch", "precision"}) {
    if (!row.contains(column)) missing.emplace_back(column);
  }
  if (!missing.empty()) {
    notes.push_back(fmt::format("NeMo's log states no model or layout: give --field for {}", fmt::join(missing, ", ")));
  }
  row["notes"] = fmt::format("{}", fmt::join(notes, "; "));
  append_metric_row(out, row, file.stem().string(), "iteration_time_s", median_s, "s");
  out.notes.push_back(fmt::format("{}: {}", where, fmt::join(notes, "; ")));
}

/// Calibration rows of PyTorch profiler traces or Nsight Systems NVTX projections, one per
/// operator shape over all the files.
void import_trace_rows(ImportKind kind, const std::vector<std::filesystem::path>& files,
                       const std::map<std::string, std::string>& fields, ImportedRows& out) {
  const bool nsys = kind == ImportKind::nsys;
  for (const auto& [column, value] : fields) {
    if (column != "accelerator" && (column != "dtype" || !nsys)) {
      throw ConfigError(fmt::format("--field {}={}: {} rows take only --field accelerator=<library name>{}", column,
                                    value, import_kind_names().name(kind), nsys ? " and --field dtype=" : ""));
    }
  }
  const auto given = [&fields](const char* column) {
    const auto it = fields.find(column);
    return it == fields.end() ? std::string() : it->second;
  };
  TraceCalibration traces = nsys ? calibration_from_nsys(files, given("accelerator"), given("dtype"))
                                 : calibration_from_traces(files, given("accelerator"));
  traces.table.metadata.clear();
  const std::string csv = models::write_calibration_csv(traces.table);
  for (const auto& parsed : parse_csv(csv, "calibration")) {
    std::vector<std::string> cells;
    for (const auto& column : out.columns) cells.push_back(parsed.get(column));
    out.rows.push_back(std::move(cells));
  }
  out.notes.insert(out.notes.end(), traces.notes.begin(), traces.notes.end());
}

void prepare_columns(ImportKind kind, const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                     ImportedRows& out) {
  const auto& columns = kind == ImportKind::nccl_tests                                      ? kernel_columns()
                        : kind == ImportKind::megatron_log || kind == ImportKind::nemo_log ? training_columns()
                        : kind == ImportKind::kineto || kind == ImportKind::nsys            ? calibration_columns()
                                                                                            : inference_columns();
  if (out.columns.empty()) {
    out.columns = columns;
  } else if (out.columns != columns) {
    throw ConfigError(fmt::format("{}: {} rows have other columns than the rows imported before it: import serving "
                                  "results and collective results into separate files",
                                  file.string(), import_kind_names().name(kind)));
  }
  for (const auto& [column, value] : fields) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
      throw ConfigError(fmt::format("--field {}={}: '{}' is not a column of {} rows; valid: {}", column, value, column,
                                    import_kind_names().name(kind), fmt::join(columns, ", ")));
    }
  }
}

}  // namespace

void import_file(ImportKind kind, const std::filesystem::path& file, const std::map<std::string, std::string>& fields,
                 ImportedRows& out) {
  prepare_columns(kind, file, fields, out);
  switch (kind) {
    case ImportKind::vllm_bench:
      import_vllm(file, fields, out);
      break;
    case ImportKind::sglang_bench:
      import_sglang(file, fields, out);
      break;
    case ImportKind::trtllm_bench:
      import_trtllm(file, fields, out);
      break;
    case ImportKind::genai_perf:
      import_genai_perf(file, fields, out);
      break;
    case ImportKind::mlperf:
      import_mlperf(file, fields, {}, out);
      break;
    case ImportKind::nccl_tests:
      import_nccl(file, fields, out);
      break;
    case ImportKind::megatron_log:
      import_megatron_log(file, fields, out);
      break;
    case ImportKind::nemo_log:
      import_nemo_log(file, fields, out);
      break;
    case ImportKind::kineto:
    case ImportKind::nsys:
      import_trace_rows(kind, {file}, fields, out);
      break;
  }
}

void import_files(ImportKind kind, const std::vector<std::filesystem::path>& files,
                  const std::map<std::string, std::string>& fields, ImportedRows& out) {
  if (kind == ImportKind::kineto || kind == ImportKind::nsys) {
    if (!files.empty()) prepare_columns(kind, files.front(), fields, out);
    import_trace_rows(kind, files, fields, out);
    return;
  }
  MlperfSystem system;
  std::vector<std::filesystem::path> outputs;
  for (const auto& file : files) {
    if (kind == ImportKind::mlperf && file.extension() == ".json") {
      system = read_mlperf_system(file);
    } else {
      outputs.push_back(file);
    }
  }
  for (const auto& file : outputs) {
    if (kind == ImportKind::mlperf) {
      prepare_columns(kind, file, fields, out);
      import_mlperf(file, fields, system, out);
    } else {
      import_file(kind, file, fields, out);
    }
  }
}

std::optional<ImportKind> detect_import_kind(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string head(8192, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  if (head[first] == '{') {
    if (head.find("\"performance\"") != std::string::npos && head.find("\"world_info\"") != std::string::npos) {
      return ImportKind::trtllm_bench;
    }
    if (head.find("\"time_to_first_token\"") != std::string::npos || head.find("\"request_latency\"") != std::string::npos) {
      return ImportKind::genai_perf;
    }
    if (head.find("\"e2e_latency") != std::string::npos || head.find("\"total_output_tokens_retokenized\"") != std::string::npos) {
      return ImportKind::sglang_bench;
    }
    if (head.find("\"request_throughput\"") != std::string::npos || head.find("\"ttfts\"") != std::string::npos) {
      return ImportKind::vllm_bench;
    }
    if (head.find("\"traceEvents\"") != std::string::npos || head.find("\"deviceProperties\"") != std::string::npos) {
      return ImportKind::kineto;
    }
    return std::nullopt;
  }
  if (head.rfind("Metric,avg,", first) == first) return ImportKind::genai_perf;
  if (head.find("MLPerf Results Summary") != std::string::npos) return ImportKind::mlperf;
  if (head.find("# nThread") != std::string::npos || head.find("# Collective test starting") != std::string::npos) {
    return ImportKind::nccl_tests;
  }
  if (head.find("------------------------ arguments ------------------------") != std::string::npos) {
    return ImportKind::megatron_log;
  }
  if (head.find("train_step_timing in s") != std::string::npos) return ImportKind::nemo_log;
  if (head.find("Projected Duration (ns)") != std::string::npos) return ImportKind::nsys;
  return std::nullopt;
}

std::string rows_csv(const ImportedRows& rows) {
  std::string out;
  const auto line = [&out](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(fields[i]);
    }
    out += '\n';
  };
  line(rows.columns);
  for (const auto& row : rows.rows) line(row);
  return out;
}

std::vector<CsvRow> as_csv_rows(const ImportedRows& rows, std::string_view name) {
  return parse_csv(rows_csv(rows), name);
}

std::vector<CsvRow> read_dataset_rows(const std::filesystem::path& file) {
  const auto kind = detect_import_kind(file);
  if (!kind) return read_csv_file(file);
  if (*kind == ImportKind::kineto || *kind == ImportKind::nsys) {
    throw ConfigError(fmt::format("{}: a profiler trace holds kernel times, not a run's result: turn it into a "
                                  "calibration table (`clustersim calibrate --from-{} {} --out TABLE.csv`) and "
                                  "compare it with `clustersim validate kernels TABLE.csv`, or run a row on it with "
                                  "`validate --dataset ROWS --calibration TABLE.csv`",
                                  file.string(), *kind == ImportKind::nsys ? "nsys" : "trace", file.string()));
  }
  ImportedRows rows;
  import_file(*kind, file, {}, rows);
  return as_csv_rows(rows, file.string());
}

}  // namespace clustersim::validate
