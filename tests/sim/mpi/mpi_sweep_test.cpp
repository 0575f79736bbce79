// `clustersim sweep --mpi` under mpirun (sim/mpi, sim/sweep/point_farm): 3 ranks on any machine
// (--oversubscribe: CI has 2 cores) write the rows a `-j 1` run writes, failing point included,
// resume a folder, and end cleanly after an error on rank 0. Built with -DCLUSTERSIM_WITH_MPI=ON.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../cli/run_clustersim.hpp"
#include "../sweep/temp_folders.hpp"

namespace mpi_sweep_test {

namespace {

namespace fs = std::filesystem;
using clustersim::cli_testing::run_clustersim;
using clustersim::cli_testing::run_command;

const std::string kSweep = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/sweep/tiny_sweep.yaml";

const clustersim::testing::TempFolders folders("clustersim-mpi-test");
fs::path fresh_dir(const std::string& name) { return folders.fresh(name); }
using clustersim::testing::read_text;

/// `mpirun -np RANKS clustersim ARGUMENTS`. CI runs as root, which mpirun refuses unless told.
clustersim::cli_testing::CommandResult mpirun(int ranks, const std::string& arguments) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  return run_command(std::string(CLUSTERSIM_MPIEXEC) + " -np " + std::to_string(ranks) + " --oversubscribe " +
                     CLUSTERSIM_BINARY + " " + arguments);
}

}  // namespace

TEST_CASE("mpirun -np 3 sweep --mpi writes the rows of -j 1, the failing point included, and resumes") {
  const fs::path threads = fresh_dir("j1");
  REQUIRE(run_clustersim("sweep " + kSweep + " -j 1 --out " + threads.string()).exit_code == 0);
  const std::string csv = read_text(threads / "sweep.csv");
  REQUIRE(csv.find(",failed,") != std::string::npos);  // tp 3 x dp 1 does not load

  const fs::path farm = fresh_dir("np3");
  const auto run = mpirun(3, "sweep " + kSweep + " --mpi --out " + farm.string());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("shard 1/1: ran 6 points on 2 worker ranks, 0 already finished") != std::string::npos);
  CHECK(read_text(farm / "sweep.csv") == csv);
  CHECK(read_text(farm / "sweep.json") == read_text(threads / "sweep.json"));
  CHECK_FALSE(fs::exists(farm / "farm-running.json"));

  // An interrupted farm: two points lost; the rerun farms out those two only.
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(farm / "points")) {
    if (removed < 2 && fs::remove(entry.path())) ++removed;
  }
  REQUIRE(removed == 2);
  const auto resumed = mpirun(3, "sweep " + kSweep + " --mpi --out " + farm.string());
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.output.find("ran 2 points on 2 worker ranks, 4 already finished") != std::string::npos);
  CHECK(read_text(farm / "sweep.csv") == csv);
}

TEST_CASE("mpirun -np 1 sweep --mpi: rank 0 runs the points itself") {
  const fs::path threads = fresh_dir("j1-shard");
  REQUIRE(run_clustersim("sweep " + kSweep + " -j 1 --shard 2/2 --out " + threads.string()).exit_code == 0);
  const fs::path farm = fresh_dir("np1");
  const auto run = mpirun(1, "sweep " + kSweep + " --mpi --shard 2/2 --out " + farm.string());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("shard 2/2: ran 3 points on rank 0 alone (mpirun -np 1), 0 already finished") !=
        std::string::npos);
  CHECK(read_text(farm / "sweep.csv") == read_text(threads / "sweep.csv"));
}

TEST_CASE("an error on rank 0 ends every rank: the folder holds another sweep") {
  const fs::path farm = fresh_dir("other");
  REQUIRE(run_clustersim("sweep " + kSweep + " --set workload.seq_len=128 --shard 1/6 --out " + farm.string())
              .exit_code == 0);
  const auto run = mpirun(3, "sweep " + kSweep + " --mpi --out " + farm.string());
  CHECK(run.exit_code != 0);
  CHECK(run.output.find("holds the points of another sweep") != std::string::npos);
}

}  // namespace mpi_sweep_test
