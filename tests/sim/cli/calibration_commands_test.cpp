// `clustersim calibrate` and `clustersim validate kernels` on small folders of CSV files.
// The commands live in the clustersim executable, so they are run as a process.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "run_clustersim.hpp"
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/accelerator/calibration_table.hpp"

namespace calibration_commands_test {

using ::clustersim::tolerance::relative_approx;

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
  CHECK(table.rows[0].time_s == relative_approx(3e-4));
  CHECK(table.rows[0].repeats == 30);
  CHECK(table.rows[0].source == "run a | run b");
  CHECK(table.metadata.at(0).second == "NVIDIA H200");
}

TEST_CASE("calibrate: several files, a trace beside them, and nothing to read") {
  const auto dir = fresh_dir("paths");
  write(dir / "a.csv", kHeader + "h100-sxm,gemm,bf16,4096,4096,4096,,,,,,,,,,2e-4,1e-6,10,run a\n");
  write(dir / "b.csv", kHeader + "h100-sxm,gemm,bf16,2048,2048,2048,,,,,,,,,,4e-5,1e-7,10,run b\n");
  const std::string trace = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/importers/kineto-gpt-layer-h100.json";
  const std::string out_file = (dir / "merged.csv").string();
  const Ran ran = run_cli("calibrate " + (dir / "a.csv").string() + " " + (dir / "b.csv").string() + " --from-trace " +
                          trace + " --out " + out_file);
  CHECK(ran.exit_code == 0);
  // The two files' rows and the trace's seven; what the trace left out is said on stderr.
  CHECK(ran.output.find("wrote 9 calibration rows for h100-sxm to " + out_file) != std::string::npos);
  CHECK(ran.output.find("calibrate: " + trace + ": 29 kernels, 19 operator instances read") != std::string::npos);
  const auto table = models::read_calibration_csv(out_file);
  REQUIRE(table.rows.size() == 9);
  CHECK(table.rows[2].source.rfind("measured (trace " + trace + ")", 0) == 0);
  const Ran none = run_cli("calibrate");
  CHECK(none.exit_code != 0);
  CHECK(none.output.find("give calibration CSV files or folders, --from-trace FILE..., --from-nsys FILE..., or several") != std::string::npos);
  const Ran other = run_cli("calibrate --from-trace " + trace + " --accelerator no-such-gpu");
  CHECK(other.exit_code != 0);
  CHECK(other.output.find("unknown accelerator 'no-such-gpu'") != std::string::npos);
  // An Nsight Systems NVTX projection: the accelerator and the tensors' type are given.
  const std::string nsys =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/importers/nsys-nvtx-gpu-proj-gpt-layer-h100.csv";
  const Ran from_nsys = run_cli("calibrate --from-nsys " + nsys + " --accelerator h100-sxm --dtype bf16");
  CHECK(from_nsys.exit_code == 0);
  CHECK(from_nsys.output.find("12 operator ranges read") != std::string::npos);
  CHECK(from_nsys.output.find("h100-sxm,gemm,bf16,8192,12288,4096,") != std::string::npos);
  const Ran dtype_alone = run_cli("calibrate " + (dir / "a.csv").string() + " --dtype bf16");
  CHECK(dtype_alone.exit_code != 0);
  CHECK(dtype_alone.output.find("--dtype has no effect without --from-nsys") != std::string::npos);
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
        "error: calibration file or folder '" + missing + "' does not exist\n");
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

namespace {

/// The lines of `output` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& output, const std::string& prefix) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = std::min(output.find('\n', start), output.size());
    const std::string line = output.substr(start, end - start);
    if (line.rfind(prefix, 0) == 0) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

/// The last "N.N%" of a table line (the roofline error of a comparison line), as a fraction.
double last_percent(const std::string& line) {
  const std::size_t end = line.rfind('%');
  REQUIRE(end != std::string::npos);
  const std::size_t begin = line.find_last_of(' ', end) + 1;
  return std::stod(line.substr(begin, end - begin)) / 100.0;
}

}  // namespace

