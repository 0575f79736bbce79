// Issue 30: prompts longer than the iteration's token budget with chunked prefill off. A
// distribution whose every prompt is too long is an error at requests.input (it used to run,
// reject every request, print 0 tokens/s, exit 0 and blame the KV capacity); one that reaches
// past the budget is a warning; the rejections a run makes are counted by cause and the summary
// names the token budget. Length keys a distribution does not read are said to have no effect.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"

namespace serving_token_budget_test {

using namespace clustersim;

namespace {

const std::string kScenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/guide/70b-h200-serving.yaml";

std::vector<std::string> with(std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"workload.framework=trtllm-ifb", "workload.requests.count=300"});
  return sets;
}

std::string warnings_of(const scenario::Scenario& s) {
  std::string text;
  for (const auto& d : s.warnings) text += d.render() + "\n";
  return text;
}

}  // namespace

TEST_CASE("every prompt over the token budget with chunked prefill off is an error at requests.input") {
  try {
    scenario::load_scenario(kScenario, with({"workload.requests.input={distribution: fixed, value: 20000}"}));
    FAIL("expected ScenarioError");
  } catch (const config::ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    const config::Diagnostic& d = e.diagnostics().front();
    CHECK(d.key_path == "workload.requests.input");
    CHECK(d.message ==
          "every prompt (20000 tokens or more) exceeds the iteration's token budget (scheduler.max_batched_tokens "
          "8192) and chunked prefill is off (the trtllm-ifb default): no request could be scheduled, every one would be "
          "rejected");
    CHECK(d.hint.find("workload.scheduler.chunked_prefill: true") != std::string::npos);
  }
  // Chunked prefill on, or a budget that holds the prompt: it loads.
  CHECK_NOTHROW(scenario::load_scenario(
      kScenario, with({"workload.requests.input={distribution: fixed, value: 20000}", "workload.scheduler.chunked_prefill=true"})));
  CHECK_NOTHROW(scenario::load_scenario(
      kScenario, with({"workload.requests.input={distribution: fixed, value: 20000}", "workload.scheduler.max_batched_tokens=20000"})));
}

TEST_CASE("a distribution reaching past the budget warns, and the run names the token budget as the limiter") {
  const scenario::Scenario s = scenario::load_scenario(
      kScenario, with({"workload.requests.input={distribution: lognormal, mean: 6000, stddev: 3000, max: 30000}"}));
  CHECK(warnings_of(s).find("workload.requests.input: prompts over 8192 tokens (scheduler.max_batched_tokens) are "
                            "rejected: chunked prefill is off (the trtllm-ifb default) and the distribution reaches "
                            "30000") != std::string::npos);
  const runner::RunResult run = runner::run_scenario(s);
  const auto* r = dynamic_cast<const serving::ServingResult*>(run.primary.get());
  REQUIRE(r != nullptr);
  CHECK(r->rejected > 0);
  CHECK(r->rejected == r->rejected_token_budget);  // the KV cache holds 64 GiB: none for capacity
  CHECK(r->rejected_kv_capacity == 0);
  CHECK(r->completed + r->rejected == 300);
  CHECK(r->limiter.find("the token budget (" + std::to_string(r->rejected_token_budget) +
                        " prompts over scheduler.max_batched_tokens 8192 rejected: chunked prefill is off)") == 0);
}

TEST_CASE("length keys the distribution does not read have no effect, said at the key") {
  const scenario::Scenario s =
      scenario::load_scenario(kScenario, {"workload.requests.count=20", "workload.requests.input={distribution: fixed, mean: 2000}"});
  CHECK(warnings_of(s).find("workload.requests.input.mean: 2000 has no effect: distribution fixed does not read it "
                            "(mean is for normal, lognormal)") != std::string::npos);
  const scenario::Scenario uniform = scenario::load_scenario(
      kScenario, {"workload.requests.count=20", "workload.requests.output={distribution: uniform, min: 10, max: 50, value: 30}"});
  CHECK(warnings_of(uniform).find("workload.requests.output.value: 30 has no effect: distribution uniform does not read it "
                                  "(value is for fixed)") != std::string::npos);
}

TEST_CASE("a request count the run's memory cannot hold is refused at requests.count with the count that fits") {
  try {
    scenario::load_scenario(kScenario, {"workload.requests.count=10000", "simulation.limits.memory=1 MB"});
    FAIL("expected ScenarioError");
  } catch (const config::ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    const config::Diagnostic& d = e.diagnostics().front();
    CHECK(d.key_path == "workload.requests.count");
    // 10,000 x 400 B = 4 MB against 1 MB: 2,500 fit.
    CHECK(d.message.find("10000 requests need about") == 0);
    CHECK(d.message.find("(400 B a request), over the run's memory limit of") != std::string::npos);
    CHECK(d.hint == "at most 2500 requests fit");
  }
  CHECK_NOTHROW(scenario::load_scenario(kScenario, {"workload.requests.count=2000", "simulation.limits.memory=1 MB"}));
}

TEST_CASE("TensorRT-LLM 1.x: the LLM API refuses over-budget prompts; trtllm-bench chunks them") {
  const std::vector<std::string> long_prompts{"workload.requests.count=50",
                                              "workload.requests.input={distribution: fixed, value: 20000}"};
  std::vector<std::string> api = long_prompts;
  api.emplace_back("workload.framework=trtllm-1.0");
  try {
    scenario::load_scenario(kScenario, api);
    FAIL("expected ScenarioError");
  } catch (const config::ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics().front().message.find("chunked prefill is off (the trtllm-1.0 default)") != std::string::npos);
    CHECK(e.diagnostics().front().hint.find("TensorRT-LLM 1.x's LLM API and trtllm-serve refuse such a prompt") !=
          std::string::npos);
  }
  std::vector<std::string> bench = long_prompts;
  bench.emplace_back("workload.framework=trtllm-bench-1.0");
  const scenario::Scenario s = scenario::load_scenario(kScenario, bench);
  const runner::RunResult run = runner::run_scenario(s);
  const auto* r = dynamic_cast<const serving::ServingResult*>(run.primary.get());
  REQUIRE(r != nullptr);
  CHECK(r->completed == 50);
  CHECK(r->rejected == 0);
}

TEST_CASE("a fixed length outside the distribution's min and max is said to be clamped") {
  const scenario::Scenario s = scenario::load_scenario(
      kScenario, {"workload.requests.count=20", "workload.requests.input={distribution: fixed, value: 9000, max: 4096}"});
  CHECK(warnings_of(s).find("workload.requests.input.value: 9000 is outside [1, 4096] (requests.input.min, "
                            "requests.input.max): every length is clamped to 4096") != std::string::npos);
  const scenario::Scenario inside = scenario::load_scenario(
      kScenario, {"workload.requests.count=20", "workload.requests.input={distribution: fixed, value: 2000, max: 4096}"});
  CHECK(warnings_of(inside).find("is outside") == std::string::npos);
}

}  // namespace serving_token_budget_test
