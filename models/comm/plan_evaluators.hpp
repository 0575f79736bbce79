#pragma once
/// The two evaluators of a CollectivePlan: `analytical` (alpha-beta per phase) and `flow`
/// (the phases run on topologies::FlowNetwork with max-min fair sharing).
#include "models/comm/collective_plan.hpp"
#include "topologies/topology.hpp"

namespace clustersim::models {

/// Seconds: base latency + sum over phases of (fixed latency + max over the phase's flows of
/// bytes / min(rate cap, min over the flow's links of (link payload bytes/s / flows of this
/// phase on the link))).
/// Consistent with CollectiveModel (a ring phase reproduces its formula).
double analytical_time_s(const CollectivePlan& plan, const topologies::Topology& topology);

/// Seconds on a fresh engine and FlowNetwork: after the base latency, each phase waits its
/// fixed latency, then starts all its flows (no extra latency: wire latency is in the fixed
/// term) and ends when the last completes. Equals analytical_time_s when flows of a phase
/// sharing a bottleneck get equal shares (no contention beyond the analytical count), up to
/// picosecond rounding; slower when max-min sharing leaves a flow less than its count share.
double flow_time_s(const CollectivePlan& plan, const topologies::Topology& topology);

}  // namespace clustersim::models
