// The serving workload end to end: scenarios loaded from YAML, run on a platform, checked
// against what must hold (every request served, latencies ordered, reproducibility) and
// against the direction each setting must move the result.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "models/llm/memory_footprint.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/engine/error.hpp"
#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/serving/iteration_cost.hpp"
#include "sim/serving/requests.hpp"
#include "sim/serving/serving_workload.hpp"

namespace serving_run_test {

using namespace clustersim;

namespace {

// One DGX H100 node; Llama-3-8B on 8 single-GPU instances under Poisson load.
constexpr const char* kChat = R"(schema_version: 1
name: chat
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 8, tp: 1}
  requests:
    count: 400
    arrival: {process: poisson, rate: 40}
    input: {distribution: lognormal, mean: 600, stddev: 400, max: 4096}
    output: {distribution: lognormal, mean: 200, stddev: 150, max: 1024}
  slo: {ttft: 500 ms, tpot: 50 ms}
)";

std::string edit(std::string text, const std::vector<std::pair<std::string, std::string>>& replacements) {
  for (const auto& [from, to] : replacements) {
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
  }
  return text;
}

scenario::Scenario load(const std::string& yaml, std::vector<std::string> overrides = {}) {
  return scenario::load_scenario_from_string(yaml, "s.yaml", overrides);
}

struct Served {
  runner::RunResult run;
  const serving::ServingResult* result = nullptr;
};

Served serve(const std::string& yaml, std::vector<std::string> overrides = {}) {
  Served s;
  s.run = runner::run_scenario(load(yaml, std::move(overrides)));
  s.result = dynamic_cast<const serving::ServingResult*>(s.run.primary.get());
  REQUIRE(s.result != nullptr);
  return s;
}

