#include "models/llm/moe_runtime.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/error.hpp"

namespace moe_runtime_test {

using namespace clustersim;
using namespace clustersim::models;

namespace {

MoeSpec experts(std::int64_t count, std::int64_t top_k) {
  MoeSpec moe;
  moe.num_experts = count;
  moe.num_experts_per_tok = top_k;
  moe.moe_intermediate_size = 1024;
  return moe;
}

std::string message_of(const auto& call) {
  try {
    call();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "<no ConfigError>";
}

}  // namespace

TEST_CASE("balanced, dropless routing: every EP rank computes tokens x top-k copies") {
  const ExpertLoad load = expert_load(experts(8, 2), MoeRuntime{}, 4096, 4);
  CHECK(load.local_experts == 2);
  CHECK(load.mean_tokens_per_expert == 4096.0 * 4 * 2 / 8);
  CHECK(load.mean_rank_tokens == 8192.0);
  CHECK(load.busiest_rank_tokens == 8192.0);
  CHECK(load.busiest_rank_load_factor() == 1.0);
  CHECK(load.capacity_tokens_per_expert == 0.0);
  CHECK(load.dropped_fraction == 0.0);
}

TEST_CASE("imbalance: the busiest expert's rank is slower; the others share the rest") {
  MoeRuntime runtime;
  runtime.imbalance = 1.5;
  // 8 experts on 8 ranks: the busiest rank is the busiest expert.
  CHECK(expert_load(experts(8, 2), runtime, 1000, 8).busiest_rank_load_factor() == doctest::Approx(1.5));
  // 2 experts per rank: 1.5 + (8 - 1.5) / 7 = 2.428571 of 2 experts' mean.
  const ExpertLoad four = expert_load(experts(8, 2), runtime, 1000, 4);
  CHECK(four.other_expert_tokens == doctest::Approx(6.5 / 7 * 1000 * 4 * 2 / 8));
  CHECK(four.busiest_rank_load_factor() == doctest::Approx((1.5 + 6.5 / 7) / 2));
  // One rank holds every expert: all copies are its own whatever the imbalance.
  CHECK(expert_load(experts(8, 2), runtime, 1000, 1).busiest_rank_load_factor() == doctest::Approx(1.0));
}

TEST_CASE("capacity factor: experts keep at most their capacity, the excess is dropped") {
  MoeRuntime runtime;
  runtime.capacity_factor = 1.25;
  runtime.imbalance = 2.0;
  const ExpertLoad load = expert_load(experts(8, 2), runtime, 1000, 8);
  // Per source rank ceil(1.25 x 1000 x 2 / 8) = 313, times 8 ranks.
  CHECK(load.capacity_tokens_per_expert == 8.0 * 313);
  CHECK(load.busiest_expert_tokens == 8.0 * 313);
  CHECK(load.other_expert_tokens == doctest::Approx(6.0 / 7 * 2000));
  CHECK(load.busiest_rank_load_factor() == doctest::Approx(8.0 * 313 / 2000));
  CHECK(load.dropped_fraction == doctest::Approx((2.0 * 2000 - 8.0 * 313) / 16000));
  // A generous capacity drops nothing.
  runtime.capacity_factor = 4;
  CHECK(expert_load(experts(8, 2), runtime, 1000, 8).dropped_fraction == 0.0);
}

TEST_CASE("the grouped expert GEMM runs the experts the copies reach, each over its share of them") {
  // 8 decode tokens x top-8 over 256 experts: 64 copies; an expert idles with probability
  // (255/256)^64 = 0.7784: ceil(256 x 0.2216) = 57 run, ceil(64 / 57) = 2 rows each.
  const GroupedExpertGemm decode = grouped_expert_gemm(expert_load(experts(256, 8), MoeRuntime{}, 8, 1));
  CHECK(decode.experts == 57);
  CHECK(decode.tokens == 2);
  // 4,096 tokens x top-2 on ep 4 (2 local experts): 8,192 copies, both run, 4,096 rows each.
  const GroupedExpertGemm train = grouped_expert_gemm(expert_load(experts(8, 2), MoeRuntime{}, 4096, 4));
  CHECK(train.experts == 2);
  CHECK(train.tokens == 4096);
  // No tokens: one GEMM of one row (the kernel still launches).
  const GroupedExpertGemm none = grouped_expert_gemm(expert_load(experts(8, 2), MoeRuntime{}, 0, 1));
  CHECK(none.experts == 1);
  CHECK(none.tokens == 1);
}

TEST_CASE("invalid MoE runtime settings are rejected with the field named") {
  MoeRuntime runtime;
  runtime.imbalance = 0.9;
  CHECK(message_of([&] { runtime.validate(experts(8, 2)); }) ==
        "moe imbalance (busiest expert's load / mean load) must be >= 1, got 0.9");
  runtime.imbalance = 5;
  CHECK(message_of([&] { runtime.validate(experts(8, 2)); }) ==
        "moe imbalance 5 exceeds num_experts / num_experts_per_tok = 8 / 2 = 4 (an expert receives each token at "
        "most once)");
  runtime = MoeRuntime{};
  runtime.capacity_factor = -1;
  CHECK(message_of([&] { runtime.validate(experts(8, 2)); }) == "moe capacity_factor must be >= 0 (0: no capacity), got -1");
  runtime.capacity_factor = 1;
  CHECK(message_of([&] { runtime.validate(MoeSpec{}); }) ==
        "moe capacity_factor and imbalance apply only to a mixture-of-experts model");
  CHECK(message_of([&] { expert_load(experts(8, 2), MoeRuntime{}, 100, 3); }) ==
        "expert-parallel degree 3 must be >= 1 and divide the 8 experts");
  CHECK(message_of([&] { expert_load(MoeSpec{}, MoeRuntime{}, 100, 1); }) ==
        "expert_load needs a mixture-of-experts model (num_experts 0)");
}

}  // namespace moe_runtime_test
