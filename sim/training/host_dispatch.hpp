#pragma once
/// The host's dispatch of a run of ops, folded into two numbers (issue 29 part 7).
///
/// The host issues ops one after another, `host_op_s` each, running ahead of the device; the
/// device runs each op when it has been issued and the previous op has ended. With the slack s
/// = (when the device's last op ends) - (when the host issued it), one op of device time o maps
/// s to max(s - host_op_s, 0) + o = max(s + (o - host_op_s), o). Maps of the form
/// s -> max(s + shift, floor) compose into the same form:
///   (then g after f)(s) = max(s + f.shift + g.shift, max(f.floor + g.shift, g.floor)),
/// so a layer's ops fold into one map once, a chunk's layers into one, and a step's schedule is
/// one composition per pipeline step instead of a walk over every op of every layer of every
/// micro-batch. From slack 0 (host and device both start at 0), the device's last op ends at
/// ops x host_op_s + slack, and what the host made the device wait is that minus the ops'
/// device time (HostDispatch::delay_s). The same result as the op-by-op walk up to rounding
/// (tests/sim/training/host_dispatch_test.cpp).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/training/training_config.hpp"

namespace clustersim::training {

struct HostDispatch {
  double shift = 0;                                        ///< slack change when the floor does not bind
  double floor = -std::numeric_limits<double>::infinity();  ///< the least slack after the run
  double ops = 0;                                          ///< ops issued
  double device_s = 0;                                     ///< their device time

  /// One op of `op_s` device time issued in `host_op_s`.
  static HostDispatch op(double op_s, double host_op_s) { return {op_s - host_op_s, op_s, 1, op_s}; }

  /// This run, then `next`.
  HostDispatch then(const HostDispatch& next) const {
    return {shift + next.shift, std::max(floor + next.shift, next.floor), ops + next.ops, device_s + next.device_s};
  }

  /// This run `n` times in a row (n >= 0): s -> max(s + n shift, floor + max(0, (n - 1) shift)).
  HostDispatch repeated(int n) const {
    if (n <= 0) return {};
    const double times = static_cast<double>(n);
    return {times * shift, floor + std::max(0.0, (times - 1) * shift), times * ops, times * device_s};
  }

  /// The slack after the run, starting from `slack`.
  double slack_after(double slack) const { return std::max(slack + shift, floor); }

  /// What the host makes the device wait over the run, both starting at 0.
  double delay_s(double host_op_s) const { return ops * host_op_s + slack_after(0.0) - device_s; }
};

/// A stage's whole schedule (pipeline_steps() order) composed from each chunk's forward and
/// backward runs (`forward[c]`, `backward[c]`, one per chunk), without listing the steps: the
/// warm-up and cool-down in runs of one chunk, the steady forward/backward pairs in runs of one
/// chunk pair, one period of the interleaved pattern (stages x chunks pairs) repeated.
/// O(chunks) compositions per stage. Throws like pipeline_steps().
HostDispatch compose_schedule(PipelineSchedule schedule, int stages, int stage, std::int64_t microbatches,
                              int virtual_stages, const std::vector<HostDispatch>& forward,
                              const std::vector<HostDispatch>& backward);

}  // namespace clustersim::training
