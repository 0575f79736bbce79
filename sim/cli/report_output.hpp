#pragma once
/// report.html in the folders `run --out` and `sweep --out` / `sweep-merge --out` write
/// (sim/report/html_report.hpp makes the page; this only gathers its inputs and writes it).
#include <filesystem>

#include "sim/report/run_timeline.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace clustersim::cli {

/// Writes DIR/report.html for a run recorded by `timeline`; returns its path.
std::filesystem::path write_run_report(const std::filesystem::path& dir, const scenario::Scenario& scenario,
                                       const runner::RunResult& run, const report::RunTimeline& timeline);

/// Writes DIR/report.html for a sweep's (or merge's) rows; returns its path.
std::filesystem::path write_sweep_report(const std::filesystem::path& dir, const sweep::SweepOutcome& outcome);

}  // namespace clustersim::cli
