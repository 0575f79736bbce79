// Issue 29 part 7: the host's dispatch folded into two numbers per run of ops gives what the
// op-by-op walk over the whole schedule gives, on random op lists and schedules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/training/host_dispatch.hpp"
#include "sim/training/pipeline_schedule.hpp"

namespace host_dispatch_test {

using namespace clustersim::training;

namespace {

/// The walk host_cost() did before the fold: every op of every step, in schedule order.
double walked_delay(const std::vector<PipelineStep>& steps, const std::vector<std::vector<double>>& forward,
                    const std::vector<std::vector<double>>& backward, double host_op_s) {
  double issued = 0, ends = 0, device = 0;
  for (const PipelineStep& step : steps) {
    for (const double op_s : (step.backward ? backward : forward)[static_cast<std::size_t>(step.chunk)]) {
      issued += host_op_s;
      ends = std::max(ends, issued) + op_s;
      device += op_s;
    }
  }
  return ends - device;
}

HostDispatch fold(const std::vector<double>& ops, double host_op_s) {
  HostDispatch run;
  for (const double op_s : ops) run = run.then(HostDispatch::op(op_s, host_op_s));
  return run;
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({std::fabs(a), std::fabs(b), 1e-3}); }

}  // namespace

TEST_CASE("one op: the device waits for the host when its slack is smaller than an issue") {
  // 10 us ops issued in 30 us each: the device waits 20 us before each of the three ops after the
  // first, and 30 us before the first: 30 + 3 x 20 = 90 us, what 4 issues (120 us) minus 4 ops' 40 us
  // of work leave after the 10 us the last op runs... delay = end (130) - device (40) = 90 us.
  const HostDispatch op = HostDispatch::op(10e-6, 30e-6);
  CHECK(op.repeated(4).delay_s(30e-6) == doctest::Approx(90e-6).scale(0).epsilon(1e-12));
  // Ops longer than the issue: only the first issue shows.
  CHECK(HostDispatch::op(50e-6, 30e-6).repeated(4).delay_s(30e-6) == doctest::Approx(30e-6).scale(0).epsilon(1e-12));
  CHECK(HostDispatch{}.delay_s(30e-6) == 0.0);
}

TEST_CASE("repeated(n) is n compositions") {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> duration(0, 40e-6);
  for (int trial = 0; trial < 200; ++trial) {
    const double h = duration(random) / 2;
    std::vector<double> ops(static_cast<std::size_t>(trial % 7 + 1));
    for (double& op : ops) op = duration(random);
    const HostDispatch run = fold(ops, h);
    HostDispatch by_hand;
    const int n = trial % 13;
    for (int i = 0; i < n; ++i) by_hand = by_hand.then(run);
    const HostDispatch repeated = run.repeated(n);
    CHECK(close(repeated.delay_s(h), by_hand.delay_s(h)));
    CHECK(close(repeated.slack_after(3e-6), by_hand.slack_after(3e-6)));
  }
}

TEST_CASE("the composed schedule gives the op-by-op walk's delay on random op lists and schedules") {
  std::mt19937_64 random(2029);
  std::uniform_real_distribution<double> duration(0, 60e-6);
  int checked = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const auto schedule = static_cast<PipelineSchedule>(trial % 3);  // gpipe, 1F1B, interleaved
    const int stages = 1 + static_cast<int>(random() % 8);
    const int stage = static_cast<int>(random() % static_cast<unsigned>(stages));
    const int chunks = schedule == PipelineSchedule::interleaved ? 2 + static_cast<int>(random() % 4) : 1;
    const std::int64_t microbatches =
        schedule == PipelineSchedule::interleaved ? stages * (1 + static_cast<std::int64_t>(random() % 9))
                                                  : 1 + static_cast<std::int64_t>(random() % 40);
    if (schedule == PipelineSchedule::interleaved && stages == 1) continue;  // Megatron needs pp > 1 to interleave
    const double h = duration(random) * (trial % 4 == 0 ? 0.05 : 0.5);
    std::vector<std::vector<double>> forward(static_cast<std::size_t>(chunks)), backward(forward.size());
    std::vector<HostDispatch> forward_runs, backward_runs;
    for (std::size_t c = 0; c < forward.size(); ++c) {
      forward[c].resize(random() % 12);
      backward[c].resize(random() % 20);
      for (double& op : forward[c]) op = duration(random) * (random() % 3 == 0 ? 0.0 : 1.0);  // some overlapped (0)
      for (double& op : backward[c]) op = duration(random);
      forward_runs.push_back(fold(forward[c], h));
      backward_runs.push_back(fold(backward[c], h));
    }
    CAPTURE(trial);
    const std::vector<PipelineStep> steps = pipeline_steps(schedule, stages, stage, microbatches, chunks);
    const double walked = walked_delay(steps, forward, backward, h);
    const double composed =
        compose_schedule(schedule, stages, stage, microbatches, chunks, forward_runs, backward_runs).delay_s(h);
    CHECK(close(composed, walked));
    ++checked;
  }
  CHECK(checked > 500);
}

TEST_CASE("compose_schedule refuses what pipeline_steps refuses") {
  const std::vector<HostDispatch> two(2), one(1);
  CHECK_THROWS_WITH(compose_schedule(PipelineSchedule::interleaved, 4, 0, 6, 2, two, two),
                    "the interleaved schedule needs micro-batches (6) to be a multiple of pp (4)");
  CHECK_THROWS_WITH(compose_schedule(PipelineSchedule::one_f_one_b, 4, 4, 8, 1, one, one),
                    "pipeline stage 4 out of range for 4 stages");
  CHECK_THROWS_WITH(compose_schedule(PipelineSchedule::one_f_one_b, 4, 0, 8, 1, two, two),
                    "compose_schedule needs one forward and one backward run per chunk (1), got 2 and 2");
}

}  // namespace host_dispatch_test
