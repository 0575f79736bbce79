// `clustersim run --trace`: the file parses, every complete event is placed and timed, slices
// of one (pid, tid) never overlap, the filters cut what they should, and a trace changes
// nothing in the result; on a tiny training and a tiny serving scenario.
#include <doctest/doctest.h>

#include "run_clustersim.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trace_cli_test {

namespace {

using clustersim::cli_testing::run_clustersim;

// 8 GPUs: tp 2 x pp 2 x dp 2; pipeline sends between stages 0 and 1.
constexpr const char* kTraining = R"(schema_version: 1
name: tiny-training
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
workload:
  kind: training
  model: llama-3-8b
  seq_len: 2048
  global_batch: 8
  parallelism: {tp: 2, pp: 2, dp: 2}
)";

// 4 single-GPU replicas, 40 requests.
constexpr const char* kServing = R"(schema_version: 1
name: tiny-serving
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 4, tp: 1}
  requests:
    count: 40
    arrival: {process: poisson, rate: 20}
    input: {distribution: lognormal, mean: 300, stddev: 100, max: 1024}
    output: {distribution: lognormal, mean: 50, stddev: 20, max: 256}
)";

std::filesystem::path write_scenario(const std::string& name, const char* yaml) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << yaml;
  return path;
}

nlohmann::json traced(const std::filesystem::path& scenario, const std::string& options = "") {
  const auto trace = std::filesystem::temp_directory_path() / "clustersim_trace_test.json";
  std::filesystem::remove(trace);
  const auto run = run_clustersim("run " + scenario.string() + " --trace " + trace.string() + " " + options);
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  std::ifstream file(trace);
  auto doc = nlohmann::json::parse(file);  // throws (fails the test) on malformed JSON
  std::filesystem::remove(trace);
  return doc;
}

struct Slice {
  double start = 0, end = 0;
};

