#include "models/llm/pipeline_split.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

#include "sim/engine/error.hpp"

namespace clustersim::models {

PipelineSplit::PipelineSplit(std::int64_t num_layers, int pp, int chunks, const std::vector<int>& stage_layers)
    : pp_(pp), chunks_(chunks) {
  if (pp < 1 || chunks < 1) throw ConfigError(fmt::format("pp {} and vp {} must be >= 1", pp, chunks));
  const auto virtual_stages = static_cast<std::size_t>(pp) * static_cast<std::size_t>(chunks);
  if (stage_layers.empty()) {
    if (num_layers % static_cast<std::int64_t>(virtual_stages) != 0) {
      throw ConfigError(fmt::format("{} layers do not divide evenly over pp x vp = {} x {} virtual stages; give "
                                    "stage_layers for an uneven split",
                                    num_layers, pp, chunks));
    }
    layers_.assign(virtual_stages, static_cast<int>(num_layers / static_cast<std::int64_t>(virtual_stages)));
  } else if (stage_layers.size() == static_cast<std::size_t>(pp)) {
    layers_.resize(virtual_stages);
    for (int p = 0; p < pp; ++p) {
      const int count = stage_layers[static_cast<std::size_t>(p)];
      if (count % chunks != 0) {
        throw ConfigError(fmt::format("stage {} has {} layers, which do not split evenly over its vp = {} chunks; "
                                      "give pp x vp = {} counts, one per virtual stage, instead",
                                      p, count, chunks, virtual_stages));
      }
      for (int c = 0; c < chunks; ++c) layers_[index(p, c)] = count / chunks;
    }
  } else if (stage_layers.size() == virtual_stages) {
    layers_ = stage_layers;
  } else {
    throw ConfigError(
        chunks > 1 ? fmt::format("stage_layers lists {} counts; give pp = {} (one per pipeline stage) or pp x vp = {} "
                                 "(one per virtual stage, chunk-major: chunk c of stage p is entry c x pp + p)",
                                 stage_layers.size(), pp, virtual_stages)
                   : fmt::format("stage_layers lists {} counts, pp is {}", stage_layers.size(), pp));
  }
  for (std::size_t k = 0; k < layers_.size(); ++k) {
    if (layers_[k] < 1) {
      throw ConfigError(fmt::format("every {} needs >= 1 layer, {} {} has {}", chunks > 1 ? "virtual stage" : "pipeline stage",
                                    chunks > 1 ? "virtual stage" : "stage", k, layers_[k]));
    }
  }
  const std::int64_t sum = std::accumulate(layers_.begin(), layers_.end(), std::int64_t{0});
  if (sum != num_layers) throw ConfigError(fmt::format("stage_layers sum to {}, the model has {} layers", sum, num_layers));
  first_.resize(layers_.size());
  int next = 0;
  for (std::size_t k = 0; k < layers_.size(); ++k) {
    first_[k] = next;
    next += layers_[k];
  }
}

int PipelineSplit::stage_layers(int stage) const {
  int total = 0;
  for (int c = 0; c < chunks_; ++c) total += layers(stage, c);
  return total;
}

int PipelineSplit::max_chunk_layers() const { return *std::max_element(layers_.begin(), layers_.end()); }

std::vector<std::int64_t> PipelineSplit::layer_indices(int stage) const {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(stage_layers(stage)));
  for (int c = 0; c < chunks_; ++c) {
    for (int l = 0; l < layers(stage, c); ++l) out.push_back(first_layer(stage, c) + l);
  }
  return out;
}

}  // namespace clustersim::models
