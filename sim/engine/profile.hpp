#pragma once
/// A value over simulated time (SimGrid's resource profiles): `initial` from the start, then
/// each change's value from its time on. Device speeds (sim/exec) and link capacities
/// (topologies/flow_network) change this way, so stragglers, degraded links and failures act
/// in the timeline instead of rescaling results.
#include <string_view>
#include <vector>

#include "sim/engine/time.hpp"

namespace clustersim::engine {

/// One change of a profile: from `at_ps` on, the value is `value`.
struct ProfileChange {
  TimePs at_ps = 0;
  double value = 1;
  friend bool operator==(const ProfileChange&, const ProfileChange&) = default;
};

/// A piecewise-constant value over time.
struct Profile {
  double initial = 1;                 ///< value before the first change
  std::vector<ProfileChange> changes;  ///< strictly increasing times

  /// A profile that never changes.
  static Profile constant(double value) { return Profile{value, {}}; }
  /// True when the value never changes.
  bool is_constant() const { return changes.empty(); }
  /// The value at time `t_ps` (a change at exactly t_ps applies).
  double value_at(TimePs t_ps) const;
  friend bool operator==(const Profile&, const Profile&) = default;
};

/// Throws ConfigError naming `what` when a value is not finite or below `min_value` (or equal
/// to it when `min_exclusive`), a change time is negative, or change times are not strictly
/// increasing.
void check_profile(const Profile& profile, std::string_view what, double min_value, bool min_exclusive);

}  // namespace clustersim::engine
