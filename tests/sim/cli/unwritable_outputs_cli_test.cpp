// Every output path is checked before anything is simulated: `run --out`, `output.dir`,
// `--trace`, `sweep --out` and `sweep-merge --out` under a regular FILE (which no one can make
// a folder in, root included) end in one error line naming the option and the path, with no
// result printed before it.
#include <doctest/doctest.h>
#include <unistd.h>

#include "run_clustersim.hpp"

#include <filesystem>
#include <fstream>
#include <string>

namespace unwritable_outputs_cli_test {

namespace {

namespace fs = std::filesystem;
using clustersim::cli_testing::run_clustersim;

const std::string kScenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/default.yaml";
const std::string kSweep = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/sweep/tiny_sweep.yaml";

/// A folder of this process's own holding a regular file `a-file`.
struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("clustersim-unwritable-" + std::to_string(getpid()));
  fs::path file = dir / "a-file";
  Fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(file) << "not a folder\n";
  }
  ~Fixture() {
    std::error_code error;
    fs::remove_all(dir, error);
  }
};

/// Exit code 1 and exactly `expected` + newline: the error alone, no result before it.
void check_only_error(const std::string& arguments, const std::string& expected) {
  const auto result = run_clustersim(arguments);
  CHECK(result.exit_code == 1);
  CHECK(result.output == expected + "\n");
}

}  // namespace

TEST_CASE("an unwritable --out, output.dir or --trace is an error before the run") {
  const Fixture fixture;
  const std::string under_file = (fixture.file / "sub").string();
  check_only_error("run " + kScenario + " --out " + under_file,
                   "error: --out " + under_file + ": cannot create the folder " + under_file + " (Not a directory)");
  check_only_error("run " + kScenario + " --set output.dir=" + under_file,
                   "error: output.dir " + under_file + ": cannot create the folder " + under_file + " (Not a directory)");
  const std::string trace = (fixture.file / "t.json").string();
  check_only_error("run " + kScenario + " --trace " + trace,
                   "error: --trace " + trace + ": cannot write the file: cannot create the folder " +
                       fixture.file.string() + " (Not a directory)");
  check_only_error("run " + kScenario + " --trace " + fixture.dir.string(),
                   "error: --trace " + fixture.dir.string() + ": cannot write the file: it is a folder");
}

TEST_CASE("an unwritable sweep or sweep-merge --out is an error before any point runs") {
  const Fixture fixture;
  const std::string under_file = (fixture.file / "sub").string();
  check_only_error("sweep " + kSweep + " --out " + under_file,
                   "error: the sweep's output folder " + under_file + ": cannot create the folder " + under_file +
                       " (Not a directory)");
  // A finished shard to merge, then a merge into a path under the file.
  const std::string shard = (fixture.dir / "shard").string();
  REQUIRE(run_clustersim("sweep " + kSweep + " --out " + shard).exit_code == 0);
  check_only_error("sweep-merge " + shard + " --out " + under_file,
                   "error: the merged output folder " + under_file + "/points: cannot create the folder " + under_file +
                       "/points (Not a directory)");
}

}  // namespace unwritable_outputs_cli_test
