// `clustersim calibrate` and `clustersim validate kernels` on small folders of CSV files.
// The commands live in the clustersim executable, so they are run as a process.
#include <doctest/doctest.h>

#include "run_clustersim.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/accelerator/calibration_table.hpp"

using namespace clustersim;

namespace {

using Ran = clustersim::cli_testing::CommandResult;

Ran run_cli(const std::string& arguments) { return clustersim::cli_testing::run_clustersim(arguments); }

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("clustersim_calib_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

const std::string kHeader = std::string(models::kCalibrationHeader) + "\n";

}  // namespace

TEST_CASE("calibrate: merges a folder, keeps medians, writes the table") {
  const auto dir = fresh_dir("merge");
  write(dir / "a.csv", "# gpu: NVIDIA H200\n" + kHeader +
                           "h200-sxm,gemm,bf16,4096,4096,4096,,,,,,,,,,2e-4,1e-6,10,run a\n");
  write(dir / "b.csv", kHeader + "h200-sxm,gemm,bf16,4096,4096,4096,,,,,,,,,,4e-4,1e-6,10,run b\n"
                                 "h200-sxm,gemm,bf16,4096,4096,4096,,,,,,,,,,3e-4,1e-6,10,run b\n");
  write(dir / "notes.txt", "not a csv");
  const std::string out_file = (dir / "out").string() + ".table";
  const Ran ran = run_cli("calibrate " + dir.string() + " --out " + out_file);
  CHECK(ran.exit_code == 0);
  CHECK(ran.output == "wrote 1 calibration rows for h200-sxm to " + out_file + "\n");
  const auto table = models::read_calibration_csv(out_file);
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0].time_s == doctest::Approx(3e-4));
  CHECK(table.rows[0].repeats == 30);
  CHECK(table.rows[0].source == "run a | run b");
  CHECK(table.metadata.at(0).second == "NVIDIA H200");
}

TEST_CASE("calibrate: errors of every file with file:line; unknown accelerators") {
  const auto dir = fresh_dir("errors");
  write(dir / "a.csv", kHeader + "h200-sxm,gemm,bf16,0,8,8,,,,,,,,,,1e-6,0,1,s\n");
  write(dir / "b.csv", kHeader + "h200-sxm,gemm,bf16,8,8,8,,,,,,,,,,-1,0,1,s\n");
  const std::string a = (dir / "a.csv").string(), b = (dir / "b.csv").string();
  const Ran bad = run_cli("calibrate " + dir.string());
  CHECK(bad.exit_code == 1);
  CHECK(bad.output == "error: " + a + ":2: column m must be positive, got 0\n" + b +
                          ":2: column time_s must be positive, got '-1'\n");
  const auto unknown = fresh_dir("unknown");
  write(unknown / "a.csv", kHeader + "h900,gemm,bf16,8,8,8,,,,,,,,,,1e-6,0,1,s\n");
  const Ran no_such = run_cli("calibrate " + unknown.string());
  CHECK(no_such.exit_code == 1);
  CHECK(no_such.output.find("error: unknown accelerator 'h900'; library accelerators: ") == 0);
  const std::string missing = (unknown / "missing").string();
  CHECK(run_cli("calibrate " + missing).output ==
        "error: calibration folder '" + missing + "' does not exist\n");
  // validate still needs --dataset when no subcommand is given
  const Ran usage = run_cli("validate");
  CHECK(usage.exit_code == 2);
  CHECK(usage.output == "validate: --dataset FILE is required (or use the 'kernels DIR' subcommand)\n");
}

TEST_CASE("validate kernels: per-shape errors, medians, best vs roofline") {
  const auto dir = fresh_dir("validate");
  // bf16 GEMMs on the library H200 at a constant 600 TFLOP/s.
  std::string csv = kHeader;
  for (int m = 2048; m <= 65536; m *= 2) {
    const double time_s = 2.0 * m * 8192 * 8192 / 600e12;
    char row[256];
    std::snprintf(row, sizeof row, "h200-sxm,gemm,bf16,%d,8192,8192,,,,,,,,,,%.17g,0,5,synthetic\n", m, time_s);
    csv += row;
  }
  write(dir / "h200.csv", csv);
  const std::string arguments = "validate kernels " + dir.string() + " --holdout-fraction 0.3 --seed 3";
  const Ran first = run_cli(arguments);
  const Ran second = run_cli(arguments);
  CHECK(first.exit_code == 0);
  CHECK(first.output == second.output);  // deterministic split and output
  CHECK(first.output.find("held-out validation: 4 rows fitted, 2 held out (fraction 0.30, seed 3)") == 0);
  CHECK(first.output.find("h200-sxm       gemm bf16 ") != std::string::npos);
  // every point runs at 600 TFLOP/s: the fit (a scale of the roofline, which is nearly but not
  // exactly proportional over these shapes: wave quantization differs) predicts the held-out
  // ones within 1 %, the roofline (0.80 x 989 = 791 TFLOP/s main loop) is ~21 % fast
  const auto at = first.output.find("median error gemm       n=2   best ");
  REQUIRE(at != std::string::npos);
  double best = -1, fitted = -1, roofline = -1;
  REQUIRE(std::sscanf(first.output.c_str() + at,
                      "median error gemm n=2 best %lf%% fitted %lf%% (n=2) roofline %lf%%", &best,
                      &fitted, &roofline) == 3);
  CHECK(best < 1.0);
  CHECK(fitted < 1.0);
  CHECK(roofline > 15.0);
}
