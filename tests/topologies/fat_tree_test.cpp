#include "topologies/fat_tree.hpp"

#include <map>

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

namespace fat_tree_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

namespace {

/// Directed links of `tier` leaving vertex `from`, counted per destination vertex.
std::map<int, int> uplinks(const Topology& topology, int from, int tier) {
  std::map<int, int> per_destination;
  for (const Link& link : topology.links()) {
    if (link.from == from && link.tier == tier) ++per_destination[link.to];
  }
  return per_destination;
}

int leaf_of(const Topology& topology, int accelerator, int other_node_accelerator) {
  const Path& path = topology.path(accelerator, other_node_accelerator);
  return topology.links()[static_cast<std::size_t>(path.links.front())].to;
}

}  // namespace

TEST_CASE("radix-4 2-tier fat-tree over 8 NICs: 4 leaves of 2 down / 2 up, 2 spines") {
  const Topology topology = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2));
  const FatTreeShape shape = fat_tree_shape(topology.spec().scale_out, 8);
  CHECK(shape.down_ports == 2);
  CHECK(shape.up_ports == 2);
  CHECK(shape.leaves == 4);
  CHECK(shape.spines == 2);
  const TopologySummary summary = topology.summary();
  CHECK(summary.accelerators == 8);
  CHECK(summary.switches == 6);   // no NVSwitch with one GPU per node
  CHECK(summary.links == 16);     // 8 NIC-leaf + 4 leaves x 2 uplinks
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(8 * 50e9 / 2));
  CHECK(summary.diameter_hops == 4);  // NIC-leaf-spine-leaf-NIC
  // Round-robin: leaf l uplink j -> spine (2l + j) mod 2 = j, one cable to each spine.
  const std::map<int, int> leaf0_up = uplinks(topology, leaf_of(topology, 0, 1), 2);
  REQUIRE(leaf0_up.size() == 2);
  CHECK(leaf0_up.begin()->second == 1);
  CHECK(leaf0_up.rbegin()->second == 1);
  // NICs fill leaf ports in order: accelerators 0 and 1 share leaf 0, 2 is on leaf 1.
  CHECK(leaf_of(topology, 0, 5) == leaf_of(topology, 1, 5));
  CHECK(leaf_of(topology, 0, 5) != leaf_of(topology, 2, 5));
}

TEST_CASE("oversubscribed leaves have fewer uplinks and cut the bisection") {
  // radix 4, oversubscription 3: d = floor(4*3/4) = 3, u = 1; 8 NICs -> 3 leaves, 1 spine.
  const Topology topology = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2, 3.0));
  const FatTreeShape shape = fat_tree_shape(topology.spec().scale_out, 8);
  CHECK(shape.down_ports == 3);
  CHECK(shape.up_ports == 1);
  CHECK(shape.leaves == 3);
  CHECK(shape.spines == 1);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 4);
  CHECK(summary.links == 11);  // 8 NIC-leaf + 3 leaf-spine
  // min(8 NICs x 50 GB/s / 2, 3 uplinks x 50 GB/s / 2) = 75 GB/s
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(75e9));
  const std::map<int, int> leaf0_up = uplinks(topology, leaf_of(topology, 0, 7), 2);
  REQUIRE(leaf0_up.size() == 1);
  CHECK(leaf0_up.begin()->second == 1);
  // A ratio that does not divide the radix rounds toward less oversubscription:
  // radix 4, o = 2: d = floor(8/3) = 2, u = 2.
  ScaleOutSpec two = topology.spec().scale_out;
  two.oversubscription = 2.0;
  CHECK(fat_tree_shape(two, 8).down_ports == 2);
}

