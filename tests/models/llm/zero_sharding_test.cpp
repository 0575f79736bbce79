#include "models/llm/zero_sharding.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"

namespace zero_sharding_test {

using clustersim::ConfigError;
using clustersim::models::CollectiveKind;
using clustersim::models::ZeroSharding;

TEST_CASE("ZeRO stages shard optimizer state, then gradients, then weights, and pick their collectives") {
  const ZeroSharding zero0(0, 8), zero1(1, 8), zero2(2, 8), zero3(3, 8);
  CHECK(zero0.optimizer_divisor() == 1);
  CHECK(zero1.optimizer_divisor() == 8);
  CHECK(zero1.gradient_divisor() == 1);
  CHECK(zero2.gradient_divisor() == 8);
  CHECK(zero2.weight_divisor() == 1);
  CHECK(zero3.weight_divisor() == 8);
  CHECK(zero0.gradient_reduction() == CollectiveKind::all_reduce);
  CHECK(zero1.gradient_reduction() == CollectiveKind::reduce_scatter);
  CHECK_FALSE(zero0.gathers_parameters());
  CHECK(zero3.gathers_parameters());
  CHECK(zero2.reduces_every_microbatch());
  CHECK_FALSE(zero3.reduces_every_microbatch());  // stage 3 reduces per unit after its backward
  CHECK(zero3.gathers_every_pass());
  // Megatron's --overlap-param-gather gathers at the next step's start; without it, and with
  // DeepSpeed's stage 2, after the optimizer.
  CHECK(zero1.gathers_after_optimizer(false));
  CHECK_FALSE(zero1.gathers_after_optimizer(true));
  CHECK(zero2.gathers_after_optimizer(true));
  CHECK_FALSE(zero3.gathers_after_optimizer(false));
  // The dense group is dp x cp; the experts' is dp x cp / ep.
  CHECK(clustersim::models::dense_sharding(1, 4, 2).ranks() == 8);
  CHECK(clustersim::models::expert_sharding(1, 4, 2, 4).ranks() == 2);
  CHECK_THROWS_WITH_AS(ZeroSharding(4, 8), "ZeRO stage 4 is not one of 0, 1, 2, 3", ConfigError);
  CHECK_THROWS_WITH_AS(ZeroSharding(1, 0.5), "a data-parallel group needs >= 1 rank, got 0.5", ConfigError);
}

}  // namespace zero_sharding_test
