#include "topologies/link_profile.hpp"

#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::topologies {

bool valid_link_scale(double scale) { return std::isfinite(scale) && scale >= 0; }

void check_link_profile(const LinkProfile& profile, LinkId link, engine::TimePs now_ps) {
  for (std::size_t i = 0; i < profile.changes.size(); ++i) {
    const LinkCapacityChange& change = profile.changes[i];
    if (change.at_ps < now_ps) {
      throw ConfigError(
          fmt::format("link {} profile: change {} at {} ps is before the current time {} ps",
                      link, i, change.at_ps, now_ps));
    }
    if (i > 0 && change.at_ps <= profile.changes[i - 1].at_ps) {
      throw ConfigError(fmt::format(
          "link {} profile: change {} at {} ps is not after change {} at {} ps", link, i,
          change.at_ps, i - 1, profile.changes[i - 1].at_ps));
    }
    if (!valid_link_scale(change.scale)) {
      throw ConfigError(
          fmt::format("link {} profile: change {} scale must be a finite number >= 0, got {}",
                      link, i, change.scale));
    }
  }
}

}  // namespace clustersim::topologies
