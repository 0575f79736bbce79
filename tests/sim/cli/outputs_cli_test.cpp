// `run --out DIR` and the scenario's output.dir: result.json and manifest.json, --out winning.
#include <doctest/doctest.h>

#include "run_clustersim.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace outputs_cli_test {

namespace {

using clustersim::cli_testing::run_clustersim;

std::string tiny_training(const std::string& output_dir) {
  std::string yaml = R"(schema_version: 1
name: tiny-outputs
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
  if (!output_dir.empty()) yaml += "output: {dir: " + output_dir + "}\n";
  return yaml;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), path.string());
  return nlohmann::json::parse(file);
}

}  // namespace

TEST_CASE("--out writes a manifest with the resolved scenario, its hash, seed, version and fingerprint") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_outputs_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto scenario = dir / "s.yaml";
  std::ofstream(scenario) << tiny_training("");
  const auto run = run_clustersim("run " + scenario.string() + " --set simulation.seed=5 --out " + (dir / "a").string());
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const auto manifest = read_json(dir / "a" / "manifest.json");
  const auto result = read_json(dir / "a" / "result.json");
  CHECK(manifest["seed"] == 5);
  CHECK(manifest["resolved"]["simulation.seed"] == "5");
  CHECK(manifest["resolved"]["workload.parallelism.pp"] == "2");
  CHECK(manifest["resolved"]["simulation.fidelity"] == "flow");  // a default, written out
  CHECK(manifest["scenario"]["overrides"][0] == "simulation.seed=5");
  CHECK(manifest["fingerprint"] == result["fingerprint"]);
  CHECK(manifest["resolved_hash"].get<std::string>().size() == 16);
  CHECK(!manifest["version"].get<std::string>().empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("output.dir is where results go unless --out names another folder") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_output_dir_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto scenario = dir / "s.yaml";
  std::ofstream(scenario) << tiny_training((dir / "from-yaml").string());
  REQUIRE(run_clustersim("run " + scenario.string()).exit_code == 0);
  CHECK(std::filesystem::exists(dir / "from-yaml" / "result.json"));
  CHECK(std::filesystem::exists(dir / "from-yaml" / "manifest.json"));
  std::filesystem::remove_all(dir / "from-yaml");
  REQUIRE(run_clustersim("run " + scenario.string() + " --out " + (dir / "from-cli").string()).exit_code == 0);
  CHECK(std::filesystem::exists(dir / "from-cli" / "manifest.json"));
  CHECK(!std::filesystem::exists(dir / "from-yaml"));

  std::ofstream(scenario) << tiny_training("/proc/clustersim-no");
  const auto bad = run_clustersim("run " + scenario.string());
  CHECK(bad.exit_code == 1);
  CHECK(bad.output.find("output.dir /proc/clustersim-no") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("--format csv prints one header row and one row of the summary metrics") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_csv_cli";
  std::filesystem::create_directories(dir);
  const auto scenario = dir / "s.yaml";
  std::ofstream(scenario) << tiny_training("");
  const auto csv = run_clustersim("run " + scenario.string() + " --format csv");
  REQUIRE_MESSAGE(csv.exit_code == 0, csv.output);
  const auto json = nlohmann::json::parse(run_clustersim("run " + scenario.string() + " --format json").output);
  const auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::size_t begin = 0;
    for (std::size_t comma; (comma = line.find(',', begin)) != std::string::npos; begin = comma + 1) {
      cells.push_back(line.substr(begin, comma - begin));
    }
    cells.push_back(line.substr(begin));
    return cells;
  };
  const std::size_t newline = csv.output.find('\n');
  REQUIRE(newline != std::string::npos);
  const auto header = split(csv.output.substr(0, newline));
  const std::string rest = csv.output.substr(newline + 1);
  REQUIRE(std::count(rest.begin(), rest.end(), '\n') == 1);  // exactly one data row
  const auto row = split(rest.substr(0, rest.size() - 1));
  REQUIRE(header.size() == row.size());
  CHECK(header[0] == "scenario");
  CHECK(row[0] == "tiny-outputs");
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE_MESSAGE(it != header.end(), name);
    return row[static_cast<std::size_t>(it - header.begin())];
  };
  CHECK(column("fingerprint") == json["fingerprint"].get<std::string>());
  CHECK(std::stod(column("training.step_time_s")) == doctest::Approx(json["training"]["step_time_s"].get<double>()));
  CHECK(std::stod(column("memory.total_bytes")) == doctest::Approx(json["memory"]["total_bytes"].get<double>()));
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare sets two --out folders (or scenario files) side by side") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_compare_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto scenario = dir / "s.yaml";
  std::ofstream(scenario) << tiny_training("");
  REQUIRE(run_clustersim("run " + scenario.string() + " --out " + (dir / "a").string()).exit_code == 0);
  REQUIRE(run_clustersim("run " + scenario.string() + " --set workload.global_batch=16 --out " + (dir / "b").string())
              .exit_code == 0);
  const auto compared = run_clustersim("compare " + (dir / "a").string() + " " + (dir / "b").string());
  REQUIRE_MESSAGE(compared.exit_code == 0, compared.output);
  CHECK(compared.output.find("inputs: 1 key differs") != std::string::npos);
  CHECK(compared.output.find("workload.global_batch  8 -> 16") != std::string::npos);
  CHECK(compared.output.find("training.step_time_s") != std::string::npos);
  // A scenario file against the folder it wrote: the same inputs.
  const auto same = run_clustersim("compare " + scenario.string() + " " + (dir / "a").string());
  REQUIRE_MESSAGE(same.exit_code == 0, same.output);
  CHECK(same.output.find("inputs: the same") != std::string::npos);

  const auto missing = run_clustersim("compare " + (dir / "a").string() + " " + dir.string());
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find((dir / "manifest.json").string()) != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare puts one scenario beside itself with --set-b: two kernel stacks on the same hardware") {
  const std::string b200 = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/guide/compare-70b-b200.yaml";
  const auto compared = run_clustersim("compare " + b200 + " --set-b simulation.kernel_stack=cublaslt-13.0");
  REQUIRE_MESSAGE(compared.exit_code == 0, compared.output);
  CHECK(compared.output.find("B: " + b200 + " --set simulation.kernel_stack=cublaslt-13.0") != std::string::npos);
  CHECK(compared.output.find("inputs: 4 keys differ") != std::string::npos);
  CHECK(compared.output.find("preset -> cublaslt-13.0") != std::string::npos);
  CHECK(compared.output.find("accelerators.b200.efficiency.matmul_fp8   0.763 -> 0.6611") != std::string::npos);
  CHECK(compared.output.find("training.step_time_s") != std::string::npos);
  const auto alone = run_clustersim("compare " + b200);
  CHECK(alone.exit_code == 1);
  CHECK(alone.output.find("compare needs a second run B, or --set-a / --set-b") != std::string::npos);
  const auto described = run_clustersim("describe hipblaslt-rocm-6.3");
  REQUIRE(described.exit_code == 0);
  CHECK(described.output.find("kernel stack hipblaslt-rocm-6.3 (") == 0);
  CHECK(described.output.find("efficiency.matmul_fp8 0.444 -> 0.5329") != std::string::npos);  // mi300x.applied
  // Each row costed with the stack (solved from it: as measured) and with the preset alone.
  CHECK(described.output.find("gemm bf16 4096x4864x32896 708 TFLOP/s = 1851.4 us (nh_maf_mi300x_bf16); model 1851.5 us "
                              "(+0.0 %), preset 1994.5 us (+7.7 %)") != std::string::npos);
  const auto list = run_clustersim("list stacks");
  REQUIRE(list.exit_code == 0);
  CHECK(list.output.find("cublaslt-13.0\n") != std::string::npos);
  CHECK(list.output.find("hipblaslt-rocm-6.3\n") != std::string::npos);
}

