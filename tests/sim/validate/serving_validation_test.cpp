// The inference validation: rows of the ground_truth_inference.csv format parsed, their metrics
// read the way each benchmark counts, the scenario each row maps to (checked key by key), the
// skip reasons, the MLPerf Server rate search on a made-up row, and the `validate` command on
// the committed dataset.
#include "sim/validate/serving_validation.hpp"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"
#include "sim/validate/csv_table.hpp"
#include "tests/sim/cli/run_clustersim.hpp"

namespace serving_validation_test {

using namespace clustersim;
using namespace clustersim::validate;

namespace {

const char* kHeader =
    "id,source,model,params_b,gpus,gpu_type,tp,pp,precision,framework,scenario,input_len,output_len,batch,metric,"
    "value,unit,notes\n";

CsvRow row_from(const std::string& line) { return parse_csv(std::string(kHeader) + line + "\n", "t.csv").at(0); }

// Rows copied from validation/data/ground_truth_inference.csv (source column shortened).
const char* kH100Static =
    "trtllm061_H100_8,perf.md,LLaMA 70B,70,2,H100-SXM-80GB,2,,FP8,TensorRT-LLM v0.6.1,\"offline max throughput "
    "(gptSessionBenchmark, static batch)\",128,128,1024,output_tokens_per_s,2657,out tok/s/GPU,batch = largest supported";
const char* kA100Static =
    "trtllm061_A100_1,perf.md,GPT-J 6B,6,2,A100 (80GB implied),2,,FP16,TensorRT-LLM v0.6.1,\"offline max throughput "
    "(gptSessionBenchmark, static batch)\",128,2048,120,output_tokens_per_s,2192,out tok/s (header; per-GPU not "
    "stated),";
const char* kTtft =
    "trtllm05_ttft_L40S_2,perf.md,LLaMA 7B,7,1,L40S,1,,FP8,TensorRT-LLM v0.5,batch 1 first-token latency,128,,1,"
    "ttft_ms,14,ms,";
const char* kAzure405b =
    "azure_ND_H100_v_4,guide,LLAMA 3 405B,405,8,H100 80GB HBM3 (ND H100 v5),8,,not stated in results (config.json "
    "default fp8),TensorRT-LLM,static batch,128,8,32,tokens_per_s,251.5,\"tokens/s (input+output, system)\",";
const char* kMi300x =
    "azure_mi300x_Llama3.18B_128_128,guide,Llama 3.1 8B,8,1,AMD Instinct MI300X (ND MI300X v5),1,,FP8,vLLM (ROCm),"
    "offline throughput (1000 requests),128,128,,throughput_tokens_per_s,18149,tokens/s (as reported; total vs output "
    "not specified),";
// Made up: no Server row exists in the dataset. Llama-2-7B on one H100 under Poisson load,
// TensorRT-LLM in-flight batching, limits stated in the notes.
const char* kServer =
    "mlperf_test_server,made up,LLaMA 7B,7,1,H100-SXM-80GB,1,,FP8,TensorRT-LLM v0.9 (in-flight batching),Server,512,"
    "64,240,requests_per_s,10,queries/s (system),ttft_p99_ms=300; tpot_p99_ms=25";

YAML::Node yaml_of(const ServingRowMapping& m) {
  INFO(m.skip_reason);
  REQUIRE(m.scenario_yaml.has_value());
  return YAML::Load(*m.scenario_yaml);
}

std::string text(const YAML::Node& node) { return node.as<std::string>(); }

const serving::ServingResult& serving_of(const runner::RunResult& run) {
  const auto* result = dynamic_cast<const serving::ServingResult*>(run.primary.get());
  REQUIRE(result != nullptr);
  return *result;
}

}  // namespace

TEST_CASE("inference rows parse; a row missing what it needs says which columns") {
  std::string problem;
  const auto row = parse_inference_row(row_from(kTtft), problem);
  REQUIRE(row.has_value());
  CHECK(row->id == "trtllm05_ttft_L40S_2");
  CHECK(row->model == "LLaMA 7B");
  CHECK(row->gpus == 1);
  CHECK(row->tp == 1);
  CHECK(row->pp == 1);           // empty: 1
  CHECK(row->input_len == 128);
  CHECK(row->output_len == 0);   // unstated
  CHECK(row->batch == 1);
  CHECK(row->value == 14);
  CHECK(row->metric == "ttft_ms");
  CHECK_FALSE(parse_inference_row(row_from("x,s,LLaMA 7B,7,,L40S,1,,FP8,f,sc,abc,,1,ttft_ms,-3,ms,"), problem));
  CHECK(problem == "row has no usable gpus (empty), input_len 'abc', value '-3'");
  CHECK(is_inference_dataset({row_from(kTtft)}));
  CHECK_FALSE(is_inference_dataset(parse_csv("id,layers,metric,value\nx,2,mfu,50\n", "t.csv")));
}

TEST_CASE("metric names read the way each source's tool counts") {
  const InferenceSource plain{.name = "plain", .id_prefix = "plain"};
  const InferenceSource output_counting{.name = "azure", .id_prefix = "azure", .tokens_are_output = true};
  const InferenceSource unstated_per_gpu{.name = "a100", .id_prefix = "a100", .unstated_per_gpu = true};
  using Count = ServingMetric::Count;
  auto m = parse_serving_metric("output_tokens_per_s", "out tok/s/GPU", plain);
  REQUIRE(m);
  CHECK(m->family == MetricFamily::throughput);
  CHECK(m->count == Count::output_tokens);
  CHECK(m->per_gpu);
  CHECK_FALSE(parse_serving_metric("output_tokens_per_s", "tokens/s (system)", plain)->per_gpu);
  // A unit that leaves it open takes the source's reading.
  CHECK(parse_serving_metric("output_tokens_per_s", "out tok/s (header; per-GPU not stated)", unstated_per_gpu)->per_gpu);
  CHECK_FALSE(parse_serving_metric("output_tokens_per_s", "out tok/s (header; per-GPU not stated)", plain)->per_gpu);
  CHECK(parse_serving_metric("output_tokens_per_s_per_gpu", "tok/s", plain)->per_gpu);
  CHECK_FALSE(parse_serving_metric("total_output_tokens_per_s", "out tok/s/GPU", plain)->per_gpu);
  // "tokens/s": input + output, unless the source's tool counts output only.
  CHECK(parse_serving_metric("tokens_per_s", "tokens/s", plain)->count == Count::total_tokens);
  CHECK(parse_serving_metric("tokens_per_s", "tokens/s (input+output, system)", output_counting)->count ==
        Count::output_tokens);
  CHECK(parse_serving_metric("throughput_tokens_per_s", "tokens/s", output_counting)->count == Count::output_tokens);
  CHECK(parse_serving_metric("samples_per_s", "samples/s", plain)->count == Count::requests);
  m = parse_serving_metric("ttft_p99_ms", "ms", plain);
  REQUIRE(m);
  CHECK(m->family == MetricFamily::ttft);
  CHECK(m->statistic == ServingMetric::Statistic::p99);
  CHECK(m->seconds_to_unit == 1e3);
  m = parse_serving_metric("e2e_latency_s", "s", plain);
  REQUIRE(m);
  CHECK(m->family == MetricFamily::e2e_latency);
  CHECK(m->statistic == ServingMetric::Statistic::mean);
  CHECK(m->seconds_to_unit == 1.0);
  CHECK(parse_serving_metric("tpot_p50_ms", "ms", plain)->family == MetricFamily::tpot);
  CHECK(parse_serving_metric("itl_p90_ms", "ms", plain)->statistic == ServingMetric::Statistic::p90);
  CHECK_FALSE(parse_serving_metric("goodput_per_watt", "x", plain));
  CHECK_FALSE(parse_serving_metric("ttft_p95_ms", "ms", plain));

  serving::ServingResult result;
  result.output_tokens_per_s = 1000;
  result.throughput_tokens_per_s = 3000;
  result.requests_per_s = 5;
  result.ttft_s.mean = 0.02;
  result.ttft_s.p99 = 0.05;
  result.e2e_s.mean = 1.5;
  CHECK(predict_serving_metric(*parse_serving_metric("output_tokens_per_s", "tok/s/GPU", plain), result, 4) == 250);
  CHECK(predict_serving_metric(*parse_serving_metric("tokens_per_s", "tok/s", plain), result, 4) == 3000);
  CHECK(predict_serving_metric(*parse_serving_metric("tokens_per_s", "tok/s", output_counting), result, 4) == 1000);
  CHECK(predict_serving_metric(*parse_serving_metric("requests_per_s", "1/s", plain), result, 4) == 5);
  CHECK(predict_serving_metric(*parse_serving_metric("ttft_ms", "ms", plain), result, 4) == doctest::Approx(20));
  CHECK(predict_serving_metric(*parse_serving_metric("ttft_p99_ms", "ms", plain), result, 4) == doctest::Approx(50));
  CHECK(predict_serving_metric(*parse_serving_metric("e2e_latency_ms", "ms", plain), result, 4) == doctest::Approx(1500));
}

TEST_CASE("a TensorRT-LLM static-batch row becomes its source's run: one offline batch of B, stated precision") {
  const ServingRowMapping m = map_serving_row(row_from(kH100Static));
  const YAML::Node s = yaml_of(m);
  REQUIRE(m.source != nullptr);
  CHECK(m.source->name == "trtllm061_H100");
  CHECK(m.benchmark == ServingBenchmark::static_batch);
  CHECK(m.metric->per_gpu);  // "out tok/s/GPU"
  CHECK(text(s["include"][0]) == "systems/dgx-h100.yaml");
  CHECK(s["cluster"]["nodes"].as<int>() == 1);
  const YAML::Node w = s["workload"];
  CHECK(text(w["kind"]) == "serving");
  CHECK(text(w["model"]) == "llama-2-70b");
  CHECK(text(w["framework"]) == "trtllm-static");
  // --enable_fp8 --fp8_kv_cache in performance.md's build commands; --dtype float16.
  CHECK(text(w["precision"]["weights"]) == "fp8");
  CHECK(text(w["precision"]["kv_cache"]) == "fp8");
  CHECK(text(w["precision"]["activations"]) == "fp16");
  CHECK(w["pools"]["main"]["replicas"].as<int>() == 1);
  CHECK(w["pools"]["main"]["tp"].as<int>() == 2);
  CHECK(w["pools"]["main"]["pp"].as<int>() == 1);
  CHECK(w["scheduler"]["max_sequences"].as<int>() == 1024);
  CHECK(w["requests"]["count"].as<int>() == 1024);
  CHECK(text(w["requests"]["arrival"]["process"]) == "offline");
  CHECK(text(w["requests"]["input"]["distribution"]) == "fixed");
  CHECK(w["requests"]["input"]["value"].as<int>() == 128);
  CHECK(w["requests"]["output"]["value"].as<int>() == 128);
  CHECK_FALSE(w["slo"]);
  CHECK_FALSE(w["decode_kv_per_query_head"]);  // the framework's own (pre-XQA) kernel
  // The scenario loads; the framework's defaults fill what the row leaves unset.
  const auto scenario = scenario::load_scenario_from_string(*m.scenario_yaml, "row.yaml", {});
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*scenario.workload);
  CHECK(spec.scheduler.policy == serving::SchedulePolicy::static_batch);
  CHECK(spec.scheduler.reserve_output);
  CHECK(spec.decode_kv_per_query_head);

