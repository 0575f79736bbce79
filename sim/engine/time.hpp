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
/// The representable horizon: 2^63 ps, about 106.75 days of simulated time. A time or duration
/// at or past it (or NaN) cannot be a TimePs; the conversions below throw rather than wrap.
inline constexpr double kHorizonPs = 9223372036854775808.0;

/// Throws SimulationError: `ps` picoseconds (of `what`) is NaN or past the representable horizon.
[[noreturn]] void throw_time_overflow(double ps, const char* what);

/// Rounds a count of picoseconds to the nearest TimePs. NaN, or a value at or past the horizon
/// (either sign), is a SimulationError naming `what`: integer time never wraps silently.
inline TimePs checked_ps(double ps, const char* what = "a time") {
  if (!(std::fabs(ps) < kHorizonPs)) throw_time_overflow(ps, what);
  return static_cast<TimePs>(std::llround(ps));
}

/// Converts seconds to picoseconds, rounding to nearest (checked: see checked_ps). Negative
/// input is a bug in the caller.
inline TimePs seconds_to_ps(double seconds) {
  return checked_ps(seconds * static_cast<double>(kPsPerSecond), "a duration");
}

/// Converts picoseconds to seconds.
inline constexpr double ps_to_seconds(TimePs ps) {
  return static_cast<double>(ps) / static_cast<double>(kPsPerSecond);
}

}  // namespace clustersim::engine
