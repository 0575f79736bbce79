// Disaggregated KV-cache transfer (issue 30 part 1: Dynamo and llm-d): `kv_transfer: pull`
// (vLLM's NixlConnector) against the default push, iteration by iteration; and the KV-aware
// routers (`kv_cost`, Dynamo's; `prefix_queue`, llm-d's), derived by hand.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/exec/observer.hpp"
#include "sim/platform/trace_sink.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"

namespace kv_transfer_test {

using namespace clustersim;

namespace {

struct Iteration {
  int replica = 0;
  engine::TimePs start_ps = 0, end_ps = 0;
  std::int64_t sequences = 0, prefill = 0, decode = 0;
};

/// Every serving iteration (replica, times, batch) and the replica that finished each request.
class Recorder : public platform::TraceSink {
 public:
  exec::ExecutionObserver& watch_graph(const exec::TaskGraph&, std::function<int(int, int)>) override {
    return ignored_;
  }
  void span(const platform::TraceSpan& span) override {
    REQUIRE(span.args.size() == 3);
    iterations.push_back({span.lane.key, span.start_ps, span.end_ps, span.args[0].second, span.args[1].second,
                          span.args[2].second});
  }
  void sample(const platform::TraceSample&) override {}
  void item(const platform::TraceItem& request) override {
    if (static_cast<std::size_t>(request.id) >= replica_of.size()) replica_of.resize(static_cast<std::size_t>(request.id) + 1, -1);
    replica_of[static_cast<std::size_t>(request.id)] = request.lane.key;
  }
  std::vector<Iteration> iterations;
  std::vector<int> replica_of;

 private:
  exec::ExecutionObserver ignored_;
};

// One DGX H100: Llama-3-8B, `pools` (YAML lines under pools:), requests from `requests`.
std::string scenario(const std::string& pools, const std::string& requests, const std::string& extra) {
  return R"(schema_version: 1
name: kv-transfer
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-8b
  pools:
)" + pools + R"(
  requests:
)" + requests + extra;
}

const std::string kOnePrefillOneDecode = "    a: {role: prefill, replicas: 1, tp: 1}\n    b: {role: decode, replicas: 1, tp: 1}";
const std::string kOneRequest =
    "    count: 1\n    arrival: {process: offline}\n    input: {distribution: fixed, value: 1000}\n"
    "    output: {distribution: fixed, value: 3}\n";

struct Run {
  Recorder recorder;
  double ttft_s = 0;
};

void run(const std::string& yaml, Run& out) {
  const auto result = runner::run_scenario(scenario::load_scenario_from_string(yaml, "s.yaml", {}), &out.recorder);
  const auto* serving = dynamic_cast<const serving::ServingResult*>(result.primary.get());
  REQUIRE(serving != nullptr);
  REQUIRE(serving->rejected == 0);
  REQUIRE(serving->completed >= 1);
  out.ttft_s = serving->ttft_s.p50;
}

}  // namespace

TEST_CASE("kv_transfer pull: the decode instance reads the cache, then computes the last prompt token") {
  // One prompt of 1,000 tokens, 3 output tokens, prefill on replica 0, decode on replica 1.
  // push: replica 0 prefills (its token is the first), the cache moves, replica 1 decodes
  //   tokens 2 and 3: (1, 0, 1) twice.
  // pull: the same prefill; replica 1 admits the request at once (idle), reads the 1,000 tokens
  //   (the same bytes on the same path: arriving when push's cache arrived), then one iteration
  //   of the last prompt token (1, 1, 0) samples the first token, and two decodes the others.
  Run push, pull;
  run(scenario(kOnePrefillOneDecode, kOneRequest, ""), push);
  run(scenario(kOnePrefillOneDecode, kOneRequest, "  kv_transfer: pull\n"), pull);
  const auto& p = push.recorder.iterations;
  const auto& q = pull.recorder.iterations;
  REQUIRE(p.size() == 3);
  REQUIRE(q.size() == 4);
  CHECK((p[0].replica == 0 && p[0].prefill == 1000 && p[0].decode == 0));
  CHECK((p[1].replica == 1 && p[1].prefill == 0 && p[1].decode == 1 && p[2].decode == 1));
  CHECK((q[0].replica == 0 && q[0].prefill == 1000));
  CHECK((q[1].replica == 1 && q[1].sequences == 1 && q[1].prefill == 1 && q[1].decode == 0));
  CHECK((q[2].decode == 1 && q[3].decode == 1));
  CHECK(q[0].end_ps == p[0].end_ps);
  CHECK(q[1].start_ps == p[1].start_ps);  // the read arrives when the pushed cache did
  // TTFT: push's at the prefill's end; pull's at the end of its one-token iteration.
  CHECK(push.ttft_s == doctest::Approx(engine::ps_to_seconds(p[0].end_ps)).epsilon(1e-12));
  CHECK(pull.ttft_s == doctest::Approx(engine::ps_to_seconds(q[1].end_ps)).epsilon(1e-12));
  CHECK(pull.ttft_s > push.ttft_s);
}