  // A100, FP16, a header that does not say per GPU: fp16 throughout, per GPU by the source.
  const ServingRowMapping a100 = map_serving_row(row_from(kA100Static));
  const YAML::Node w100 = yaml_of(a100)["workload"];
  CHECK(text(w100["model"]) == "gpt-j-6b");
  CHECK(text(w100["precision"]["weights"]) == "fp16");
  CHECK(text(w100["precision"]["kv_cache"]) == "fp16");
  CHECK(text(yaml_of(a100)["include"][0]) == "systems/dgx-a100.yaml");
  CHECK(a100.metric->per_gpu);
}

TEST_CASE("a static batch runs as one: every request's first token at the end of one prefill") {
  // A small made-up batch (GPT-J on one L40S, 16 x 128 + 32 tokens) keeps the run short.
  const ServingRowMapping m = map_serving_row(row_from(
      "trtllm061_L40S_t,perf.md,GPT-J 6B,6,1,L40S,1,,FP8,TensorRT-LLM v0.5,\"offline max throughput "
      "(gptSessionBenchmark, static batch)\",128,32,16,output_tokens_per_s,1,out tok/s,"));
  REQUIRE(m.scenario_yaml);
  const auto run = runner::run_scenario(scenario::load_scenario_from_string(*m.scenario_yaml, "row.yaml", {}));
  const serving::ServingResult& r = serving_of(run);
  REQUIRE(r.completed == 16);
  for (const auto& record : r.records) {
    CHECK(record.first_token_s == r.records.front().first_token_s);
    CHECK(record.finish_s == r.records.front().finish_s);
  }
  // B x OSL / (the prefill and 31 decode steps).
  CHECK(r.output_tokens_per_s == doctest::Approx(16.0 * 32 / r.records.front().finish_s));
}

