// The importers read each tool's own output format (samples in tests/data/importers/, written
// from the tools' documented formats; their values are illustrative, not measurements) into the
// project's dataset columns, and validate / collective --compare read those files directly.
#include "sim/validate/importers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/engine/error.hpp"
#include "sim/validate/nccl_validation.hpp"
#include "sim/validate/serving_validation.hpp"

namespace importers_test {

using namespace clustersim;
using namespace clustersim::validate;

namespace {

std::filesystem::path sample(const std::string& name) {
  return std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "tests/data/importers" / name;
}

/// A file of `text` in the temporary directory.
std::filesystem::path written(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string read_text_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const CsvRow& row_with(const std::vector<CsvRow>& rows, const std::string& metric) {
  for (const CsvRow& row : rows) {
    if (row.get("metric") == metric) return row;
  }
  FAIL("no row with metric " << metric);
  return rows.front();
}

}  // namespace

TEST_CASE("vllm bench serve's result JSON becomes one inference row per metric") {
  ImportedRows imported;
  import_file(ImportKind::vllm_bench, sample("vllm-bench-llama3-8b-rate4.json"), {{"precision", "BF16"}}, imported);
  CHECK(imported.columns == inference_columns());
  const auto rows = as_csv_rows(imported, "vllm.csv");
  // Three throughputs; mean, median and p99 of TTFT, TPOT and ITL (no e2el: not requested).
  CHECK(rows.size() == 12);
  const CsvRow& ttft = row_with(rows, "ttft_p99_ms");
  CHECK(ttft.get("value") == "61.2");
  CHECK(ttft.get("unit") == "ms");
  CHECK(ttft.get("model") == "meta-llama/Llama-3.1-8B-Instruct");
  // --metadata keys (strings at the top level) fill the columns; a one-server run's GPUs are tp.
  CHECK(ttft.get("gpu_type") == "H100-SXM-80GB");
  CHECK(ttft.get("tp") == "1");
  CHECK(ttft.get("gpus") == "1");
  CHECK(ttft.get("framework") == "vLLM 0.10.1");
  CHECK(ttft.get("precision") == "BF16");
  // 204,800 input and 25,600 output tokens over 200 requests.
  CHECK(ttft.get("input_len") == "1024");
  CHECK(ttft.get("output_len") == "128");
  CHECK(ttft.get("scenario") == "vllm bench serve: request rate 4 req/s, burstiness 1, 200 requests");
  CHECK(row_with(rows, "ttft_p50_ms").get("value") == "36.9");
  CHECK(row_with(rows, "output_tokens_per_s").get("unit") == "tok/s system");
  CHECK(detect_import_kind(sample("vllm-bench-llama3-8b-rate4.json")) == ImportKind::vllm_bench);

  // The row maps to Poisson arrivals at the stated rate.
  const ServingRowMapping m = map_serving_row(ttft);
  REQUIRE(m.scenario_yaml);
  CHECK(m.benchmark == ServingBenchmark::rate);
  CHECK(m.scenario_yaml->find("arrival: {process: poisson, rate: 4}") != std::string::npos);
  CHECK(m.scenario_yaml->find("count: 200") != std::string::npos);
}

TEST_CASE("sglang bench_serving's JSON lines: Python's Infinity, the model from a field, a concurrency cap") {
  CHECK_THROWS_WITH_AS(
      [] {
        ImportedRows imported;
        import_file(ImportKind::sglang_bench, sample("sglang-bench-llama3-8b.jsonl"), {}, imported);
      }(),
      doctest::Contains("sglang-bench-llama3-8b.jsonl:1: no model: key 'model_id' is missing (or give --field model=...)"),
      ConfigError);
  ImportedRows imported;
  import_file(ImportKind::sglang_bench, sample("sglang-bench-llama3-8b.jsonl"),
              {{"model", "meta-llama/Llama-3.1-8B-Instruct"},
               {"gpu_type", "H100-SXM-80GB"},
               {"tp", "1"},
               {"framework", "SGLang 0.5.2"},
               {"precision", "BF16"}},
              imported);
  const auto rows = as_csv_rows(imported, "sglang.csv");
  // Three throughputs... SGLang has no total_throughput in this version: two; four latency
  // families x mean, median, p99 (p95 has no dataset metric).
  CHECK(rows.size() == 14);
  const CsvRow& e2e = row_with(rows, "e2e_latency_p99_ms");
  CHECK(e2e.get("value") == "2901.7");
  CHECK(e2e.get("scenario") == "sglang.bench_serving: max concurrency 64, 500 requests");
  const ServingRowMapping m = map_serving_row(e2e);
  REQUIRE(m.scenario_yaml);
  CHECK(m.benchmark == ServingBenchmark::concurrency);
  CHECK(m.scenario_yaml->find("arrival: {process: closed_loop, clients: 64}") != std::string::npos);
  CHECK(detect_import_kind(sample("sglang-bench-llama3-8b.jsonl")) == ImportKind::sglang_bench);
}

TEST_CASE("a rate-limited run capped in concurrency is skipped with its reason; burstiness is gamma") {
  const std::string head = R"({"model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 100, "completed": 100,
  "total_input_tokens": 51200, "total_output_tokens": 12800, "request_throughput": 1.9,)";
  ImportedRows both;
  import_file(ImportKind::vllm_bench,
              written("cs_vllm_both.json", head + R"( "request_rate": 2, "burstiness": 1, "max_concurrency": 8})"),
              {{"gpu_type", "H100"}, {"tp", "1"}, {"framework", "vLLM 0.10.1"}, {"precision", "BF16"}}, both);
  const ServingRowMapping capped = map_serving_row(as_csv_rows(both, "both.csv").front());
  CHECK_FALSE(capped.scenario_yaml);
  CHECK(capped.skip_reason.find("requests at 2 req/s capped at 8 in flight: not modelled") != std::string::npos);
  ImportedRows bursty;
  import_file(ImportKind::vllm_bench,
              written("cs_vllm_bursty.json", head + R"( "request_rate": 2, "burstiness": 0.25, "max_concurrency": null})"),
              {{"gpu_type", "H100"}, {"tp", "1"}, {"framework", "vLLM 0.10.1"}, {"precision", "BF16"}}, bursty);
  const ServingRowMapping gamma = map_serving_row(as_csv_rows(bursty, "bursty.csv").front());
  REQUIRE(gamma.scenario_yaml);
  // vLLM draws gamma gaps of shape = burstiness: cv = 1 / sqrt(0.25) = 2.
  CHECK(gamma.scenario_yaml->find("arrival: {process: gamma, rate: 2, cv: 2}") != std::string::npos);
}

TEST_CASE("nccl-tests stdout becomes in-place busbw and time rows, and collective --compare reads it directly") {
  ImportedRows imported;
  import_file(ImportKind::nccl_tests, sample("nccl-tests-all-reduce-h100x8.txt"), {}, imported);
  CHECK(imported.columns == kernel_columns());
  const auto rows = as_csv_rows(imported, "nccl.csv");
  REQUIRE(rows.size() == 12);  // six sizes, busbw and time each
  CHECK(rows[0].get("kernel") == "all-reduce (nccl-tests/rccl-tests, in-place)");
  CHECK(rows[0].get("gpu_type") == "H100 80GB HBM3");
  CHECK(rows[0].get("num_gpus") == "8");
  CHECK(rows[0].get("dtype") == "fp32");
  CHECK(rows[0].get("message_bytes") == "1048576");
  CHECK(rows[0].get("metric") == "busbw");
  CHECK(rows[0].get("value") == "73.78");  // the in-place column, as the project's rows
  CHECK(rows[1].get("metric") == "time_us");
  CHECK(rows[1].get("value") == "24.87");
  CHECK(detect_import_kind(sample("nccl-tests-all-reduce-h100x8.txt")) == ImportKind::nccl_tests);

  const NcclComparison comparison = compare_nccl_dataset(sample("nccl-tests-all-reduce-h100x8.txt"));
  REQUIRE(comparison.gpus.size() == 1);
  CHECK(comparison.gpus[0].system == "dgx-h100");
  CHECK(comparison.gpus[0].ranks == 8);
  CHECK(comparison.gpus[0].points.size() == 6);
}

TEST_CASE("malformed tool outputs: errors name the file, line and column") {
  ImportedRows rows;
  ImportedRows kernels;
  CHECK_THROWS_WITH_AS(
      import_file(ImportKind::vllm_bench, written("cs_bad.json", "{\n  \"completed\": 10,\n  \"model_id\" \"x\"\n}\n"),
                  {}, rows),
      doctest::Contains("cs_bad.json:3:14: not valid JSON: syntax error"), ConfigError);
  CHECK_THROWS_WITH_AS(
      import_file(ImportKind::vllm_bench, written("cs_nokey.json", R"({"model_id": "x", "completed": 3})"), {}, rows),
      doctest::Contains("cs_nokey.json: key 'total_input_tokens' is missing"), ConfigError);
  const std::string nccl = "# Collective test starting: all_reduce_perf\n"
                           "     1048576        262144     float     sum      -1    25.21   41.59   72.78      0    "
                           "24.87   42.16   7x.78      0\n";
  CHECK_THROWS_WITH_AS(import_file(ImportKind::nccl_tests, written("cs_bad_nccl.txt", nccl), {}, kernels),
                       doctest::Contains("cs_bad_nccl.txt:2:105: in-place busbw '7x.78' is not a number"), ConfigError);
  CHECK_THROWS_WITH_AS(import_file(ImportKind::nccl_tests, written("cs_short_nccl.txt", "     1048576  262144  float\n"),
                                   {}, kernels),
                       doctest::Contains("cs_short_nccl.txt:1:1: a result line has 3 fields"), ConfigError);
  CHECK_THROWS_WITH_AS(
      import_file(ImportKind::nccl_tests, sample("nccl-tests-all-reduce-h100x8.txt"), {{"tp", "8"}}, kernels),
      doctest::Contains("--field tp=8: 'tp' is not a column of nccl-tests rows; valid: id, source"), ConfigError);
  CHECK_THROWS_WITH_AS(import_kind_names().parse("genai"),
                       doctest::Contains("unknown import kind 'genai'; valid: vllm-bench, sglang-bench, trtllm-bench, genai-perf, mlperf, nccl-tests, "
                                         "megatron-log"),
                       ConfigError);
  // Serving and collective rows have different columns: one file each.
  ImportedRows serving;
  import_file(ImportKind::vllm_bench, sample("vllm-bench-llama3-8b-rate4.json"), {}, serving);
  CHECK_THROWS_WITH_AS(import_file(ImportKind::nccl_tests, sample("nccl-tests-all-reduce-h100x8.txt"), {}, serving),
                       doctest::Contains("nccl-tests rows have other columns than the rows imported before it"),
                       ConfigError);
  // A CSV is not a tool output: read as it is.
  CHECK_FALSE(detect_import_kind(std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "validation/data/ground_truth_inference.csv"));
}

TEST_CASE("trtllm-bench's report JSON: its engine, world and dataset fill the row; an offline run") {
  ImportedRows imported;
  import_file(ImportKind::trtllm_bench, sample("trtllm-bench-llama3-8b-fp8.json"), {}, imported);
  const auto rows = as_csv_rows(imported, "trtllm.csv");
  // Three throughputs and the request latency's average, p50, p90, p99 (no --streaming: no TTFT).
  CHECK(rows.size() == 7);
  const CsvRow& throughput = row_with(rows, "output_tokens_per_s");
  CHECK(throughput.get("value") == "26923.6");
  CHECK(throughput.get("precision") == "FP8");
  CHECK(throughput.get("tp") == "1");
  CHECK(throughput.get("gpus") == "1");
  CHECK(throughput.get("gpu_type") == "NVIDIA H100 80GB HBM3");  // machine.name
  CHECK(throughput.get("framework") == "TensorRT-LLM 1.0.0 (trtllm-bench, Pytorch backend)");
  CHECK(throughput.get("scenario") == "trtllm-bench throughput: offline (every request at once), 3000 requests");
  CHECK(throughput.get("input_len") == "128");
  CHECK(row_with(rows, "e2e_latency_p99_ms").get("value") == "13990.8");
  CHECK(detect_import_kind(sample("trtllm-bench-llama3-8b-fp8.json")) == ImportKind::trtllm_bench);
  const ServingRowMapping m = map_serving_row(throughput);
  REQUIRE(m.scenario_yaml);
  CHECK(m.benchmark == ServingBenchmark::offline);
  CHECK(m.scenario_yaml->find("framework: trtllm-bench-1.0") != std::string::npos);
  CHECK(m.scenario_yaml->find("count: 3000") != std::string::npos);
}

TEST_CASE("GenAI-Perf's profile export: inter-token latency compared as TPOT; its concurrency and request rate") {
  ImportedRows imported;
  import_file(ImportKind::genai_perf, sample("genai-perf-llama3-8b-c16.json"),
              {{"gpu_type", "H100-SXM-80GB"}, {"tp", "1"}, {"framework", "TensorRT-LLM 1.0"}, {"precision", "BF16"}},
              imported);
  const auto rows = as_csv_rows(imported, "genai.csv");
  CHECK(rows.size() == 14);  // two throughputs; TTFT, TPOT, latency x avg, p50, p90, p99
  const CsvRow& tpot = row_with(rows, "tpot_p99_ms");
  CHECK(tpot.get("value") == "8.8");
  CHECK(tpot.get("model") == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(tpot.get("input_len") == "550");
  CHECK(tpot.get("output_len") == "198");
  CHECK(tpot.get("scenario") == "genai-perf: max concurrency 16, 320 requests");
  CHECK(detect_import_kind(sample("genai-perf-llama3-8b-c16.json")) == ImportKind::genai_perf);
  const ServingRowMapping m = map_serving_row(tpot);
  REQUIRE(m.scenario_yaml);
  CHECK(m.scenario_yaml->find("arrival: {process: closed_loop, clients: 16}") != std::string::npos);

  // perf_analyzer's request-rate mode: constant intervals.
  ImportedRows rated;
  import_file(ImportKind::genai_perf,
              written("cs_genai_rate.json", R"({"request_throughput": {"unit": "requests/sec", "avg": 4.9},
    "request_count": {"unit": "count", "avg": 100}, "input_sequence_length": {"unit": "tokens", "avg": 512},
    "output_sequence_length": {"unit": "tokens", "avg": 64},
    "time_to_first_token": {"unit": "ms", "avg": 40.0},
    "input_config": {"model": ["meta-llama/Llama-3.1-8B-Instruct"], "request_rate": 5}})"),
              {{"gpu_type", "H100"}, {"tp", "1"}, {"framework", "vLLM 0.10.1"}, {"precision", "BF16"}}, rated);
  const auto rate_rows = as_csv_rows(rated, "rate.csv");
  CHECK(rate_rows.front().get("scenario") == "genai-perf: request rate 5 req/s, constant intervals, 100 requests");
  const ServingRowMapping constant = map_serving_row(rate_rows.front());
  REQUIRE(constant.scenario_yaml);
  CHECK(constant.scenario_yaml->find("arrival: {process: constant, rate: 5}") != std::string::npos);
  // A time metric in another unit is an error naming it.
  ImportedRows wrong;
  CHECK_THROWS_WITH_AS(
      import_file(ImportKind::genai_perf,
                  written("cs_genai_ns.json", R"({"request_throughput": {"unit": "requests/sec", "avg": 4.9},
    "request_count": {"avg": 100}, "input_sequence_length": {"avg": 512}, "output_sequence_length": {"avg": 64},
    "time_to_first_token": {"unit": "ns", "avg": 40000000.0},
    "input_config": {"model": "m", "concurrency": 4}})"),
                  {}, wrong),
      doctest::Contains("metric 'time_to_first_token' is in 'ns', expected ms"), ConfigError);
}

