// End-to-end tests of `clustersim collective`: the sweep table and JSON, the nccl-tests
// comparison, and error text.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace {

struct CollectiveRun {
  int exit_code = -1;
  std::string output;
};

CollectiveRun clustersim(const std::string& arguments) {
  const std::string command = std::string(CLUSTERSIM_BINARY) + " " + arguments + " 2>&1";
  CollectiveRun result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string scenario_path() { return std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/default.yaml"; }

}  // namespace

TEST_CASE("collective prints an nccl-tests-style JSON sweep with busbw = algbw x 2(n-1)/n") {
  const auto run = clustersim("collective " + scenario_path() + " --min 1K --max 1G --factor 1024 --format json");
  REQUIRE(run.exit_code == 0);
  const auto doc = nlohmann::json::parse(run.output);
  CHECK(doc["ranks"] == 8);
  REQUIRE(doc["points"].size() == 3);
  CHECK(doc["points"][0]["bytes"].get<double>() == 1024.0);
  CHECK(doc["points"][2]["bytes"].get<double>() == 1073741824.0);
  for (const auto& p : doc["points"]) {
    CHECK(p["busbw_gb_per_s"].get<double>() == doctest::Approx(p["algbw_gb_per_s"].get<double>() * 1.75));
    CHECK(p["algbw_gb_per_s"].get<double>() ==
          doctest::Approx(p["bytes"].get<double>() / p["time_us"].get<double>() / 1e3));
  }
  // H100 node: LL ring for 1 KiB, NVLS for 1 GiB.
  CHECK(doc["points"][0]["algorithm"] == "ring");
  CHECK(doc["points"][0]["protocol"] == "LL");
  CHECK(doc["points"][2]["algorithm"] == "nvls");
}

TEST_CASE("collective table has the nccl-tests columns") {
  const auto run = clustersim("collective " + scenario_path() + " --op all-gather --algorithm ring --min 1M --max 1M");
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("busbw (GB/s)") != std::string::npos);
  CHECK(run.output.find("1048576") != std::string::npos);
  CHECK(run.output.find("ring/") != std::string::npos);
}

TEST_CASE("collective --compare reports per-GPU errors against nccl-tests") {
  const auto run = clustersim("collective --compare " + std::string(CLUSTERSIM_SOURCE_DIR) +
                              "/validation/data/ground_truth_kernels.csv --format json");
  REQUIRE(run.exit_code == 0);
  const auto doc = nlohmann::json::parse(run.output);
  REQUIRE(doc["gpus"].size() == 3);
  CHECK(doc["gpus"][0]["system"] == "dgx-a100");
  CHECK(doc["gpus"][1]["system"] == "dgx-h100");
  // The targets: median <= 5 % and every point within 10 % from 1 MiB.
  CHECK(doc["median_abs_error_pct_from_1mib"].get<double>() <= 5.0);
  CHECK(doc["max_abs_error_pct_from_1mib"].get<double>() <= 10.0);
}

TEST_CASE("collective errors: unknown algorithm, NVLS without NVSwitch support, bad ranks and sizes") {
  const auto unknown = clustersim("collective " + scenario_path() + " --algorithm spiral");
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.output.find("valid: auto, ring, tree") != std::string::npos);
  const auto nvls = clustersim("collective " + scenario_path() +
                               " --set cluster.node.accelerator=a100-sxm-80gb --algorithm nvls --min 1M --max 1M");
  CHECK(nvls.exit_code == 1);
  CHECK(nvls.output.find("nvls needs an accelerator with NVLink SHARP") != std::string::npos);
  const auto one = clustersim("collective " + scenario_path() + " --ranks 1");
  CHECK(one.exit_code == 1);
  CHECK(one.output.find("--ranks must be in [2, 1024]") != std::string::npos);
  const auto range = clustersim("collective " + scenario_path() + " --min 8G --max 8");
  CHECK(range.exit_code == 1);
  CHECK(range.output.find("0 < min <= max") != std::string::npos);
  const auto size = clustersim("collective " + scenario_path() + " --min 8Q");
  CHECK(size.output.find("size '8Q'") != std::string::npos);
}