TEST_CASE("8-GPU nodes with 8 NICs on a radix-8 2-tier tree") {
  // 16 NICs, d = u = 4: 4 leaves, spines = ceil(4*4/8) = 2, two parallel cables leaf-spine.
  const Topology topology = Topology::build(cluster(2, 8, 8, "fat-tree", 8, 2));
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 2 + 4 + 2);
  CHECK(summary.links == 16 + 16 + 16);  // GPU-NVSwitch, GPU-leaf, leaf-spine
  CHECK(summary.diameter_hops == 4);
  const std::map<int, int> leaf0_up = uplinks(topology, leaf_of(topology, 0, 8), 2);
  REQUIRE(leaf0_up.size() == 2);
  CHECK(leaf0_up.begin()->second == 2);
  CHECK(leaf0_up.rbegin()->second == 2);
}

TEST_CASE("a node's NICs take consecutive ports of one leaf when it fits") {
  // radix 64: d = 32, so both 8-NIC nodes sit on one leaf and no spine is built.
  const Topology topology = Topology::build(cluster(2, 8, 8, "fat-tree", 64, 2));
  CHECK(topology.summary().switches == 2 + 1);
  CHECK(topology.path(0, 8).links.size() == 2);  // GPU -> leaf -> GPU
  CHECK(topology.path(0, 8).latency_s == relative_approx(2e-6));
}

TEST_CASE("radix-4 3-tier fat-tree is the classic 20-switch k=4 tree") {
  // 16 NICs: 8 leaves, 4 pods of 2 leaves + 2 aggregation switches, (k/2)^2 = 4 cores.
  const Topology topology = Topology::build(cluster(16, 1, 1, "fat-tree", 4, 3));
  const FatTreeShape shape = fat_tree_shape(topology.spec().scale_out, 16);
  CHECK(shape.leaves == 8);
  CHECK(shape.pods == 4);
  CHECK(shape.aggregations_per_pod == 2);
  CHECK(shape.cores == 4);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 20);
  CHECK(summary.links == 16 + 16 + 16);  // NIC-leaf, leaf-aggregation, aggregation-core
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(16 * 50e9 / 2));
  CHECK(summary.diameter_hops == 6);
  CHECK(topology.path(0, 1).links.size() == 2);   // same leaf
  CHECK(topology.path(0, 2).links.size() == 4);   // same pod
  CHECK(topology.path(0, 15).links.size() == 6);  // across pods through a core
  CHECK(topology.path(0, 15).latency_s == relative_approx(6e-6));
  // Each aggregation switch has k/2 = 2 cables, to two different cores.
  const Path& cross_pod = topology.path(0, 15);
  const int aggregation = topology.links()[static_cast<std::size_t>(cross_pod.links[1])].to;
  const std::map<int, int> agg_up = uplinks(topology, aggregation, 3);
  CHECK(agg_up.size() == 2);
}

TEST_CASE("fat-tree capacity and parameter errors") {
  CHECK_THROWS_WITH_AS(Topology::build(cluster(512, 8, 8, "fat-tree", 64, 2)),
                       "2-tier fat-tree of radix 64 holds at most 2048 NICs at oversubscription 1; "
                       "the cluster has 4096: use tiers: 3 or a larger radix",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(17, 1, 1, "fat-tree", 4, 3)),
                       "3-tier fat-tree of radix 4 holds at most 16 NICs at oversubscription 1; "
                       "the cluster has 17: use a larger radix",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 8, "fat-tree", 63, 2)),
                       "fat-tree radix must be even and >= 4, got 63", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 8, "fat-tree", 2, 2)),
                       "fat-tree radix must be even and >= 4, got 2", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 8, "fat-tree", 64, 4)),
                       "fat-tree tiers must be 2 or 3, got 4", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 8, "fat-tree", 64, 2, 0.5)),
                       doctest::Contains("scale_out.oversubscription (leaf downlink:uplink ratio) "
                                         "must be a finite number >= 1, got 0.5"),
                       clustersim::ConfigError);
  ScaleOutSpec spec;
  CHECK_THROWS_WITH_AS(fat_tree_shape(spec, 0), "fat-tree needs at least one NIC, got 0",
                       clustersim::ConfigError);
}

