// End-to-end tests of `clustersim sweep` and `clustersim sweep-merge` (tests/data/sweep).
#include <doctest/doctest.h>

#include "../cli/run_clustersim.hpp"
#include "temp_folders.hpp"

#include <algorithm>
#include <filesystem>
#include <string>

namespace sweep_command_test {

namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/sweep/";

const clustersim::testing::TempFolders folders("clustersim-sweep-cli-test");
fs::path fresh_dir(const std::string& name) { return folders.fresh(name); }

}  // namespace

TEST_CASE("clustersim sweep and sweep-merge on the command line") {
  using clustersim::cli_testing::run_clustersim;
  const fs::path dir = fresh_dir("cli");
  const auto list = run_clustersim("sweep " + kData + "tiny_sweep.yaml --list --shard 2/2");
  CHECK(list.exit_code == 0);
  CHECK(list.output.find("shard 2/2") != std::string::npos);
  CHECK(std::count(list.output.begin(), list.output.end(), '\n') == 6);
  const auto list_out = run_clustersim("sweep " + kData + "tiny_sweep.yaml --list --out " + (dir / "x").string());
  CHECK(list_out.exit_code == 1);
  CHECK(list_out.output.find("--out, -j, --format and --mpi have no effect") != std::string::npos);
  const auto first = run_clustersim("sweep " + kData + "tiny_sweep.yaml -j 2 --shard 1/2 --out " + (dir / "a").string());
  CHECK(first.exit_code == 0);
  CHECK(first.output.find("shard 1/2: ran 3 points, 0 already finished") != std::string::npos);
  CHECK(first.output.find("note: 3 of 6 points have no result") != std::string::npos);
  const auto second = run_clustersim("sweep " + kData + "tiny_sweep.yaml --shard 2/2 --out " + (dir / "b").string());
  CHECK(second.exit_code == 0);
  CHECK(second.output.find("failed") != std::string::npos);
  const auto merged = run_clustersim("sweep-merge " + (dir / "a").string() + " " + (dir / "b").string() +
                                     " --out " + (dir / "m").string());
  CHECK(merged.exit_code == 0);
  CHECK(merged.output.find("merged 2 folders: 6 rows, 0 points missing") != std::string::npos);
  const auto partial = run_clustersim("sweep-merge " + (dir / "a").string() + " --out " + (dir / "p").string());
  CHECK(partial.exit_code == 1);
  const auto bad = run_clustersim("sweep " + kData + "tiny_sweep.yaml --shard 3/2 --out " + (dir / "c").string());
  CHECK(bad.exit_code == 1);
  CHECK(bad.output.find("--shard must be i/N") != std::string::npos);
  const auto run = run_clustersim("run " + kData + "tiny_sweep.yaml");
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("a sweep block has no effect on a single run") != std::string::npos);
}

TEST_CASE("the example sweep in examples/sweeps runs: 3 accelerators x 3 splits, a Pareto front") {
  using clustersim::cli_testing::run_clustersim;
  const std::string example = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/sweeps/llama3-70b-grid.yaml";
  const fs::path dir = fresh_dir("example");
  const auto run = run_clustersim("sweep " + example + " -j 2 --out " + dir.string());
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("shard 1/1: ran 9 points, 0 already finished") != std::string::npos);
  CHECK(run.output.find("failed") == std::string::npos);
  CHECK(run.output.find("note:") == std::string::npos);  // the Pareto columns exist
  CHECK(run.output.find("  *  ") != std::string::npos);
}

TEST_CASE("clustersim capacity --deadline sizes a training cluster; training options without it are refused") {
  using clustersim::cli_testing::run_clustersim;
  const std::string tiny = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/search/tiny.yaml";
  const auto sized = run_clustersim("capacity " + tiny +
                                    " --deadline '1e9 s' --tokens 1e10 --max-nodes 2 --threads 2 --price "
                                    "a100-sxm-80gb=2");
  CHECK(sized.exit_code == 0);
  CHECK(sized.output.find("training capacity: tiny-search") == 0);
  CHECK(sized.output.find("smallest: 4 x a100-sxm-80gb (1 nodes)") != std::string::npos);
  CHECK(sized.output.find("cheapest: 4 x a100-sxm-80gb (1 nodes)") != std::string::npos);
  const auto json = run_clustersim("capacity " + tiny + " --deadline 1s --tokens 1e10 --max-nodes 2 --format json");
  CHECK(json.exit_code == 1);  // nothing meets one second
  CHECK(json.output.find("\"kind\": \"training-capacity\"") != std::string::npos);
  const auto orphan = run_clustersim("capacity " + tiny + " --tokens 1e10");
  CHECK(orphan.exit_code == 1);
  CHECK(orphan.output.find("size a training run: give --deadline too") != std::string::npos);
  const auto serving_only = run_clustersim("capacity " + tiny + " --deadline '30 d' --tokens 1e10 --rate 5");
  CHECK(serving_only.exit_code == 1);
  CHECK(serving_only.output.find("apply to serving capacity") != std::string::npos);
  const auto no_deadline = run_clustersim("capacity " + tiny);
  CHECK(no_deadline.exit_code == 1);
  CHECK(no_deadline.output.find("a training one: --deadline") != std::string::npos);
}

TEST_CASE("the serving example sweep runs: arrival rate x weight precision, throughput against power") {
  using clustersim::cli_testing::run_clustersim;
  const std::string example = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/sweeps/chatbot-rates.yaml";
  const auto run = run_clustersim("sweep " + example + " -j 2 --out " + fresh_dir("chatbot").string());
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("shard 1/1: ran 8 points, 0 already finished") != std::string::npos);
  CHECK(run.output.find("output_tokens_per_s  cluster_power_average_W") != std::string::npos);
  CHECK(run.output.find("failed") == std::string::npos);
  CHECK(run.output.find("note:") == std::string::npos);
}

TEST_CASE("sweep --mpi: a build without MPI says how to get one; -j has no effect with it") {
  using clustersim::cli_testing::run_clustersim;
#ifdef CLUSTERSIM_WITH_MPI
  // Refused before MPI starts (the farm itself: tests/sim/mpi, under mpirun).
  const auto threads = run_clustersim("sweep " + kData + "tiny_sweep.yaml --mpi -j 2");
  CHECK(threads.exit_code == 1);
  CHECK(threads.output.find("error: -j 2 has no effect with --mpi: each rank runs one point at a time") !=
        std::string::npos);
#else
  const auto run = run_clustersim("sweep " + kData + "tiny_sweep.yaml --mpi");
  CHECK(run.exit_code == 1);
  CHECK(run.output.find("error: --mpi: this clustersim was built without MPI; configure with "
                        "-DCLUSTERSIM_WITH_MPI=ON") != std::string::npos);
  CHECK(run.output.find("--shard i/N") != std::string::npos);
#endif
  const auto list = run_clustersim("sweep " + kData + "tiny_sweep.yaml --list --mpi");
  CHECK(list.exit_code == 1);
  CHECK(list.output.find("--out, -j, --format and --mpi have no effect with it") != std::string::npos);
}

}  // namespace sweep_command_test
