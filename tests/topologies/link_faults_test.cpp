// Degraded and failed cables and switches: names, resolution, and the flow model's stall and
// reroute, with completion times derived by hand on a two-spine fat-tree.
#include "topologies/link_fault_injector.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "sim/engine/error.hpp"
#include "topologies/link_faults.hpp"
#include "topology_test_support.hpp"

namespace link_faults_test {

using namespace clustersim::topologies;
using clustersim::engine::Engine;
using clustersim::engine::TimePs;

namespace {

constexpr TimePs kMs = 1'000'000'000;  // picoseconds per millisecond

/// 8 nodes of one GPU and one 50 GB/s NIC on a radix-4 two-tier fat-tree: d = u = 2, so 4
/// leaves (gpu0, gpu1 on leaf0; gpu2, gpu3 on leaf1; ...) and ceil(4 x 2 / 4) = 2 spines; uplink
/// j of every leaf goes to spine j. Links are ideal (efficiency 1): 50 GB/s payload everywhere.
ClusterNetworkSpec two_spines(const char* routing) {
  ClusterNetworkSpec spec = testing::cluster(8, 1, 1, "fat-tree", 4, 2);
  spec.scale_out.routing = routing;
  return spec;
}

LinkFaultSpec cable_down(std::string cable, double at_s) {
  LinkFaultSpec fault;
  fault.link = std::move(cable);
  fault.at_s = at_s;
  return fault;
}

/// Flows between accelerators, started at time 0 through the injector, each tagged with its
/// index; records when each completes.
struct FaultRun {
  Engine engine;
  const Topology& topology;
  FlowNetwork network;
  std::vector<RouteKey> routes;
  std::vector<FlowId> ids;
  std::vector<TimePs> done_ps;
  LinkFaultInjector injector;

