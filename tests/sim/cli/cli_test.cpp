// End-to-end tests of the `clustersim` binary: exit codes, output formats, error text.
#include <doctest/doctest.h>
#include <unistd.h>

#include "run_clustersim.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace cli_test {

namespace {

using clustersim::cli_testing::CommandResult;
using clustersim::cli_testing::run_clustersim;

std::string source_path(const std::string& relative) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/" + relative;
}

}  // namespace

TEST_CASE("run prints the default scenario's prediction as a table and as JSON") {
  const auto table = run_clustersim("run " + source_path("scenarios/default.yaml"));
  CHECK(table.exit_code == 0);
  CHECK(table.output.find("step time") != std::string::npos);
  CHECK(table.output.find("MFU") != std::string::npos);
  CHECK(table.output.find("fingerprint") != std::string::npos);

  const auto json_run = run_clustersim("run " + source_path("scenarios/default.yaml") + " --format json");
  REQUIRE(json_run.exit_code == 0);
  const auto doc = nlohmann::json::parse(json_run.output);
  CHECK(doc["schema_version"] == 2);
  CHECK(doc["training"]["step_time_s"].get<double>() > 0);
  CHECK(doc["training"]["mfu"].get<double>() > 0.2);
  CHECK(doc["training"]["mfu"].get<double>() < 0.8);
  CHECK(doc["training"]["tokens_per_s"].get<double>() > 0);
  CHECK(doc["training"]["model_tflops_per_gpu"].get<double>() > 0);
  CHECK(doc["breakdown"].contains("bubble_s"));
  CHECK(doc["fingerprint"].get<std::string>().size() == 16);
}

TEST_CASE("run --set changes the prediction and --out writes result.json") {
  const auto out_dir = std::filesystem::temp_directory_path() / "clustersim_cli_out";
  std::filesystem::remove_all(out_dir);
  const auto base = nlohmann::json::parse(
      run_clustersim("run " + source_path("scenarios/default.yaml") + " --format json").output);
  const auto changed = run_clustersim("run " + source_path("scenarios/default.yaml") +
                                      " --set workload.global_batch=2048 --format json --out " + out_dir.string());
  REQUIRE(changed.exit_code == 0);
  const auto doc = nlohmann::json::parse(changed.output);
  CHECK(doc["training"]["step_time_s"].get<double>() > 1.5 * base["training"]["step_time_s"].get<double>());
  CHECK(std::filesystem::exists(out_dir / "result.json"));
  std::filesystem::remove_all(out_dir);
}

TEST_CASE("bad input exits 1 with the file, line, column and key") {
  const auto path = std::filesystem::temp_directory_path() / "clustersim_cli_bad.yaml";
  std::ofstream(path) << "schema_version: 1\nname: bad\ninclude: [systems/dgx-h100.yaml]\n"
                         "cluster:\n  nodes: 2\nworkload:\n  kind: training\n  model: llama-3-8b\n"
                         "  seq_len: 4096\n  global_batch: 16\n  parallelism: {tp: 3, pp: 1, dp: 4}\n";
  const auto result = run_clustersim("run " + path.string());
  CHECK(result.exit_code == 1);
  CHECK(result.output.find(path.string() + ":11:") != std::string::npos);
  CHECK(result.output.find("workload.parallelism") != std::string::npos);
  std::filesystem::remove(path);

  const auto missing = run_clustersim("run /nonexistent/scenario.yaml");
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("/nonexistent/scenario.yaml") != std::string::npos);
}

TEST_CASE("usage errors exit 2") {
  CHECK(run_clustersim("").exit_code == 2);
  CHECK(run_clustersim("list gpus").exit_code == 2);
  CHECK(run_clustersim("run").exit_code == 2);
}