/// Seconds from the end of the last prefill iteration (replica 0) to the start of the decode
/// replica's next iteration: the read of that request's KV cache, the decode instance idle.
double last_read_s(const std::vector<Iteration>& iterations) {
  std::size_t prefill = iterations.size();
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i].replica == 0) prefill = i;
  }
  REQUIRE(prefill + 1 < iterations.size());
  REQUIRE(iterations[prefill + 1].replica == 1);
  return engine::ps_to_seconds(iterations[prefill + 1].start_ps - iterations[prefill].end_ps);
}

TEST_CASE("kv_transfer pull reads only the blocks the decode instance has not cached") {
  // A and B share a 512-token prefix (id 7) of their 1,000-token prompts; B comes a second after
  // A has finished, so the decode instance holds A's 512 prefix tokens (32 blocks of 16): B's
  // read is of 1,000 - 512 = 488 tokens, as long as a lone 488-token prompt's read.
  const auto trace = std::filesystem::temp_directory_path() / "clustersim-kv-pull-prefix.csv";
  std::ofstream(trace) << "arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens\n0,1000,2,7,512\n1,1000,2,7,512\n";
  Run shared, alone;
  run(scenario(kOnePrefillOneDecode,
               "    count: 2\n    arrival: {process: trace}\n    trace: " + trace.string() + "\n",
               "  kv_transfer: pull\n  scheduler: {block_size: 16}\n"),
      shared);
  const std::string lone = "    count: 1\n    arrival: {process: offline}\n    input: {distribution: fixed, value: 488}\n"
                           "    output: {distribution: fixed, value: 2}\n";
  run(scenario(kOnePrefillOneDecode, lone, "  kv_transfer: pull\n  scheduler: {block_size: 16}\n"), alone);
  CHECK(last_read_s(shared.recorder.iterations) == doctest::Approx(last_read_s(alone.recorder.iterations)).epsilon(1e-9));
  Run whole;  // the whole 1,000 tokens, nothing cached at the decode instance
  run(scenario(kOnePrefillOneDecode, kOneRequest, "  kv_transfer: pull\n  scheduler: {block_size: 16}\n"), whole);
  CHECK(last_read_s(whole.recorder.iterations) > 1.5 * last_read_s(shared.recorder.iterations));
  std::filesystem::remove(trace);
}

TEST_CASE("conditional disaggregation: a prompt mostly cached on its decode instance is prefilled there") {
  // A and B share a 512-token prefix of their 1,000-token prompts, B a second after A. Dynamo's
  // isl_bounding (2,048 tokens, 0.7): A finds nothing cached at the decode instance (1,000
  // uncached, all of the prompt): prefilled on replica 0. B finds A's 512 there: 488 uncached,
  // 0.488 of the prompt: prefilled on replica 1 (the 488 tokens after the hit), then decoded.
  // llm-d's decider at 16 tokens sends B to the prefill pool (488 >= 16).
  const auto trace = std::filesystem::temp_directory_path() / "clustersim-conditional-disagg.csv";
  std::ofstream(trace) << "arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens\n0,1000,2,7,512\n1,1000,2,7,512\n";
  const std::string requests = "    count: 2\n    arrival: {process: trace}\n    trace: " + trace.string() + "\n";
  Run dynamo, llmd;
  run(scenario(kOnePrefillOneDecode, requests,
               "  scheduler: {block_size: 16}\n  conditional_disaggregation: {max_uncached_tokens: 2048, "
               "max_uncached_ratio: 0.7}\n"),
      dynamo);
  run(scenario(kOnePrefillOneDecode, requests,
               "  scheduler: {block_size: 16}\n  conditional_disaggregation: {max_uncached_tokens: 16}\n"),
      llmd);
  const auto& d = dynamo.recorder.iterations;
  REQUIRE(d.size() == 4);
  CHECK((d[0].replica == 0 && d[0].prefill == 1000));
  CHECK((d[1].replica == 1 && d[1].decode == 1));
  CHECK((d[2].replica == 1 && d[2].prefill == 488 && d[2].decode == 0));
  CHECK((d[3].replica == 1 && d[3].decode == 1));
  const auto& l = llmd.recorder.iterations;
  REQUIRE(l.size() == 4);
  CHECK((l[2].replica == 0 && l[2].prefill == 488));  // B's prompt after the prefill instance's own hit
  std::filesystem::remove(trace);
}

