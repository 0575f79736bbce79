#include "topologies/dragonfly.hpp"

#include <set>

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

namespace dragonfly_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

namespace {

ClusterNetworkSpec dragonfly(int nodes, int groups, int routers, int terminals, int global_links) {
  ClusterNetworkSpec spec = cluster(nodes, 1, 1, "dragonfly");
  spec.scale_out.dragonfly_groups = groups;
  spec.scale_out.dragonfly_routers_per_group = routers;
  spec.scale_out.dragonfly_terminals_per_router = terminals;
  spec.scale_out.dragonfly_global_links_per_router = global_links;
  return spec;
}

std::vector<int> tiers_of(const Topology& topology, const Path& path) {
  std::vector<int> tiers;
  for (const LinkId id : path.links) tiers.push_back(topology.links()[static_cast<std::size_t>(id)].tier);
  return tiers;
}

}  // namespace

TEST_CASE("dragonfly g=3 a=2 p=2 h=1: one global cable per router") {
  // Routers r0..r5 (group = r / 2). Group i's port q sits on local router q and leads to
  // group (i + 1 + q) mod 3, so the global cables are r0-r3, r1-r4, r2-r5.
  const Topology topology = Topology::build(dragonfly(12, 3, 2, 2, 1));
  const TopologySummary summary = topology.summary();
  CHECK(summary.accelerators == 12);
  CHECK(summary.switches == 6);
  CHECK(summary.links == 12 + 3 + 3);  // terminals, local, global
  // Groups {0} vs {1, 2}: global cables r0-r3 and r1-r4 cross; min(12 x 50/2, 2 x 50) GB/s.
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(100e9));
  // r1 -> r2: local to r0, global r0-r3, local to r2: 3 router hops + 2 terminal links.
  CHECK(summary.diameter_hops == 5);

  // Accelerator a sits on router a / 2.
  CHECK(topology.path(0, 1).links.size() == 2);                          // same router
  CHECK(tiers_of(topology, topology.path(0, 2)) == std::vector<int>{1, 2, 1});  // same group
  CHECK(tiers_of(topology, topology.path(0, 6)) == std::vector<int>{1, 3, 1});  // r0 -> r3 direct
  const Path& long_way = topology.path(2, 4);  // r1 -> r2: local-global-local
  CHECK(tiers_of(topology, long_way) == std::vector<int>{1, 2, 3, 2, 1});
  CHECK(long_way.latency_s == relative_approx(5e-6));
  for (std::size_t i = 1; i < long_way.links.size(); ++i) {
    CHECK(topology.links()[static_cast<std::size_t>(long_way.links[i - 1])].to ==
          topology.links()[static_cast<std::size_t>(long_way.links[i])].from);
  }
}

TEST_CASE("dragonfly minimal routing picks among the shortest global links per flow") {
  // g=2, a=2, h=2: R = a*h/(g-1) = 4 rounds. Group 0's ports 0,1 sit on r0 and 2,3 on r1;
  // each lands on group 1's port of the same number (r2, r2, r3, r3): r0-r2 and r1-r3 twice.
  const Topology topology = Topology::build(dragonfly(8, 2, 2, 2, 2));
  CHECK(topology.summary().links == 8 + 2 + 4);
  CHECK(topology.summary().bisection_bytes_per_s == doctest::Approx(4 * 50e9));
  // r0 -> r2 has two direct cables (1 hop): flows spread over both, never through a local hop.
  std::set<LinkId> used;
  for (std::uint64_t key = 0; key < 16; ++key) {
    const Path& path = topology.path(0, 4, key);
    REQUIRE(path.links.size() == 3);
    used.insert(path.links[1]);
  }
  CHECK(used.size() == 2);
}

TEST_CASE("dragonfly parameters are validated together") {
  const std::vector<std::string> problems = spec_problems(dragonfly(8, 0, 2, 0, -1));
  REQUIRE(problems.size() == 3);
  CHECK(problems[0] == "dragonfly groups must be >= 1, got 0");
  CHECK(problems[1] == "dragonfly terminals_per_router must be >= 1, got 0");
  CHECK(problems[2] == "dragonfly global_links_per_router must be >= 0, got -1");
  CHECK_THROWS_WITH_AS(Topology::build(dragonfly(4, 4, 1, 1, 2)),
                       "dragonfly of 4 groups needs routers_per_group x global_links_per_router "
                       ">= groups - 1 = 3 so every pair of groups is linked, got 1 x 2 = 2",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(dragonfly(13, 3, 2, 2, 1)),
                       "dragonfly of 3 groups x 2 routers x 2 terminals holds 12 NICs, but the "
                       "cluster has 13 (13 nodes x 1 NICs)",
                       clustersim::ConfigError);
}

}  // namespace dragonfly_test
