#include "sim/training/pipeline_schedule.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace pipeline_schedule_test {

using namespace clustersim;
using namespace clustersim::training;

namespace {
// "F0 F1 B0 ..." for readable comparisons.
std::string render(const std::vector<PipelineStep>& steps) {
  std::string out;
  for (const auto& step : steps) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}{}", step.backward ? 'B' : 'F', step.microbatch);
    if (step.chunk != 0) out += fmt::format(".{}", step.chunk);
  }
  return out;
}
}  // namespace

TEST_CASE("1F1B: warm-up of pp-1-stage forwards, steady alternation, cool-down") {
  CHECK(render(pipeline_steps(PipelineSchedule::one_f_one_b, 4, 0, 6)) ==
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  CHECK(render(pipeline_steps(PipelineSchedule::one_f_one_b, 4, 2, 6)) ==
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  CHECK(render(pipeline_steps(PipelineSchedule::one_f_one_b, 4, 3, 3)) == "F0 B0 F1 B1 F2 B2");
  // Fewer micro-batches than the warm-up: all forwards, then all backwards.
  CHECK(render(pipeline_steps(PipelineSchedule::one_f_one_b, 4, 0, 2)) == "F0 F1 B0 B1");
}

TEST_CASE("GPipe: all forwards then all backwards") {
  CHECK(render(pipeline_steps(PipelineSchedule::gpipe, 2, 1, 3)) == "F0 F1 F2 B0 B1 B2");
}

TEST_CASE("interleaved 1F1B follows Megatron's micro-step order") {
  // pp 2, vp 2, 4 micro-batches: stage 0 warms up with (2-0-1)*2 + (2-1)*2 = 4 forwards.
  CHECK(render(pipeline_steps(PipelineSchedule::interleaved, 2, 0, 4, 2)) ==
        "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
  CHECK(render(pipeline_steps(PipelineSchedule::interleaved, 2, 1, 4, 2)) ==
        "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3");
  // micro-batches == pp: current Megatron-Core warms up with (pp - stage - 1) * 2 + (vp - 1)
  // * pp forwards and runs everything first only where that reaches all of them (stage 0:
  // 4 of 4); the last stage warms up with 2 and alternates (Megatron-LM before
  // microbatch_group_size_per_vp_stage ran all forwards first on every stage).
  CHECK(render(pipeline_steps(PipelineSchedule::interleaved, 2, 0, 2, 2)) ==
        "F0 F1 F0.1 F1.1 B0.1 B1.1 B0 B1");
  CHECK(render(pipeline_steps(PipelineSchedule::interleaved, 2, 1, 2, 2)) ==
        "F0 F1 F0.1 B0.1 F1.1 B1.1 B0 B1");
}

TEST_CASE("invalid schedules are rejected") {
  CHECK_THROWS_WITH_AS(pipeline_steps(PipelineSchedule::one_f_one_b, 4, 4, 8),
                       "pipeline stage 4 out of range for 4 stages", ConfigError);
  CHECK_THROWS_WITH_AS(pipeline_steps(PipelineSchedule::gpipe, 2, 0, 0),
                       "pipeline needs at least 1 micro-batch, got 0", ConfigError);
  CHECK_THROWS_WITH_AS(pipeline_steps(PipelineSchedule::interleaved, 2, 0, 4),
                       "the interleaved schedule needs vp >= 2, got 1", ConfigError);
  CHECK_THROWS_WITH_AS(pipeline_steps(PipelineSchedule::interleaved, 2, 0, 3, 2),
                       "the interleaved schedule needs micro-batches (3) to be a multiple of pp (2)",
                       ConfigError);
}

}  // namespace pipeline_schedule_test