std::string problems_of(const std::string& yaml, std::vector<std::string> overrides = {}) {
  try {
    (void)load(yaml, std::move(overrides));
  } catch (const config::ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("serving: every request is served once, latencies are ordered, runs reproduce") {
  const Served a = serve(kChat);
  const serving::ServingResult& r = *a.result;
  CHECK(r.requests == 400);
  CHECK(r.completed == 400);
  CHECK(r.rejected == 0);
  for (const serving::RequestRecord& q : r.records) {
    CHECK(q.scheduled_s >= q.request.arrival_s);
    CHECK(q.first_token_s > q.scheduled_s);
    CHECK(q.finish_s >= q.first_token_s);
  }
  CHECK(r.ttft_s.p50 <= r.ttft_s.p99);
  CHECK(r.e2e_s.mean > r.ttft_s.mean);
  CHECK(r.output_tokens_per_s == doctest::Approx(static_cast<double>(r.output_tokens) / r.duration_s));
  CHECK(r.requests_per_s == doctest::Approx(static_cast<double>(r.completed) / r.duration_s));
  // Little's law: the mean number of requests in the system is the arrival rate x the mean
  // time in it; in a run that drains, the sum of the times in the system over the duration.
  double in_system_s = 0;
  for (const serving::RequestRecord& q : r.records) in_system_s += q.finish_s - q.request.arrival_s;
  CHECK(in_system_s / r.duration_s == doctest::Approx(r.requests_per_s * r.e2e_s.mean).epsilon(1e-9));
  CHECK(r.slo_met);
  // Every request met the targets: goodput is the measured arrival rate (requests - 1 over the
  // first to the last arrival), not completions over the run with its drain.
  double first_arrival_s = r.records.front().request.arrival_s, last_arrival_s = first_arrival_s;
  for (const serving::RequestRecord& q : r.records) {
    first_arrival_s = std::min(first_arrival_s, q.request.arrival_s);
    last_arrival_s = std::max(last_arrival_s, q.request.arrival_s);
  }
  CHECK(r.goodput_requests_per_s ==
        doctest::Approx(static_cast<double>(r.requests - 1) / (last_arrival_s - first_arrival_s)).epsilon(1e-12));
  CHECK(r.goodput_requests_per_s > r.requests_per_s);  // the drain after the last arrival is not counted
  CHECK(r.gpu_utilisation > 0);
  CHECK(r.gpu_utilisation <= 1);
  REQUIRE(r.energy_per_token_j);
  CHECK(*r.energy_per_token_j > 0);
  const Served b = serve(kChat);
  CHECK(b.run.fingerprint == a.run.fingerprint);
  CHECK(b.result->ttft_s.p99 == r.ttft_s.p99);
  const Served c = serve(kChat, {"simulation.seed=2"});
  CHECK(c.run.fingerprint != a.run.fingerprint);
  // JSON: the serving section carries every headline metric.
  const auto json = report::run_result_json(load(kChat), a.run);
  for (const char* key : {"throughput_tokens_per_s", "input_tokens_per_s", "output_tokens_per_s", "requests_per_s",
                          "ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s", "goodput_requests_per_s", "rejected",
                          "preemptions", "kv_cache_utilisation", "prefix_hit_rate", "gpu_utilisation",
                          "energy_per_token_j", "cost_per_million_tokens", "time_series"}) {
    CHECK_MESSAGE(json["serving"].contains(key), key);
  }
  CHECK(json["serving"]["ttft_s"]["p99"].get<double>() == r.ttft_s.p99);
}

TEST_CASE("serving: power from the pool's activity, the accelerators' part, and no report without power data") {
  const Served a = serve(kChat);
  const serving::ServingResult& r = *a.result;
  REQUIRE(r.energy_per_token_j);
  REQUIRE(r.device_energy_per_token_j);
  // The accelerators' board power is part of the whole, and no device draws above its 700 W limit.
  CHECK(r.devices_average_power_w > 0);
  CHECK(r.devices_average_power_w < r.average_power_w);
  CHECK(r.devices_average_power_w <= 700.0 * r.accelerators + 1e-6);
  CHECK(*r.device_energy_per_token_j ==
        doctest::Approx(r.devices_average_power_w * r.duration_s / static_cast<double>(r.output_tokens)));
  // An accelerator without a TDP: no figures, and a note that says why.
  const Served dark = serve(kChat, {"accelerators.h100-sxm.power.tdp=0W"});
  CHECK_FALSE(dark.result->energy_per_token_j.has_value());
  CHECK(std::find(dark.result->notes.begin(), dark.result->notes.end(),
                  "power: accelerator 'h100-sxm' has no power.tdp; no power or energy report") != dark.result->notes.end());
}

TEST_CASE("serving: a watched run reports its requests' progress and runs the same") {
  std::vector<std::size_t> done;
  const runner::RunResult watched =
      runner::run_scenario(load(kChat), nullptr, [&](std::string_view unit, std::size_t n, std::size_t total) {
        CHECK(unit == "requests");
        CHECK(total == 400);
        done.push_back(n);
      });
  const Served plain = serve(kChat);
  CHECK(watched.fingerprint == plain.run.fingerprint);
  REQUIRE(done.size() == 401);  // the start, then one per finished request
  for (std::size_t i = 0; i < done.size(); ++i) CHECK(done[i] == i);
}

TEST_CASE("serving: the memoised iteration cost is within 1 % of the exact op-by-op cost") {
  const scenario::Scenario s = load(kChat);
  const auto platform = runner::build_platform(s);
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  for (int tp : {1, 2, 8}) {
    serving::InstanceLayout layout;
    layout.model = spec.model;
    layout.sharding.tp = tp;
    for (int a = 0; a < tp; ++a) layout.accelerators.push_back(a);
    serving::IterationCostModel model(platform->compute(), platform->collectives(), layout);
    std::vector<serving::BatchEntry> batch;
    for (int i = 0; i < 60; ++i) batch.push_back({1, 200 + 37 * i, true});
    batch.push_back({512, 512, false});
    batch.push_back({300, 1800, false});
    const double fast = model.cost(batch).time_s, exact = model.exact(batch).time_s;
    CHECK_MESSAGE(fast == doctest::Approx(exact).epsilon(0.01), "tp ", tp);
    // Decode work grows with the KV length read.
    std::vector<serving::BatchEntry> shorter(60, {1, 200, true}), longer(60, {1, 8000, true});
    CHECK(model.cost(longer).time_s > model.cost(shorter).time_s);
    if (tp > 1) CHECK(model.cost(batch).communication_s > 0);
  }
}

TEST_CASE("serving: weight formats change decode speed the way their bytes say") {
  const auto tpot = [](const char* weights) {
    return serve(kChat, {std::string("workload.precision.weights=") + weights, "workload.requests.count=100"})
        .result->tpot_s.mean;
  };
  const double bf16 = tpot("bf16"), fp8 = tpot("fp8"), int4 = tpot("int4");
  CHECK(fp8 < bf16);
  CHECK(int4 < fp8);
  CHECK(problems_of(kChat, {"workload.precision.weights=fp4"}).find("need a fp4 peak, but accelerator 'h100-sxm'") !=
        std::string::npos);
}

TEST_CASE("serving: a small KV cache preempts (recompute or swap) and a bounded queue rejects") {
  const std::vector<std::string> tight = {"workload.scheduler.memory_utilisation=0.22", "workload.requests.count=200",
                                          "workload.requests.arrival.rate=400"};
  const Served recompute = serve(kChat, tight);
  CHECK(recompute.result->completed == 200);
  CHECK(recompute.result->preemptions > 0);
  CHECK(recompute.result->kv_utilisation_peak > 0.9);
  auto swap = tight;
  swap.push_back("workload.scheduler.preemption=swap");
  const Served swapped = serve(kChat, swap);
  CHECK(swapped.result->completed == 200);
  CHECK(swapped.result->preemptions > 0);
  auto bounded = tight;
  bounded.push_back("workload.scheduler.max_queue=2");
  const Served rejected = serve(kChat, bounded);
  CHECK(rejected.result->rejected > 0);
  CHECK(rejected.result->completed + rejected.result->rejected == 200);
  CHECK_FALSE(rejected.result->slo_met);
  // Reserving the whole output at admission (TensorRT-LLM) never preempts.
  auto reserve = tight;
  reserve.push_back("workload.scheduler.reserve_output=true");
  CHECK(serve(kChat, reserve).result->preemptions == 0);
}

TEST_CASE("serving: cached system prompts cut prefill; prefix-aware routing finds them") {
  const std::vector<std::string> shared = {"workload.requests.prefix.groups=4", "workload.requests.prefix.tokens=2000",
                                           "workload.requests.count=300"};
  auto with = shared;
  with.push_back("workload.router=prefix_aware");
  auto without = shared;
  without.push_back("workload.scheduler.prefix_caching=false");
  const Served cached = serve(kChat, with), uncached = serve(kChat, without);
  CHECK(cached.result->prefix_hit_rate > 0.5);
  CHECK(uncached.result->prefix_hit_rate == 0);
  CHECK(cached.result->ttft_s.mean < uncached.result->ttft_s.mean);
  auto round_robin = shared;
  round_robin.push_back("workload.router=round_robin");
  CHECK(serve(kChat, round_robin).result->prefix_hit_rate < cached.result->prefix_hit_rate);
}

TEST_CASE("serving: disaggregated heterogeneous pools move the KV cache over the network") {
  const std::string disaggregated = edit(kChat, {{"    main: {replicas: 8, tp: 1}",
                                                  "    prefill: {role: prefill, replicas: 4, tp: 1}\n"
                                                  "    decode: {role: decode, accelerator: h200-sxm, replicas: 4, tp: 1}"}});
  const Served analytical = serve(disaggregated, {"simulation.fidelity=analytical"});
  const serving::ServingResult& r = *analytical.result;
  CHECK(r.completed == 400);
  REQUIRE(r.pools.size() == 2);
  CHECK(r.pools[0].accelerator == "h200-sxm");  // "decode" sorts first
  CHECK(r.pools[1].accelerator == "h100-sxm");
  CHECK(r.pools[0].memory.kv_blocks > r.pools[1].memory.kv_blocks);  // 141 GB against 80 GB
  const Served flow = serve(disaggregated, {"simulation.fidelity=flow"});
  CHECK(flow.result->completed == 400);
  CHECK(flow.run.fingerprint != analytical.run.fingerprint);
  CHECK(problems_of(edit(kChat, {{"    main: {replicas: 8, tp: 1}", "    p: {role: prefill, replicas: 8}"}}))
            .find("needs prefill and decode pools") != std::string::npos);
}

TEST_CASE("serving: a pool on another accelerator is costed from that accelerator's calibration rows") {
  // One table with GEMM rows of both parts (3-4x their rooflines, so that the fit moves every
  // GEMM). The same h100-sxm instance, once on an H100 cluster and once as the pool of an H200
  // cluster, must serve the same requests in the same time; without the table it is faster.
  const auto dir = std::filesystem::temp_directory_path() / "clustersim-pool-calibration-test";
  std::filesystem::create_directories(dir);
  const auto table = dir / "gemm.csv";
  std::ofstream(table) << "accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,"
                          "bytes,time_s,spread_s,repeats,source\n"
                       << "h100-sxm,gemm,bf16,4096,4096,4096,1,,,,,,,,,0.0005,0,5,test\n"
                       << "h200-sxm,gemm,bf16,4096,4096,4096,1,,,,,,,,,0.0005,0,5,test\n";
  const std::vector<std::string> settings = {"workload.requests.count=60", "simulation.calibration=" + table.string()};
  const std::string one = edit(kChat, {{"    main: {replicas: 8, tp: 1}", "    main: {replicas: 1, tp: 1}"}});
  const std::string on_h200 = edit(one, {{"systems/dgx-h100.yaml", "systems/dgx-h200.yaml"},
                                         {"    main: {replicas: 1, tp: 1}",
                                          "    main: {replicas: 1, tp: 1, accelerator: h100-sxm}"}});
  const Served native = serve(one, settings);
  const Served pool = serve(on_h200, settings);
  REQUIRE(pool.result->pools.size() == 1);
  CHECK(pool.result->pools[0].accelerator == "h100-sxm");
  CHECK(native.result->completed == 60);
  CHECK(pool.result->tpot_s.mean == native.result->tpot_s.mean);
  CHECK(pool.result->ttft_s.mean == native.result->ttft_s.mean);
  const Served roofline = serve(on_h200, {"workload.requests.count=60"});
  CHECK(roofline.result->tpot_s.mean < 0.9 * pool.result->tpot_s.mean);
  std::filesystem::remove_all(dir);
}

TEST_CASE("serving: the resolved keys hold the framework's scheduler values, not the keys' declared defaults") {
  // vllm-0.8 (the default) on an H100: its scheduler, not the declared 256 / 8192.
  const scenario::Scenario vllm = load(kChat);
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*vllm.workload);
  CHECK(vllm.resolved.at("workload.scheduler.max_sequences") == std::to_string(spec.scheduler.max_sequences));
  CHECK(vllm.resolved.at("workload.scheduler.max_batched_tokens") ==
        std::to_string(spec.scheduler.max_batched_tokens));
  CHECK(spec.scheduler.max_sequences != 256);
  CHECK(vllm.resolved.at("workload.scheduler.policy") == "decode_first");
  // A written key stays as written; SGLang's running-request limit is sized at build time.
  const scenario::Scenario sglang =
      load(kChat, {"workload.framework=sglang-0.5", "workload.scheduler.max_batched_tokens=4096"});
  CHECK(sglang.resolved.at("workload.scheduler.max_batched_tokens") == "4096");
  CHECK(sglang.resolved.at("workload.scheduler.max_sequences").rfind("sized from the KV cache", 0) == 0);
  CHECK(sglang.resolved.at("workload.scheduler.overlap_host") == "true");
  CHECK(sglang.resolved.at("workload.scheduler.policy") == "prefill_first");
}

TEST_CASE("serving: slo.window sends arrival.rate x window requests, and says what it replaces") {
  // kChat: poisson at 40 req/s, requests.count 400 written.
  const scenario::Scenario s = load(kChat, {"workload.slo.window=2.5 s"});
  CHECK(dynamic_cast<const serving::ServingSpec&>(*s.workload).requests.count == 100);
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].render() ==
        "s.yaml:13:12: workload.requests.count: 400 has no effect: slo.window sets the requests: arrival.rate 40/s x "
        "2.5 s = 100");
  CHECK(serve(kChat, {"workload.slo.window=2.5 s"}).result->completed == 100);
  // A process without one rate: the window is said to do nothing, the count is kept.
  const scenario::Scenario offline = load(kChat, {"workload.requests.arrival.process=offline", "workload.slo.window=2 s"});
  CHECK(dynamic_cast<const serving::ServingSpec&>(*offline.workload).requests.count == 400);
  bool said = false;
  for (const auto& w : offline.warnings) said = said || w.render().find("workload.slo.window: 2 s has no effect") != std::string::npos;
  CHECK(said);
  CHECK(problems_of(kChat, {"workload.slo.window=-1 s"}).find("workload.slo.window") != std::string::npos);
  CHECK(problems_of(edit(kChat, {{"slo: {ttft: 500 ms, tpot: 50 ms}", "slo: {ttft: 500 ms, tpot: 50 ms, window: -1 s}"}})) ==
        "s.yaml:17:44: workload.slo.window: negative time \"-1 s\": must be >= 0");
}

