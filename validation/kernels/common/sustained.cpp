#include "sustained.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "timing_stats.hpp"

namespace clustersim::kernels {

SustainedSummary summarize_sustained(const std::vector<SustainWindow>& windows, double tail_s) {
  if (windows.empty()) throw std::invalid_argument("summarize_sustained: no windows");
  if (!(tail_s > 0) || !std::isfinite(tail_s)) {
    throw std::invalid_argument("summarize_sustained: tail must be > 0 s, got " + std::to_string(tail_s));
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const SustainWindow& w = windows[i];
    if (w.executions < 1 || !(w.seconds > 0) || !std::isfinite(w.seconds) || !std::isfinite(w.start_s)) {
      throw std::invalid_argument("summarize_sustained: window " + std::to_string(i) +
                                  " needs executions >= 1 and a finite duration > 0");
    }
    if (i > 0 && w.start_s < windows[i - 1].start_s) {
      throw std::invalid_argument("summarize_sustained: window " + std::to_string(i) + " starts before window " +
                                  std::to_string(i - 1));
    }
  }
  const SustainWindow& last = windows.back();
  const double end_s = last.start_s + last.seconds;
  const double from_s = end_s >= 2.0 * tail_s ? end_s - tail_s : end_s / 2.0;
  SustainedSummary summary;
  summary.first_op_s = windows.front().seconds / windows.front().executions;
  std::vector<double> per_op_s;
  for (const SustainWindow& w : windows) {
    if (w.start_s < from_s && &w != &last) continue;
    if (per_op_s.empty()) summary.settled_from_s = w.start_s;
    per_op_s.push_back(w.seconds / w.executions);
    summary.settled_executions += w.executions;
  }
  const TimingSummary settled = summarize(per_op_s);
  summary.settled_op_s = settled.median_s;
  summary.settled_spread_s = settled.spread_s;
  summary.settled_windows = settled.repeats;
  return summary;
}

}  // namespace clustersim::kernels
