// Faults in serving end to end (docs/reliability.md, "Faults in serving"): stragglers, kernel
// jitter and instance failures on small deployments whose outcome can be derived by hand, and
// their reports and warnings.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/config/diagnostics.hpp"
#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/faults.hpp"
#include "sim/serving/serving_workload.hpp"
#include "tests/relative_approx.hpp"

namespace serving_faults_test {

using namespace clustersim;
using tolerance::relative_approx;

namespace {

// One DGX H100 node (8 GPUs, 8 NICs); one Llama-3-8B instance; a request of 128 prompt and 32
// output tokens every second: each is served alone (about 0.2 s), so every request sees the
// same iterations.
constexpr const char* kOne = R"(schema_version: 1
name: one
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 1, tp: 1}
  requests:
    count: 12
    arrival: {process: constant, rate: 1}
    input: {distribution: fixed, value: 128}
    output: {distribution: fixed, value: 32}
)";

struct Served {
  scenario::Scenario scenario;
  runner::RunResult run;
  const serving::ServingResult* result = nullptr;
};

Served serve(const std::string& yaml, std::vector<std::string> overrides = {}) {
  Served s{scenario::load_scenario_from_string(yaml, "s.yaml", std::move(overrides)), {}, nullptr};
  s.run = runner::run_scenario(s.scenario);
  s.result = dynamic_cast<const serving::ServingResult*>(s.run.primary.get());
  REQUIRE(s.result != nullptr);
  return s;
}

std::string warnings_of(const std::string& yaml, std::vector<std::string> overrides) {
  std::string all;
  for (const config::Diagnostic& w : scenario::load_scenario_from_string(yaml, "s.yaml", std::move(overrides)).warnings) {
    all += w.render() + "\n";
  }
  return all;
}

bool has_note(const serving::ServingResult& r, const std::string& text) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("serving faults: a straggler at half speed doubles TTFT, TPOT and end to end exactly") {
  const Served base = serve(kOne);
  // Probability 1: the node is slow, so the only instance runs every iteration at speed 0.5:
  // each iteration takes twice as long, and as requests never overlap every latency doubles.
  const Served slow = serve(kOne, {"cluster.stragglers.probability=1", "cluster.stragglers.compute_speed=0.5"});
  const serving::ServingResult& b = *base.result;
  const serving::ServingResult& s = *slow.result;
  REQUIRE(s.completed == 12);
  CHECK(s.ttft_s.mean == relative_approx(2 * b.ttft_s.mean, 1e-9));
  CHECK(s.tpot_s.mean == relative_approx(2 * b.tpot_s.mean, 1e-9));
  CHECK(s.e2e_s.mean == relative_approx(2 * b.e2e_s.mean, 1e-9));
  CHECK(s.e2e_s.p99 == relative_approx(2 * b.e2e_s.p99, 1e-9));
  CHECK(s.e2e_s.max == relative_approx(2 * b.e2e_s.max, 1e-9));
  REQUIRE(s.faults.modelled);
  CHECK_FALSE(b.faults.modelled);  // no fault key: nothing new in the result
  CHECK(s.faults.straggler_instances == 1);
  // Half of every slowed iteration is the straggler's: its share of the instance's time is half
  // the instance's busy share.
  CHECK(s.faults.straggler_share == relative_approx(s.pools.front().utilisation / 2, 1e-9));
  CHECK(has_note(s, "1 of 1 instances have an accelerator on a slow node (speed 0.5"));
  // Speed 1: not a straggler, and a warning says the setting does nothing.
  CHECK(warnings_of(kOne, {"cluster.stragglers.probability=1"})
            .find("cluster.stragglers.probability: 1 has no effect: cluster.stragglers.compute_speed is 1") !=
        std::string::npos);
}

