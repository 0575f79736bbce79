#include "sim/training/host_dispatch.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/training/pipeline_schedule.hpp"

namespace clustersim::training {
namespace {

/// The next k' > k where the interleaved chunk of k' may differ (chunks change every `stages`).
std::int64_t next_boundary(std::int64_t k, int stages) { return k + (stages - k % stages); }

}  // namespace

HostDispatch compose_schedule(PipelineSchedule schedule, int stages, int stage, std::int64_t microbatches,
                              int virtual_stages, const std::vector<HostDispatch>& forward,
                              const std::vector<HostDispatch>& backward) {
  check_pipeline(schedule, stages, stage, microbatches, virtual_stages);
  const int chunks = schedule == PipelineSchedule::interleaved ? virtual_stages : 1;
  if (forward.size() != static_cast<std::size_t>(chunks) || backward.size() != static_cast<std::size_t>(chunks)) {
    throw ConfigError(fmt::format("compose_schedule needs one forward and one backward run per chunk ({}), got {} and {}",
                                  chunks, forward.size(), backward.size()));
  }
  const std::int64_t total = microbatches * chunks;
  const std::int64_t warmup = warmup_forwards(schedule, stages, stage, microbatches, virtual_stages);
  const auto chunk_of = [&](std::int64_t k, bool is_backward) {
    return static_cast<std::size_t>(chunks == 1 ? 0 : interleaved_chunk(k, stages, chunks, is_backward));
  };
  const auto repeat = [](const HostDispatch& run, std::int64_t n) { return run.repeated(static_cast<int>(n)); };
  // Passes k in [from, to) of one direction, in runs of one chunk.
  const auto passes = [&](std::int64_t from, std::int64_t to, bool is_backward) {
    const std::vector<HostDispatch>& runs = is_backward ? backward : forward;
    HostDispatch composed;
    for (std::int64_t k = from; k < to;) {
      const std::int64_t end = chunks == 1 ? to : std::min(to, next_boundary(k, stages));
      composed = composed.then(repeat(runs[chunk_of(k, is_backward)], end - k));
      k = end;
    }
    return composed;
  };
  // Steady pairs i in [from, to): forward warmup + i, then backward i, in runs of one chunk pair.
  const auto pairs = [&](std::int64_t from, std::int64_t to) {
    HostDispatch composed;
    for (std::int64_t i = from; i < to;) {
      const std::int64_t end =
          chunks == 1 ? to : std::min({to, next_boundary(warmup + i, stages) - warmup, next_boundary(i, stages)});
      composed = composed.then(repeat(forward[chunk_of(warmup + i, false)].then(backward[chunk_of(i, true)]), end - i));
      i = end;
    }
    return composed;
  };
  const std::int64_t steady = total - warmup;
  HostDispatch schedule_run = passes(0, warmup, false);
  if (chunks == 1) {
    schedule_run = schedule_run.then(pairs(0, steady));
  } else {
    // The pairs' chunks repeat every stages x chunks pairs.
    const std::int64_t period = static_cast<std::int64_t>(stages) * chunks;
    schedule_run = schedule_run.then(repeat(pairs(0, std::min(period, steady)), steady / period))
                       .then(pairs(0, steady % period));
  }
  return schedule_run.then(passes(total - warmup, total, true));
}

}  // namespace clustersim::training
