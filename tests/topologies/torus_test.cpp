#include "topologies/torus.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

namespace torus_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

namespace {

ClusterNetworkSpec torus(int nodes, int per_node, std::vector<int> dims) {
  ClusterNetworkSpec spec = cluster(nodes, per_node, per_node, "torus");
  spec.scale_up.bytes_per_s = 0;  // a torus has no scale-up switch
  spec.scale_out.torus_dims = std::move(dims);
  spec.scale_out.link_bytes_per_s = 100e9;
  return spec;
}

const Link& link_at(const Topology& topology, LinkId id) {
  return topology.links()[static_cast<std::size_t>(id)];
}

}  // namespace

TEST_CASE("4x4 torus: 32 neighbour cables, no switches, bisection 8 links, diameter 4") {
  const Topology topology = Topology::build(torus(4, 4, {4, 4}));
  const TopologySummary summary = topology.summary();
  CHECK(summary.accelerators == 16);
  CHECK(summary.switches == 0);
  CHECK(summary.links == 16 + 16);
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(2 * 16 / 4 * 100e9));
  CHECK(summary.diameter_hops == 2 + 2);
  for (const Link& link : topology.links()) {
    CHECK(link.bytes_per_s == 100e9);
    CHECK(link.latency_s == 1e-6);
  }
}

TEST_CASE("dimension-order routing takes the shorter way round, dimension 0 first") {
  const Topology topology = Topology::build(torus(4, 4, {4, 4}));
  // 0 = (0,0) -> 3 = (3,0): one hop backwards over the wraparound link.
  const Path& wrap = topology.path(0, 3);
  REQUIRE(wrap.links.size() == 1);
  CHECK(link_at(topology, wrap.links[0]).from == 0);
  CHECK(link_at(topology, wrap.links[0]).to == 3);
  // 0 -> 5 = (1,1): x first (0 -> 1, tier 1), then y (1 -> 5, tier 2).
  const Path& diagonal = topology.path(0, 5);
  REQUIRE(diagonal.links.size() == 2);
  CHECK(link_at(topology, diagonal.links[0]).to == 1);
  CHECK(link_at(topology, diagonal.links[0]).tier == 1);
  CHECK(link_at(topology, diagonal.links[1]).from == 1);
  CHECK(link_at(topology, diagonal.links[1]).to == 5);
  CHECK(link_at(topology, diagonal.links[1]).tier == 2);
  CHECK(diagonal.latency_s == relative_approx(2e-6));
  // 13 = (1,3) -> 2 = (2,0): +1 in x, then +1 in y over the wraparound (3 -> 0).
  const Path& wrap_y = topology.path(13, 2);
  REQUIRE(wrap_y.links.size() == 2);
  CHECK(link_at(topology, wrap_y.links[0]).to == 14);
  CHECK(link_at(topology, wrap_y.links[1]).to == 2);
  // Same-node accelerators (0..3) also talk over the torus: 0 -> 2 is 2 hops in x.
  CHECK(topology.path(0, 2).links.size() == 2);
  // Antipodes (distance 2 of 4 in both dimensions): 4 hops, either way, chained.
  const Path& far = topology.path(0, 10);
  REQUIRE(far.links.size() == 4);
  for (std::size_t i = 1; i < far.links.size(); ++i) {
    CHECK(link_at(topology, far.links[i - 1]).to == link_at(topology, far.links[i]).from);
  }
  CHECK(link_at(topology, far.links.back()).to == 10);
}

TEST_CASE("2x2x2 and 4x4x4 tori: size-2 dimensions have one cable per pair") {
  const TopologySummary small = Topology::build(torus(2, 4, {2, 2, 2})).summary();
  CHECK(small.links == 3 * 4);
  CHECK(small.bisection_bytes_per_s == doctest::Approx(4 * 100e9));
  CHECK(small.diameter_hops == 3);
  const TopologySummary cube = Topology::build(torus(16, 4, {4, 4, 4})).summary();
  CHECK(cube.links == 3 * 64);
  CHECK(cube.bisection_bytes_per_s == doctest::Approx(2 * 64 / 4 * 100e9));
  CHECK(cube.diameter_hops == 6);
  const TopologySummary ring = Topology::build(torus(1, 8, {8})).summary();
  CHECK(ring.links == 8);
  CHECK(ring.diameter_hops == 4);
  CHECK(ring.bisection_bytes_per_s == doctest::Approx(2 * 100e9));
}

TEST_CASE("link bandwidth falls back to the NIC bandwidth") {
  ClusterNetworkSpec spec = torus(1, 4, {4});
  spec.scale_out.link_bytes_per_s = 0;
  const Topology topology = Topology::build(spec);
  CHECK(topology.links()[0].bytes_per_s == 50e9);
}

TEST_CASE("torus dims are validated against the cluster") {
  CHECK_THROWS_WITH_AS(Topology::build(torus(3, 4, {4, 4})),
                       "torus dims [4, 4] hold 16 accelerators, but the cluster has 12 (3 nodes x "
                       "4); one accelerator sits at each torus coordinate",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(torus(3, 4, {})),
                       "torus dims must list 1 to 3 dimension sizes, got []", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(torus(1, 16, {2, 2, 2, 2})),
                       "torus dims must list 1 to 3 dimension sizes, got [2, 2, 2, 2]",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(torus(1, 4, {4, 0})), "torus dims must all be >= 1, got [4, 0]",
                       clustersim::ConfigError);
  ClusterNetworkSpec spec = torus(1, 4, {4});
  spec.scale_out.link_bytes_per_s = 0;
  spec.scale_out.nic_bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "torus link bandwidth (scale_out.link_bytes_per_s, else nic_bytes_per_s) "
                       "must be a finite number > 0, got 0",
                       clustersim::ConfigError);
  spec = torus(2, 4, {8});
  spec.scale_up.domain_size = 8;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "scale_up.domain_size does not apply to the 'torus' topology (it has no "
                       "scale-up switch), got 8",
                       clustersim::ConfigError);
}

}  // namespace torus_test
