#include "topologies/rail_optimized.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

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
  // GPU 0 -> GPU 1 of another node crosses rails through a spine.
  const Path& cross_rail = topology.path(0, 9);
  REQUIRE(cross_rail.links.size() == 4);
  CHECK(link_at(topology, cross_rail.links[1]).tier == 2);
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
  // Another rail: up to a core and down the other rail's pod.
  const Path& cross_rail = topology.path(0, 9);
  REQUIRE(cross_rail.links.size() == 6);
  CHECK(link_at(topology, cross_rail.links[2]).tier == 3);
}
