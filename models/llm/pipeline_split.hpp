#pragma once
/// How a model's transformer layers are laid over pipeline stages and, under the interleaved
/// schedule, over each stage's model chunks (virtual stages).
///
/// Megatron's assignment: virtual stage k = c x pp + p is chunk c of pipeline stage p, and the
/// virtual stages hold consecutive layers in k order (megatron/core/transformer/
/// transformer_layer.py, get_transformer_layer_offset). An uneven split is given as
///   * pp counts, one per pipeline stage, each split evenly over the stage's chunks (the rule
///     of Megatron-Core's --decoder-first/last-pipeline-num-layers, which also need a stage's
///     layers divisible by the virtual pipeline size), or
///   * pp x chunks counts, one per virtual stage in k order, when a stage's chunks differ
///     (Llama 3's 405B run: one layer fewer on the very first and very last virtual stage,
///     which also hold the embedding and the LM head; arXiv:2407.21783 Sec. 3.3.2).
/// Every virtual stage holds at least one layer.
#include <cstdint>
#include <vector>

namespace clustersim::models {

class PipelineSplit {
 public:
  /// Throws ConfigError (naming what is wrong and the accepted forms) when `stage_layers` has
  /// neither pp nor pp x chunks entries, an entry is < 1, a per-stage count does not divide by
  /// chunks, the counts do not sum to num_layers, or (even split) num_layers does not divide
  /// by pp x chunks.
  PipelineSplit(std::int64_t num_layers, int pp, int chunks, const std::vector<int>& stage_layers);

  int stages() const { return pp_; }
  int chunks() const { return chunks_; }
  /// Layers of chunk `chunk` of stage `stage`.
  int layers(int stage, int chunk) const { return layers_[index(stage, chunk)]; }
  /// Global index (0-based) of the first layer of chunk `chunk` of stage `stage`.
  int first_layer(int stage, int chunk) const { return first_[index(stage, chunk)]; }
  /// Layers of all chunks of `stage`.
  int stage_layers(int stage) const;
  /// Largest chunk of any stage.
  int max_chunk_layers() const;
  /// Global indices of the layers `stage` holds, chunk by chunk.
  std::vector<std::int64_t> layer_indices(int stage) const;

 private:
  std::size_t index(int stage, int chunk) const {
    return static_cast<std::size_t>(chunk) * static_cast<std::size_t>(pp_) + static_cast<std::size_t>(stage);
  }
  int pp_ = 1;
  int chunks_ = 1;
  std::vector<int> layers_;  ///< per virtual stage, k = chunk x pp + stage
  std::vector<int> first_;   ///< per virtual stage, its first layer's global index
};

}  // namespace clustersim::models