TEST_CASE("latency, Azure and MI300X rows: one request, stated precision exceptions, stated flags") {
  const ServingRowMapping ttft = map_serving_row(row_from(kTtft));
  const YAML::Node t = yaml_of(ttft)["workload"];
  CHECK(ttft.benchmark == ServingBenchmark::latency);
  CHECK(text(yaml_of(ttft)["include"][0]) == "systems/l40s-pcie-x8.yaml");
  CHECK(t["requests"]["count"].as<int>() == 1);
  CHECK(t["requests"]["output"]["value"].as<int>() == 1);  // the first token only
  CHECK(t["scheduler"]["max_sequences"].as<int>() == 1);
  CHECK(ttft.metric->family == MetricFamily::ttft);

  // The guide's 405B: Meta's FP8 checkpoint converted with --dtype bfloat16, no fp8 KV cache;
  // TensorRT-LLM of 2024 decodes with XQA (K/V shared by a GQA group); output tokens, system.
  const ServingRowMapping azure = map_serving_row(row_from(kAzure405b));
  const YAML::Node a = yaml_of(azure)["workload"];
  CHECK(text(a["model"]) == "llama-3.1-405b");
  CHECK(text(a["precision"]["weights"]) == "fp8");
  CHECK(text(a["precision"]["kv_cache"]) == "bf16");
  CHECK_FALSE(a["decode_kv_per_query_head"].as<bool>());
  CHECK(a["pools"]["main"]["tp"].as<int>() == 8);
  CHECK(azure.metric->count == ServingMetric::Count::output_tokens);
  CHECK_FALSE(azure.metric->per_gpu);
  CHECK(azure.note.find("bfloat16") != std::string::npos);

  // MI300X vLLM: the script's flags, 1000 prompts at once, the vllm-0.6 host overhead over the
  // 10 scheduler steps (1.2 ms + 0.1 ms per sequence -> 0.12 ms + 0.01 ms).
  const ServingRowMapping mi = map_serving_row(row_from(kMi300x));
  const YAML::Node v = yaml_of(mi);
  CHECK(mi.benchmark == ServingBenchmark::offline);
  CHECK(text(v["include"][0]) == "systems/mi300x-x8.yaml");
  CHECK(text(v["workload"]["framework"]) == "vllm-0.6");
  CHECK(v["workload"]["requests"]["count"].as<int>() == 1000);
  const YAML::Node sched = v["workload"]["scheduler"];
  CHECK(sched["max_sequences"].as<int>() == 3000);
  CHECK(sched["max_batched_tokens"].as<int>() == 131072);
  CHECK_FALSE(sched["chunked_prefill"].as<bool>());
  CHECK(sched["memory_utilisation"].as<double>() == 0.9);
  CHECK(text(sched["iteration_overhead"]) == "0.12 ms");
  CHECK(text(sched["iteration_overhead_per_sequence"]) == "0.01 ms");
  CHECK(mi.metric->count == ServingMetric::Count::output_tokens);
}