TEST_CASE("an MLPerf LoadGen summary with its system JSON: a Server row with the run's latency limits") {
  const auto summary =
      sample("mlperf/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99/Server/performance/run_1/mlperf_log_summary.txt");
  ImportedRows imported;
  import_files(ImportKind::mlperf, {summary, sample("mlperf/systems/DGX-H100_H100-SXM-80GBx8_TRT.json")},
               {{"precision", "FP8"}}, imported);
  const auto rows = as_csv_rows(imported, "mlperf.csv");
  REQUIRE(rows.size() == 4);
  const CsvRow& tokens = row_with(rows, "output_tokens_per_s");
  // The p99 latencies hold at the scheduled rate: their rows state it.
  const CsvRow& ttft = row_with(rows, "ttft_p99_ms");
  CHECK(ttft.get("value") == "461.278089");
  CHECK(ttft.get("unit") == "ms");
  CHECK(ttft.get("scenario") == "MLPerf Server at its scheduled rate: request rate 75.1, 24576 samples");
  CHECK(row_with(rows, "tpot_p99_ms").get("value") == "175.354317");
  CHECK(tokens.get("value") == "21605.79");
  CHECK(tokens.get("model") == "llama-2-70b");  // from the benchmark folder
  CHECK(tokens.get("gpu_type") == "H100-SXM-80GB");
  CHECK(tokens.get("gpus") == "8");
  CHECK(tokens.get("scenario") == "MLPerf Server, 24576 samples");
  CHECK(tokens.get("notes").find("ttft_p99_ms=2000; tpot_p99_ms=200") != std::string::npos);
  CHECK(tokens.get("id") == "DGX-H100_H100-SXM-80GBx8_TRT_llama2-70b-99_Server_output_tokens_per_s");
  CHECK(detect_import_kind(summary) == ImportKind::mlperf);
  // The dataset's lengths are not in the summary: validate says so rather than guessing.
  CHECK(map_serving_row(tokens).skip_reason.find("input_len") != std::string::npos);
  // With them (and the framework) given, it is a Server row: the rate search under its limits.
  ImportedRows given;
  import_files(ImportKind::mlperf, {summary, sample("mlperf/systems/DGX-H100_H100-SXM-80GBx8_TRT.json")},
               {{"precision", "FP8"}, {"framework", "TensorRT-LLM 0.12.0"}, {"input_len", "870"}, {"output_len", "294"}},
               given);
  const ServingRowMapping m = map_serving_row(row_with(as_csv_rows(given, "given.csv"), "output_tokens_per_s"));
  REQUIRE(m.scenario_yaml);
  CHECK(m.benchmark == ServingBenchmark::server);
  REQUIRE(m.limits);
  CHECK(m.limits->ttft_s == doctest::Approx(2.0));
  CHECK(m.limits->tpot_s == doctest::Approx(0.2));
  // Its latency rows run Poisson arrivals at the scheduled rate, with no search.
  const auto given_rows = as_csv_rows(given, "given.csv");
  for (const char* metric : {"ttft_p99_ms", "tpot_p99_ms"}) {
    const ServingRowMapping at_rate = map_serving_row(row_with(given_rows, metric));
    REQUIRE(at_rate.scenario_yaml);
    CHECK(at_rate.benchmark == ServingBenchmark::rate);
    CHECK(at_rate.scenario_yaml->find("arrival: {process: poisson, rate: 75.1}") != std::string::npos);
    CHECK(at_rate.scenario_yaml->find("count: 24576") != std::string::npos);
  }

  ImportedRows bad;
  CHECK_THROWS_WITH_AS(import_files(ImportKind::mlperf, {written("cs_summary.txt", "Scenario : SingleStream\n")}, {}, bad),
                       doctest::Contains("cs_summary.txt: no 'Scenario : Offline' or 'Server' line"), ConfigError);
  CHECK_THROWS_WITH_AS(
      import_files(ImportKind::mlperf,
                   {written("cs_summary2.txt", "Scenario : Offline\nMode     : PerformanceOnly\nSamples per second: 8x4\n")},
                   {{"model", "llama-2-70b"}}, bad),
      doctest::Contains("cs_summary2.txt:3: 'Samples per second' is '8x4', not a number"), ConfigError);
}

