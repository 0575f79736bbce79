#include "sim/cli/report_output.hpp"

#include <fstream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/result_reports.hpp"

namespace clustersim::cli {
namespace {

std::filesystem::path write_report(const std::filesystem::path& dir, const std::string& html) {
  const std::filesystem::path path = dir / "report.html";
  std::ofstream file(path);
  if (!file) throw Error(fmt::format("cannot write {}", path.string()));
  file << html;
  file.close();
  if (!file) throw Error(fmt::format("writing {} failed", path.string()));
  return path;
}

}  // namespace

std::filesystem::path write_run_report(const std::filesystem::path& dir, const scenario::Scenario& scenario,
                                       const runner::RunResult& run, const report::RunTimeline& timeline) {
  std::optional<std::vector<training::StageProgram>> programs;
  const report::ResultReport* hooks = report::result_report(run.primary->kind);
  if (hooks != nullptr && hooks->wants_stage_programs) {
    programs = runner::stage_programs(scenario);  // the estimator table: each op's provenance
  }
  report::RunReportInputs inputs;
  inputs.timeline = &timeline;
  inputs.programs = programs ? &*programs : nullptr;
  return write_report(dir, report::run_report_html(scenario, run, inputs));
}

std::filesystem::path write_sweep_report(const std::filesystem::path& dir, const sweep::SweepOutcome& outcome) {
  report::SweepReport page;
  page.name = outcome.name;
  page.fingerprint = outcome.fingerprint;
  page.maximize = outcome.pareto.maximize;
  page.minimize = outcome.pareto.minimize;
  page.notes = outcome.notes;
  for (const sweep::SweepRow& row : outcome.rows) {
    report::SweepReportPoint point{row.id, row.ok, row.reason, row.pareto, row.values, {}};
    for (const sweep::Metric& metric : row.metrics) point.metrics.emplace_back(metric.column, metric.value);
    page.points.push_back(std::move(point));
  }
  return write_report(dir, report::sweep_report_html(page));
}

}  // namespace clustersim::cli