TEST_CASE("serving: dataset length profiles draw a public trace's lengths") {
  // models/data/datasets/azure-conv-2023.*.csv: the 19,366 requests of the Azure 2023
  // conversation trace (Vidur's copy), input mean 1154.7, output mean 211.1 tokens.
  const scenario::Scenario s =
      load(kChat, {"workload.requests.input.distribution=dataset", "workload.requests.input.dataset=azure-conv-2023",
                   "workload.requests.output.distribution=dataset", "workload.requests.output.dataset=azure-conv-2023"});
  const auto& spec = dynamic_cast<const serving::ServingSpec&>(*s.workload);
  CHECK(spec.requests.input.file.find("datasets/azure-conv-2023.input.csv") != std::string::npos);
  CHECK(serving::LengthSampler(spec.requests.input).mean() == doctest::Approx(1154.7).epsilon(0.03));
  CHECK(serving::LengthSampler(spec.requests.output).mean() == doctest::Approx(211.1).epsilon(0.03));
  // The table itself holds the published means (Vidur's Arxiv-Summarization-4K: 2588 / 291 tokens).
  const scenario::Scenario arxiv = load(kChat, {"workload.requests.input.distribution=dataset",
                                                "workload.requests.input.dataset=arxiv-summarization-4k"});
  const auto table = serving::read_length_table(dynamic_cast<const serving::ServingSpec&>(*arxiv.workload).requests.input.file);
  double weighted = 0;
  for (std::size_t i = 0; i < table.lengths.size(); ++i) {
    weighted += table.lengths[i] * (table.cumulative[i] - (i == 0 ? 0.0 : table.cumulative[i - 1]));
  }
  CHECK(weighted / table.cumulative.back() == doctest::Approx(2588.1).epsilon(0.001));
  CHECK(serve(kChat, {"workload.requests.count=40", "workload.requests.input.distribution=dataset",
                      "workload.requests.input.dataset=azure-code-2023"})
            .result->completed == 40);
  // Bad input: an unknown name, a missing one, a dataset key beside another distribution.
  CHECK(problems_of(kChat, {"workload.requests.input.distribution=dataset", "workload.requests.input.dataset=sharegpt"})
            .find("workload.requests.input.dataset: unknown dataset profile 'sharegpt' (choices: arxiv-summarization-4k, "
                  "azure-code-2023, azure-conv-2023)") != std::string::npos);
  CHECK(problems_of(edit(kChat, {{"input: {distribution: lognormal, mean: 600, stddev: 400, max: 4096}",
                                  "input: {distribution: dataset, dataset: sharegpt}"}})) ==
        "s.yaml:15:45: workload.requests.input.dataset: unknown dataset profile 'sharegpt' (choices: "
        "arxiv-summarization-4k, azure-code-2023, azure-conv-2023)");
  CHECK(problems_of(kChat, {"workload.requests.output.distribution=dataset"})
            .find("workload.requests.output.dataset: a dataset distribution needs dataset") != std::string::npos);
  bool said = false;
  for (const auto& w : load(kChat, {"workload.requests.input.dataset=azure-conv-2023"}).warnings) {
    said = said || w.render().find("requests.input.dataset: azure-conv-2023 has no effect") != std::string::npos;
  }
  CHECK(said);
}