TEST_CASE("serving faults: the least-outstanding router shifts load off a slow instance") {
  // Two instances on a 2-node cluster (tp 8 each, one per node); node 1 listed as slow. Poisson
  // load keeps requests overlapping, so the slow instance holds its requests longer and the
  // router, picking the instance with fewer outstanding, sends it fewer.
  const std::string two = std::string(kOne).replace(std::string(kOne).find("nodes: 1"), 8, "nodes: 2");
  const std::vector<std::string> load = {"workload.pools.main.replicas=2", "workload.pools.main.tp=8",
                                         "workload.requests.count=400", "workload.requests.arrival.process=poisson",
                                         "workload.requests.arrival.rate=40"};
  std::vector<std::string> slow = load;
  slow.push_back("cluster.stragglers.nodes=[1]");
  slow.push_back("cluster.stragglers.compute_speed=0.5");
  const Served s = serve(two, slow);
  std::int64_t on_slow = 0;
  for (const serving::RequestRecord& r : s.result->records) on_slow += r.replica == 1 ? 1 : 0;
  CHECK(on_slow < 200);
  CHECK(on_slow > 0);
  CHECK(s.result->faults.straggler_instances == 1);
}

TEST_CASE("serving faults: TP ranks' kernel jitter lengthens iterations; runs reproduce byte for byte") {
  const std::vector<std::string> tp4 = {"workload.pools.main.tp=4"};
  std::vector<std::string> jitter = tp4;
  jitter.push_back("simulation.variability.gemm_cv=0.1");
  jitter.push_back("simulation.variability.attention_cv=0.1");
  jitter.push_back("simulation.variability.elementwise_cv=0.1");
  const Served base = serve(kOne, tp4);
  const Served a = serve(kOne, jitter);
  // Every kernel class at CV 0.1: the iteration's kernels are a lognormal of CV 0.1 on each
  // rank; the slowest of four ranks has its median at 1.0992 (tests/sim/serving/faults_test.cpp)
  // and a mean above 1.08, on the kernels (not on the host overhead and the TP all-reduces).
  CHECK(a.result->tpot_s.mean > 1.02 * base.result->tpot_s.mean);
  CHECK(a.result->tpot_s.mean < 1.15 * base.result->tpot_s.mean);
  CHECK(a.result->faults.jitter_share > 0);
  // Same seed, same bytes; another seed, other draws.
  const Served again = serve(kOne, jitter);
  CHECK(report::run_result_json(a.scenario, a.run).dump() == report::run_result_json(again.scenario, again.run).dump());
  std::vector<std::string> other = jitter;
  other.push_back("simulation.seed=2");
  CHECK(serve(kOne, other).run.fingerprint != a.run.fingerprint);
  // No variability key: the run is the one without faults, to the bit.
  CHECK(report::run_result_json(base.scenario, base.run).dump().find("\"faults\"") == std::string::npos);
}

