#include "topologies/topology.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

TEST_CASE("unknown topology lists the registered ones") {
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 8, "mesh")),
                       "unknown scale-out topology 'mesh'; valid: custom, dragonfly, fat-tree, "
                       "rail-optimized, switch, torus",
                       clustersim::ConfigError);
}

TEST_CASE("NICs per node must divide accelerators per node") {
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 3)),
                       "scale_out.nics_per_node must be >= 1 and divide accelerators_per_node (8), got 3",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 8, 0)),
                       doctest::Contains("scale_out.nics_per_node must be >= 1"),
                       clustersim::ConfigError);
}

TEST_CASE("counts, bandwidths and latencies are range-checked") {
  CHECK_THROWS_WITH_AS(Topology::build(cluster(0, 8, 8)), "nodes must be >= 1, got 0",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(cluster(2, 0, 1)),
                       doctest::Contains("accelerators_per_node must be >= 1, got 0"),
                       clustersim::ConfigError);
  ClusterNetworkSpec spec = cluster(2, 8, 8);
  spec.scale_out.nic_bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "scale_out.nic_bytes_per_s must be a finite number > 0, got 0",
                       clustersim::ConfigError);
  spec = cluster(2, 8, 8);
  spec.scale_out.link_latency_s = -1;
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       "scale_out.link_latency_s must be a finite number >= 0, got -1",
                       clustersim::ConfigError);
}

TEST_CASE("every problem is reported at once") {
  ClusterNetworkSpec spec = cluster(2, 8, 3, "fat-tree", 63, 4);
  spec.scale_out.nic_bytes_per_s = -5;
  const std::vector<std::string> problems = spec_problems(spec);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0] == "fat-tree tiers must be 2 or 3, got 4");
  CHECK(problems[1] == "fat-tree radix must be even and >= 4, got 63");
  CHECK(problems[3] == "scale_out.nic_bytes_per_s must be a finite number > 0, got -5");
  CHECK_THROWS_WITH_AS(Topology::build(spec),
                       doctest::Contains("got 4; fat-tree radix must be even and >= 4, got 63; "),
                       clustersim::ConfigError);
  CHECK(spec_problems(cluster(2, 8, 8)).empty());
}

TEST_CASE("registry documents every topology in name order") {
  const std::vector<TopologyDoc>& registry = topology_registry();
  REQUIRE(registry.size() == 6);
  CHECK(registry[0].name == "custom");
  CHECK(registry[1].name == "dragonfly");
  CHECK(registry[2].name == "fat-tree");
  CHECK(registry[3].name == "rail-optimized");
  CHECK(registry[4].name == "switch");
  CHECK(registry[5].name == "torus");
  const TopologyDoc& fat_tree = registry[2];
  REQUIRE(fat_tree.parameters.size() == 9);
  CHECK(fat_tree.parameters[0].name == "tiers");
  CHECK(fat_tree.parameters[0].default_value == "2");
  CHECK(fat_tree.parameters[1].name == "radix");
  CHECK(fat_tree.parameters[1].default_value == "64");
  CHECK(fat_tree.parameters[2].name == "oversubscription");
  CHECK(fat_tree.parameters[3].name == "aggregation_oversubscription");
  CHECK(fat_tree.parameters[5].name == "nic_bytes_per_s");
  CHECK(fat_tree.parameters[5].unit == "bytes/s");
  REQUIRE(registry[4].parameters.size() == 4);
  CHECK(registry[4].parameters[2].name == "link_latency_s");
  CHECK(registry[4].parameters[2].unit == "s");
  CHECK(registry[1].parameters[0].name == "dragonfly_groups");
  CHECK(registry[5].parameters[0].name == "torus_dims");
  CHECK(registry[0].parameters[0].name == "custom_file");
  // Defaults documented in the registry match the spec's defaults.
  const ScaleOutSpec defaults;
  CHECK(fat_tree.parameters[0].default_value == std::to_string(defaults.tiers));
  CHECK(fat_tree.parameters[1].default_value == std::to_string(defaults.radix));
  CHECK(fat_tree.parameters[4].default_value == std::to_string(defaults.nics_per_node));
  CHECK(fat_tree.parameters[8].name == "routing");
  CHECK(fat_tree.parameters[8].default_value == defaults.routing);
  for (const TopologyDoc& doc : registry) {
    CHECK(!doc.help.empty());
    for (const ParameterDoc& parameter : doc.parameters) CHECK(!parameter.help.empty());
  }
}

TEST_CASE("a moved-from topology's paths stay valid in the new owner") {
  Topology first = Topology::build(cluster(2, 8, 8, "fat-tree", 8, 2));
  const Path& before = first.path(0, 9);
  const std::vector<LinkId> links = before.links;
  Topology second = std::move(first);
  CHECK(second.path(0, 9).links == links);
  CHECK(&second.path(0, 9) == &before);  // cache entries are not copied
}
