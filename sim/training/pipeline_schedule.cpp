#include "sim/training/pipeline_schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::training {

void check_pipeline(PipelineSchedule schedule, int stages, int stage, std::int64_t microbatches, int virtual_stages) {
  if (stages < 1 || stage < 0 || stage >= stages) {
    throw ConfigError(fmt::format("pipeline stage {} out of range for {} stages", stage, stages));
  }
  if (microbatches < 1) {
    throw ConfigError(fmt::format("pipeline needs at least 1 micro-batch, got {}", microbatches));
  }
  if (schedule != PipelineSchedule::interleaved) return;
  if (virtual_stages < 2) {
    throw ConfigError(fmt::format("the interleaved schedule needs vp >= 2, got {}", virtual_stages));
  }
  if (microbatches % stages != 0) {
    throw ConfigError(fmt::format(
        "the interleaved schedule needs micro-batches ({}) to be a multiple of pp ({})",
        microbatches, stages));
  }
}

std::int64_t warmup_forwards(PipelineSchedule schedule, int stages, int stage, std::int64_t microbatches,
                             int virtual_stages) {
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return microbatches;
    case PipelineSchedule::one_f_one_b:
      return std::min<std::int64_t>(stages - stage - 1, microbatches);
    case PipelineSchedule::interleaved:
      // Megatron-Core's warm-up (microbatch_group_size_per_vp_stage = pp, its default): all
      // forwards first only when the warm-up reaches them all. Megatron-LM before the group size
      // existed also ran every forward first when micro-batches == pp.
      return std::min<std::int64_t>(
          static_cast<std::int64_t>(stages - stage - 1) * 2 + static_cast<std::int64_t>(virtual_stages - 1) * stages,
          microbatches * virtual_stages);
  }
  throw ConfigError("unknown pipeline schedule");
}

std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage,
                                         std::int64_t microbatches, int virtual_stages) {
  check_pipeline(schedule, stages, stage, microbatches, virtual_stages);
  const int chunks = schedule == PipelineSchedule::interleaved ? virtual_stages : 1;
  const std::int64_t total = microbatches * chunks;
  const std::int64_t warmup = warmup_forwards(schedule, stages, stage, microbatches, virtual_stages);
  const std::int64_t group = static_cast<std::int64_t>(stages) * chunks;
  // The k-th pass of a direction: micro-batch k (interleaved: (k mod stages) + stages x (k / group)).
  const auto step = [&](std::int64_t k, bool backward) {
    if (chunks == 1) return PipelineStep{backward, k, 0};
    return PipelineStep{backward, k % stages + (k / group) * stages, interleaved_chunk(k, stages, chunks, backward)};
  };
  std::vector<PipelineStep> steps;
  steps.reserve(static_cast<std::size_t>(2 * total));
  for (std::int64_t k = 0; k < warmup; ++k) steps.push_back(step(k, false));
  for (std::int64_t i = 0; i < total - warmup; ++i) {
    steps.push_back(step(warmup + i, false));
    steps.push_back(step(i, true));
  }
  for (std::int64_t k = total - warmup; k < total; ++k) steps.push_back(step(k, true));
  return steps;
}

}  // namespace clustersim::training
