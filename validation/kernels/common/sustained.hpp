#pragma once
// Host-only summary of a sustained-load run (sustained_bench): one GEMM launched back to back for
// minutes, timed in windows of about a second, to see the rate a GPU keeps once it sits at its
// power and thermal limits, against the short runs the other benchmarks (and MAMF-style
// searches) time. Unit-tested without a GPU.

#include <vector>

namespace clustersim::kernels {

/// One timed window of the loop.
struct SustainWindow {
  double start_s = 0.0;  ///< when the window began, seconds since the loop started
  double seconds = 0.0;  ///< its measured duration (CUDA events), seconds
  int executions = 0;    ///< GEMMs it ran
};

/// What a sustained run settles to.
struct SustainedSummary {
  double first_op_s = 0.0;       ///< one execution's time in the first window (cold GPU)
  double settled_op_s = 0.0;     ///< median of the per-execution times of the settled windows
  double settled_spread_s = 0.0; ///< half their inter-quartile range
  int settled_windows = 0;       ///< windows counted as settled
  int settled_executions = 0;    ///< executions in them
  double settled_from_s = 0.0;   ///< start of the first settled window, seconds
};

/// Settled windows: those that start in the last `tail_s` seconds of the run, or in its second
/// half when the run is shorter than 2 x tail_s (at least the last window). Throws
/// std::invalid_argument for no windows, a window with no executions or a non-positive or
/// non-finite duration, start times that go backwards, or tail_s <= 0.
SustainedSummary summarize_sustained(const std::vector<SustainWindow>& windows, double tail_s);

}  // namespace clustersim::kernels
