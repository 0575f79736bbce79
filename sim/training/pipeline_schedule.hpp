#pragma once
/// Order in which one pipeline stage runs the forward and backward passes of its micro-batches.
#include <cstdint>
#include <vector>

#include "sim/training/training_config.hpp"

namespace clustersim::training {

/// One forward or backward pass of one micro-batch through a stage's layers.
struct PipelineStep {
  bool backward = false;
  std::int64_t microbatch = 0;  ///< 0-based
  int chunk = 0;                ///< model chunk (virtual stage) of the stage, 0-based; 0 unless interleaved
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

/// Steps of `stage` (0-based) of a `stages`-deep pipeline running `microbatches` micro-batches.
/// gpipe: all forwards, then all backwards, both in micro-batch order. one_f_one_b (Megatron
/// forward_backward_pipelining_without_interleaving): min(stages - stage - 1, microbatches)
/// warm-up forwards, then alternating forward/backward, then the remaining backwards.
/// interleaved (Megatron forward_backward_pipelining_with_interleaving, `virtual_stages`
/// chunks per stage): microbatches x chunks micro-steps; warm-up of
/// min((stages - stage - 1) x 2 + (chunks - 1) x stages, total) forwards (current Megatron-Core,
/// microbatch_group_size_per_vp_stage = stages), then 1F1B; the k-th forward runs chunk (k mod stages*chunks) / stages
/// on micro-batch (k mod stages) + stages x (k / (stages*chunks)); backwards visit chunks in
/// reverse. Throws ConfigError for non-positive counts, a stage out of range, interleaving
/// with fewer than 2 chunks or with micro-batches not a multiple of the stages.
std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage,
                                         std::int64_t microbatches, int virtual_stages = 1);

/// Throws the ConfigError pipeline_steps() would, without listing the steps.
void check_pipeline(PipelineSchedule schedule, int stages, int stage, std::int64_t microbatches, int virtual_stages = 1);

/// Forward passes `stage` runs before its first backward (for interleaved: micro-steps, each one
/// chunk of one micro-batch). `microbatches` x chunks passes of each direction in all.
std::int64_t warmup_forwards(PipelineSchedule schedule, int stages, int stage, std::int64_t microbatches,
                             int virtual_stages = 1);

/// The chunk the k-th forward (or backward) micro-step of an interleaved stage runs.
inline int interleaved_chunk(std::int64_t k, int stages, int chunks, bool backward) {
  const auto chunk = static_cast<int>((k % (static_cast<std::int64_t>(stages) * chunks)) / stages);
  return backward ? chunks - 1 - chunk : chunk;
}

}  // namespace clustersim::training