TEST_CASE("a row that cannot be simulated is skipped with the reason") {
  const auto reason = [](const std::string& line) {
    const ServingRowMapping m = map_serving_row(row_from(line));
    CHECK_FALSE(m.scenario_yaml);
    return m.skip_reason;
  };
  CHECK(reason("trtllm061_H100_x,s,GPT-NeoX 20B,20,1,H100-SXM-80GB,1,,FP8,TensorRT-LLM v0.6.1,static batch,128,128,"
               "64,output_tokens_per_s,1,tok/s,") == "model 'GPT-NeoX 20B' has no library preset or alias");
  CHECK(reason("somelab_0,s,LLaMA 7B,7,1,H100-SXM-80GB,1,,FP8,SomeServer 2.0,offline,128,128,64,"
               "output_tokens_per_s,1,tok/s,") == "framework 'SomeServer 2.0' has no profile (docs/serving-frameworks.md "
                                                  "section 7)");
  CHECK(reason("trtllm061_H100_x,s,LLaMA 7B,7,1,H100-SXM-80GB,1,,FP8,TensorRT-LLM v0.6.1,static batch,128,128,64,"
               "joules_per_token,1,J,") == "metric 'joules_per_token' is not supported");
  CHECK(reason("trtllm061_H100_x,s,LLaMA 7B,7,1,TPU v5e,1,,FP8,TensorRT-LLM v0.6.1,static batch,128,128,64,"
               "output_tokens_per_s,1,tok/s,") == "gpu_type 'TPU v5e' has no accelerator and system preset");
  CHECK(reason("trtllm061_H100_x,s,LLaMA 7B,7,1,H100-SXM-80GB,1,,INT4 AWQ,TensorRT-LLM v0.6.1,static batch,128,128,"
               "64,output_tokens_per_s,1,tok/s,") == "precision 'INT4 AWQ' is not one of FP8, FP16, BF16");
  CHECK(reason("mlperf_x,s,GPT-J 6B,6,1,H100-SXM-80GB,1,,FP8,TensorRT-LLM v0.9,Server,128,128,100,"
               "requests_per_s,1,1/s,")
            .rfind("a server row needs its p99 TTFT and TPOT limits", 0) == 0);
  CHECK(reason("azure_mi300x_x,s,Llama 3.1 8B,8,1,MI300X,1,,FP8,vLLM (ROCm),offline throughput,128,128,,"
               "throughput_tokens_per_s,1,tokens/s,")
            .rfind("the row states no request count", 0) == 0);
}

TEST_CASE("a row of a source without conventions takes the defaults, its model by name or alias") {
  // Issue 31: such rows were all skipped ("no documented conventions for source").
  const ServingRowMapping vllm = map_serving_row(row_from(
      "somelab_0,my lab,meta-llama/Llama-3.1-8B-Instruct,8,1,H100,1,,BF16,vLLM 0.10.1,offline,1000,1000,,"
      "output_tokens_per_s,5000,tok/s,"));
  REQUIRE(vllm.scenario_yaml);
  CHECK(vllm.source == &default_serving_source());
  CHECK(vllm.source->name == "defaults");
  CHECK(vllm.model->preset == "llama-3.1-8b");
  const auto yaml = YAML::Load(*vllm.scenario_yaml);
  CHECK(yaml["workload"]["framework"].as<std::string>() == "vllm-0.10");
  CHECK(yaml["workload"]["model"].as<std::string>() == "llama-3.1-8b");
  CHECK(yaml["workload"]["requests"]["count"].as<int>() == 1000);  // benchmark_serving's --num-prompts default
  // A count the row states wins; TensorRT-LLM 1.x through trtllm-bench; Llama 3.3 by its release name.
  const ServingRowMapping trt = map_serving_row(row_from(
      "somelab_1,my lab,Llama 3.3 70B,70,8,H200,8,,FP8,TensorRT-LLM 1.0,trtllm-bench offline 512 requests,1024,1024,,"
      "output_tokens_per_s,12000,tok/s,"));
  REQUIRE(trt.scenario_yaml);
  const auto trt_yaml = YAML::Load(*trt.scenario_yaml);
  CHECK(trt_yaml["workload"]["framework"].as<std::string>() == "trtllm-bench-1.0");
  CHECK(trt_yaml["workload"]["model"].as<std::string>() == "llama-3.1-70b");
  CHECK(trt_yaml["workload"]["requests"]["count"].as<int>() == 512);
  CHECK(map_serving_row(row_from("somelab_2,my lab,Llama 3.1 8B,8,1,H100,1,,BF16,TensorRT-LLM v1.1,offline,128,128,,"
                                 "output_tokens_per_s,1,tok/s,"))
            .scenario_yaml->find("framework: trtllm-1.0") != std::string::npos);
  CHECK(map_serving_row(row_from("somelab_3,my lab,Llama 3.1 8B,8,1,H100,1,,BF16,SGLang 0.5.2,offline,128,128,,"
                                 "output_tokens_per_s,1,tok/s,"))
            .scenario_yaml->find("framework: sglang-0.5") != std::string::npos);
}

