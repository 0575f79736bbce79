// The accuracy figures docs/validation.md quotes are those a fresh run gives: for each section
// below, the command the section names is run here and its MAPE, median and worst row are
// compared with the bold summary line the section quotes, within the quoted rounding. A model
// change that moves them fails this test until the doc says the new figures. (Performance
// figures depend on the machine and are not checked.)
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "sim/validate/power_validation.hpp"
#include "sim/validate/training_validation.hpp"

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
