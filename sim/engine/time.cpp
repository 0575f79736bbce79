#include "sim/engine/time.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::engine {

void throw_time_overflow(double ps, const char* what) {
  if (std::isnan(ps)) throw SimulationError(fmt::format("{} is not a number (NaN picoseconds)", what));
  throw SimulationError(fmt::format(
      "{} of {:.6g} s is past the representable horizon of simulated time (2^63 ps, about {:.1f} days): "
      "simulate a shorter run (fewer steps or requests)",
      what, ps / static_cast<double>(kPsPerSecond), kHorizonPs / static_cast<double>(kPsPerSecond) / 86400.0));
}

}  // namespace clustersim::engine
