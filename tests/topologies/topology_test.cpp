#include "topologies/topology.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "sim/engine/error.hpp"
#include "topologies/topology_keys.hpp"
#include "topology_test_support.hpp"

namespace topology_test {

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

TEST_CASE("every topology kind is registered in name order and reads declared YAML keys") {
  const std::vector<TopologyKind>& kinds = topology_kinds();
  REQUIRE(kinds.size() == 6);
  CHECK(kinds[0].name == "custom");
  CHECK(kinds[1].name == "dragonfly");
  CHECK(kinds[2].name == "fat-tree");
  CHECK(kinds[3].name == "rail-optimized");
  CHECK(kinds[4].name == "switch");
  CHECK(kinds[5].name == "torus");
  CHECK(kinds[1].keys.front() == "groups");  // YAML keys, not C++ field names
  CHECK(kinds[5].required == std::vector<std::string>{"dims"});
  CHECK(kinds[0].whole_network);
  CHECK_FALSE(kinds[2].whole_network);
  CHECK(find_topology_kind("torus") == &kinds[5]);
  CHECK(find_topology_kind("ring") == nullptr);
  const auto fields = scale_out_keys().fields();
  for (const TopologyKind& kind : kinds) {
    CHECK(!kind.help.empty());
    for (const std::string& key : kind.keys) {
      const clustersim::config::Field* field = clustersim::config::find_field(fields, clustersim::config::split_key_path(key));
      REQUIRE_MESSAGE(field != nullptr, (kind.name + ": " + key));
      CHECK(!field->help.empty());
    }
    for (const std::string& key : kind.required) {
      CHECK(std::find(kind.keys.begin(), kind.keys.end(), key) != kind.keys.end());
    }
    CHECK(std::find(kind.keys.begin(), kind.keys.end(), "routing") != kind.keys.end());
  }
}

TEST_CASE("the declared defaults of the network keys are the specs' defaults") {
  const auto scale_out = scale_out_keys().fields();
  const auto field = [&](const std::vector<std::string>& path) { return clustersim::config::find_field(scale_out, path); };
  CHECK(field({"tiers"})->default_text == "2");
  CHECK(field({"radix"})->default_text == "64");
  CHECK(field({"routing"})->default_text == "ecmp");
  CHECK(field({"nic", "efficiency"})->default_text == "0.94");
  CHECK(ScaleOutSpec{}.efficiency == 0.94);
  CHECK(field({"nic", "per_node"})->default_text.empty());  // unset: cluster.node.per_node
  CHECK(field({"link", "latency"})->default_text == "1 us");
  const auto scale_up = scale_up_keys().fields();
  CHECK(clustersim::config::find_field(scale_up, {"efficiency"})->default_text == "0.8");
  CHECK(ScaleUpSpec{}.efficiency == 0.8);
  CHECK(clustersim::config::find_field(scale_up, {"latency"})->default_text == "1 us");
  CHECK(scale_out_keys().defaults_differing(ScaleOutSpec{}).empty());
}

TEST_CASE("a moved-from topology's paths stay valid in the new owner") {
  Topology first = Topology::build(cluster(2, 8, 8, "fat-tree", 8, 2));
  const Path& before = first.path(0, 9);
  const std::vector<LinkId> links = before.links;
  Topology second = std::move(first);
  CHECK(second.path(0, 9).links == links);
  CHECK(&second.path(0, 9) == &before);  // cache entries are not copied
}

}  // namespace topology_test