TEST_CASE("a Megatron-LM training log: shape and layout from its arguments, the steady iteration time, peak memory") {
  const auto log = sample("megatron-gpt-1.7b-h100x8.log");
  CHECK(detect_import_kind(log) == ImportKind::megatron_log);
  ImportedRows imported;
  import_file(ImportKind::megatron_log, log, {{"gpu_type", "H100-SXM5-80GB"}}, imported);
  CHECK(imported.columns == training_columns());
  const auto rows = as_csv_rows(imported, "megatron.csv");
  REQUIRE(rows.size() == 3);
  const CsvRow& step = row_with(rows, "iteration_time_s");
  // The intervals logged at iterations 20, 30, 40 (the first, to iteration 10, has start-up):
  // 362.1, 358.4 and 365.0 ms, median 362.1 ms.
  CHECK(step.get("value") == "0.3621");
  CHECK(step.get("unit") == "s");
  CHECK(step.get("layers") == "24");
  CHECK(step.get("hidden") == "2304");
  CHECK(step.get("heads") == "24");
  CHECK(step.get("seq_len") == "2048");
  CHECK(step.get("global_batch") == "64");
  CHECK(step.get("gpus") == "8");
  CHECK(step.get("tp") == "2");
  CHECK(step.get("pp") == "1");
  CHECK(step.get("dp") == "4");
  CHECK(step.get("vp").empty());  // None
  CHECK(step.get("precision") == "bf16");
  CHECK(step.get("micro_batch") == "4");
  CHECK(step.get("recompute") == "selective");
  CHECK(step.get("sequence_parallel") == "true");
  CHECK(step.get("zero") == "1");
  CHECK(step.get("framework") == "megatron");
  CHECK(step.get("gpu_type") == "H100-SXM5-80GB");
  // The largest of the two ranks' reports.
  CHECK(row_with(rows, "peak_memory_allocated").get("value") == "21510.4");
  CHECK(row_with(rows, "peak_memory_reserved").get("value") == "23652");
  CHECK(row_with(rows, "peak_memory_reserved").get("unit") == "MiB");

  // A SwiGLU model with grouped-query attention: its shape would build a GeLU GPT, so the shape
  // columns stay empty (validate then skips the row, saying why) unless the model is given.
  const std::string text = read_text_file(log);
  const auto set_arg = [](std::string& log_text, const std::string& key, const std::string& value) {
    const auto at = log_text.find("  " + key + " ");
    REQUIRE(at != std::string::npos);
    const auto end = log_text.find('\n', at);
    const auto dots = log_text.rfind(". ", end);
    log_text.replace(dots + 2, end - dots - 2, value);
  };
  std::string llama = text;
  set_arg(llama, "swiglu", "True");
  set_arg(llama, "group_query_attention", "True");
  set_arg(llama, "num_query_groups", "8");
  ImportedRows gated;
  import_file(ImportKind::megatron_log, written("cs_megatron_llama.log", llama), {}, gated);
  const auto gated_rows = as_csv_rows(gated, "gated.csv");
  CHECK(row_with(gated_rows, "iteration_time_s").get("layers").empty());
  CHECK(row_with(gated_rows, "iteration_time_s").get("notes").find("give --field model=<library preset>") !=
        std::string::npos);
  ImportedRows named;
  import_file(ImportKind::megatron_log, written("cs_megatron_llama2.log", llama), {{"model", "llama-3-8b"}}, named);
  CHECK(row_with(as_csv_rows(named, "named.csv"), "iteration_time_s").get("model") == "llama-3-8b");

  ImportedRows bad;
  CHECK_THROWS_WITH_AS(import_file(ImportKind::megatron_log, written("cs_megatron_none.log", "iteration 1/ 2 |\n"), {}, bad),
                       doctest::Contains("cs_megatron_none.log: no '------------------------ arguments"), ConfigError);
  const std::string one_interval = text.substr(0, text.find(" [2026-11-30 10:00:14"));
  CHECK_THROWS_WITH_AS(
      import_file(ImportKind::megatron_log, written("cs_megatron_one.log", one_interval), {}, bad),
      doctest::Contains("cs_megatron_one.log: 1 iteration line(s) with 'elapsed time per iteration (ms)'"), ConfigError);
  std::string odd = text;
  set_arg(odd, "world_size", "9");
  CHECK_THROWS_WITH_AS(import_file(ImportKind::megatron_log, written("cs_megatron_odd.log", odd), {}, bad),
                       doctest::Contains("world_size 9 is not a multiple of tp 2 x pp 1 x cp 1"), ConfigError);
}

