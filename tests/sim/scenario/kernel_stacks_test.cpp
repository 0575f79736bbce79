// Issue 28 part 1: kernel efficiency per software stack and release (simulation.kernel_stack,
// models/data/stacks). Every library stack reads; each of its measurements, costed through the
// compute model with the stack applied, is what the stack says it measured; an unknown stack,
// an accelerator the stack does not cover and a setting the scenario writes itself are said, at
// their positions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "tests/relative_approx.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/kernel_stacks.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace kernel_stacks_test {

using namespace clustersim;
using namespace clustersim::scenario;
using clustersim::tolerance::relative_approx;

namespace {

/// The guide's 70B comparison scenario of a library accelerator (examples/guide/compare-70b-*.yaml).
std::string guide_scenario(const std::string& accelerator) {
  const std::string part = accelerator.substr(0, accelerator.find('-'));
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/guide/compare-70b-" + part + ".yaml";
}

double relative_error(const models::ComputeModel& model, const StackMeasurement& m) {
  const double measured = 2.0 * double(m.m) * double(m.n) * double(m.k) / m.flops_per_s;
  const double modelled = model.gemm({.m = m.m, .n = m.n, .k = m.k, .dtype = m.dtype}).time_s;
  return std::abs(modelled - measured) / measured;
}

bool has_warning(const Scenario& s, const std::string& part) {
  return std::any_of(s.warnings.begin(), s.warnings.end(),
                     [&](const config::Diagnostic& d) { return d.render().find(part) != std::string::npos; });
}

bool has_notice(const Scenario& s, const std::string& part) {
  return std::any_of(s.notices.begin(), s.notices.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("each library stack's measurements cost what the stack says, closer than the preset") {
  const std::vector<std::string> names = kernel_stack_names(config::library_data_dir());
  REQUIRE(names.size() >= 4);
  for (const std::string& name : names) {
    CAPTURE(name);
    std::vector<config::Diagnostic> diagnostics;
    config::Problems problems(diagnostics);
    const KernelStack stack = read_kernel_stack(name, config::library_data_dir(), problems);
    REQUIRE(diagnostics.empty());
    REQUIRE_FALSE(stack.entries.empty());
    for (const StackEntry& entry : stack.entries) {
      CAPTURE(entry.accelerator);
      REQUIRE_FALSE(entry.measured.empty());
      const Scenario preset = load_scenario(guide_scenario(entry.accelerator));
      const Scenario stacked = load_scenario(guide_scenario(entry.accelerator), {"simulation.kernel_stack=" + name});
      REQUIRE(stacked.platform.cluster.accelerator.name == entry.accelerator);
      CHECK(stacked.platform.kernel_stack == name);
      CHECK(has_notice(stacked, "kernel stack " + name));
      const models::ComputeModel with_stack(stacked.platform.cluster.accelerator);
      const models::ComputeModel with_preset(preset.platform.cluster.accelerator);
      std::vector<double> errors;
      double stack_error = 0, preset_error = 0;
      for (const StackMeasurement& m : entry.measured) {
        CAPTURE(m.row);
        const double error = relative_error(with_stack, m);
        // One efficiency per format, solved to the median row: the others differ by what the
        // model's shape terms (waves, tiles, launch) miss, up to 14 % (GB200 4096^3).
        CHECK(error < 0.15);
        errors.push_back(error);
        stack_error += error;
        preset_error += relative_error(with_preset, m);
      }
      std::sort(errors.begin(), errors.end());
      CHECK(errors[errors.size() / 2] < 0.06);
      CHECK(stack_error < preset_error);  // the stack is what these kernels ran, not the preset
    }
  }
}

TEST_CASE("the cublaslt-13.0 stack solves b200's GEMM efficiencies from its rows and leaves the rest of the preset") {
  const Scenario preset = load_scenario(guide_scenario("b200"));
  const Scenario s = load_scenario(guide_scenario("b200"), {"simulation.kernel_stack=cublaslt-13.0"});
  const models::AcceleratorSpec& chip = s.platform.cluster.accelerator;
  // fp8: the median of three rows' solutions; bf16 and fp16 from the fp16 row (`also: [bf16]`).
  CHECK(s.resolved.at("accelerators.b200.efficiency.matmul_fp8") == "0.6611");
  CHECK(s.resolved.at("accelerators.b200.efficiency.matmul_bf16") == "0.7024");
  CHECK(s.resolved.at("accelerators.b200.efficiency.matmul_fp16") == "0.7024");
  CHECK(s.resolved.at("accelerators.b200.efficiency.matmul") == "0.78");  // formats the stack did not measure
  CHECK(chip.matmul_efficiency_for(models::Dtype::bf16) == doctest::Approx(0.7024).epsilon(1e-12));
  CHECK(chip.memory_efficiency == preset.platform.cluster.accelerator.memory_efficiency);
  CHECK(chip.kernel_launch_s == preset.platform.cluster.accelerator.kernel_launch_s);
  CHECK(s.resolved.at("simulation.kernel_stack") == "cublaslt-13.0");
  CHECK(has_notice(s, "on b200: efficiency.matmul_bf16 (unset) -> 0.7024, efficiency.matmul_fp16 (unset) -> 0.7024, "
                      "efficiency.matmul_fp8 0.763 -> 0.6611; everything else from the b200 preset"));
  // The fp16 row, 8192 x 8192 x 1024 at 1389.34 TFLOP/s (98.9 us), is the only fp16 row: costed as measured.
  const double measured = 2.0 * 8192 * 8192 * 1024 / 1389.34e12;
  const models::ComputeModel model(chip);
  CHECK(model.gemm({.m = 8192, .n = 8192, .k = 1024, .dtype = models::Dtype::fp16}).time_s ==
        relative_approx(measured, 1e-3));
  // bf16 runs at the fp16 row's efficiency, where the preset's MAMF burst said 0.78.
  CHECK(model.gemm({.m = 8192, .n = 8192, .k = 1024, .dtype = models::Dtype::bf16}).time_s ==
        relative_approx(measured, 1e-3));
}

TEST_CASE("solving an efficiency: the model costs the row as measured; a row faster than the roofline is an error") {
  const Scenario s = load_scenario(guide_scenario("h200"));
  const models::AcceleratorSpec chip = s.platform.cluster.accelerator;
  StackMeasurement row{.dtype = models::Dtype::bf16, .m = 8192, .n = 8192, .k = 8192, .flops_per_s = 654.3e12,
                       .also = {}, .row = "r", .position = {}};
  const double efficiency = solve_matmul_efficiency(chip, row);
  models::AcceleratorSpec solved = chip;
  solved.matmul_efficiency_by_dtype[models::Dtype::bf16] = efficiency;
  CHECK(models::ComputeModel(solved).gemm({.m = 8192, .n = 8192, .k = 8192}).time_s ==
        relative_approx(2.0 * 8192 * 8192 * 8192 / 654.3e12, 1e-9));
  CHECK(efficiency > 654.3 / 989.0);  // launch and tile terms take part of the measured time
  row.flops_per_s = 1000e12;          // above the 989 TFLOP/s peak
  CHECK_THROWS_WITH_AS(solve_matmul_efficiency(chip, row),
                       doctest::Contains("r (1000 TFLOP/s, 1100 us) is faster than the compute model of h200-sxm allows at "
                                         "efficiency 1"),
                       ConfigError);
}

TEST_CASE("the default is the presets, and naming it changes nothing") {
  const Scenario plain = load_scenario(guide_scenario("b200"));
  const Scenario named = load_scenario(guide_scenario("b200"), {"simulation.kernel_stack=preset"});
  CHECK(plain.platform.kernel_stack == "preset");
  CHECK(plain.resolved.at("simulation.kernel_stack") == "preset");
  CHECK(named.platform.cluster.accelerator.matmul_efficiency == plain.platform.cluster.accelerator.matmul_efficiency);
  CHECK_FALSE(has_notice(plain, "kernel stack"));
}

TEST_CASE("an unknown stack is an error at the key with the choices") {
  try {
    load_scenario(guide_scenario("b200"), {"simulation.kernel_stack=cublaslt-13"});
    FAIL("expected ScenarioError");
  } catch (const config::ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    const config::Diagnostic& d = e.diagnostics().front();
    CHECK(d.key_path == "simulation.kernel_stack");
    CHECK(d.message == "unknown kernel stack 'cublaslt-13'");
    CHECK(d.hint.find("cublaslt-13.0") != std::string::npos);
    CHECK(d.hint.find("preset") != std::string::npos);
  }
}

TEST_CASE("an accelerator the stack does not cover keeps its preset, with a warning naming what the stack covers") {
  const Scenario preset = load_scenario(guide_scenario("h100"));
  const Scenario s = load_scenario(guide_scenario("h100"), {"simulation.kernel_stack=hipblaslt-rocm-6.3"});
  CHECK(s.platform.cluster.accelerator.matmul_efficiency == preset.platform.cluster.accelerator.matmul_efficiency);
  CHECK(has_warning(s, "kernel stack hipblaslt-rocm-6.3 has no measurements of accelerator 'h100-sxm' (it covers: "
                       "mi300x, mi325x): h100-sxm keeps its preset's efficiencies"));
}

TEST_CASE("a setting the scenario writes wins over the stack, with a warning at it") {
  const std::string yaml = "include: [" + guide_scenario("mi300x") +
                           "]\n"
                           "accelerators:\n"
                           "  mi300x:\n"
                           "    efficiency: {matmul_bf16: 0.5}\n"
                           "simulation:\n"
                           "  kernel_stack: hipblaslt-rocm-6.3\n";
  const Scenario s = load_scenario_from_string(yaml, "own.yaml");
  const models::AcceleratorSpec& chip = s.platform.cluster.accelerator;
  CHECK(chip.matmul_efficiency_for(models::Dtype::bf16) == doctest::Approx(0.5).epsilon(1e-12));     // the scenario's
  CHECK(chip.matmul_efficiency_for(models::Dtype::fp8) == doctest::Approx(0.5329).epsilon(1e-12));  // the stack's
  const auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](const config::Diagnostic& d) {
    return d.key_path == "accelerators.mi300x.efficiency.matmul_bf16";
  });
  REQUIRE(it != s.warnings.end());
  CHECK(it->file == "own.yaml");
  CHECK(it->line == 4);
  CHECK(it->message.find("the scenario's own value 0.5 wins over kernel stack hipblaslt-rocm-6.3's 0.5497") == 0);
}

TEST_CASE("a generic efficiency the scenario writes is said not to apply to the formats the stack measured") {
  const std::string yaml = "include: [" + guide_scenario("mi300x") +
                           "]\n"
                           "accelerators:\n"
                           "  mi300x:\n"
                           "    efficiency: {matmul: 0.5}\n"
                           "simulation:\n"
                           "  kernel_stack: hipblaslt-rocm-6.3\n";
  const Scenario s = load_scenario_from_string(yaml, "own.yaml");
  CHECK(s.platform.cluster.accelerator.matmul_efficiency_for(models::Dtype::bf16) == doctest::Approx(0.5497).epsilon(1e-12));
  const auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](const config::Diagnostic& d) {
    return d.key_path == "accelerators.mi300x.efficiency.matmul" && d.message.find("bf16 GEMMs") != std::string::npos;
  });
  REQUIRE(it != s.warnings.end());
  CHECK(it->line == 4);
  CHECK(it->message.find("does not apply to bf16 GEMMs: kernel stack hipblaslt-rocm-6.3 sets efficiency.matmul_bf16 0.5497") == 0);
  CHECK(it->hint == "write efficiency.matmul_bf16 to override the stack");
}

