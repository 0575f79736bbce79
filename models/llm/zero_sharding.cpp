#include "models/llm/zero_sharding.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {

ZeroSharding::ZeroSharding(int stage, double ranks) : stage_(stage), ranks_(ranks) {
  if (stage < 0 || stage > 3) throw ConfigError(fmt::format("ZeRO stage {} is not one of 0, 1, 2, 3", stage));
  if (!(ranks >= 1)) throw ConfigError(fmt::format("a data-parallel group needs >= 1 rank, got {}", ranks));
}

ZeroSharding dense_sharding(int stage, int dp, int cp) {
  return ZeroSharding(stage, static_cast<double>(dp) * cp);
}

ZeroSharding expert_sharding(int stage, int dp, int cp, int ep) {
  return ZeroSharding(stage, static_cast<double>(dp) * cp / ep);
}

}  // namespace clustersim::models
