#pragma once
/// Integer arithmetic shared by the topology builders and the compute model.
#include <cstdint>

namespace clustersim::engine {

/// ceil(a / b) for a >= 0 and b > 0.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace clustersim::engine
