#pragma once
/// A link's capacity over time, for the flow model (topologies/flow_network.hpp): a list of
/// changes at absolute simulated times, each scaling the link's nominal payload rate, in the
/// manner of SimGrid's bandwidth and state profiles (one list holds both: scale 0 is down).
#include <vector>

#include "sim/engine/time.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// From `at_ps` on, the link carries `scale` x its nominal payload rate
/// (Link::payload_bytes_per_s).
struct LinkCapacityChange {
  engine::TimePs at_ps = 0;  ///< absolute simulated time, picoseconds
  double scale = 1.0;        ///< finite, >= 0: 0 = down, 0.5 = degraded to half, 1 = nominal
};

/// Capacity changes of one link at strictly increasing times. Between two changes the
/// capacity holds; before the first it is whatever it was (nominal unless changed), and after
/// the last it stays. An empty profile changes nothing.
struct LinkProfile {
  std::vector<LinkCapacityChange> changes;
};

/// True if `scale` is a valid capacity scale: a finite number >= 0.
bool valid_link_scale(double scale);

/// Throws ConfigError naming the first bad change of `profile` for `link`: a time before
/// `now_ps`, a time not after the previous change's, or a scale that is not a finite number
/// >= 0.
void check_link_profile(const LinkProfile& profile, LinkId link, engine::TimePs now_ps);

}  // namespace clustersim::topologies