TEST_CASE("serving: speculative decoding with good acceptance lowers TPOT") {
  const double plain = serve(kChat, {"workload.requests.count=100"}).result->tpot_s.mean;
  const double speculative = serve(kChat, {"workload.requests.count=100", "workload.speculative.tokens=3",
                                           "workload.speculative.acceptance=0.8"})
                                 .result->tpot_s.mean;
  CHECK(speculative < plain);
}

TEST_CASE("serving: offline, static batching, closed loop and ramp processes run") {
  CHECK(serve(kChat, {"workload.requests.arrival.process=offline", "workload.requests.count=64"}).result->completed == 64);
  const Served fixed = serve(kChat, {"workload.framework=trtllm-static", "workload.scheduler.max_sequences=64",
                                     "workload.requests.arrival.process=offline",
                                     "workload.requests.count=64", "workload.requests.output.distribution=fixed",
                                     "workload.requests.output.value=64"});
  CHECK(fixed.result->completed == 64);
  CHECK(fixed.result->preemptions == 0);
  const Served closed = serve(kChat, {"workload.requests.arrival.process=closed_loop",
                                      "workload.requests.arrival.clients=16", "workload.requests.count=100",
                                      "workload.requests.prefix.turns=3", "workload.scheduler.prefix_caching=true"});
  CHECK(closed.result->completed == 100);
  CHECK(closed.result->prefix_hit_rate > 0.2);  // later turns reuse the conversation
  CHECK(serve(kChat, {"workload.requests.arrival.process=ramp", "workload.requests.arrival.rate_end=80",
                      "workload.requests.arrival.ramp_duration=5 s", "workload.requests.count=100"})
            .result->completed == 100);
}

