// End-to-end tests of `clustersim search`: table and JSON output, option checks, exit codes.
#include <doctest/doctest.h>

#include "../cli/run_clustersim.hpp"

#include <array>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace search_command_test {

namespace {

using clustersim::cli_testing::CommandResult;
using clustersim::cli_testing::run_clustersim;

const std::string kTiny = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/search/tiny.yaml";
// The hand-listed space of parallelism_search_test.cpp: 27 splits x ZeRO {1} x selective.
const std::string kNarrow = " --max-cp 2 --max-vp 2 --zero 1 --recompute selective";

}  // namespace

TEST_CASE("search prints counts, the ranked table and the breakdowns") {
  const auto run = run_clustersim("search " + kTiny + kNarrow + " --top 3 --resimulate 1");
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("search: tiny-search on 4 accelerators, ranked by throughput (tokens/s)") == 0);
  CHECK(run.output.find("candidates: 27 enumerated, 27 feasible, 0 do not fit in memory, 0 rejected") !=
        std::string::npos);
  CHECK(run.output.find("step sim. s") != std::string::npos);
  CHECK(run.output.find("analytical time breakdown") != std::string::npos);
}

TEST_CASE("search --format json carries the same ranking, re-simulating the best K") {
  const auto run = run_clustersim("search " + kTiny + kNarrow + " --top 4 --resimulate 2 --format json");
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(run.output);
  CHECK(json["kind"] == "search");
  CHECK(json["counts"]["enumerated"] == 27);
  REQUIRE(json["top"].size() == 4);
  CHECK(json["top"][0]["rank"] == 1);
  CHECK(json["top"][0]["config"]["zero"] == 1);
  CHECK(json["top"][1]["simulated"].is_object());
  CHECK(json["top"][2]["simulated"].is_null());
  // The re-simulated candidates are ranked by their simulated throughput, the rest by the
  // closed form's.
  CHECK(json["top"][0]["simulated"]["tokens_per_s"].get<double>() >=
        json["top"][1]["simulated"]["tokens_per_s"].get<double>());
  CHECK(json["top"][2]["analytical"]["tokens_per_s"].get<double>() >=
        json["top"][3]["analytical"]["tokens_per_s"].get<double>());
}

TEST_CASE("search errors: bad objective, bad recompute, nothing fits, bad format") {
  const auto objective = run_clustersim("search " + kTiny + " --objective speed");
  CHECK(objective.exit_code == 1);
  CHECK(objective.output ==
        "error: unknown search objective 'speed'; valid objectives: throughput, cost, energy\n");
  const auto recompute = run_clustersim("search " + kTiny + " --recompute some");
  CHECK(recompute.exit_code == 1);
  CHECK(recompute.output.find("unknown recompute policy 'some'; valid: none, selective, full, op") !=
        std::string::npos);
  const auto tiny_hbm = run_clustersim("search " + kTiny + kNarrow +
                                       " --set accelerators.a100-sxm-80gb.memory.hbm_capacity=512MiB");
  CHECK(tiny_hbm.exit_code == 1);
  CHECK(tiny_hbm.output.find("error: no feasible parallel split for 'tiny-search'") == 0);
  CHECK(run_clustersim("search " + kTiny + " --format xml").exit_code == 2);
}

}  // namespace search_command_test
