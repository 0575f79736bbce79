#include "sim/report/trace_counters.hpp"

#include <fmt/format.h>

#include "sim/report/result_reports.hpp"
#include "sim/report/training_report.hpp"

namespace clustersim::report {

int add_run_counters(ChromeTrace& trace, const runner::RunResult& run, const RunTimeline& timeline) {
  const ResultReport* hooks = result_report(run.primary->kind);
  return hooks != nullptr && hooks->counters ? hooks->counters(trace, run, timeline) : 0;
}

int training_trace_counters(ChromeTrace& trace, const training::TrainingResult& result, const RunTimeline& timeline) {
  const training::TrainingResult* training = &result;
  int tracks = 0;
  const topologies::TierUtilisationSeries& network = training->network_series;
  for (std::size_t t = 0; t < network.tiers.size(); ++t) {
    std::vector<double> percent;
    percent.reserve(network.utilisation[t].size());
    for (const double value : network.utilisation[t]) percent.push_back(100 * value);
    trace.counter(kNetworkTracePid, false, "Network",
                  fmt::format("link utilisation tier {} ({})", network.tiers[t], network_tier_name(network.tiers[t])),
                  "percent of line rate", network.times_ps, percent);
    ++tracks;
  }
  for (const StageHbmSeries& stage : hbm_occupancy(timeline, training->memory)) {
    std::vector<double> gib;
    gib.reserve(stage.bytes.size());
    for (const double bytes : stage.bytes) gib.push_back(bytes / (1024.0 * 1024.0 * 1024.0));
    trace.counter(stage.accelerator, true, fmt::format("GPU {}", stage.accelerator),
                  fmt::format("HBM stage {}", stage.stage), "GiB", stage.times_ps, gib);
    ++tracks;
  }
  return tracks;
}

}  // namespace clustersim::report
