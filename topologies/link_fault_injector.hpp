#pragma once
/// Applies degraded and failed cables and switches (a resolved NetworkFaultPlan,
/// topologies/link_faults.hpp) to a FlowNetwork over time, and reroutes the flows of failed
/// elements over the surviving links.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/engine/error.hpp"
#include "topologies/flow_network.hpp"
#include "topologies/link_faults.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// What a flow's route was computed from: Topology::path(src, dst, flow_key).
struct RouteKey {
  int src = 0;  ///< accelerator
  int dst = 0;  ///< accelerator
  std::uint64_t flow_key = 0;
};

/// The fault model of the flow fidelity, bound to one engine, topology and flow network (all
/// must outlive it).
///
/// * A degraded cable carries its fraction of the nominal payload rate from `at` to `until`
///   (faults on one link multiply): a link profile (FlowNetwork::apply_profile).
/// * A failed cable or switch carries nothing from `at` on (capacity 0): the flows crossing it
///   are paused (FlowNetwork::pause_flow: they keep their bytes and leave the sharing, so the
///   solver never hands an active flow a zero rate). A new flow whose route crosses it is
///   paused from its start (started_flow).
/// * `reroute_delay` after a failure (ECMP reconvergence or the subnet manager's sweep), every
///   active flow crossing a failed link moves onto its route over the surviving links
///   (Topology::surviving_routes: the same flow hash over the equal-cost next hops that survive,
///   or d-mod-k recomputed over them), and every flow started from then on takes that route.
///   Flows that cross no failed link keep their routes.
/// * Two accelerators with a flow between them and no surviving route stop the run: a
///   SimulationError naming them, the time and the failed elements (never a hang).
/// No route survives between two accelerators that must talk. `fault()` is the entry name (in
/// cluster.network.faults) of the first failure that partitions them, for pointing at it.
class NetworkPartitionError : public SimulationError {
 public:
  NetworkPartitionError(const std::string& message, std::string fault)
      : SimulationError(message), fault_(std::move(fault)) {}
  const std::string& fault() const { return fault_; }

 private:
  std::string fault_;
};

class LinkFaultInjector {
 public:
  /// A flow's route key from the tag it was started with (FlowNetwork::start_flow).
  using RouteOfTag = std::function<RouteKey(std::uint64_t route_tag)>;

  /// Schedules `plan`'s changes on `network` (times absolute, >= engine.now()). Throws
  /// ConfigError for a plan with failed elements on a topology that cannot reroute.
  LinkFaultInjector(engine::Engine& engine, const Topology& topology, FlowNetwork& network,
                    NetworkFaultPlan plan, RouteOfTag route_of_tag);
  LinkFaultInjector(const LinkFaultInjector&) = delete;
  LinkFaultInjector& operator=(const LinkFaultInjector&) = delete;
  ~LinkFaultInjector();

  /// The links a flow started now from `route` takes: `nominal` (Topology::path(route...)),
  /// or its route over the surviving links once a failure on it has been rerouted. Throws
  /// NetworkPartitionError when no route survives.
  std::span<const LinkId> links(const Path& nominal, const RouteKey& route) const;

  /// Tells the injector that `flow` just started on `links` (what links() gave): a flow
  /// crossing a failed element whose reroute is still pending is paused until it.
  void started_flow(FlowId flow, std::span<const LinkId> links);

  /// Failures rerouted so far.
  std::size_t reroutes() const { return rerouted_.size(); }
  /// Flows moved onto surviving routes so far.
  std::uint64_t flows_moved() const { return flows_moved_; }

  const NetworkFaultPlan& plan() const { return plan_; }

 private:
  void fail(const LinkFault& fault);
  void reroute_after(const LinkFault& fault);

  engine::Engine& engine_;
  const Topology& topology_;
  FlowNetwork& network_;
  NetworkFaultPlan plan_;
  RouteOfTag route_of_tag_;
  std::vector<const LinkFault*> rerouted_;  ///< failures whose reroute time has passed
  std::vector<LinkId> failed_links_;
  std::vector<std::uint8_t> down_;  ///< by link: failed, whether or not rerouted yet
  std::unique_ptr<Topology::SurvivingRoutes> survivors_;
  std::vector<engine::EventId> pending_;  ///< failure and reroute events, cancelled if this ends first
  std::uint64_t flows_moved_ = 0;
};

}  // namespace clustersim::topologies