TEST_CASE("GenAI-Perf's CSV export reads as its JSON export once the model and load are given") {
  const std::map<std::string, std::string> given = {{"gpu_type", "H100-SXM-80GB"},
                                                    {"tp", "1"},
                                                    {"framework", "TensorRT-LLM 1.0"},
                                                    {"precision", "BF16"}};
  ImportedRows from_json;
  import_file(ImportKind::genai_perf, sample("genai-perf-llama3-8b-c16.json"), given, from_json);
  auto with_load = given;
  with_load["model"] = "meta-llama/Llama-3.1-8B-Instruct";
  with_load["scenario"] = "genai-perf: max concurrency 16, 320 requests";
  ImportedRows from_csv;
  import_file(ImportKind::genai_perf, sample("genai-perf-llama3-8b-c16.csv"), with_load, from_csv);
  const auto json_rows = as_csv_rows(from_json, "json.csv");
  const auto csv_rows = as_csv_rows(from_csv, "csv.csv");
  REQUIRE(csv_rows.size() == json_rows.size());
  for (const char* metric : {"requests_per_s", "output_tokens_per_s", "ttft_p99_ms", "tpot_ms", "e2e_latency_p50_ms"}) {
    CHECK(std::stod(row_with(csv_rows, metric).get("value")) ==
          doctest::Approx(std::stod(row_with(json_rows, metric).get("value"))));
  }
  CHECK(row_with(csv_rows, "e2e_latency_p50_ms").get("value") == "1695.3");  // "1,695.30"
  CHECK(row_with(csv_rows, "tpot_ms").get("input_len") == "550");
  CHECK(detect_import_kind(sample("genai-perf-llama3-8b-c16.csv")) == ImportKind::genai_perf);
  ImportedRows bare;
  CHECK_THROWS_WITH_AS(import_file(ImportKind::genai_perf, sample("genai-perf-llama3-8b-c16.csv"), given, bare),
                       doctest::Contains("a GenAI-Perf CSV export states neither the model nor the load"), ConfigError);
  CHECK_THROWS_WITH_AS(import_file(ImportKind::genai_perf,
                                   written("cs_genai.csv", "Metric,avg,min\nTime To First Token (ms),6x.1,2\n"),
                                   with_load, bare),
                       doctest::Contains("cs_genai.csv:2: 'avg' of Time To First Token (ms) is '6x.1', not a number"),
                       ConfigError);
}