TEST_CASE("power.apply_throttling with a clock-settled stack is said to count the power limit twice") {
  const Scenario s = load_scenario(guide_scenario("h200"), {"simulation.kernel_stack=cublaslt-13.0", "power.apply_throttling=true"});
  CHECK(has_warning(s, "power.apply_throttling: kernel stack cublaslt-13.0 was measured with the clock settled at the "
                       "power limit"));
  const Scenario alone = load_scenario(guide_scenario("h200"), {"power.apply_throttling=true"});
  CHECK_FALSE(has_warning(alone, "counts the limit twice"));
}

TEST_CASE("a malformed stack file: every problem at its line in the file, with the key") {
  const std::filesystem::path data = std::filesystem::temp_directory_path() / "clustersim_bad_stack";
  std::filesystem::remove_all(data);
  std::filesystem::create_directories(data / "stacks");
  std::filesystem::create_directory_symlink(config::library_data_dir() / "accelerators", data / "accelerators");
  std::ofstream(data / "stacks" / "bad.yaml") << "stacks:\n"                                   // 1
                                                 "  bad:\n"                                     // 2
                                                 "    display_name: x\n"                        // 3
                                                 "    vendor: nvidia\n"                         // 4
                                                 "    release: r\n"                             // 5
                                                 "    timing: t\n"                              // 6
                                                 "    clock_settled: maybe\n"                   // 7
                                                 "    accelerators:\n"                          // 8
                                                 "      b200:\n"                                // 9
                                                 "        source: s\n"                          // 10
                                                 "        peak: {bf16: 1}\n"                    // 11
                                                 "        measured:\n"                          // 12
                                                 "          - {op: attention, dtype: bf16, m: 1, n: 1, k: 0, tflops: 1, row: r}\n"  // 13
                                                 "      nosuch: {source: s}\n";                 // 14
  std::vector<config::Diagnostic> diagnostics;
  config::Problems problems(diagnostics);
  (void)read_kernel_stack("bad", data, problems);
  const auto at = [&](int line, const std::string& key, const std::string& message) {
    return std::any_of(diagnostics.begin(), diagnostics.end(), [&](const config::Diagnostic& d) {
      return d.line == line && d.key_path == key && d.message == message;
    });
  };
  CHECK(at(7, "stacks.bad.clock_settled", "expected true or false, got 'maybe'"));
  CHECK(at(11, "stacks.bad.accelerators.b200.peak", "unknown key 'peak' in a kernel stack"));
  CHECK(at(13, "stacks.bad.accelerators.b200.measured.op", "only gemm measurements are read, got 'attention'"));
  CHECK(at(13, "stacks.bad.accelerators.b200.measured.k", "expected a positive integer, got '0'"));
  CHECK(at(14, "stacks.bad.accelerators.nosuch", "unknown accelerator 'nosuch'"));
  CHECK(diagnostics.size() == 5);
  std::filesystem::remove_all(data);
}

}  // namespace kernel_stacks_test