TEST_CASE("a Server row: the highest Poisson rate whose p99 TTFT and TPOT meet the limits") {
  const ServingRowMapping m = map_serving_row(row_from(kServer));
  REQUIRE(m.scenario_yaml);
  CHECK(m.benchmark == ServingBenchmark::server);
  REQUIRE(m.limits);
  CHECK(m.limits->ttft_s == doctest::Approx(0.3));
  CHECK(m.limits->tpot_s == doctest::Approx(0.025));
  const YAML::Node w = yaml_of(m)["workload"];
  CHECK(text(w["framework"]) == "trtllm-ifb");
  CHECK(text(w["requests"]["arrival"]["process"]) == "poisson");
  CHECK(w["requests"]["count"].as<int>() == 240);
  CHECK(text(w["slo"]["ttft"]) == "300 ms");
  CHECK(text(w["slo"]["tpot"]) == "25 ms");
  CHECK(w["slo"]["percentile"].as<double>() == 99);

  const ServerSearch search = search_server_rate(*m.scenario_yaml, "server.yaml", *m.limits);
  REQUIRE(search.result);
  CHECK(search.result->slo_met);
  CHECK(search.rate_per_s > 0);
  CHECK(search.runs >= 3);
  // Half as much load again misses the limits (the search brackets the rate to 1 %).
  const auto over = runner::run_scenario(scenario::load_scenario_from_string(
      *m.scenario_yaml, "server.yaml", {"workload.requests.arrival.rate=" + std::to_string(1.5 * search.rate_per_s)}));
  CHECK_FALSE(serving_of(over).slo_met);

  // Through the dataset path: the server row compared, a row without a preset skipped.
  const auto csv = std::filesystem::temp_directory_path() / "clustersim_server_rows.csv";
  {
    std::ofstream out(csv);
    out << kHeader << kServer << "\n"
        << "mlperf_skip,s,GPT-NeoX 20B,20,1,H100-SXM-80GB,1,,FP8,TensorRT-LLM v0.9,Server,128,128,100,requests_per_s,1,"
           "1/s,ttft_p99_ms=300; tpot_p99_ms=25\n";
  }
  const ServingValidationReport report = validate_serving_dataset(csv);
  std::filesystem::remove(csv);
  REQUIRE(report.rows.size() == 1);
  CHECK(report.rows[0].id == "mlperf_test_server");
  CHECK(report.rows[0].predicted == doctest::Approx(search.result->requests_per_s));
  CHECK(report.rows[0].note.find("highest passing rate") != std::string::npos);
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].reason == "model 'GPT-NeoX 20B' has no library preset or alias");
  REQUIRE(report.per_family.size() == 1);
  CHECK(report.per_family[0].group == "throughput");
}

TEST_CASE("validate --dataset takes the inference CSV: every row compared or skipped, per-family summaries") {
  using clustersim::cli_testing::run_clustersim;
  const std::string dataset = std::string(CLUSTERSIM_SOURCE_DIR) + "/validation/data/ground_truth_inference.csv";
  const auto json_run = run_clustersim("validate --dataset " + dataset + " --format json");
  REQUIRE(json_run.exit_code == 0);
  const auto doc = nlohmann::json::parse(json_run.output);
  CHECK(doc["rows"].size() + doc["skipped"].size() == 115);
  CHECK(doc["rows"].size() >= 106);
  std::vector<std::string> families;
  for (const auto& f : doc["per_family"]) families.push_back(f["group"].get<std::string>());
  CHECK(families == std::vector<std::string>{"throughput", "TTFT", "TPOT"});
  for (const auto& r : doc["rows"]) CHECK(r["predicted"].get<double>() > 0);
  // The table form on one row of each family (the whole file again would double the test's time).
  const auto subset = std::filesystem::temp_directory_path() / "clustersim_inference_families.csv";
  {
    std::ifstream in(dataset);
    std::ofstream out(subset);
    int kept = 0;
    for (std::string line; std::getline(in, line);) {
      const std::string id = line.substr(0, line.find(','));
      if (id == "id" || id == "trtllm061_H100_0" || id == "trtllm05_ttft_H100_0" ||
          id == "mlperf41_h100_mixtral_server_tpot_p99_ms") {
        out << line << "\n";
        ++kept;
      }
    }
    REQUIRE(kept == 4);
  }
  const auto table = run_clustersim("validate --dataset " + subset.string());
  std::filesystem::remove(subset);
  CHECK(table.exit_code == 0);
  for (const char* family : {"throughput           rows   1", "TTFT                 rows   1", "TPOT                 rows   1"}) {
    CHECK(table.output.find(family) != std::string::npos);
  }
  CHECK(table.output.find("target: median <= 10 %") != std::string::npos);
  // --scenario prints a row's scenario, which loads.
  const auto row = run_clustersim("validate --dataset " + dataset + " --scenario trtllm05_ttft_H100_0");
  REQUIRE(row.exit_code == 0);
  CHECK_NOTHROW(scenario::load_scenario_from_string(row.output, "row.yaml", {}));
}