TEST_CASE("serving faults: an instance failing mid-decode re-queues its request, which prefills again") {
  const Served base = serve(kOne);
  const serving::ServingResult& b = *base.result;
  // Request 3 in the failure-free run: arrival a, first token at a + TTFT, then a token every
  // ~TPOT. The failure is put at a + TTFT + 2.5 TPOT: three tokens delivered, the fourth not.
  const serving::RequestRecord& third = b.records[3];
  const double tpot = (third.finish_s - third.first_token_s) / 31.0;
  const double fail_s = third.first_token_s + 2.5 * tpot;
  // One instance of 1 GPU, 1 host and 1 NIC (8 per node over 8 GPUs); every MTBF set to X: its
  // rate is (3 per GPU + 1 host + 1 NIC) / X = 5 / X. Its first up time is X/5 times the unit
  // draw failure_gap_s(seed, instance 0, failure 0, MTBF 1): choose X to put it at fail_s. The
  // second comes X/5 x unit draw 1 after the recovery: the seed is the first whose second draw
  // is over ten times its first, so that it falls past the run (fixed lengths and constant
  // arrivals: the seed changes nothing else).
  std::uint64_t seed = 1;
  while (serving::failure_gap_s(seed, 0, 1, 1.0) < 10 * serving::failure_gap_s(seed, 0, 0, 1.0)) ++seed;
  const double unit = serving::failure_gap_s(seed, 0, 0, 1.0);
  const double mtbf = 5.0 * fail_s / unit;
  const double restart = 5.0;
  REQUIRE(fail_s + restart + mtbf / 5.0 * serving::failure_gap_s(seed, 0, 1, 1.0) > 30.0);
  std::vector<std::string> failures = {"simulation.failures.enabled=true",
                                       fmt::format("simulation.failures.restart_time={} s", restart),
                                       fmt::format("simulation.seed={}", seed)};
  for (const char* key : {"gpu_mtbf", "host_mtbf", "nic_mtbf", "network_mtbf", "software_mtbf"}) {
    failures.push_back(fmt::format("simulation.failures.{}={:.17g} s", key, mtbf));
  }
  const Served failed = serve(kOne, failures);
  const serving::ServingResult& f = *failed.result;
  REQUIRE(f.completed == 12);
  CHECK(f.faults.failures == 1);
  // Only request 3 was in flight: it goes back, and as the only instance is down it waits for
  // the restart. Its KV cache held the prompt and the first two generated tokens' (128 + 3 - 1
  // = 130 tokens), prefilled again after the restart.
  CHECK(f.faults.requeued_requests == 1);
  CHECK(f.faults.reprefill_tokens == 130);
  const serving::RequestRecord& again = f.records[3];
  CHECK(again.restarts == 1);
  CHECK(again.first_token_s == relative_approx(third.first_token_s, 1e-12));  // its first token was delivered
  CHECK(again.finish_s > fail_s + restart);
  CHECK(again.finish_s - third.finish_s > restart);
  // Requests 4 to 7 arrive (at 4, 5, 6 and 7 s after the first) while the instance is down:
  // they queue and start together when it is back at fail_s + 5 s. The longest queueing is
  // request 4's: fail_s + 5 - its arrival.
  const double recovered_s = fail_s + restart;
  CHECK(f.records[4].scheduled_s == relative_approx(recovered_s, 1e-9));
  CHECK(f.records[7].scheduled_s == relative_approx(recovered_s, 1e-9));
  CHECK(f.queue_s.max == relative_approx(recovered_s - f.records[4].request.arrival_s, 1e-9));
  // Down 5 s of the run: availability 1 - 5 / duration, the downtime share 5 / duration.
  CHECK(f.faults.availability == relative_approx(1.0 - restart / f.duration_s, 1e-9));
  CHECK(f.faults.downtime_share == relative_approx(restart / f.duration_s, 1e-9));
  CHECK(f.faults.reprefill_share > 0);
  CHECK(f.faults.lost_work_share > 0);  // the decode iteration the failure cut short
  CHECK(f.ttft_s.max > b.ttft_s.max + 1.0);  // request 4 waited for the restart
  CHECK(f.e2e_s.max > b.e2e_s.max + 1.0);
}

TEST_CASE("serving faults: availability on a long run is MTBF / (MTBF + restart)") {
  // Eight instances of one GPU, each failing every 20 s on average (all five MTBFs 100 s: rate
  // 5 / 100 s) and down 5 s: availability 20 / 25 = 0.8, and about 8 x 2000 / 25 = 640
  // failures over the ~2000 s of 1000 short requests at 0.5/s. Each instance's uptime share
  // over ~80 cycles has a standard deviation of about sqrt(80) x 20 / 2000 = 0.09; over eight
  // instances 0.032, 4 % of 0.8: within 12 % (3 standard deviations).
  std::vector<std::string> o = {"workload.pools.main.replicas=8",
                                "workload.requests.count=1000",
                                "workload.requests.arrival.rate=0.5",
                                "workload.requests.input.value=16",
                                "workload.requests.output.value=4",
                                "simulation.failures.enabled=true",
                                "simulation.failures.restart_time=5 s"};
  for (const char* key : {"gpu_mtbf", "host_mtbf", "nic_mtbf", "network_mtbf", "software_mtbf"}) {
    o.push_back(fmt::format("simulation.failures.{}=100 s", key));
  }
  const Served s = serve(kOne, o);
  const serving::ServingFaults& f = s.result->faults;
  REQUIRE(s.result->completed == 1000);
  CHECK(f.instance_mtbf_s == relative_approx(20.0));
  CHECK(f.availability == relative_approx(0.8, 0.12));
  // Expected failures: duration x 8 / (20 + 5); the count is within 12 % of it.
  CHECK(f.expected_failures == relative_approx(s.result->duration_s * 8 / 25.0, 1e-9));
  CHECK(static_cast<double>(f.failures) == relative_approx(f.expected_failures, 0.12));
  CHECK(f.requeued_requests > 0);
}