TEST_CASE("validate kernels: the non-Hopper ground truth is compared, held out by accelerator") {
  const std::string library = std::string(CLUSTERSIM_SOURCE_DIR) + "/models/data/calibration";
  const Ran held_out = run_cli("validate kernels " + library + " --holdout-fraction 0.3 --seed 1");
  REQUIRE(held_out.exit_code == 0);
  CHECK(held_out.output.find("held-out validation: 65 rows fitted, 20 held out") != std::string::npos);
  // GB200's cuBLASLt fp8 sweep is split like the H100/A100 rows: three of its nine rows are
  // predicted from a model calibrated on the other GB200 rows.
  const auto gb200_gemm = lines_starting(held_out.output, "gb200          gemm fp8");
  CHECK(gb200_gemm.size() == 3);
  for (const auto& line : gb200_gemm) CHECK(last_percent(line) < 0.2);
  // Every accelerator with a measured attention row is predicted from its own rates: GB200's
  // FlashAttention-2 row (the Blackwell warp-MMA path) within 2 %.
  const auto gb200_attention = lines_starting(held_out.output, "gb200          attention bf16 fwd b2 h16/16");
  REQUIRE(gb200_attention.size() == 1);
  CHECK(gb200_attention[0].find(" fa2 ") != std::string::npos);

  // In sample, the roofline column is the uncalibrated model: the Blackwell and Gaudi 3 MAMF
  // best shapes, whose epilogue overlaps the main loop (tcgen05, mme), within 15 %.
  const Ran in_sample = run_cli("validate kernels " + library);
  REQUIRE(in_sample.exit_code == 0);
  const auto b200 = lines_starting(in_sample.output, "b200           gemm");
  const auto gaudi3 = lines_starting(in_sample.output, "gaudi3         gemm");
  REQUIRE(b200.size() == 2);
  REQUIRE(gaudi3.size() == 2);
  for (const auto& line : b200) CHECK(last_percent(line) < 0.15);
  for (const auto& line : gaudi3) CHECK(last_percent(line) < 0.15);
}

TEST_CASE("validate kernels: FlashAttention-4's B200 point checks the fa4 family out of sample") {
  const std::string folder = std::string(CLUSTERSIM_SOURCE_DIR) + "/validation/data/attention-fa4";
  const Ran fa4 = run_cli("validate kernels " + folder + " --attention-kernel fa4");
  REQUIRE(fa4.exit_code == 0);
  const auto rows = lines_starting(fa4.output, "b200           attention bf16 fwd b1 h16/16 s16384/16384 d128  fa4");
  REQUIRE(rows.size() == 1);
  // The model alone (no constant read from this row): 7.1 % fast.
  CHECK(rows[0].find("7.1%") != std::string::npos);
  // fa3 is a Hopper kernel: the row is skipped with the reason.
  const Ran fa3 = run_cli("validate kernels " + folder + " --attention-kernel fa3");
  CHECK(fa3.output.find("attention kernel family fa3 does not run on accelerator 'b200' (matrix path tcgen05); "
                        "families that run there: fa2, cudnn, fa4") != std::string::npos);
}

TEST_CASE("validate kernels --clock sustained: compute-bound rows at the clock the power limit settles at") {
  const auto dir = fresh_dir("sustained");
  write(dir / "b200.csv", kHeader +
                              "b200,gemm,fp8,8192,8192,8192,,,,,,,,,,435.15e-6,0,0,sustained cuBLASLt\n"
                              "b200,hbm_copy,,,,,,,,,,,,,1e9,160e-6,0,0,stream\n");
  const Ran burst = run_cli("validate kernels " + dir.string());
  const Ran sustained = run_cli("validate kernels " + dir.string() + " --clock sustained");
  REQUIRE(burst.exit_code == 0);
  REQUIRE(sustained.exit_code == 0);
  CHECK(sustained.output.find("(--clock sustained)") != std::string::npos);
  // By hand, B200 (TDP 1000 W, idle 137 W, range 863 W): compute level 137 + 863 / 0.85 =
  // 1152.3 W, memory level 137 + 0.89 x 863 = 905.1 W. The GEMM's 1.0995e12 FLOPs at the best
  // fp8 rate (0.763 x 4500 TFLOP/s) take 320.2 us of its 331.20 us roofline: matrix share 0.9669,
  // draw 905.1 + 0.9669 x 247.2 = 1144.1 W, throttle 863 / (1144.1 - 137) = 0.8569, so the
  // sustained time is 4 us + 327.20 us / 0.8569 = 385.8 us.
  const auto gemm_burst = lines_starting(burst.output, "b200           gemm fp8 8192x8192x8192");
  const auto gemm_sustained = lines_starting(sustained.output, "b200           gemm fp8 8192x8192x8192");
  REQUIRE(gemm_burst.size() == 1);
  REQUIRE(gemm_sustained.size() == 1);
  CHECK(gemm_burst[0].find("331.20 us") != std::string::npos);
  CHECK(gemm_sustained[0].find("385.8") != std::string::npos);
  // A bandwidth-bound copy draws the memory level, under the limit: the same time at both clocks.
  const auto copy_burst = lines_starting(burst.output, "b200           hbm_copy");
  const auto copy_sustained = lines_starting(sustained.output, "b200           hbm_copy");
  REQUIRE(copy_burst.size() == 1);
  REQUIRE(copy_sustained.size() == 1);
  CHECK(copy_burst[0] == copy_sustained[0]);
  // An unknown clock is refused by the option's check.
  CHECK(run_cli("validate kernels " + dir.string() + " --clock turbo").exit_code != 0);
}

}  // namespace calibration_commands_test
