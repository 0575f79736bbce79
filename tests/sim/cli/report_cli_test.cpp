// `run --out` and `sweep --out` write report.html; `run --trace` gets the link-utilisation and
// HBM counter tracks, and neither changes the run.
#include <doctest/doctest.h>

#include "run_clustersim.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace report_cli_test {

namespace {

using clustersim::cli_testing::run_clustersim;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), path.string());
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

const std::string kData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/report/";

}  // namespace

TEST_CASE("run --out writes report.html and --trace gets utilisation and HBM counters, the run unchanged") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_report_cli";
  std::filesystem::remove_all(dir);
  const auto trace = dir / "trace.json";
  const auto run = run_clustersim("run " + kData + "training.yaml --format json --out " + (dir / "out").string() +
                                  " --trace " + trace.string());
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const std::string html = read_text(dir / "out" / "report.html");
  CHECK(html.starts_with("<!DOCTYPE html>"));
  CHECK(html.find("id=\"chart-timeline\"") != std::string::npos);
  CHECK(html.find("ClusterSim training report: report-training") != std::string::npos);
  const auto json = nlohmann::json::parse(read_text(trace));
  std::set<std::string> counters;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] == "C") counters.insert(event["name"].get<std::string>());
  }
  CHECK(counters.contains("link utilisation tier 0 (scale-up)"));
  CHECK(counters.contains("HBM stage 0"));
  CHECK(counters.contains("HBM stage 1"));
  const auto plain = run_clustersim("run " + kData + "training.yaml --format json");
  REQUIRE(plain.exit_code == 0);
  const auto result = nlohmann::json::parse(read_text(dir / "out" / "result.json"));
  CHECK(nlohmann::json::parse(plain.output)["fingerprint"] == result["fingerprint"]);
  // The tiers' peaks as scalars: CSV columns and compare rows.
  const auto& tier0 = result["network"]["utilisation"]["tier_0"];
  CHECK(tier0["peak_utilisation"].get<double>() > 0);
  CHECK(tier0["peak_utilisation"].get<double>() >= tier0["mean_utilisation"].get<double>());
  CHECK(tier0["peak_link_utilisation"].get<double>() >= tier0["max_utilisation"].get<double>());
  CHECK(tier0["peak_link_utilisation"].get<double>() <= 1.0);
}

TEST_CASE("sweep --out writes report.html with every point, failed ones with their reason") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_report_cli_sweep";
  std::filesystem::remove_all(dir);
  const auto sweep = run_clustersim("sweep " + kData + "sweep.yaml -j 2 --out " + dir.string());
  REQUIRE_MESSAGE(sweep.exit_code == 0, sweep.output);
  // Before it runs, on stderr: the points and how many at once.
  CHECK(sweep.output.rfind("sweep: 9 points; 9 to run here, 2 at once\n", 0) == 0);
  CHECK(sweep.output.find("wrote " + (dir / "sweep.csv").string() + " and report.html") != std::string::npos);
  const std::string html = read_text(dir / "report.html");
  CHECK(html.find("id=\"chart-pareto\"") != std::string::npos);
  CHECK(html.find("9 points, 3 succeeded, 6 failed") != std::string::npos);
}

}  // namespace report_cli_test