TEST_CASE("serving faults: default MTBFs on a short run expect almost no failure, and say so") {
  // One GPU instance with Llama 3's rates: GPU 268 + network 35 + software 63 interruptions per
  // 16,384 GPUs x 1,296 h, a host 46 per 2,048 x 1,296 h, a NIC 7 per 16,384 x 1,296 h:
  // (366 + 7) / (16384 x 1296 h) + 46 / (2048 x 1296 h) = 1.757e-5 + 1.733e-5 = 3.490e-5 per
  // hour, an MTBF of 28,654 h. A run of ~11 s expects 1e-7 failures.
  const Served s = serve(kOne, {"simulation.failures.enabled=true"});
  const serving::ServingFaults& f = s.result->faults;
  CHECK(f.instance_mtbf_s / 3600 == relative_approx(28654, 0.001));
  CHECK(f.failures == 0);
  CHECK(f.expected_failures < 1e-6);
  CHECK(f.availability == 1.0);
  CHECK(has_note(*s.result, "is far shorter than an instance's MTBF"));
}

TEST_CASE("serving faults: keys serving leaves without effect are warnings that say why") {
  const std::string w = warnings_of(kOne, {"simulation.iterations=5", "simulation.failures.enabled=true",
                                           "simulation.failures.checkpoint_interval=1 h",
                                           "simulation.variability.gemm_cv=0.1"});
  CHECK(w.find("simulation.iterations: 5 has no effect: a serving run is one deployment") != std::string::npos);
  CHECK(w.find("simulation.failures.checkpoint_interval: 1 h has no effect: a serving instance writes no checkpoint") !=
        std::string::npos);
  CHECK(w.find("simulation.variability") == std::string::npos);  // modelled now
  CHECK(w.find("simulation.failures.enabled") == std::string::npos);
  // Disaggregated pools: their instances stay up, and the warning says so.
  std::string disaggregated;
  for (const config::Diagnostic& d :
       scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) +
                                   "/scenarios/serving/disaggregated-h100-prefill-h200-decode.yaml",
                               {"simulation.failures.enabled=true"})
           .warnings) {
    disaggregated += d.render() + "\n";
  }
  CHECK(disaggregated.find("simulation.failures.enabled: true has no effect: failures are modelled for mixed pools "
                           "only") != std::string::npos);
  CHECK(warnings_of(kOne, {"simulation.failures.restart_time=1 s"})
            .find("simulation.failures.restart_time: 1 s has no effect: simulation.failures.enabled is false, so no "
                  "instance fails") != std::string::npos);
}

TEST_CASE("serving faults: the example runs and shows every cause") {
  const scenario::Scenario s =
      scenario::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/serving/llama3-8b-faults.yaml");
  CHECK(s.warnings.empty());
  const runner::RunResult run = runner::run_scenario(s);
  const auto* r = dynamic_cast<const serving::ServingResult*>(run.primary.get());
  REQUIRE(r != nullptr);
  CHECK(r->completed == 2000);
  // 8 TP2 instances, each 9 / 540 s = one failure per 60 s, down 10 s: duration x 8 / 70.
  CHECK(r->faults.instance_mtbf_s == relative_approx(60.0));
  CHECK(r->faults.expected_failures == relative_approx(r->duration_s * 8 / 70.0, 1e-9));
  CHECK(r->faults.failures > 0);
  CHECK(r->faults.requeued_requests > 0);
  CHECK(r->faults.availability < 1.0);
  CHECK(r->faults.jitter_share > 0);
  CHECK(r->faults.downtime_share > 0);
  CHECK(r->faults.reprefill_tokens > 0);
  CHECK(r->faults.straggler_instances == 4);  // seed 1 draws one of the two nodes slow
  CHECK(r->faults.straggler_share > 0);
}

}  // namespace serving_faults_test