TEST_CASE("engine limits a row's notes state become its scheduler keys; a stated rate runs at that rate") {
  const std::string header =
      "id,source,model,params_b,gpus,gpu_type,tp,pp,precision,framework,scenario,input_len,output_len,batch,metric,"
      "value,unit,notes\n";
  const auto rows = validate::parse_csv(
      header +
          "mlperf41_x,s,llama-2-70b,,8,H100-SXM-80GB,2,,FP8,TensorRT-LLM in-flight batching,\"MLPerf Server, 24576 "
          "samples\",290,290,,output_tokens_per_s,1,tok/s system,ttft_p99_ms=2000; tpot_p99_ms=200; max_sequences=1024; "
          "max_batched_tokens=4096\n"
          "mlperf41_y,s,llama-2-70b,,8,H100-SXM-80GB,2,,FP8,TensorRT-LLM in-flight batching,\"MLPerf Server at its "
          "scheduled rate: request rate 75.1, 24576 samples\",290,290,,ttft_p99_ms,461,ms,max_sequences=1024\n",
      "limits.csv");
  const auto server = validate::map_serving_row(rows[0]);
  REQUIRE(server.scenario_yaml);
  CHECK(server.benchmark == ServingBenchmark::server);
  const YAML::Node yaml = yaml_of(server);
  CHECK(yaml["workload"]["scheduler"]["max_sequences"].as<int>() == 1024);
  CHECK(yaml["workload"]["scheduler"]["max_batched_tokens"].as<int>() == 4096);
  // The NVIDIA MLPerf harness's source: fp8 weights and KV cache, 4 instances of tp 2.
  CHECK(text(yaml["workload"]["precision"]["kv_cache"]) == "fp8");
  CHECK(yaml["workload"]["pools"]["main"]["replicas"].as<int>() == 4);
  const auto at_rate = validate::map_serving_row(rows[1]);
  REQUIRE(at_rate.scenario_yaml);
  CHECK(at_rate.benchmark == ServingBenchmark::rate);
  const YAML::Node rate_yaml = yaml_of(at_rate);
  CHECK(rate_yaml["workload"]["requests"]["arrival"]["rate"].as<double>() == 75.1);
  CHECK(rate_yaml["workload"]["scheduler"]["max_sequences"].as<int>() == 1024);
  CHECK_FALSE(rate_yaml["workload"]["scheduler"]["max_batched_tokens"]);
  CHECK_FALSE(rate_yaml["workload"]["slo"]);
}

TEST_CASE("a row without tp takes the sizing rule: the smallest tp whose weights take at most half the memory") {
  const std::string csv =
      "id,source,model,params_b,gpus,gpu_type,tp,pp,precision,framework,scenario,input_len,output_len,batch,metric,"
      "value,unit,notes\n"
      "a,lab,Llama 3.1 8B,8,8,H100-SXM-80GB,,,BF16,vLLM 0.10.1,\"offline, 100 requests\",1024,128,,requests_per_s,1,"
      "req/s system,\n"
      "b,lab,Llama 3.3 70B,70,8,H100-SXM-80GB,,,BF16,vLLM 0.10.1,\"offline, 100 requests\",1024,128,,requests_per_s,1,"
      "req/s system,\n"
      "c,lab,Llama 3.3 70B,70,8,H100-SXM-80GB,,,FP8,vLLM 0.10.1,\"offline, 100 requests\",1024,128,,requests_per_s,1,"
      "req/s system,\n"
      "d,lab,Llama 3.1 405B,405,8,H100-SXM-80GB,,,BF16,vLLM 0.10.1,\"offline, 100 requests\",1024,128,,requests_per_s,"
      "1,req/s system,\n";
  const auto rows = validate::parse_csv(csv, "notp.csv");
  // 8B in bf16: 16 GB of 72 GB usable (0.9 x 80 GB) at tp 1; 70B: 141 GB at tp 1, 70 at tp 2
  // (over half), 35 at tp 4; in fp8 half of that, tp 2. 405B in bf16 leaves no KV room at tp 8.
  const struct {
    const char* replicas_tp;
  } expected[] = {{"main: {replicas: 8, tp: 1, pp: 1}"}, {"main: {replicas: 2, tp: 4, pp: 1}"},
                  {"main: {replicas: 4, tp: 2, pp: 1}"}};
  for (int i = 0; i < 3; ++i) {
    const auto m = validate::map_serving_row(rows[static_cast<std::size_t>(i)]);
    REQUIRE(m.scenario_yaml);
    CHECK(m.scenario_yaml->find(expected[i].replicas_tp) != std::string::npos);
    CHECK(m.note.find("by the sizing rule") != std::string::npos);
  }
  const auto skipped = validate::map_serving_row(rows[3]);
  CHECK_FALSE(skipped.scenario_yaml);
  CHECK(skipped.skip_reason.find("tp 8: no room for the KV cache); state the row's tp") != std::string::npos);
}