TEST_CASE("compare and --format csv show a second job (jobs:): its inputs with defaults, its metrics") {
  const std::string congestion = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/congestion/";
  const auto compared =
      run_clustersim("compare " + congestion + "shared-fabric-alone.yaml " + congestion + "shared-fabric.yaml");
  REQUIRE_MESSAGE(compared.exit_code == 0, compared.output);
  const auto line_of = [&](const std::string& key) {  // the table's line for a key, without padding
    const std::size_t at = compared.output.find("  " + key + " ");
    if (at == std::string::npos) return std::string();
    std::string line = compared.output.substr(at + 2, compared.output.find('\n', at) - at - 2);
    line.erase(std::unique(line.begin(), line.end(), [](char x, char y) { return x == ' ' && y == ' '; }), line.end());
    return line;
  };
  CHECK(line_of("jobs.other-tenant.collective") == "jobs.other-tenant.collective (unset) -> all-to-all");
  CHECK(line_of("jobs.other-tenant.rounds") == "jobs.other-tenant.rounds (unset) -> 0");  // its default
  CHECK(compared.output.find("job.other-tenant.busy_time_s") != std::string::npos);
  CHECK(compared.output.find("job.other-tenant.rounds") != std::string::npos);
  const auto csv = run_clustersim("run " + congestion + "shared-fabric.yaml --format csv");
  REQUIRE_MESSAGE(csv.exit_code == 0, csv.output);
  CHECK(csv.output.find(",job.other-tenant.algorithm_bandwidth_B_s,job.other-tenant.busy_time_s,") !=
        std::string::npos);
}

}  // namespace outputs_cli_test
