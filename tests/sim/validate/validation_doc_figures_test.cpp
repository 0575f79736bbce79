// The accuracy figures docs/validation.md quotes are those a fresh run gives: for each section
// below, the command the section names is run here and its MAPE, median and worst row are
// compared with the bold summary line the section quotes, within the quoted rounding. A model
// change that moves them fails this test until the doc says the new figures. (Performance
// figures depend on the machine and are not checked.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "models/accelerator/calibration_table.hpp"
#include "models/accelerator/compute_model.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/kernel_stacks.hpp"
#include "sim/validate/power_validation.hpp"
#include "sim/validate/training_validation.hpp"

namespace validation_doc_figures_test {

namespace {

const std::filesystem::path kSource = CLUSTERSIM_SOURCE_DIR;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The text of the section under `heading` (up to the next heading of the same or a higher level).
std::string section(const std::string& doc, const std::string& heading) {
  const std::size_t start = doc.find("\n" + heading + "\n");
  REQUIRE_MESSAGE(start != std::string::npos, "docs/validation.md has no section '", heading, "'");
  const std::size_t end = doc.find("\n### ", start + heading.size() + 2);
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// True when `fresh` rounds to `quoted` (a decimal figure as written, e.g. "5.53" or "8.1").
bool rounds_to(double fresh, const std::string& quoted) {
  const std::size_t dot = quoted.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(quoted.size() - dot - 1);
  return std::fabs(fresh - std::stod(quoted)) <= 0.5 * std::pow(10.0, -decimals) + 1e-9;
}

}  // namespace

TEST_CASE("rounds_to compares at the quoted precision") {
  CHECK(rounds_to(5.534, "5.53"));
  CHECK(!rounds_to(5.536, "5.53"));
  CHECK(rounds_to(8.14, "8.1"));
  CHECK(!rounds_to(8.16, "8.1"));
}

TEST_CASE("docs/validation.md quotes the SC21 Table 1 figures a fresh validate run gives") {
  const std::string text = section(read_text(kSource / "docs/validation.md"), "### Megatron SC21 Table 1 (A100, 32 to 3,072 GPUs)");
  const std::string dataset = "validation/data/megatron_sc21_table1.csv";
  CHECK(text.find("Command: `build/release/clustersim validate --dataset " + dataset + "`") != std::string::npos);
  static const std::regex summary(R"(\*\*MAPE ([0-9.]+) %, median ([0-9.]+) %, worst ([0-9.]+) % \(([a-z0-9_]+)\)\*\*)");
  std::smatch quoted;
  REQUIRE_MESSAGE(std::regex_search(text, quoted, summary), "no '**MAPE x %, median y %, worst z % (row)**' line");
  const auto report = clustersim::validate::validate_training_dataset(kSource / dataset, {});
  const auto& fresh = report.summary;
  INFO("fresh run: MAPE ", fresh.mape_pct, " %, median ", fresh.median_pct, " %, worst ", fresh.max_pct, " % (",
       fresh.worst_id, ")");
  CHECK(fresh.rows == 30);
  CHECK(rounds_to(fresh.mape_pct, quoted[1].str()));
  CHECK(rounds_to(fresh.median_pct, quoted[2].str()));
  CHECK(rounds_to(fresh.max_pct, quoted[3].str()));
  CHECK(fresh.worst_id == quoted[4].str());
}

TEST_CASE("docs/validation.md quotes the memory figures a fresh validate run gives") {
  const std::string text = section(read_text(kSource / "docs/validation.md"), "## Memory against published peak measurements");
  const std::string dataset = "validation/data/ground_truth_memory.csv";
  CHECK(text.find("build/release/clustersim validate --dataset " + dataset + "\n") != std::string::npos);
  static const std::regex summary(
      R"(Rows ([0-9]+), \*\*MAPE ([0-9.]+) %\*\*, median ([0-9.]+) %, worst ([0-9.]+) % \(`([a-z0-9_]+)`\); per source: )"
      R"(`defaults`\s+\(the [0-9]+ torchtitan rows\) MAPE ([0-9.]+) %, `colo2208` ([0-9.]+) %)");
  std::smatch quoted;
  REQUIRE_MESSAGE(std::regex_search(text, quoted, summary), "no 'Rows n, **MAPE x %**, median ...' line");
  const auto report = clustersim::validate::validate_training_dataset(kSource / dataset, {});
  const auto& fresh = report.summary;
  INFO("fresh run: ", fresh.rows, " rows, MAPE ", fresh.mape_pct, " %, median ", fresh.median_pct, " %, worst ",
       fresh.max_pct, " % (", fresh.worst_id, ")");
  CHECK(fresh.rows == std::stoi(quoted[1].str()));
  CHECK(rounds_to(fresh.mape_pct, quoted[2].str()));
  CHECK(rounds_to(fresh.median_pct, quoted[3].str()));
  CHECK(rounds_to(fresh.max_pct, quoted[4].str()));
  CHECK(fresh.worst_id == quoted[5].str());
  int sources = 0;
  for (const auto& source : report.per_source) {
    INFO("source ", source.conventions, ": MAPE ", source.mape_pct);
    if (source.conventions == "defaults") CHECK(rounds_to(source.mape_pct, quoted[6].str()));
    if (source.conventions == "colo2208") CHECK(rounds_to(source.mape_pct, quoted[7].str()));
    sources += source.conventions == "defaults" || source.conventions == "colo2208" ? 1 : 0;
  }
  CHECK(sources == 2);
}

TEST_CASE("docs/validation.md quotes the power figures a fresh validate run gives") {
  const std::string text =
      section(read_text(kSource / "docs/validation.md"), "## Power against measured systems (issue 28 part 4, 2026-12-06)");
  const std::string dataset = "validation/data/ground_truth_power.csv";
  CHECK(text.find("build/release/clustersim validate --dataset " + dataset) != std::string::npos);
  static const std::regex summary(
      R"(\*\*([0-9]+) rows on ([0-9]+) accelerator kinds, median error ([0-9.]+) %, worst ([0-9.]+) %\*\*)");
  std::smatch quoted;
  REQUIRE_MESSAGE(std::regex_search(text, quoted, summary), "no '**N rows on K accelerator kinds, median ...**' line");
  const auto report = clustersim::validate::validate_power_dataset(kSource / dataset);
  CHECK(report.summary.rows == std::stoi(quoted[1]));
  CHECK(report.per_accelerator.size() == std::stoul(quoted[2]));
  CHECK(rounds_to(report.summary.median_pct, quoted[3]));
  CHECK(rounds_to(report.summary.max_pct, quoted[4]));
}

TEST_CASE("docs/validation.md's kernel stack table is what the stacks' rows cost with and without them") {
  namespace scenario = clustersim::scenario;
  const std::string text = section(read_text(kSource / "docs/validation.md"), "### Kernel stacks (issue 28 part 1, 2026-12-06)");
  static const std::regex row(
      R"(\| `([a-z0-9.-]+)` \| ([a-z0-9-]+) \([^)]*\) \| ([0-9]+) \| ([0-9.]+) % \(([0-9.]+) %\) \| ([0-9.]+) % \(([0-9.]+) %\) \|)");
  int rows = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it, ++rows) {
    const std::smatch& quoted = *it;
    const std::string stack_name = quoted[1], accelerator = quoted[2];
    CAPTURE(stack_name);
    CAPTURE(accelerator);
    std::vector<clustersim::config::Diagnostic> diagnostics;
    clustersim::config::Problems problems(diagnostics);
    const scenario::KernelStack stack =
        scenario::read_kernel_stack(stack_name, clustersim::config::library_data_dir(), problems);
    REQUIRE(diagnostics.empty());
    const scenario::StackEntry* entry = stack.find(accelerator);
    REQUIRE(entry != nullptr);
    const scenario::StackedAccelerator chip =
        scenario::stacked_accelerator(stack_name, accelerator, clustersim::config::library_data_dir());
    const clustersim::models::ComputeModel with_stack(chip.stacked), with_preset(chip.preset);
    std::vector<double> stack_errors, preset_errors;
    for (const scenario::StackMeasurement& m : entry->measured) {
      const clustersim::models::GemmShape shape{.m = m.m, .n = m.n, .k = m.k, .dtype = m.dtype};
      const double measured = 2.0 * double(m.m) * double(m.n) * double(m.k) / m.flops_per_s;
      stack_errors.push_back(100 * std::fabs(with_stack.gemm(shape).time_s / measured - 1));
      preset_errors.push_back(100 * std::fabs(with_preset.gemm(shape).time_s / measured - 1));
    }
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      const std::size_t n = v.size();
      return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    const auto worst = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
    CHECK(std::to_string(entry->measured.size()) == quoted[3].str());
    CHECK(rounds_to(median(stack_errors), quoted[4]));
    CHECK(rounds_to(worst(stack_errors), quoted[5]));
    CHECK(rounds_to(median(preset_errors), quoted[6]));
    CHECK(rounds_to(worst(preset_errors), quoted[7]));
  }
  CHECK(rows == static_cast<int>(scenario::kernel_stack_names(clustersim::config::library_data_dir()).size()) + 2);
}

TEST_CASE("docs/validation.md's B200 HBM row is what the preset gives the cccl elementwise rows") {
  namespace scenario = clustersim::scenario;
  namespace models = clustersim::models;
  const std::string text =
      section(read_text(kSource / "docs/validation.md"), "### Blackwell and AMD out of sample (issue 28 part 2, 2026-12-06)");
  static const std::regex row(R"(\| b200 HBM \(elementwise\) \| ([0-9]+) \| ([0-9.]+) % \(([0-9.]+) %\) \|)");
  std::smatch quoted;
  REQUIRE(std::regex_search(text, quoted, row));
  // The preset as a scenario reads it (any stack covering the part gives it unstacked).
  const models::AcceleratorSpec b200 =
      scenario::stacked_accelerator("cublaslt-13.0", "b200", clustersim::config::library_data_dir()).preset;
  const models::ComputeModel model(b200);
  const models::CalibrationTable table =
      models::read_calibration_path(kSource / "validation/data/kernels-nonhopper/bandwidth", "b200");
  std::vector<double> errors;
  for (const models::CalibrationRow& r : table.rows) {
    REQUIRE(r.shape.op == models::OpClass::elementwise);
    errors.push_back(100 * std::fabs(model.roofline(r.shape).time_s / r.time_s - 1));
    // 1.07 GB moved: the HBM fraction borrowed from H200 holds on B200 to 0.1 %.
    if (r.shape.bytes > 1e9) CHECK(errors.back() < 0.15);
  }
  std::sort(errors.begin(), errors.end());
  REQUIRE(errors.size() == 4);
  CHECK(quoted[1].str() == "4");
  CHECK(rounds_to(0.5 * (errors[1] + errors[2]), quoted[2]));
  CHECK(rounds_to(errors.back(), quoted[3]));
}

}  // namespace validation_doc_figures_test