TEST_CASE("serving: weights that leave no room for a KV block do not fit") {
  // The error names the smallest tensor-parallel split that leaves room, costed by the same plan.
  CHECK_THROWS_WITH_AS(runner::run_scenario(load(kChat, {"workload.model=llama-3-70b"})),
                       doctest::Contains("pool 'main' does not fit: llama-3-70b on h100-sxm (tp 1 x pp 1)"),
                       models::DoesNotFitError);
  CHECK_THROWS_WITH_AS(runner::run_scenario(load(kChat, {"workload.model=llama-3-70b"})),
                       doctest::Contains("leaves no room for one KV block; tp 2 fits ("), models::DoesNotFitError);
}

TEST_CASE("serving: bad input names the file, line, column, key and the valid choices") {
  CHECK(problems_of(edit(kChat, {{"main: {replicas: 8, tp: 1}", "main: {replicas: 8, tp: 1, accelerator: h300}"}}))
            .find("s.yaml:11:45: workload.pools.main.accelerator: unknown accelerator 'h300'") != std::string::npos);
  CHECK(problems_of(edit(kChat, {{"main: {replicas: 8, tp: 1}", "main: {replicas: 8, tp: 3}"}}))
            .find("s.yaml:11:29: workload.pools.main.tp: num_attention_heads 32 is not divisible by tp 3") != std::string::npos);
  CHECK(problems_of(edit(kChat, {{"main: {replicas: 8, tp: 1}", "main: {replicas: 8, tp: 1, ep: 2}"}}))
            .find("workload.pools.main.ep: ep 2 exceeds tp 1") != std::string::npos);
  CHECK(problems_of(edit(kChat, {{"main: {replicas: 8, tp: 1}", "main: {replicas: 9, tp: 1}"}}))
            .find("the pools need 9 accelerators") != std::string::npos);
  CHECK(problems_of(kChat, {"workload.router=random"})
            .find("valid choices: round_robin, least_outstanding, shortest_queue, prefix_aware") != std::string::npos);
  CHECK(problems_of(edit(kChat, {{"process: poisson, rate: 40", "process: poison, rate: 40"}}))
            .find("s.yaml:14:24: workload.requests.arrival.process: invalid value 'poison'") != std::string::npos);
  CHECK(problems_of(kChat, {"workload.requests.arrival.process=trace"}).find("needs requests.trace") !=
        std::string::npos);
  CHECK(problems_of(kChat, {"workload.requests.prefix.turns=2"}).find("need arrival.process: closed_loop") !=
        std::string::npos);
  CHECK(problems_of(edit(kChat, {{"input: {distribution: lognormal, mean: 600,", "input: {distribution: lognormal, mea: 600,"}}))
            .find("workload.requests.input.mea: unknown key 'mea'") != std::string::npos);
  CHECK(problems_of(kChat, {"workload.scheduler.memory_utilisation=1.5"}).find("workload.scheduler.memory_utilisation") !=
        std::string::npos);
  CHECK(problems_of(kChat, {"workload.requests.trace=missing.csv", "workload.requests.arrival.process=trace"})
            .find("cannot open trace") != std::string::npos);
}