TEST_CASE("a row that names a dataset instead of its lengths draws them from the library's profile") {
  const auto rows = parse_csv(
      "id,source,model,params_b,gpus,gpu_type,tp,pp,precision,framework,scenario,input_len,output_len,batch,metric,"
      "value,unit,notes,dataset\n"
      "lab_0,my lab,Llama 3.1 8B,8,1,H100,1,,BF16,vLLM 0.10.1,offline 500 requests,,,,output_tokens_per_s,4000,tok/s,,"
      "Azure-Conv-2023\n"
      "lab_1,my lab,Llama 3.1 8B,8,1,H100,1,,BF16,vLLM 0.10.1,offline 500 requests,,,,output_tokens_per_s,4000,tok/s,,"
      "ShareGPT\n"
      "lab_2,my lab,Llama 3.1 8B,8,1,H100,1,,BF16,vLLM 0.10.1,offline 500 requests,256,64,,output_tokens_per_s,4000,"
      "tok/s,,azure-conv-2023\n"
      "lab_3,my lab,Llama 3.1 8B,8,1,H100,1,,BF16,vLLM 0.10.1,offline 500 requests,,,,output_tokens_per_s,4000,tok/s,,\n",
      "dataset.csv");
  const ServingRowMapping profile = map_serving_row(rows[0]);
  REQUIRE(profile.scenario_yaml);
  const auto yaml = YAML::Load(*profile.scenario_yaml);
  CHECK(yaml["workload"]["requests"]["input"]["distribution"].as<std::string>() == "dataset");
  CHECK(yaml["workload"]["requests"]["input"]["dataset"].as<std::string>() == "azure-conv-2023");  // case-blind
  CHECK(yaml["workload"]["requests"]["output"]["dataset"].as<std::string>() == "azure-conv-2023");
  CHECK(profile.note.find("lengths from the dataset profile azure-conv-2023") != std::string::npos);
  // It loads: the profile's lengths, not a fixed one.
  CHECK_NOTHROW(scenario::load_scenario_from_string(*profile.scenario_yaml, "lab_0.yaml"));

  const ServingRowMapping unknown = map_serving_row(rows[1]);
  CHECK_FALSE(unknown.scenario_yaml);
  CHECK(unknown.skip_reason.find("dataset 'ShareGPT' has no length profile in the library (arxiv-summarization-4k, "
                                 "azure-code-2023, azure-conv-2023)") != std::string::npos);
  const ServingRowMapping stated = map_serving_row(rows[2]);
  REQUIRE(stated.scenario_yaml);
  CHECK(YAML::Load(*stated.scenario_yaml)["workload"]["requests"]["input"]["value"].as<int>() == 256);
  CHECK(stated.note.find("lengths as stated (input 256, output 64); dataset 'azure-conv-2023' not used") !=
        std::string::npos);
  // Neither lengths nor a dataset: the row says which column it lacks.
  const ServingRowMapping neither = map_serving_row(rows[3]);
  CHECK_FALSE(neither.scenario_yaml);
  CHECK(neither.skip_reason.find("input_len (empty)") != std::string::npos);
}


