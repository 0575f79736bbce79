// report.html: every chart of a real (small) training and serving run and of a sweep, escaping,
// determinism, and the HBM-over-time series against the memory model it scales.
#include "sim/report/html_report.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/report/run_timeline.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace html_report_test {

using namespace clustersim;

namespace {

// Eight H100s, tp 2 x pp 2 x dp 2, 4 micro-batches per pipeline, flow fidelity (the default).
constexpr const char* kTraining = R"(schema_version: 1
name: tiny <report> & co
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload:
  kind: training
  model: llama-3-8b
  seq_len: 2048
  global_batch: 8
  parallelism: {tp: 2, pp: 2, dp: 2}
)";

constexpr const char* kServing = R"(schema_version: 1
name: tiny-serving
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    mixed: {replicas: 2, tp: 4}
  requests: {count: 40}
)";

bool has_id(const std::string& html, const std::string& id) {
  return html.find("id=\"" + id + "\"") != std::string::npos;
}

}  // namespace

TEST_CASE("a training report holds every chart, escapes the scenario name and is deterministic") {
  const scenario::Scenario scenario = scenario::load_scenario_from_string(kTraining, "tiny.yaml");
  report::RunTimeline timeline;
  const runner::RunResult run = runner::run_scenario(scenario, &timeline);
  const auto programs = runner::stage_programs(scenario);
  const std::string html = report::run_report_html(scenario, run, {&timeline, &programs});
  for (const char* id : {"chart-timeline", "chart-breakdown", "chart-memory", "chart-hbm", "chart-network",
                         "chart-network-time", "chart-power", "table-estimators", "table-metrics"}) {
    CHECK_MESSAGE(has_id(html, id), id);
  }
  CHECK(html.find("tiny &lt;report&gt; &amp; co") != std::string::npos);
  CHECK(html.find("tiny <report>") == std::string::npos);
  CHECK(html.find("no data") == std::string::npos);  // every chart of this run has data
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  CHECK(html.find("roofline") != std::string::npos);  // the estimator table names an estimator
  CHECK(report::run_report_html(scenario, run, {&timeline, &programs}) == html);
  // Both stages' streams are rows; stage 0 runs on GPU 0.
  const auto& rows = timeline.rows();
  CHECK(std::any_of(rows.begin(), rows.end(), [](const report::TimelineRow& r) { return r.stream == "stage 0 compute"; }));
  CHECK(std::any_of(rows.begin(), rows.end(), [](const report::TimelineRow& r) { return r.stream == "stage 1 compute"; }));
}

TEST_CASE("HBM over the step peaks at the memory model's footprint when the most micro-batches are held") {
  const scenario::Scenario scenario = scenario::load_scenario_from_string(kTraining, "tiny.yaml");
  report::RunTimeline timeline;
  const runner::RunResult run = runner::run_scenario(scenario, &timeline);
  const auto& training = dynamic_cast<const training::TrainingResult&>(*run.primary);
  // 4 micro-batches per pipeline on each of 2 stages.
  CHECK(timeline.activation_spans().size() == 8);
  const auto series = report::hbm_occupancy(timeline, training.memory);
  REQUIRE(series.size() == 2);
  for (const report::StageHbmSeries& stage : series) {
    const training::StageMemory& memory = training.memory.stages[static_cast<std::size_t>(stage.stage)];
    const double peak = *std::max_element(stage.bytes.begin(), stage.bytes.end());
    CHECK(peak == doctest::Approx(memory.total_bytes));
    CHECK(stage.bytes.front() == doctest::Approx(memory.total_bytes - memory.activations_bytes));
    CHECK(stage.bytes.back() == doctest::Approx(memory.total_bytes - memory.activations_bytes));  // all released
    CHECK(std::is_sorted(stage.times_ps.begin(), stage.times_ps.end()));
  }
  // 1F1B: the first stage holds up to pp = 2 micro-batches, so its series has more than one level.
  CHECK(series[0].bytes.size() > 3);
}

TEST_CASE("recording the timeline does not change the run") {
  const scenario::Scenario scenario = scenario::load_scenario_from_string(kTraining, "tiny.yaml");
  report::RunTimeline timeline;
  CHECK(runner::run_scenario(scenario, &timeline).fingerprint == runner::run_scenario(scenario).fingerprint);
}

TEST_CASE("a serving report holds the latency CDFs, the time series and the pools") {
  const scenario::Scenario scenario = scenario::load_scenario_from_string(kServing, "serving.yaml");
  const runner::RunResult run = runner::run_scenario(scenario);
  const std::string html = report::run_report_html(scenario, run);
  for (const char* id : {"chart-ttft-cdf", "chart-tpot-cdf", "chart-e2e-cdf", "chart-throughput", "chart-queue",
                         "chart-kv", "chart-pools", "table-pools", "table-metrics"}) {
    CHECK_MESSAGE(has_id(html, id), id);
  }
  CHECK(html.find("no data") == std::string::npos);
}

TEST_CASE("a sweep report scatters the objectives, highlights the front and lists failed points with their reason") {
  report::SweepReport sweep;
  sweep.name = "grid";
  sweep.fingerprint = "abc";
  sweep.maximize = "tokens_per_s";
  sweep.minimize = "gpus";
  sweep.points = {{"p0", true, "", true, {{"workload.parallelism.tp", "2"}}, {{"gpus", 8}, {"tokens_per_s", 100}}},
                  {"p1", true, "", false, {{"workload.parallelism.tp", "4"}}, {{"gpus", 16}, {"tokens_per_s", 90}}},
                  {"p<2>", false, "does not fit: 90 GiB > 80 GiB", false, {{"workload.parallelism.tp", "8"}}, {}}};
  const std::string html = report::sweep_report_html(sweep);
  CHECK(has_id(html, "chart-pareto"));
  CHECK(has_id(html, "table-points"));
  CHECK(html.find("does not fit: 90 GiB &gt; 80 GiB") != std::string::npos);
  CHECK(html.find("p&lt;2&gt;") != std::string::npos);
  CHECK(html.find("<tr class=\"failed\">") != std::string::npos);
  CHECK(html.find("<tr class=\"front\">") != std::string::npos);
  CHECK(html.find("<circle") != std::string::npos);
  CHECK(html.find("data-report-ready") != std::string::npos);  // the script that marks the page
  CHECK(report::sweep_report_html(sweep) == html);
  report::SweepReport empty;
  CHECK(report::sweep_report_html(empty).find("class=\"no-data\"") != std::string::npos);
}

}  // namespace html_report_test