TEST_CASE("serving: a serving job beside a training workload on one cluster") {
  const std::string yaml = R"(schema_version: 1
name: shared
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 2
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: training
  model: llama-3-8b
  seq_len: 2048
  global_batch: 8
  parallelism: {tp: 8, pp: 1}
jobs:
  chat:
    kind: serving
    model: llama-3-8b
    accelerators: {first: 8, count: 8}
    pools:
      main: {replicas: 8, tp: 1}
    requests:
      count: 100
      arrival: {process: poisson, rate: 20}
simulation: {fidelity: flow}
)";
  const scenario::Scenario s = load(yaml);
  CHECK(s.primary_allocation().count == 8);
  const runner::RunResult run = runner::run_scenario(s);
  REQUIRE(run.jobs.size() == 1);
  const auto* chat = dynamic_cast<const serving::ServingResult*>(run.jobs.front().result.get());
  REQUIRE(chat != nullptr);
  CHECK(chat->completed == 100);
  CHECK(run.primary->kind == "training");
  const auto json = report::run_result_json(s, run);
  CHECK(json["jobs"][0]["name"] == "chat");
}

TEST_CASE("serving: every declared key rejects a bad value, naming where it was set and the key") {
  const scenario::WorkloadKind* kind = scenario::builtin_workload_kinds().find("serving");
  REQUIRE(kind != nullptr);
  int checked = 0;
  // Every scalar key under workload (model fields aside: the model reader's own tests cover them).
  std::function<void(const std::vector<config::Field>&, const std::string&)> walk =
      [&](const std::vector<config::Field>& fields, const std::string& prefix) {
        for (const config::Field& field : fields) {
          if (field.key == "model" || field.key == "kind") continue;
          const std::string path = prefix + field.key;
          std::string bad;
          switch (field.kind) {
            case config::FieldKind::integer:
            case config::FieldKind::number:
              bad = "many";
              break;
            case config::FieldKind::boolean:
              bad = "maybe";
              break;
            case config::FieldKind::enumeration:
              bad = "no_such_choice";
              break;
            case config::FieldKind::quantity:
              bad = "12 parsecs";
              break;
            case config::FieldKind::object:
              walk(field.fields, path + ".");
              continue;
            case config::FieldKind::map_of_objects:
              walk(field.fields, path + ".main.");
              continue;
            default:
              continue;  // strings and files: names and paths, checked where they are looked up
          }
          const std::string problems = problems_of(kChat, {path + "=" + bad});
          CHECK_MESSAGE(problems.find("--set " + path + "=" + bad + ": " + path + ":") != std::string::npos,
                        path, " -> ", problems);
          ++checked;
        }
      };
  walk(kind->fields, "workload.");
  CHECK(checked >= 40);
}