TEST_CASE("a random range ratio draws the stated lengths uniformly; a run's memory fraction and KV format from notes") {
  const auto rows = validate::parse_csv(
      std::string(kHeader) +
          "ix_a,s,deepseek-ai/DeepSeek-R1-0528,671,8,B200,8,1,FP8,SGLang 0.5.9,\"random range ratio 0.8, request rate "
          "inf, max concurrency 16, 160 requests\",8192,1024,,total_tokens_per_s,1,tok/s per GPU,max_sequences=128; "
          "max_batched_tokens=32768; memory_utilisation=0.82; kv_cache=fp8\n"
          "ix_b,s,deepseek-ai/DeepSeek-R1-0528,671,8,H200,8,1,FP8,SGLang 0.5.9,\"random range ratio 0.8, max "
          "concurrency 4, 40 requests\",1024,1024,,ttft_p50_ms,1,ms,memory_utilisation=0.82\n"
          "ix_c,s,deepseek-ai/DeepSeek-R1-0528,671,8,MI325X,8,1,FP8,SGLang 0.5.9,\"random range ratio 1.5, max "
          "concurrency 4, 40 requests\",1024,1024,,ttft_p50_ms,1,ms,\n"
          "ix_d,s,deepseek-ai/DeepSeek-R1-0528,671,8,MI300X,8,1,FP8,SGLang 0.5.9,\"max concurrency 4, 40 requests\","
          "1024,1024,,ttft_p50_ms,1,ms,kv_cache=int3\n",
      "ranged.csv");
  const auto b200 = validate::map_serving_row(rows[0]);
  CHECK(b200.source->name == "inferencex");
  CHECK(b200.benchmark == ServingBenchmark::concurrency);
  const YAML::Node yaml = yaml_of(b200);
  // InferenceX's benchmark_serving.py: lower = int(8192 x 0.8) = 6553, upper = 8192; 819 to 1024.
  CHECK(text(yaml["workload"]["requests"]["input"]["distribution"]) == "uniform");
  CHECK(yaml["workload"]["requests"]["input"]["min"].as<int>() == 6553);
  CHECK(yaml["workload"]["requests"]["input"]["max"].as<int>() == 8192);
  CHECK(yaml["workload"]["requests"]["output"]["min"].as<int>() == 819);
  CHECK(yaml["workload"]["requests"]["output"]["max"].as<int>() == 1024);
  CHECK(yaml["workload"]["requests"]["count"].as<int>() == 160);
  CHECK(yaml["workload"]["requests"]["arrival"]["clients"].as<int>() == 16);
  CHECK(yaml["workload"]["scheduler"]["max_sequences"].as<int>() == 128);
  CHECK(yaml["workload"]["scheduler"]["max_batched_tokens"].as<int>() == 32768);
  CHECK(yaml["workload"]["scheduler"]["memory_utilisation"].as<double>() == 0.82);
  CHECK_FALSE(yaml["workload"]["scheduler"]["prefix_caching"].as<bool>());  // the source's --disable-radix-cache
  CHECK(text(yaml["workload"]["precision"]["kv_cache"]) == "fp8");
  CHECK(text(yaml["include"][0]) == "systems/dgx-b200.yaml");
  CHECK(text(yaml["workload"]["framework"]) == "sglang-0.5");
  // No kv_cache note: SGLang's default, the activations' format (fp16 for an fp8 row).
  const YAML::Node h200 = yaml_of(validate::map_serving_row(rows[1]));
  CHECK(text(h200["workload"]["precision"]["kv_cache"]) == "fp16");
  CHECK(h200["workload"]["scheduler"]["memory_utilisation"].as<double>() == 0.82);
  CHECK_FALSE(h200["workload"]["scheduler"]["max_sequences"]);
  const auto ratio = validate::map_serving_row(rows[2]);
  CHECK_FALSE(ratio.scenario_yaml);
  CHECK(ratio.skip_reason == "random range ratio 1.5 is not in (0, 1]");
  const auto kv = validate::map_serving_row(rows[3]);
  CHECK_FALSE(kv.scenario_yaml);
  CHECK(kv.skip_reason == "notes kv_cache=int3 is not one of fp8, bf16, fp16");
  // A run's expert parallelism (trtllm-serve --ep_size 8 over tp 8): the pool's ep.
  const auto ep = validate::parse_csv(
      std::string(kHeader) +
          "ix_e,s,deepseek-ai/DeepSeek-R1-0528,671,8,H200,8,1,FP8,TensorRT-LLM 1.1.0rc2.post2,\"max concurrency 4, "
          "40 requests\",1024,1024,,ttft_p50_ms,1,ms,ep=8; max_batched_tokens=1152\n"
          "ix_f,s,deepseek-ai/DeepSeek-R1-0528,671,8,H200,8,1,FP8,TensorRT-LLM 1.1.0rc2.post2,\"max concurrency 4, "
          "40 requests\",1024,1024,,ttft_p50_ms,1,ms,ep=3\n"
          "ix_g,s,deepseek-ai/DeepSeek-R1-0528,671,8,H200,8,1,FP8,SGLang 0.5.9,\"max concurrency 4, 40 requests\","
          "1024,1024,,ttft_p50_ms,1,ms,memory_utilisation=1.5; max_sequences=64\n",
      "ep.csv");
  const YAML::Node expert = yaml_of(validate::map_serving_row(ep[0]));
  CHECK(expert["workload"]["pools"]["main"]["ep"].as<int>() == 8);
  CHECK(expert["workload"]["scheduler"]["max_batched_tokens"].as<int>() == 1152);
  CHECK_FALSE(yaml["workload"]["pools"]["main"]["ep"]);  // none stated: the key is left out
  CHECK(validate::map_serving_row(ep[1]).skip_reason == "notes ep=3 does not divide the instance's tp (8)");
  CsvRow huge = ep[1];
  huge.fields["notes"] = "ep=99999999999999999999";  // beyond any integer type: said, not a crash
  CHECK(validate::map_serving_row(huge).skip_reason ==
        "notes ep=99999999999999999999 does not divide the instance's tp (8)");
  // A stated value out of its range is said, not dropped.
  CHECK(validate::map_serving_row(ep[2]).skip_reason == "notes memory_utilisation=1.5 is not a fraction in (0, 1]");
}

}  // namespace serving_validation_test
