#pragma once
/// The two evaluators of a CollectivePlan: `analytical` (alpha-beta per phase) and `flow`
/// (the phases run on topologies::FlowNetwork with max-min fair sharing).
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "models/comm/collective_plan.hpp"
#include "topologies/topology.hpp"

namespace clustersim::models {

/// Seconds: base latency + sum over phases of (fixed latency + max over the phase's flows of
/// bytes / min(rate cap, min over the flow's links of (link payload bytes/s / flows of this
/// phase on the link))).
/// Consistent with CollectiveModel (a ring phase reproduces its formula).
double analytical_time_s(const CollectivePlan& plan, const topologies::Topology& topology);

/// Seconds for `plans` run at the same time, merged phase by phase as the flow backend runs
/// replicas of a collective: phase k of every plan starts together after the largest base and
/// fixed latency among them; a link's payload rate is divided among the phase-k flows of every
/// plan that cross it; the phase ends with the slowest flow of the first `gating` plans (the
/// other plans only load the links). One plan (gating 1) gives analytical_time_s. Throws
/// ConfigError when `gating` is 0 or exceeds the plans.
double shared_analytical_time_s(std::span<const CollectivePlan> plans, std::size_t gating,
                                const topologies::Topology& topology);

/// Flows a communication keeps on each link it crosses: for every link, the most flows of
/// `plans` (every replica) on it in any one phase. Sorted by link. The steady load another
/// communication running at the same time sees (shared_analytical_time_s's background).
using LinkLoad = std::vector<std::pair<topologies::LinkId, double>>;
LinkLoad link_load(std::span<const CollectivePlan> plans, const topologies::Topology& topology);

/// The loads of several communications running at once: their flows summed per link, sorted.
LinkLoad summed_link_load(std::span<const LinkLoad* const> loads);

/// As shared_analytical_time_s, with `background` flows (sorted by link, e.g. the sum of
/// link_load of communications already running) on the links besides each phase's own: a
/// flow's share of a link is its payload rate over its phase's flows plus the background there.
double shared_analytical_time_s(std::span<const CollectivePlan> plans, std::size_t gating,
                                const topologies::Topology& topology, const LinkLoad& background);

/// Seconds on a fresh engine and FlowNetwork: after the base latency, each phase waits its
/// fixed latency, then starts all its flows (no extra latency: wire latency is in the fixed
/// term) and ends when the last completes. Equals analytical_time_s when flows of a phase
/// sharing a bottleneck get equal shares (no contention beyond the analytical count), up to
/// picosecond rounding; slower when max-min sharing leaves a flow less than its count share.
double flow_time_s(const CollectivePlan& plan, const topologies::Topology& topology);

}  // namespace clustersim::models