TEST_CASE("serving: a draft model's decode steps cost what the draft model costs") {
  const std::vector<std::string> base = {"workload.requests.count=100", "workload.speculative.tokens=3",
                                         "workload.speculative.acceptance=0.8"};
  auto small = base;
  small.push_back("workload.speculative.draft_model=llama-3.2-1b");
  auto large = base;
  large.push_back("workload.speculative.draft_model=llama-3-8b");
  const Served with_small = serve(kChat, small), with_large = serve(kChat, large);
  const double plain = serve(kChat, {"workload.requests.count=100"}).result->tpot_s.mean;
  CHECK(with_small.result->tpot_s.mean < plain);   // a 1B draft pays for itself at 0.8 acceptance
  CHECK(with_large.result->tpot_s.mean > with_small.result->tpot_s.mean);  // a draft as big as the target does not
  // Its weights and KV cache share the instance's memory.
  CHECK(with_small.result->pools.front().memory.weights > serve(kChat, base).result->pools.front().memory.weights);
  CHECK(problems_of(kChat, {"workload.speculative.tokens=2", "workload.speculative.draft_model=gpt-j-6b"})
            .find("a draft must share the target's tokenizer") != std::string::npos);
  CHECK(problems_of(kChat, {"workload.speculative.tokens=2", "workload.speculative.draft_model=llama-9"})
            .find("workload.speculative.draft_model: unknown model 'llama-9'") != std::string::npos);
}

