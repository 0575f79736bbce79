#pragma once
/// The counter tracks `clustersim run --trace` adds after the run, from the same measurements
/// report.html draws: link utilisation per network tier over the step (flow fidelity; on the
/// "Network" process, percent of the tier's line rate) and, for training, HBM occupancy per
/// pipeline stage over the step (on the stage's representative accelerator, GiB;
/// run_timeline.hpp's hbm_occupancy). Serving runs already stream their KV-cache counters.
#include "sim/report/chrome_trace.hpp"
#include "sim/report/run_timeline.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::report {

/// Adds the run's counters to `trace` (before its finish()): its workload kind's
/// (result_reports.hpp); returns the tracks added.
int add_run_counters(ChromeTrace& trace, const runner::RunResult& run, const RunTimeline& timeline);

/// A training run's tracks: link utilisation per tier, HBM occupancy per stage.
int training_trace_counters(ChromeTrace& trace, const training::TrainingResult& result, const RunTimeline& timeline);

}  // namespace clustersim::report