TEST_CASE("a NeMo training log: the steady step time of its progress lines; the layout from fields") {
  const auto log = sample("nemo-llama3-8b-h100x8.log");
  CHECK(detect_import_kind(log) == ImportKind::nemo_log);
  ImportedRows imported;
  import_file(ImportKind::nemo_log, log, {}, imported);
  CHECK(imported.columns == training_columns());
  auto rows = as_csv_rows(imported, "nemo.csv");
  REQUIRE(rows.size() == 1);
  // Steps 1-19 (step 0, 25.311 s, includes start-up): their median, the tenth of the sorted 19.
  CHECK(rows[0].get("value") == "11.879");
  CHECK(rows[0].get("metric") == "iteration_time_s");
  CHECK(rows[0].get("global_batch") == "128");  // from the progress line
  CHECK(rows[0].get("framework") == "megatron");
  CHECK(rows[0].get("notes").find("give --field for model, gpus, gpu_type, tp, pp, seq_len, precision") !=
        std::string::npos);
  ImportedRows given;
  import_file(ImportKind::nemo_log, log,
              {{"model", "llama-3-8b"}, {"gpus", "8"}, {"gpu_type", "H100"}, {"tp", "1"}, {"pp", "1"}, {"cp", "2"},
               {"seq_len", "8192"}, {"precision", "bf16"}},
              given);
  rows = as_csv_rows(given, "nemo.csv");
  CHECK(rows[0].get("cp") == "2");
  CHECK(rows[0].get("notes").find("give --field") == std::string::npos);

  // NeMo 1.x's progress bar, rewritten in place with carriage returns (a step seen twice keeps
  // its last value), and NeMo's DLLogger lines.
  ImportedRows bar;
  import_file(ImportKind::nemo_log,
              written("cs_nemo_bar.log",
                      "Epoch 0: :   1%| | 1/100 [00:20<33:00, reduced_train_loss=10.9, global_step=0.000, "
                      "consumed_samples=256.0, train_step_timing in s=20.10]\r"
                      "Epoch 0: :   2%| | 2/100 [00:23<20:00, reduced_train_loss=10.5, global_step=1.000, "
                      "consumed_samples=512.0, train_step_timing in s=3.150]\r"
                      "Epoch 0: :   2%| | 2/100 [00:23<20:00, reduced_train_loss=10.5, global_step=1.000, "
                      "consumed_samples=512.0, train_step_timing in s=3.130]\r"
                      "Epoch 0: :   3%| | 3/100 [00:26<19:00, reduced_train_loss=10.2, global_step=2.000, "
                      "consumed_samples=768.0, train_step_timing in s=3.110]\n"),
              {}, bar);
  CHECK(as_csv_rows(bar, "bar.csv")[0].get("value") == "3.12");  // (3.130 + 3.110) / 2
  ImportedRows dllogger;
  import_file(ImportKind::nemo_log,
              written("cs_nemo_dll.log",
                      R"(DLLL {"timestamp": "1739210331.7", "type": "LOG", "step": 0, "data": {"global_step": 0.0, "train_step_timing in s": 95.0}}
DLLL {"timestamp": "1739210431.7", "type": "LOG", "step": 1, "data": {"global_step": 1.0, "train_step_timing in s": 92.25}}
)"),
              {}, dllogger);
  CHECK(as_csv_rows(dllogger, "dll.csv")[0].get("value") == "92.25");
  ImportedRows bad;
  CHECK_THROWS_WITH_AS(import_file(ImportKind::nemo_log,
                                   written("cs_nemo_one.log", "global_step: 0 | train_step_timing in s: 4.2\n"), {}, bad),
                       doctest::Contains("1 step(s) with 'train_step_timing in s'"), ConfigError);
  CHECK_THROWS_WITH_AS(import_file(ImportKind::nemo_log,
                                   written("cs_nemo_dll_bad.log", "x\nDLLL {\"data\": {\"global_step\": 1,}}\n"), {}, bad),
                       doctest::Contains("cs_nemo_dll_bad.log:2:"), ConfigError);
}

}  // namespace importers_test