TEST_CASE("serving: a pipeline-parallel instance keeps pp batches in flight") {
  // The same 8 GPUs as 4 TP2 instances, or 2 instances of TP2 x PP2: offline, the pipeline's two
  // schedulers keep both stages busy, so throughput stays close (not halved).
  const std::vector<std::string> offline = {"workload.requests.arrival.process=offline", "workload.requests.count=256",
                                            "workload.requests.output.distribution=fixed",
                                            "workload.requests.output.value=128"};
  auto tp = offline;
  tp.push_back("workload.pools.main.replicas=4");
  tp.push_back("workload.pools.main.tp=2");
  auto pp = offline;
  pp.push_back("workload.pools.main.replicas=2");
  pp.push_back("workload.pools.main.tp=2");
  pp.push_back("workload.pools.main.pp=2");
  const Served flat = serve(kChat, tp), piped = serve(kChat, pp);
  CHECK(piped.result->completed == 256);
  CHECK(piped.result->output_tokens_per_s > 0.6 * flat.result->output_tokens_per_s);
  CHECK(piped.result->gpu_utilisation <= 1.0);
  CHECK(piped.result->pools.front().utilisation <= 1.0);
}

TEST_CASE("serving: a key the rest of the scenario makes ineffective is a warning in the notes") {
  const scenario::Scenario s =
      load(kChat, {"workload.requests.arrival.cv=2", "workload.speculative.acceptance=0.9", "workload.router=round_robin"});
  std::string all;
  for (const config::Diagnostic& w : s.warnings) all += w.render() + "\n";
  CHECK(all.find("workload.requests.arrival.cv: 2 has no effect: only gamma arrivals have a cv") != std::string::npos);
  CHECK(all.find("workload.speculative.acceptance: 0.9 has no effect: speculative.tokens is 0") != std::string::npos);
  CHECK(all.find("workload.router") == std::string::npos);  // eight instances: the router matters
  const Served run = serve(kChat, {"workload.requests.arrival.cv=2", "workload.requests.count=20"});
  const auto note = std::find_if(run.result->notes.begin(), run.result->notes.end(), [](const std::string& n) {
    return n.find("arrival.cv: 2 has no effect") != std::string::npos;
  });
  CHECK(note != run.result->notes.end());
  CHECK(load(kChat).warnings.empty());
}

}  // namespace serving_run_test
