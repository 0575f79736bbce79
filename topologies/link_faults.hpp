#pragma once
/// Degraded and failed cables and switches (`cluster.network.faults`), resolved against a built
/// Topology: the directed links each fault changes, when, and to what capacity; and the reroute
/// policy with its delay. The flow backend (sim/platform/flow_comm.hpp) applies them: a degraded
/// cable's capacity is scaled (topologies/link_profile.hpp); a failed one carries nothing, its
/// flows stall, and after the reroute delay they move to routes over the surviving links
/// (Topology::surviving_routes). docs/reliability.md, "Degraded and failed links".
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/name_table.hpp"
#include "sim/engine/time.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// How traffic leaves a failed element.
enum class ReroutePolicy {
  /// Ethernet/RoCE: the routing protocol (BGP with BFD) withdraws the dead next hop and each
  /// switch re-hashes the flows that used it over the equal-cost next hops that survive.
  ecmp,
  /// InfiniBand: the subnet manager is told by a trap, sweeps the fabric, recomputes d-mod-k
  /// forwarding tables over the survivors and uploads them.
  subnet_manager,
};

/// "ecmp", "subnet-manager".
const config::NameTable<ReroutePolicy>& reroute_policy_names();
/// The policy of a fabric routed by `routing` ("ecmp" -> ecmp, "d-mod-k" -> subnet_manager).
ReroutePolicy default_reroute_policy(std::string_view routing);
/// Seconds from a failure to rerouted paths when `cluster.network.reroute_delay` is unset:
/// ecmp 0.3 s (failure detection by BFD at 50 ms x 6 missed packets, the relaxed setting of
/// ipSpace's "Controlling BGP Convergence Time", within RFC 7938's sub-second convergence of a
/// BGP data-centre fabric, section 7), subnet-manager 10 s (OpenSM's default sweep interval,
/// opensm(8) `--sweep`: the heavy sweep that recomputes the routes). docs/reliability.md.
double default_reroute_delay_s(ReroutePolicy policy);

/// One resolved fault.
struct LinkFault {
  std::string name;     ///< its entry name in cluster.network.faults
  std::string element;  ///< "link leaf0-spine1" or "switch spine0", for messages and reports
  std::vector<LinkId> links;  ///< every directed link it changes, ascending
  engine::TimePs at_ps = 0;
  std::optional<engine::TimePs> until_ps;  ///< a degraded cable's recovery
  double scale = 0;  ///< capacity fraction from at_ps on: 0 = down
  bool down() const { return scale == 0; }
};

/// The faults of a run and how they reroute.
struct NetworkFaultPlan {
  std::vector<LinkFault> faults;  ///< in entry-name order
  ReroutePolicy policy = ReroutePolicy::ecmp;
  engine::TimePs reroute_delay_ps = 0;
  bool empty() const { return faults.empty(); }
  /// True if some fault takes an element down (rerouting is needed).
  bool any_down() const;
};

/// A problem with one fault entry: the entry, the key under it ("link", "switch", "until", ...),
/// the message and a hint (closest names).
struct LinkFaultProblem {
  std::string fault;
  std::string key;
  std::string message;
  std::string hint;
};

/// Resolves `spec.faults` on `topology`: an unknown cable or switch (with the closest names), a
/// switch named as a cable or the reverse, not exactly one of link and switch, `until` not
/// after `at`, `until` on a down element (failed elements stay down: rerouting is permanent),
/// a switch fault with bandwidth_fraction > 0, and down faults on a topology that cannot
/// reroute are problems. Returns the plan of the faults without problems.
NetworkFaultPlan resolve_link_faults(const Topology& topology, const ScaleOutSpec& spec,
                                     std::vector<LinkFaultProblem>& problems);

/// The same, throwing ConfigError joining the problems.
NetworkFaultPlan resolve_link_faults(const Topology& topology, const ScaleOutSpec& spec);

}  // namespace clustersim::topologies