TEST_CASE("kv_transfer and decode_router are said to have no effect without prefill and decode pools") {
  const std::string mixed = "    main: {replicas: 2, tp: 1}";
  const scenario::Scenario s =
      scenario::load_scenario_from_string(scenario(mixed, kOneRequest,
                                                   "  kv_transfer: pull\n  decode_router: kv_cost\n"
                                                   "  conditional_disaggregation: {max_uncached_tokens: 16}\n"),
                                          "s.yaml", {});
  std::string warnings;
  for (const auto& w : s.warnings) warnings += w.render() + "\n";
  // With the position of the key (lines 17 and 18 of the scenario).
  CHECK_MESSAGE(warnings.find("s.yaml:17:16: workload.kv_transfer: pull has no effect: there are no prefill and decode pools") !=
                    std::string::npos,
                warnings);
  CHECK_MESSAGE(warnings.find("s.yaml:18:18: workload.decode_router: kv_cost has no effect") != std::string::npos, warnings);
  CHECK_MESSAGE(warnings.find("workload.conditional_disaggregation.max_uncached_tokens: 16 has no effect: there are no "
                              "prefill and decode pools") != std::string::npos,
                warnings);
  CHECK_THROWS_WITH(scenario::load_scenario_from_string(scenario(mixed, kOneRequest, "  kv_transfer: pul\n"), "s.yaml", {}),
                    doctest::Contains("push, pull"));
  CHECK_THROWS_WITH(scenario::load_scenario_from_string(
                        scenario(kOnePrefillOneDecode, kOneRequest,
                                 "  conditional_disaggregation: {max_uncached_tokens: 16, max_uncached_ratio: 2}\n"),
                        "s.yaml", {}),
                    doctest::Contains("s.yaml:18:77: workload.conditional_disaggregation.max_uncached_ratio: out of range: must be between 1e-09 and 1, got 2"));
}

TEST_CASE("kv_cost routes by uncached prompt blocks plus active blocks; prefix_queue by queue when nothing is cached") {
  // Two instances, a trace: A (2,000 tokens in, 500 out: seconds of decoding) and B (100 in, 2
  // out) at 0; C and D (100 in) at 0.5 s, when B has finished and A has not. Blocks of 16.
  // kv_cost (prompt blocks 100 / 16 = 6.25; active: whole blocks of the prompts routed there):
  //   A ties (125 + 0 each): the turn's instance 0. B: 6.25 + 125 at 0 against 6.25 + 0 at 1:
  //   instance 1. C: 6.25 + 125 against 6.25 + 0 (B done): 1. D: 6.25 + 125 against 6.25 + 7: 1.
  // prefix_queue (no prefixes: the queue score alone, 1 for all when queues are equal): A and B
  //   arrive together, queues 0 and 0 for A (turn: 0); B finds A queued at 0 (score 0 against
  //   1): 1. At 0.5 s both queues are empty: C takes the turn (instance 0); D finds C queued at
  //   0 in the same instant: 1.
  const auto trace = std::filesystem::temp_directory_path() / "clustersim-kv-router-trace.csv";
  std::ofstream(trace) << "arrival_s,input_tokens,output_tokens\n0,2000,500\n0,100,2\n0.5,100,10\n0.5,100,10\n";
  const auto routed = [&](const std::string& router) {
    const std::string requests = "    count: 4\n    arrival: {process: trace}\n    trace: " + trace.string() + "\n";
    Run out;
    const auto result = runner::run_scenario(
        scenario::load_scenario_from_string(scenario("    main: {replicas: 2, tp: 1}", requests,
                                                     "  router: " + router + "\n  scheduler: {block_size: 16}\n"),
                                            "s.yaml", {}),
        &out.recorder);
    (void)result;
    return out.recorder.replica_of;
  };
  CHECK(routed("kv_cost") == std::vector<int>{0, 1, 1, 1});
  CHECK(routed("prefix_queue") == std::vector<int>{0, 1, 0, 1});
  std::filesystem::remove(trace);
}

}  // namespace kv_transfer_test
