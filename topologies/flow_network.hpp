#pragma once
/// Flow-level network with contention: max-min fair sharing of directed links among active
/// flows, computed by progressive filling. When flows start or end the allocation is restored
/// incrementally (topologies/flow_incremental.hpp): only the flows the change can reach are
/// revisited, and only flows whose rate changed get their completion event rescheduled. Link
/// capacities can change during a run (degraded or down links, link_profile.hpp).
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/engine.hpp"
#include "topologies/link_profile.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// Handle of a flow in a FlowNetwork.
using FlowId = std::int64_t;

/// Bytes carried per directed link, for utilisation reports.
struct LinkTraffic {
  std::vector<double> bytes;  ///< indexed by LinkId
};

/// Told the load of the links whose summed flow rate changed, once per simulated instant at
/// which rates changed (after that instant's recompute). Listening never schedules events,
/// so it does not change a run. link_utilisation.hpp aggregates it per network tier.
class LinkLoadListener {
 public:
  virtual ~LinkLoadListener() = default;
  /// `changed`: the links (each once) whose load changed at `now_ps`; `load_bytes_per_s`:
  /// every link's summed flow rate from now on, indexed by LinkId.
  virtual void on_link_loads(engine::TimePs now_ps, std::span<const LinkId> changed,
                             std::span<const double> load_bytes_per_s) = 0;
};

/// A flow-level network bound to one engine and one topology (both must outlive it).
///
/// Timing: a flow's remaining bytes drain at its current rate; its completion event is at the
/// picosecond ceiling of the time its last byte leaves, so it never ends early by more than a
/// rounding hair (a relative 1e-14 of its duration). At that moment it leaves the network
/// (freeing its bandwidth for the others at the same instant) and its handler is scheduled
/// `latency_s` later. Rates are recomputed once per simulated instant: starts and ends at the
/// same time are batched into one recompute, run by an event at that time (or earlier, when
/// rate_bytes_per_s is asked). The network must outlive its pending events; destroying it
/// cancels them (handlers already scheduled for completed flows stay).
///
/// Capacity changes: a link carries its nominal payload rate (Link::payload_bytes_per_s) times
/// a scale, 1 until changed by set_link_scale or a LinkProfile. A change takes effect at the
/// current instant and joins that instant's batched recompute like a start or an end; flows
/// keep the bytes they carried at the old rates, and only flows whose rate changed get their
/// completion rescheduled. A link of scale 0 is down: every flow crossing it gets rate 0 and
/// stalls (it stays active, with no completion event) until the link comes back, then carries
/// on from where it stopped; a flow started over a down link stalls from its start. A flow
/// that is still stalled when the engine runs out of events never completes. A flow's rate
/// cap is its own limit (an endpoint's NIC or protocol), not a link's, so no link scale
/// changes it: on a degraded link a capped flow gets at most min(its cap, its max-min share of
/// the scaled capacity).
class FlowNetwork {
 public:
  /// Called once when the flow's last byte has arrived (transfer time + path latency).
  using CompletionHandler = engine::EventHandler;

  FlowNetwork(engine::Engine& engine, const Topology& topology);
  /// A network over explicit directed links (copied), e.g. for tests of the sharing rules;
  /// start_flow_between is unavailable. Throws ConfigError if a link's bytes_per_s is not a
  /// finite number > 0 or its latency_s not a finite number >= 0.
  FlowNetwork(engine::Engine& engine, std::span<const Link> links);
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;
  ~FlowNetwork();

  /// Starts a flow of `bytes` (> 0) now along the directed `links`, with an optional rate cap
  /// (e.g. a NIC or protocol limit). Its completion fires `latency_s` after the last byte
  /// leaves. A flow with no links (same endpoint) completes after `latency_s` and is never
  /// active. An empty handler is allowed (nothing is called). Throws ConfigError if `bytes` is
  /// not a finite number > 0, `latency_s` not a finite number >= 0, the cap not > 0, or a link
  /// id is unknown or repeated.
  /// `route_tag` is the caller's, returned by flows_crossing (e.g. what the flow's route was
  /// computed from, so that it can be rerouted).
  FlowId start_flow(std::span<const LinkId> links, double bytes, double latency_s,
                    CompletionHandler on_complete,
                    double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity(),
                    std::uint64_t route_tag = 0);

