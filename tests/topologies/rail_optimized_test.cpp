#include "topologies/rail_optimized.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

namespace rail_optimized_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

namespace {

const Link& link_at(const Topology& topology, LinkId id) {
  return topology.links()[static_cast<std::size_t>(id)];
}

}  // namespace

TEST_CASE("rail-optimized: 4 nodes x 8 GPUs, radix 8: 8 rail leaves and 4 spines") {
  // d = 4 nodes per rail group, u = 4: one group, 8 rails -> 8 leaves, ceil(8*4/8) = 4 spines,
  // leaf l uplink j -> spine (4l + j) mod 4 = j (one cable per spine).
  const Topology topology = Topology::build(cluster(4, 8, 8, "rail-optimized", 8, 2));
  const RailShape shape = rail_shape(topology.spec().scale_out, 4, 8);
  CHECK(shape.down_ports == 4);
  CHECK(shape.up_ports == 4);
  CHECK(shape.groups == 1);
  CHECK(shape.leaves == 8);
  CHECK(shape.spines == 4);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 4 + 8 + 4);       // NVSwitches, rail leaves, spines
  CHECK(summary.links == 32 + 32 + 8 * 4);    // NVLink, NIC, uplinks
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(32 * 50e9 / 2));
  CHECK(summary.diameter_hops == 4);          // cross-rail: NIC-leaf-spine-leaf-NIC

  // GPU 0 of node 0 and GPU 0 of node 1 share rail 0: one leaf, no spine.
  const Path& same_rail = topology.path(0, 8);
  REQUIRE(same_rail.links.size() == 2);
  CHECK(link_at(topology, same_rail.links[0]).tier == 1);
  CHECK(link_at(topology, same_rail.links[0]).to == link_at(topology, same_rail.links[1]).from);
  CHECK(same_rail.latency_s == relative_approx(2e-6));
  // GPU 0 -> GPU 1 of another node: under PXN (the default) over NVLink to GPU 1 of node 0, then
  // rail 1's leaf: no spine.
  const Path& pxn = topology.path(0, 9);
  REQUIRE(pxn.links.size() == 4);
  CHECK(link_at(topology, pxn.links[0]).tier == 0);
  CHECK(link_at(topology, pxn.links[1]).tier == 0);
  CHECK(link_at(topology, pxn.links[1]).to == 1);  // GPU 1 of node 0, the relay
  CHECK(link_at(topology, pxn.links[2]).tier == 1);
  CHECK(link_at(topology, pxn.links[3]).tier == 1);
  // Without PXN it crosses rails through a spine.
  auto no_pxn_spec = cluster(4, 8, 8, "rail-optimized", 8, 2);
  no_pxn_spec.scale_out.pxn = false;
  const Topology no_pxn = Topology::build(no_pxn_spec);
  const Path& cross_rail = no_pxn.path(0, 9);
  REQUIRE(cross_rail.links.size() == 4);
  CHECK(link_at(no_pxn, cross_rail.links[1]).tier == 2);
  // Rail i is the same switch for every node: GPU 3 of nodes 1, 2, 3 all land on it.
  const int rail3 = link_at(topology, topology.path(3, 11).links[0]).to;
  CHECK(link_at(topology, topology.path(3, 19).links[0]).to == rail3);
  CHECK(link_at(topology, topology.path(27, 3).links[0]).to == rail3);
  CHECK(link_at(topology, topology.path(2, 11).links[0]).to != rail3);
  // Same node stays on NVLink.
  CHECK(topology.path(0, 1).links.size() == 2);
  CHECK(link_at(topology, topology.path(0, 1).links[0]).tier == 0);
}

TEST_CASE("rail-optimized: groups of d nodes get their own rail leaves") {
  // 8 nodes x 2 GPUs x 2 NICs, radix 8: d = 4, 2 groups x 2 rails = 4 leaves,
  // spines = ceil(4*4/8) = 2; leaf l uplink j -> spine j mod 2 (two cables per spine).
  const Topology topology = Topology::build(cluster(8, 2, 2, "rail-optimized", 8, 2));
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 8 + 4 + 2);
  CHECK(summary.links == 16 + 16 + 16);
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(400e9));  // min(16x50/2, 4x4x50/2)
  CHECK(topology.path(0, 2).links.size() == 2);  // nodes 0, 1: group 0, rail 0
  CHECK(topology.path(0, 8).links.size() == 4);  // node 4 is in group 1
}