/// Checks every complete event is placed and timed and that none overlaps another of its
/// (pid, tid); returns the slices by pid.
std::map<int, std::vector<Slice>> check_slices(const nlohmann::json& doc) {
  std::map<std::pair<int, int>, std::vector<Slice>> threads;
  std::map<int, std::vector<Slice>> by_pid;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    REQUIRE(e.contains("ts"));
    REQUIRE(e.contains("dur"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e.contains("tid"));
    const Slice s{e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
    CHECK(e["dur"].get<double>() >= 0);
    threads[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(s);
    by_pid[e["pid"].get<int>()].push_back(s);
  }
  int overlaps = 0;
  for (auto& [thread, slices] : threads) {
    std::sort(slices.begin(), slices.end(), [](const Slice& x, const Slice& y) { return x.start < y.start; });
    // 1e-6 us = 1 ps: the times are exact to the picosecond; the sum ts + dur is a double.
    for (std::size_t i = 1; i < slices.size(); ++i) overlaps += slices[i].start < slices[i - 1].end - 1e-6;
  }
  CHECK(overlaps == 0);
  return by_pid;
}

}  // namespace

TEST_CASE("training trace: slices per GPU and stream, pipeline flows, filters, unchanged fingerprint") {
  const auto scenario = write_scenario("clustersim_trace_training.yaml", kTraining);
  const auto doc = traced(scenario);
  const auto by_pid = check_slices(doc);
  // Symmetric mode simulates the representative rank of each stage: GPUs 0 (stage 0) and 4
  // (stage 1: rank tp * dp = 4).
  CHECK(by_pid.size() == 2);
  CHECK(by_pid.contains(0));
  CHECK(by_pid.contains(4));
  int flows_out = 0, flows_in = 0;
  for (const auto& e : doc["traceEvents"]) {
    flows_out += e["ph"] == "s";
    flows_in += e["ph"] == "f";
  }
  CHECK(flows_out > 0);  // activations and gradients cross the stage boundary
  CHECK(flows_out == flows_in);

  // The run's fingerprint with a trace is the run's without one.
  const auto plain = nlohmann::json::parse(run_clustersim("run " + scenario.string() + " --format json").output);
  CHECK(doc["otherData"]["fingerprint"] == plain["fingerprint"]);

  // --trace-ranks 4: only stage 1's GPU, and no arrow (its other end is cut).
  const auto ranks = traced(scenario, "--trace-ranks 4");
  const auto only = check_slices(ranks);
  CHECK(only.size() == 1);
  CHECK(only.contains(4));
  for (const auto& e : ranks["traceEvents"]) CHECK(e["ph"] != "s");

  // --trace-window: every slice kept overlaps it, and fewer are kept than in the whole run.
  const double end = [&] {
    double last = 0;
    for (const auto& [pid, slices] : by_pid)
      for (const Slice& s : slices) last = std::max(last, s.end);
    return last;
  }();
  const int from_us = static_cast<int>(end / 4), to_us = static_cast<int>(end / 2);
  const auto window = traced(scenario, "--trace-window " + std::to_string(from_us) + "us:" + std::to_string(to_us) + "us");
  std::size_t all = 0, kept = 0;
  for (const auto& [pid, slices] : by_pid) all += slices.size();
  for (const auto& [pid, slices] : check_slices(window)) {
    for (const Slice& s : slices) {
      ++kept;
      CHECK(s.end >= from_us);
      CHECK(s.start <= to_us);
    }
  }
  CHECK(kept > 0);
  CHECK(kept < all);
  std::filesystem::remove(scenario);
}

TEST_CASE("serving trace: iterations per replica, KV-cache counters, one async slice per request") {
  const auto scenario = write_scenario("clustersim_trace_serving.yaml", kServing);
  const auto doc = traced(scenario);
  const auto by_pid = check_slices(doc);
  CHECK(by_pid.size() == 4);  // one single-GPU replica on each of GPUs 0-3
  std::map<std::string, int> phases;
  int requests = 0;
  for (const auto& e : doc["traceEvents"]) {
    phases[e["ph"].get<std::string>()] += 1;
    if (e["ph"] == "b" && e["name"].get<std::string>().starts_with("request ")) ++requests;
  }
  CHECK(requests == 40);
  CHECK(phases["b"] == phases["e"]);
  CHECK(phases["C"] > 0);

  const auto filtered = traced(scenario, "--trace-ranks 1-2");
  const auto kept = check_slices(filtered);
  CHECK(kept.size() == 2);
  CHECK(kept.contains(1));
  CHECK(kept.contains(2));
  for (const auto& e : filtered["traceEvents"]) {
    if (e["ph"] != "M") CHECK((e["pid"] == 1 || e["pid"] == 2));
  }
  std::filesystem::remove(scenario);
}

TEST_CASE("trace errors come before the run and name the path or the option") {
  const auto scenario = write_scenario("clustersim_trace_errors.yaml", kTraining);
  const auto unwritable = run_clustersim("run " + scenario.string() + " --trace /proc/clustersim/trace.json");
  CHECK(unwritable.exit_code == 1);
  CHECK(unwritable.output.find("/proc/clustersim") != std::string::npos);
  CHECK(unwritable.output.find("step time") == std::string::npos);  // nothing was simulated

  const auto out = run_clustersim("run " + scenario.string() + " --out /proc/clustersim-out");
  CHECK(out.exit_code == 1);
  CHECK(out.output.find("/proc/clustersim-out") != std::string::npos);

  const auto no_trace = run_clustersim("run " + scenario.string() + " --trace-ranks 0-7");
  CHECK(no_trace.exit_code == 1);
  CHECK(no_trace.output.find("--trace-ranks has no effect without --trace") != std::string::npos);

  // One DGX node: accelerators 0-7; a range past them is an error, not an empty trace.
  const auto past_path = std::filesystem::temp_directory_path() / "clustersim_trace_ranks_test.json";
  const auto past = run_clustersim("run " + scenario.string() + " --trace " + past_path.string() +
                                   " --trace-ranks 5000-6000");
  CHECK(past.exit_code == 1);
  CHECK(past.output.find("--trace-ranks '5000-6000': the cluster has accelerators 0-7; 5000 is not one of them") !=
        std::string::npos);
  CHECK(past.output.find("step time") == std::string::npos);
  const auto straddling = run_clustersim("run " + scenario.string() + " --trace " + past_path.string() +
                                         " --trace-ranks 0-3,6-8");
  CHECK(straddling.exit_code == 1);
  CHECK(straddling.output.find("8 is not one of them") != std::string::npos);
  std::filesystem::remove(past_path);

  const auto bad_path = std::filesystem::temp_directory_path() / "clustersim_trace_window_test.json";
  const auto bad = run_clustersim("run " + scenario.string() + " --trace " + bad_path.string() + " --trace-window 5ms");
  CHECK(bad.exit_code == 1);
  CHECK(bad.output.find("--trace-window '5ms'") != std::string::npos);
  std::filesystem::remove(scenario);
}

}  // namespace trace_cli_test