TEST_CASE("list and describe print the registries") {
  const auto accelerators = run_clustersim("list accelerators");
  CHECK(accelerators.exit_code == 0);
  for (const char* name : {"a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200", "mi300x", "tpu-v5p", "gaudi3"}) {
    CHECK(accelerators.output.find(name) != std::string::npos);
  }
  const auto models = run_clustersim("list models");
  CHECK(models.output.find("llama-3.1-405b") != std::string::npos);
  CHECK(models.output.find("megatron-gpt-1t") != std::string::npos);
  const auto topologies = run_clustersim("list topologies");
  CHECK(topologies.output.find("fat-tree") != std::string::npos);

  const auto h100 = run_clustersim("describe h100-sxm");
  CHECK(h100.exit_code == 0);
  CHECK(h100.output.find("989") != std::string::npos);
  CHECK(h100.output.find("TFLOP/s") != std::string::npos);
  const auto fat_tree = run_clustersim("describe fat-tree");
  CHECK(fat_tree.output.find("radix") != std::string::npos);
  const auto typo = run_clustersim("describe h100-sxn");
  CHECK(typo.exit_code == 1);
  CHECK(typo.output.find("h100-sxm") != std::string::npos);
}

TEST_CASE("validate prints per-row errors and the MAPE, and JSON with the documented fields") {
  // The first three SC21 Table 1 rows: the CLI's formats, not the figures (the whole table is
  // compared in-process by validation_doc_figures_test).
  std::ifstream table_in(source_path("validation/data/megatron_sc21_table1.csv"));
  std::string subset, line;
  for (int i = 0; i < 4 && std::getline(table_in, line); ++i) subset += line + "\n";
  const auto dataset = std::filesystem::temp_directory_path() / ("cli-sc21-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(dataset) << subset;
  const auto json_run = run_clustersim("validate --dataset " + dataset.string() + " --format json");
  REQUIRE(json_run.exit_code == 0);
  const auto doc = nlohmann::json::parse(json_run.output);
  CHECK(doc["summary"]["rows"] == 3);
  CHECK(doc["summary"].contains("mape_pct"));
  CHECK(doc["summary"].contains("median_pct"));
  CHECK(doc["summary"].contains("max_pct"));
  REQUIRE(doc["rows"].size() == 3);
  for (const auto& row : doc["rows"]) {
    CHECK(row.contains("id"));
    CHECK(row["measured"].get<double>() > 0);
    CHECK(row["predicted"].get<double>() > 0);
    CHECK(row.contains("error_pct"));
  }
  CHECK(doc["skipped"].empty());
  const auto table = run_clustersim("validate --dataset " + dataset.string());
  CHECK(table.output.find("MAPE") != std::string::npos);
  for (const auto& row : doc["rows"]) CHECK(table.output.find(row["id"].get<std::string>()) != std::string::npos);
  std::filesystem::remove(dataset);
}

TEST_CASE("validate --scenario prints the scenario a row maps to, and it runs") {
  const std::string dataset = source_path("validation/data/ground_truth_training.csv");
  const auto shown = run_clustersim("validate --dataset " + dataset + " --scenario mcore_h100_0_mfu");
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.output.find("seq_len: 4096") != std::string::npos);
  CHECK(shown.output.find("global_batch: 192") != std::string::npos);
  CHECK(shown.output.find("tp: 1, pp: 1, dp: 48") != std::string::npos);
  const auto missing = run_clustersim("validate --dataset " + dataset + " --scenario no_such_row");
  CHECK(missing.exit_code != 0);
  CHECK(missing.output.find("no row with id 'no_such_row'") != std::string::npos);
  const auto skipped = run_clustersim("validate --dataset " + dataset + " --scenario opt_175b_tflops");
  CHECK(skipped.exit_code != 0);
  CHECK(skipped.output.find("is skipped: OPT-175B") != std::string::npos);
}

TEST_CASE("docs scenario-reference matches the committed docs/scenario-reference.md") {
  const auto generated = run_clustersim("docs scenario-reference");
  REQUIRE(generated.exit_code == 0);
  std::ifstream in(source_path("docs/scenario-reference.md"));
  const std::string committed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO("regenerate with: build/release/clustersim docs scenario-reference > docs/scenario-reference.md");
  CHECK(generated.output == committed);
}

}  // namespace cli_test
