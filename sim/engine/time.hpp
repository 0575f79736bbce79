#pragma once
/// Simulated time: an integer count of picoseconds.
#include <cmath>
#include <cstdint>
#include <limits>

namespace clustersim::engine {

/// Simulated time or duration in picoseconds.
using TimePs = std::int64_t;

inline constexpr TimePs kPsPerSecond = 1'000'000'000'000;
inline constexpr TimePs kTimeNever = std::numeric_limits<TimePs>::max();

/// Converts seconds to picoseconds, rounding to nearest. Negative input is a bug in the caller.
inline TimePs seconds_to_ps(double seconds) {
  return static_cast<TimePs>(std::llround(seconds * static_cast<double>(kPsPerSecond)));
}

/// Converts picoseconds to seconds.
inline constexpr double ps_to_seconds(TimePs ps) {
  return static_cast<double>(ps) / static_cast<double>(kPsPerSecond);
}

}  // namespace clustersim::engine
