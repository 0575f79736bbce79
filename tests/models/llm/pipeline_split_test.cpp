#include "models/llm/pipeline_split.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "sim/engine/error.hpp"

namespace pipeline_split_test {

using namespace clustersim;
using namespace clustersim::models;

TEST_CASE("pipeline split: even, per stage, per virtual stage") {
  SUBCASE("even, interleaved: virtual stage c x pp + p holds layers in model order") {
    const PipelineSplit split(16, 4, 2, {});
    CHECK(split.layers(1, 1) == 2);
    CHECK(split.first_layer(1, 0) == 2);
    CHECK(split.first_layer(1, 1) == 10);  // virtual stage 5
    CHECK(split.layer_indices(3) == std::vector<std::int64_t>{6, 7, 14, 15});
    CHECK(split.stage_layers(2) == 4);
  }
  SUBCASE("per stage, each split evenly over the stage's chunks") {
    const PipelineSplit split(16, 4, 2, {2, 6, 6, 2});
    CHECK(split.layers(0, 0) == 1);
    CHECK(split.layers(1, 1) == 3);
    // Virtual stages 0..7 hold 1, 3, 3, 1, 1, 3, 3, 1 layers.
    CHECK(split.first_layer(0, 1) == 8);
    CHECK(split.first_layer(3, 1) == 15);
    CHECK(split.max_chunk_layers() == 3);
  }
  SUBCASE("per virtual stage: Llama 3's one layer fewer on the first and the last") {
    const PipelineSplit split(126, 16, 2, [] {
      std::vector<int> counts(32, 4);
      counts.front() = counts.back() = 3;
      return counts;
    }());
    CHECK(split.layers(0, 0) == 3);
    CHECK(split.layers(0, 1) == 4);
    CHECK(split.layers(15, 1) == 3);
    CHECK(split.first_layer(1, 0) == 3);
    CHECK(split.first_layer(0, 1) == 63);  // virtual stage 16: 3 + 15 x 4 layers before it
    CHECK(split.stage_layers(0) == 7);
    CHECK(split.stage_layers(7) == 8);
  }
  SUBCASE("1F1B: pp counts, one chunk") {
    const PipelineSplit split(8, 4, 1, {1, 3, 3, 1});
    CHECK(split.first_layer(3, 0) == 7);
    CHECK(split.layer_indices(1) == std::vector<std::int64_t>{1, 2, 3});
  }
}

TEST_CASE("pipeline split: what cannot be laid out is an error that says why") {
  CHECK_THROWS_WITH_AS(PipelineSplit(10, 4, 1, {}),
                       "10 layers do not divide evenly over pp x vp = 4 x 1 virtual stages; give stage_layers for an "
                       "uneven split",
                       ConfigError);
  CHECK_THROWS_WITH_AS(PipelineSplit(8, 2, 2, {3, 5}),
                       "stage 0 has 3 layers, which do not split evenly over its vp = 2 chunks; give pp x vp = 4 "
                       "counts, one per virtual stage, instead",
                       ConfigError);
  CHECK_THROWS_WITH_AS(PipelineSplit(8, 2, 2, {8}),
                       "stage_layers lists 1 counts; give pp = 2 (one per pipeline stage) or pp x vp = 4 (one per "
                       "virtual stage, chunk-major: chunk c of stage p is entry c x pp + p)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(PipelineSplit(8, 2, 2, {0, 4, 3, 1}), "every virtual stage needs >= 1 layer, virtual stage 0 has 0",
                       ConfigError);
  CHECK_THROWS_WITH_AS(PipelineSplit(8, 2, 1, {4, 5}), "stage_layers sum to 9, the model has 8 layers", ConfigError);
  CHECK_THROWS_WITH_AS(PipelineSplit(8, 2, 1, {4, 4, 0}), "stage_layers lists 3 counts, pp is 2", ConfigError);
}

}  // namespace pipeline_split_test