  FaultRun(const Topology& built, NetworkFaultPlan plan, std::vector<RouteKey> flows)
      : topology(built),
        network(engine, built),
        routes(std::move(flows)),
        done_ps(routes.size(), -1),
        injector(engine, built, network, std::move(plan),
                 [this](std::uint64_t tag) { return routes[static_cast<std::size_t>(tag)]; }) {
    for (std::size_t i = 0; i < routes.size(); ++i) {
      const RouteKey& r = routes[i];
      const auto links = injector.links(topology.path(r.src, r.dst, r.flow_key), r);
      ids.push_back(network.start_flow(links, 0.5e9, 0.0, [this, i](Engine& e) { done_ps[i] = e.now(); },
                                       std::numeric_limits<double>::infinity(), i));
      injector.started_flow(ids.back(), links);
    }
  }
};

bool crosses(const Path& path, const std::vector<LinkId>& links) {
  for (const LinkId link : path.links) {
    if (std::find(links.begin(), links.end(), link) != links.end()) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("vertices and cables are named the way scenarios write them") {
  const Topology topology = Topology::build(two_spines("ecmp"));
  CHECK(topology.vertex_name(0) == "gpu0");
  REQUIRE(topology.find_vertex("leaf3"));
  CHECK(topology.vertex_name(*topology.find_vertex("leaf3")) == "leaf3");
  CHECK(topology.find_vertex("spine1"));
  CHECK_FALSE(topology.find_vertex("spine2"));
  CHECK(topology.is_switch(*topology.find_vertex("spine0")));
  CHECK_FALSE(topology.is_switch(*topology.find_vertex("gpu7")));
  const std::vector<std::string> cables = topology.cable_names();
  // 8 NIC cables, then 4 leaves x 2 uplinks.
  REQUIRE(cables.size() == 16);
  CHECK(cables.front() == "gpu0-leaf0");
  CHECK(std::find(cables.begin(), cables.end(), "leaf2-spine1") != cables.end());
  // A cable's two directions; a spine's every cable: 4 leaves x 2 directions.
  CHECK(topology.links_between(*topology.find_vertex("leaf0"), *topology.find_vertex("spine0")).size() == 2);
  CHECK(topology.links_at(*topology.find_vertex("spine0")).size() == 8);
  // Multi-GPU nodes add the NVSwitch; shared NICs are nicE; 3-tier fat-trees name agg and core.
  const Topology nodes = Topology::build(testing::cluster(2, 8, 2));
  CHECK(nodes.find_vertex("nvswitch1"));
  CHECK(nodes.find_vertex("nic3"));
  CHECK_FALSE(nodes.find_vertex("nic4"));
  const Topology three = Topology::build(testing::cluster(64, 1, 1, "fat-tree", 8, 3));
  CHECK(three.find_vertex("agg0"));
  CHECK(three.find_vertex("core0"));
  CHECK_FALSE(three.find_vertex("spine0"));
}

TEST_CASE("fault entries resolve to the directed links of their cable or switch, or say what is wrong") {
  const Topology topology = Topology::build(two_spines("d-mod-k"));
  ScaleOutSpec spec = topology.spec().scale_out;
  spec.faults["a"] = cable_down("spine0-leaf1", 0.004);  // either order
  LinkFaultSpec degraded;
  degraded.link = "leaf2-spine1";
  degraded.at_s = 0.001;
  degraded.until_s = 0.002;
  degraded.bandwidth_fraction = 0.5;
  spec.faults["b"] = degraded;
  LinkFaultSpec spine;
  spine.switch_name = "spine1";
  spine.at_s = 0.003;
  spec.faults["c"] = spine;
  const NetworkFaultPlan plan = resolve_link_faults(topology, spec);
  REQUIRE(plan.faults.size() == 3);
  CHECK(plan.policy == ReroutePolicy::subnet_manager);  // d-mod-k routing
  CHECK(plan.reroute_delay_ps == 10'000 * kMs);          // OpenSM's 10 s sweep
  CHECK(plan.faults[0].element == "link spine0-leaf1");
  CHECK(plan.faults[0].links.size() == 2);
  CHECK(plan.faults[0].down());
  CHECK(plan.faults[1].scale == 0.5);
  CHECK(plan.faults[1].until_ps == 2 * kMs);
  CHECK(plan.faults[2].links.size() == 8);
  spec.reroute = "ecmp";
  spec.reroute_delay_s = 0.05;
  CHECK(resolve_link_faults(topology, spec).reroute_delay_ps == 50 * kMs);
  spec.reroute_delay_s.reset();
  CHECK(resolve_link_faults(topology, spec).reroute_delay_ps == 300 * kMs);  // BFD 50 ms x 6

  ScaleOutSpec bad = topology.spec().scale_out;
  bad.faults["typo"] = cable_down("leaf0-spine9", 0.001);
  bad.faults["named-a-switch"] = cable_down("spine0", 0.001);
  LinkFaultSpec recovers = cable_down("leaf0-spine0", 0.001);
  recovers.until_s = 0.002;
  bad.faults["recovers"] = recovers;
  LinkFaultSpec half_switch = spine;
  half_switch.bandwidth_fraction = 0.5;
  bad.faults["half-switch"] = half_switch;
  LinkFaultSpec early = degraded;
  early.until_s = 0.0005;
  bad.faults["early"] = early;
  std::vector<LinkFaultProblem> problems;
  CHECK(resolve_link_faults(topology, bad, problems).faults.empty());
  REQUIRE(problems.size() == 5);
  CHECK(problems[0].fault == "early");
  CHECK(problems[0].message == "must be after at (0.001 s), got 0.0005 s");
  CHECK(problems[1].fault == "half-switch");
  CHECK(problems[1].key == "bandwidth_fraction");
  CHECK(problems[2].message == "'spine0' is a switch, not a cable: write `switch: spine0`");
  CHECK(problems[3].key == "until");
  CHECK(problems[4].message == "unknown cable 'leaf0-spine9' (a cable is named by its two ends, e.g. leaf0-spine0)");
  CHECK(problems[4].hint.rfind("did you mean 'leaf0-spine0'? valid cables: gpu0-leaf0, gpu1-leaf0", 0) == 0);

  // A dragonfly routes minimally: a failed element has no detour in this model.
  ClusterNetworkSpec dragonfly = testing::cluster(8, 1, 1, "dragonfly");
  dragonfly.scale_out.dragonfly_groups = 2;
  dragonfly.scale_out.dragonfly_routers_per_group = 2;
  dragonfly.scale_out.dragonfly_terminals_per_router = 2;
  dragonfly.scale_out.dragonfly_global_links_per_router = 1;
  const Topology fly = Topology::build(dragonfly);
  ScaleOutSpec fly_faults = dragonfly.scale_out;
  LinkFaultSpec router;
  router.switch_name = "router0";
  router.at_s = 0.001;
  fly_faults.faults["r"] = router;
  CHECK_THROWS_WITH_AS(resolve_link_faults(fly, fly_faults),
                       "cluster.network.faults.r.switch: topology dragonfly cannot route around a failed element (only "
                       "fat-tree, rail-optimized, switch and custom networks reroute); degrade it instead "
                       "(bandwidth_fraction > 0)",
                       clustersim::ConfigError);
}

TEST_CASE("a failed spine cable: its flow stalls for the reroute delay, then shares the surviving spine") {
  // d-mod-k: gpu0 -> gpu2 (flow A) takes spine 2 mod 2 = 0, gpu1 -> gpu3 (flow B) spine 3 mod 2 = 1.
  // 0.5 GB each at 50 GB/s: 10 ms alone. leaf0-spine0 fails at 4 ms; the subnet manager reroutes
  // 2 ms later.
  //   A: 0.2 GB by 4 ms (0.3 GB left), stalled 4-6 ms.
  //   B: alone on spine1 until 6 ms: 0.3 GB carried, 0.2 GB left.
  //   6 ms: A moves to spine1 (the only survivor); A and B share leaf0->spine1->leaf1 at 25 GB/s:
  //   B's 0.2 GB take 8 ms, B ends at 14 ms; A carried 0.2 GB meanwhile, 0.1 GB left alone at
  //   50 GB/s: 2 ms, A ends at 16 ms.
  const Topology topology = Topology::build(two_spines("d-mod-k"));
  ScaleOutSpec spec = topology.spec().scale_out;
  spec.faults["cable"] = cable_down("leaf0-spine0", 0.004);
  spec.reroute_delay_s = 0.002;
  const NetworkFaultPlan plan = resolve_link_faults(topology, spec);
  FaultRun run(topology, plan, {{0, 2, 0}, {1, 3, 0}});
  CHECK(crosses(topology.path(0, 2), plan.faults[0].links));
  CHECK_FALSE(crosses(topology.path(1, 3), plan.faults[0].links));
  run.engine.run(5 * kMs);
  // Paused behind the dead cable: out of the sharing, not an active flow at rate 0.
  CHECK(run.network.paused(run.ids[0]));
  CHECK(run.network.rate_bytes_per_s(run.ids[0]) == 0);
  CHECK(run.network.active_flows() == 2);
  CHECK(run.network.rate_bytes_per_s(run.ids[1]) == 50e9);
  run.engine.run(7 * kMs);
  CHECK_FALSE(run.network.paused(run.ids[0]));
  CHECK(run.network.rate_bytes_per_s(run.ids[0]) == 25e9);
  CHECK(run.network.rate_bytes_per_s(run.ids[1]) == 25e9);
  run.engine.run();
  CHECK(run.done_ps[0] == 16 * kMs);
  CHECK(run.done_ps[1] == 14 * kMs);
  CHECK(run.injector.reroutes() == 1);
  CHECK(run.injector.flows_moved() == 1);
  // The traffic counts A's bytes on the dead cable up to the failure, and the rest on its detour.
  const LinkTraffic& traffic = run.network.traffic();
  const LinkId dead_up = topology.path(0, 2).links[1];
  CHECK(traffic.bytes[static_cast<std::size_t>(dead_up)] == doctest::Approx(0.2e9));
}

TEST_CASE("ECMP: a lone flow re-hashes onto the spine that survives") {
  // Whichever spine the hash gave gpu0 -> gpu2, fail that cable at 4 ms; ECMP reconverges 2 ms
  // later onto the other spine: 0.2 GB by 4 ms, stalled to 6 ms, 0.3 GB at 50 GB/s = 6 ms: 12 ms.
  const Topology topology = Topology::build(two_spines("ecmp"));
  const LinkId up = topology.path(0, 2).links[1];  // leaf0 -> its spine
  const std::string spine = topology.vertex_name(topology.links()[static_cast<std::size_t>(up)].to);
  ScaleOutSpec spec = topology.spec().scale_out;
  spec.faults["cable"] = cable_down("leaf0-" + spine, 0.004);
  spec.reroute_delay_s = 0.002;
  const NetworkFaultPlan plan = resolve_link_faults(topology, spec);
  CHECK(plan.policy == ReroutePolicy::ecmp);
  FaultRun run(topology, plan, {{0, 2, 0}});
  run.engine.run();
  CHECK(run.done_ps[0] == 12 * kMs);
  // New flows after the reroute take the detour from their start.
  const auto survivors = topology.surviving_routes(plan.faults[0].links, false);
  const Path* detour = survivors->path(0, 2);
  REQUIRE(detour != nullptr);
  CHECK_FALSE(crosses(*detour, plan.faults[0].links));
  CHECK(detour->links.size() == 4);
  CHECK(survivors->path(4, 6) == &topology.path(4, 6));  // routes off leaf0 are kept as they were
}

TEST_CASE("a degraded cable at 50 % for 4 ms slows its flow by the bytes it could not carry") {
  // Flow A alone on leaf0-spine0 (d-mod-k), which carries half from 4 ms to 8 ms: 0.2 GB by 4 ms,
  // 0.1 GB at 25 GB/s to 8 ms, 0.2 GB left at 50 GB/s: 4 ms, A ends at 12 ms (10 ms intact).
  const Topology topology = Topology::build(two_spines("d-mod-k"));
  ScaleOutSpec spec = topology.spec().scale_out;
  LinkFaultSpec half = cable_down("leaf0-spine0", 0.004);
  half.bandwidth_fraction = 0.5;
  half.until_s = 0.008;
  spec.faults["half"] = half;
  FaultRun run(topology, resolve_link_faults(topology, spec), {{0, 2, 0}});
  run.engine.run();
  CHECK(run.done_ps[0] == 12 * kMs);
  CHECK(run.injector.reroutes() == 0);
  // Without `until`, the rest goes at 25 GB/s: 0.3 GB in 12 ms, A ends at 16 ms.
  spec.faults["half"].until_s.reset();
  FaultRun open(topology, resolve_link_faults(topology, spec), {{0, 2, 0}});
  open.engine.run();
  CHECK(open.done_ps[0] == 16 * kMs);
}

TEST_CASE("a failed spine switch reroutes every flow through it onto the other spine") {
  // Flows A gpu0 -> gpu2 (spine0), B gpu1 -> gpu3 (spine1), C gpu4 -> gpu6 (6 mod 2 = 0: spine0).
  // spine0 fails at 4 ms, rerouted at 6 ms. A and B as with the failed cable: 16 ms and 14 ms.
  // C moves to leaf2 -> spine1 -> leaf3, which nobody else uses: 0.2 GB by 4 ms, stalled, then
  // 0.3 GB at 50 GB/s: C ends at 12 ms.
  const Topology topology = Topology::build(two_spines("d-mod-k"));
  ScaleOutSpec spec = topology.spec().scale_out;
  LinkFaultSpec spine;
  spine.switch_name = "spine0";
  spine.at_s = 0.004;
  spec.faults["spine"] = spine;
  spec.reroute_delay_s = 0.002;
  FaultRun run(topology, resolve_link_faults(topology, spec), {{0, 2, 0}, {1, 3, 0}, {4, 6, 0}});
  run.engine.run();
  CHECK(run.done_ps[0] == 16 * kMs);
  CHECK(run.done_ps[1] == 14 * kMs);
  CHECK(run.done_ps[2] == 12 * kMs);
  CHECK(run.injector.flows_moved() == 2);
}

TEST_CASE("a failure that cuts two accelerators apart stops the run, naming them and the time") {
  // gpu0's only cable fails at 4 ms: at the reroute (6 ms) no route joins gpu0 and gpu2.
  const Topology topology = Topology::build(two_spines("d-mod-k"));
  ScaleOutSpec spec = topology.spec().scale_out;
  spec.faults["nic"] = cable_down("gpu0-leaf0", 0.004);
  spec.reroute_delay_s = 0.002;
  FaultRun run(topology, resolve_link_faults(topology, spec), {{0, 2, 0}});
  CHECK_THROWS_WITH_AS(run.engine.run(),
                       "cluster.network.faults: at 0.006 s no route survives from gpu0 to gpu2, which must talk: the "
                       "network is partitioned by the failure of link gpu0-leaf0 (fault 'nic' at 0.004 s)",
                       clustersim::SimulationError);
}

TEST_CASE("a flow started during the reroute delay over the dead cable is paused until the reroute") {
  // d-mod-k; leaf0-spine0 fails at 0 s, rerouted at 2 ms. A (gpu0 -> gpu2, spine0) starts at 0
  // over the dead cable: paused to 2 ms, then 0.5 GB alone via spine1 at 50 GB/s: ends at 12 ms.
  const Topology topology = Topology::build(two_spines("d-mod-k"));
  ScaleOutSpec spec = topology.spec().scale_out;
  spec.faults["cable"] = cable_down("leaf0-spine0", 0.0);
  spec.reroute_delay_s = 0.002;
  FaultRun run(topology, resolve_link_faults(topology, spec), {{0, 2, 0}});
  run.engine.run(1 * kMs);
  CHECK(run.network.paused(run.ids[0]));
  run.engine.run();
  CHECK(run.done_ps[0] == 12 * kMs);
  // The dead cable carried nothing.
  const LinkId dead_up = topology.path(0, 2).links[1];
  CHECK(run.network.traffic().bytes[static_cast<std::size_t>(dead_up)] == 0);
}

}  // namespace link_faults_test