TEST_CASE("rail-optimized parameters are validated together") {
  CHECK_THROWS_WITH_AS(Topology::build(cluster(5, 8, 8, "rail-optimized", 8, 2)),
                       "rail-optimized fat-tree of radix 8 with 8 rails holds at most 4 nodes at "
                       "oversubscription 1 (at most 8 rail leaves of 4 nodes); the cluster has 5: "
                       "use tiers: 3 or a larger radix",
                       clustersim::ConfigError);
  const std::vector<std::string> problems =
      spec_problems(cluster(4, 8, 8, "rail-optimized", 7, 4, 0.5));
  REQUIRE(problems.size() == 3);
  CHECK(problems[0] ==
        "rail-optimized fat-tree has 2 tiers (rail leaves and spines) or 3 (rail leaves, rail-aligned aggregation "
        "pods and cores), got tiers: 4");
  CHECK(problems[1] == "rail-optimized radix must be even and >= 4, got 7");
  CHECK(problems[2] == "scale_out.oversubscription (rail leaf downlink:uplink ratio) must be a "
                       "finite number >= 1, got 0.5");
  auto three_tiers = cluster(4, 8, 8, "rail-optimized", 8, 3);
  three_tiers.scale_out.aggregation_oversubscription = 0.5;
  const std::vector<std::string> aggregation = spec_problems(three_tiers);
  REQUIRE(aggregation.size() == 1);
  CHECK(aggregation[0] == "scale_out.aggregation_oversubscription must be a finite number >= 1, got 0.5");
  CHECK_THROWS_WITH_AS(Topology::build(cluster(17, 8, 8, "rail-optimized", 8, 3)),
                       "3-tier rail-optimized fat-tree of radix 8 with 8 rails holds at most 16 nodes (at most 8 "
                       "pods of 4 rail leaves of 4 nodes); the cluster has 17: use a larger radix",
                       clustersim::ConfigError);
}

TEST_CASE("rail-optimized, 3 tiers: a pod per rail holds that rail's leaves; other rails meet at the cores") {
  // 8 nodes x 2 GPUs x 2 NICs, radix 8: d = 4 nodes per group, 2 groups; d2 = 4 leaves per
  // pod, so one pod per rail holds both groups' leaves: 2 pods, each of u = 4 aggregation
  // switches cabled once to each of its 2 leaves; cores = ceil(2 pods * 4 * 4 / 8) = 4.
  const Topology topology = Topology::build(cluster(8, 2, 2, "rail-optimized", 8, 3));
  const RailShape shape = rail_shape(topology.spec().scale_out, 8, 2);
  CHECK(shape.tiers == 3);
  CHECK(shape.groups == 2);
  CHECK(shape.leaves == 4);
  CHECK(shape.pods_per_rail == 1);
  CHECK(shape.pods == 2);
  CHECK(shape.cores == 4);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 8 + 4 + 2 * 4 + 4);  // NVSwitches, leaves, aggregation, cores
  CHECK(summary.links == 16 + 16 + 4 * 4 + 8 * 4);  // NVLink, NIC, leaf-aggregation, aggregation-core
  // GPU 0 of node 0 and GPU 0 of node 4 (rail 0, groups 0 and 1): leaf, aggregation, leaf.
  const Path& same_rail = topology.path(0, 8);
  REQUIRE(same_rail.links.size() == 4);
  CHECK(link_at(topology, same_rail.links[1]).tier == 2);
  CHECK(link_at(topology, same_rail.links[2]).tier == 2);
  // Same rail, same group: the rail leaf alone.
  CHECK(topology.path(0, 2).links.size() == 2);
  // Another rail under PXN: NVLink to GPU 1 of node 0, then rail 1's leaf, aggregation, leaf.
  const Path& pxn = topology.path(0, 9);
  REQUIRE(pxn.links.size() == 6);
  CHECK(link_at(topology, pxn.links[1]).tier == 0);
  CHECK(link_at(topology, pxn.links[3]).tier == 2);
  CHECK(std::none_of(pxn.links.begin(), pxn.links.end(), [&](LinkId id) { return link_at(topology, id).tier == 3; }));
  // Without PXN: up to a core and down the other rail's pod.
  auto no_pxn_spec = cluster(8, 2, 2, "rail-optimized", 8, 3);
  no_pxn_spec.scale_out.pxn = false;
  const Topology no_pxn = Topology::build(no_pxn_spec);
  const Path& cross_rail = no_pxn.path(0, 9);
  REQUIRE(cross_rail.links.size() == 6);
  CHECK(link_at(no_pxn, cross_rail.links[2]).tier == 3);
}

