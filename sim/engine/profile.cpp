#include "sim/engine/profile.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::engine {

double Profile::value_at(TimePs t_ps) const {
  double value = initial;
  for (const ProfileChange& change : changes) {
    if (change.at_ps > t_ps) break;
    value = change.value;
  }
  return value;
}

void check_profile(const Profile& profile, std::string_view what, double min_value, bool min_exclusive) {
  const auto check_value = [&](double value, std::string_view where) {
    const bool below = min_exclusive ? !(value > min_value) : !(value >= min_value);
    if (!std::isfinite(value) || below) {
      throw ConfigError(fmt::format("{}: {} must be a finite number {} {}, got {}", what, where,
                                    min_exclusive ? ">" : ">=", min_value, value));
    }
  };
  check_value(profile.initial, "the initial value");
  TimePs previous = -1;
  for (const ProfileChange& change : profile.changes) {
    if (change.at_ps < 0) {
      throw ConfigError(fmt::format("{}: a change at {} ps is before time 0", what, change.at_ps));
    }
    if (change.at_ps <= previous) {
      throw ConfigError(fmt::format("{}: change times must increase, got {} ps after {} ps", what, change.at_ps,
                                    previous));
    }
    check_value(change.value, fmt::format("the value at {} ps", change.at_ps));
    previous = change.at_ps;
  }
}

}  // namespace clustersim::engine