  /// Convenience: a flow from accelerator `src` to `dst` along Topology::path.
  FlowId start_flow_between(int src, int dst, double bytes, CompletionHandler on_complete,
                            double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity());

  /// Sets `link`'s capacity to `scale` x its nominal payload rate from now on (0: down, 1:
  /// nominal; above 1 is allowed). Throws ConfigError if the link id is unknown or `scale` is
  /// not a finite number >= 0.
  void set_link_scale(LinkId link, double scale);

  /// Schedules the changes of `profile` on `link` as engine events at their times, each acting
  /// as set_link_scale then; the changes still pending from an earlier profile of the link are
  /// dropped (an empty profile just drops them). Throws ConfigError, scheduling nothing, if
  /// the link id is unknown or the profile invalid (check_link_profile: a time before now, not
  /// increasing, or a scale that is not a finite number >= 0).
  void apply_profile(LinkId link, const LinkProfile& profile);

  /// An active flow crossing a given link (flows_crossing).
  struct CrossingFlow {
    FlowId flow = 0;
    std::uint64_t route_tag = 0;  ///< as given to start_flow
  };
  /// The active flows (stalled and paused ones included) whose path crosses a link
  /// `crossed(link)` is true for, in start-slot order (deterministic).
  std::vector<CrossingFlow> flows_crossing(const std::function<bool(LinkId)>& crossed) const;

  /// Pauses active flow `flow` now: it keeps its bytes (those carried so far stay counted on its
  /// links) but leaves the sharing: the solver does not see it, so it gets no rate and no
  /// completion event (it is not an active flow with a zero rate) until reroute_flow puts it on
  /// a path again. It still counts in active_flows(), and flows_crossing finds it by the links
  /// it had. Pausing a paused flow does nothing. Throws ConfigError if the flow is not active.
  void pause_flow(FlowId flow);
  /// True if `flow` is active and paused.
  bool paused(FlowId flow) const;

  /// Moves active flow `flow` onto the directed `links` now (a reroute; a paused flow resumes):
  /// it keeps the bytes it has carried (counted on its old links), its rate cap, latency and
  /// handler, and joins this instant's batched recompute on the new path. Throws ConfigError if
  /// the flow is not active or a link id is unknown or repeated, or `links` is empty.
  void reroute_flow(FlowId flow, std::span<const LinkId> links);

  /// Payload capacity of `link` now, bytes/s: its nominal payload rate x its current scale.
  /// Throws ConfigError if the link id is unknown.
  double link_capacity_bytes_per_s(LinkId link) const;

  /// Current max-min fair rate of an active flow, bytes/s (0 if finished, unknown, or stalled
  /// on a down link). Runs a pending recompute first.
  double rate_bytes_per_s(FlowId flow) const;
  /// Active flows (started, not yet transferred all bytes; stalled ones included).
  std::size_t active_flows() const;
  /// Bytes carried on every directed link up to the engine's current time (a stalled flow
  /// keeps counting what it carried before it stalled).
  const LinkTraffic& traffic() const;
  /// Sends link loads to `listener` from now on (nullptr: to nobody); it must outlive the
  /// network or be unset first. Loads count only flows whose rate is set after this call, so
  /// set it before the first flow starts.
  void set_load_listener(LinkLoadListener* listener);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The flow solver's invariant on one active flow's solved rate: finite and >= 0, and > 0
/// unless a link of its path has no capacity (a down link stalls the flow until it recovers).
/// `path_min_capacity_bytes_per_s` is the smallest capacity on the flow's path. Returns the
/// violation, or "" when the rate is valid. FlowNetwork checks every rate it solves with it
/// and throws SimulationError on a violation, in every build.
std::string flow_rate_violation(double rate_bytes_per_s, double path_min_capacity_bytes_per_s);

}  // namespace clustersim::topologies