TEST_CASE("PXN needs a NIC per accelerator: with shared NICs every transfer leaves by its own") {
  // 4 nodes x 8 GPUs, 4 NICs (two GPUs per NIC): no relay, the cross-rail transfer crosses the spine.
  const Topology topology = Topology::build(cluster(4, 8, 4, "rail-optimized", 8, 2));
  const Path& path = topology.path(0, 10);  // GPU 0 (NIC 0) of node 0 -> GPU 2 (NIC 1) of node 1
  CHECK(std::any_of(path.links.begin(), path.links.end(), [&](LinkId id) { return link_at(topology, id).tier == 2; }));
}

TEST_CASE("rail-optimized d-mod-k numbers destinations by node: a rail's flows spread over every uplink") {
  // 8 nodes x 4 GPUs x 4 rails, radix 8: d = 4 nodes per group, u = 4 uplinks per rail leaf, 2 groups,
  // 8 leaves, ceil(8 x 4 / 8) = 4 spines, leaf uplink j -> spine j. GPU 0 of nodes 0-3 (rail 0, group 0)
  // sends to GPU 0 of nodes 4-7 (rail 0, group 1). The subnet manager numbers a rail plane's
  // destinations by node: node 4 + i takes uplink (4 + i) mod 4 = i, so the four flows take four
  // spines. Keyed by the NIC's index (node x 4 + rail = 16, 20, 24, 28, all 0 mod 4) they would
  // share spine 0.
  ClusterNetworkSpec spec = cluster(8, 4, 4, "rail-optimized", 8, 2);
  spec.scale_out.routing = "d-mod-k";
  const Topology topology = Topology::build(spec);
  std::vector<int> spines;
  for (int i = 0; i < 4; ++i) {
    const Path& path = topology.path(i * 4, (4 + i) * 4);
    REQUIRE(path.links.size() == 4);
    const Link& up = link_at(topology, path.links[1]);
    CHECK(up.tier == 2);
    spines.push_back(up.to);
  }
  std::sort(spines.begin(), spines.end());
  CHECK(std::unique(spines.begin(), spines.end()) == spines.end());  // four distinct spines
  // Every destination still has one route whatever the source (d-mod-k): node 5 from nodes 0 and 2.
  CHECK(link_at(topology, topology.path(0, 20).links[1]).to == link_at(topology, topology.path(8, 20).links[1]).to);
}

TEST_CASE("rail-optimized at 1,280 nodes: pipeline sends between scalable units load each fabric link once") {
  // The DGX H100 SuperPOD shape (radix 64, 3 tiers, 8 rails): 32 nodes per rail leaf, 32
  // uplinks, pods of 32 groups. Pipeline stage p on nodes [160p, 160(p+1)) sends to the same GPU
  // 160 nodes on: each source leaf's 32 flows go to 32 destinations of one group, whose node
  // indices are distinct modulo 32, so they take 32 distinct uplinks.
  ClusterNetworkSpec spec = cluster(1280, 8, 8, "rail-optimized", 64, 3);
  spec.scale_out.routing = "d-mod-k";
  const Topology topology = Topology::build(spec);
  std::map<LinkId, int> flows_on;
  for (int node = 0; node + 160 < 1280; ++node) {
    for (int gpu = 0; gpu < 8; ++gpu) {
      const Path& path = topology.path(node * 8 + gpu, (node + 160) * 8 + gpu);
      for (const LinkId id : path.links) {
        if (link_at(topology, id).tier >= 2) ++flows_on[id];
      }
    }
  }
  int busiest = 0;
  for (const auto& [id, flows] : flows_on) busiest = std::max(busiest, flows);
  // Including the 1,280 flows that cross rail pods (nodes 864-1023 to 1024-1183): up through
  // aggregation switch dest mod 32 to a core of its plane, down through aggregation switch dest
  // mod 32 of the destination pod (core planes, fat_tree.hpp core_of_uplink).
  CHECK(busiest == 1);
}

}  // namespace rail_optimized_test
