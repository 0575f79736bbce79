// Issue 30: a heterogeneous serving fleet priced per pool (workload.pools.NAME.hour_usd). The
// guide's disaggregated deployment has 4 H100s in its prefill pool (2 TP2 instances) and 4
// H200s in its decode pool: at $2 and $6 an hour it costs what 8 accelerators at the
// device-weighted mean, $4, cost. One rate for different parts, or a pool without a price, is said.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"
#include "tests/relative_approx.hpp"

namespace serving_pool_price_test {

using namespace clustersim;
using clustersim::tolerance::relative_approx;

namespace {

const std::string kScenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/guide/70b-h100-prefill-h200-decode.yaml";

serving::ServingResult run(std::vector<std::string> sets) {
  sets.push_back("workload.requests.count=300");
  const runner::RunResult result = runner::run_scenario(scenario::load_scenario(kScenario, sets));
  const auto* r = dynamic_cast<const serving::ServingResult*>(result.primary.get());
  REQUIRE(r != nullptr);
  return *r;
}

bool has_note(const serving::ServingResult& r, const std::string& part) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("pools at their own prices cost what all the devices cost at the device-weighted mean price") {
  const serving::ServingResult priced = run({"workload.pools.prefill.hour_usd=2", "workload.pools.decode.hour_usd=6"});
  const serving::ServingResult flat = run({"cost.accelerator_hour_usd=4"});
  REQUIRE(priced.cost_per_million_tokens.has_value());
  REQUIRE(flat.cost_per_million_tokens.has_value());
  CHECK(*priced.cost_per_million_tokens == relative_approx(*flat.cost_per_million_tokens, 1e-12));
  CHECK_FALSE(has_note(priced, "cost:"));
  // One rate for two parts is said.
  CHECK(has_note(flat, "cost: pools of different accelerators are priced at cost.accelerator_hour_usd"));
}

TEST_CASE("a pool without a price and no fallback leaves the run unpriced, with a note") {
  const serving::ServingResult r = run({"workload.pools.prefill.hour_usd=2"});
  CHECK_FALSE(r.cost_per_million_tokens.has_value());
  CHECK(has_note(r, "cost: no cost per token: pool decode has no hour_usd and cost.accelerator_hour_usd is unset"));
}

}  // namespace serving_pool_price_test