TEST_CASE("3-tier oversubscription per tier: the aggregation ratio thins the core") {
  // radix 4, 16 NICs. Leaf o = 1: d = 2, u = 2 -> 8 leaves.
  // Aggregation o2 = 3: d2 = floor(4*3/4) = 3 leaves per pod, u2 = 1 core uplink:
  // pods = ceil(8/3) = 3, 3 x 2 = 6 aggregation switches, cores = ceil(3*2*1/4) = 2.
  ClusterNetworkSpec spec = cluster(16, 1, 1, "fat-tree", 4, 3);
  spec.scale_out.aggregation_oversubscription = 3.0;
  const Topology topology = Topology::build(spec);
  const FatTreeShape shape = fat_tree_shape(spec.scale_out, 16);
  CHECK(shape.aggregation_down_ports == 3);
  CHECK(shape.aggregation_up_ports == 1);
  CHECK(shape.leaves_per_pod == 3);
  CHECK(shape.pods == 3);
  CHECK(shape.cores == 2);
  const TopologySummary summary = topology.summary();
  CHECK(summary.switches == 8 + 6 + 2);
  CHECK(summary.links == 16 + 8 * 2 + 6 * 1);
  // min(16 NICs x 50/2, 8 leaves x 2 up x 50/2, 6 aggs x 1 up x 50/2) GB/s
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(150e9));
  CHECK(summary.diameter_hops == 6);  // NIC-leaf-agg-core-agg-leaf-NIC

  // The same tree at o2 = 1 is the classic shape: 4 pods of 2 leaves, 8 aggs, 4 cores.
  const Topology classic = Topology::build(cluster(16, 1, 1, "fat-tree", 4, 3));
  CHECK(classic.summary().switches == 8 + 8 + 4);
  CHECK(classic.summary().bisection_bytes_per_s == doctest::Approx(400e9));
}

TEST_CASE("per-tier oversubscription is validated") {
  ClusterNetworkSpec spec = cluster(8, 1, 1, "fat-tree", 4, 2);
  spec.scale_out.aggregation_oversubscription = 2.0;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "a 2-tier fat-tree has no aggregation tier, so its aggregation "
                       "oversubscription must be 1, got 2; use tiers: 3",
                       clustersim::ConfigError);
  spec = cluster(8, 1, 1, "fat-tree", 4, 3);
  spec.scale_out.aggregation_oversubscription = 0.5;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       doctest::Contains("scale_out.aggregation_oversubscription (aggregation "
                                         "downlink:uplink ratio) must be a finite number >= 1, "
                                         "got 0.5"),
                       clustersim::ConfigError);
  // Capacity shrinks with the aggregation ratio: radix 4, o2 = 3 holds 4 x 3 x 2 = 24 NICs.
  spec = cluster(25, 1, 1, "fat-tree", 4, 3);
  spec.scale_out.aggregation_oversubscription = 3.0;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "3-tier fat-tree of radix 4 holds at most 24 NICs at oversubscription 1 "
                       "(aggregation 3); the cluster has 25: use a larger radix",
                       clustersim::ConfigError);
}

TEST_CASE("switch-to-switch links can be faster than the NICs") {
  ClusterNetworkSpec spec = cluster(8, 1, 1, "fat-tree", 4, 2);
  spec.scale_out.link_bytes_per_s = 100e9;
  const Topology topology = Topology::build(spec);
  int fabric_links = 0;
  for (const Link& link : topology.links()) {
    CHECK(link.bytes_per_s == (link.tier == 2 ? 100e9 : 50e9));
    fabric_links += link.tier == 2 ? 1 : 0;
  }
  CHECK(fabric_links == 16);  // 4 leaves x 2 uplinks, both directions
  // min(8 x 50/2, 4 leaves x 2 up x 100/2) GB/s: the NICs limit it now.
  CHECK(topology.summary().bisection_bytes_per_s == doctest::Approx(200e9));
  spec.scale_out.link_bytes_per_s = -1;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "scale_out.link_bytes_per_s must be a finite number >= 0 (0: "
                       "nic_bytes_per_s), got -1",
                       clustersim::ConfigError);
}

}  // namespace fat_tree_test
