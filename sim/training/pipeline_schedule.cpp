#include "sim/training/pipeline_schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::training {

namespace {

std::vector<PipelineStep> interleaved_steps(int stages, int stage, std::int64_t microbatches,
                                            int chunks) {
  if (chunks < 2) {
    throw ConfigError(fmt::format("the interleaved schedule needs vp >= 2, got {}", chunks));
  }
  if (microbatches % stages != 0) {
    throw ConfigError(fmt::format(
        "the interleaved schedule needs micro-batches ({}) to be a multiple of pp ({})",
        microbatches, stages));
  }
  const std::int64_t group = static_cast<std::int64_t>(stages) * chunks;
  const std::int64_t total = microbatches * chunks;
  auto step = [&](std::int64_t k, bool backward) {
    const std::int64_t in_group = k % group;
    auto chunk = static_cast<int>(in_group / stages);
    if (backward) chunk = chunks - 1 - chunk;
    return PipelineStep{backward, k % stages + (k / group) * stages, chunk};
  };
  // Megatron-Core's warm-up (microbatch_group_size_per_vp_stage = pp, its default): all
  // forwards first only when the warm-up reaches them all. Megatron-LM before the group size
  // existed also ran every forward first when micro-batches == pp.
  const std::int64_t warmup = std::min<std::int64_t>(
      static_cast<std::int64_t>(stages - stage - 1) * 2 + static_cast<std::int64_t>(chunks - 1) * stages, total);
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

}  // namespace

std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage,
                                         std::int64_t microbatches, int virtual_stages) {
  if (stages < 1 || stage < 0 || stage >= stages) {
    throw ConfigError(fmt::format("pipeline stage {} out of range for {} stages", stage, stages));
  }
  if (microbatches < 1) {
    throw ConfigError(fmt::format("pipeline needs at least 1 micro-batch, got {}", microbatches));
  }
  std::vector<PipelineStep> steps;
  steps.reserve(static_cast<std::size_t>(2 * microbatches));
  switch (schedule) {
    case PipelineSchedule::gpipe:
      for (std::int64_t mb = 0; mb < microbatches; ++mb) steps.push_back({false, mb, 0});
      for (std::int64_t mb = 0; mb < microbatches; ++mb) steps.push_back({true, mb, 0});
      return steps;
    case PipelineSchedule::one_f_one_b: {
      const std::int64_t warmup = std::min<std::int64_t>(stages - stage - 1, microbatches);
      for (std::int64_t mb = 0; mb < warmup; ++mb) steps.push_back({false, mb, 0});
      for (std::int64_t i = 0; i < microbatches - warmup; ++i) {
        steps.push_back({false, warmup + i, 0});
        steps.push_back({true, i, 0});
      }
      for (std::int64_t mb = microbatches - warmup; mb < microbatches; ++mb) steps.push_back({true, mb, 0});
      return steps;
    }
    case PipelineSchedule::interleaved:
      return interleaved_steps(stages, stage, microbatches, virtual_stages);
  }
  throw ConfigError("unknown pipeline schedule");
}

}  // namespace clustersim::training
