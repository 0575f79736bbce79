#include "topologies/custom_topology.hpp"

#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topology_test_support.hpp"

namespace custom_topology_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

namespace {

/// Writes `text` to a fresh file in the temp folder and returns its path.
std::string write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("clustersim_custom_" + name);
  std::ofstream(path) << text;
  return path.string();
}

ClusterNetworkSpec custom(int nodes, int per_node, const std::string& file) {
  ClusterNetworkSpec spec = cluster(nodes, per_node, per_node, "custom");
  spec.scale_up.bytes_per_s = 0;
  spec.scale_out.nic_bytes_per_s = 0;  // no NICs: the file is the whole network
  spec.scale_out.custom_file = file;
  return spec;
}

const char* kTwoLeaves =
    "# two leaves joined by one slower cable\n"
    "gpu0, leaf0, 50e9, 1e-6\n"
    "gpu1,leaf0,50e9,1e-6\n"
    "\n"
    "gpu2,leaf1,50e9,1e-6\n"
    "gpu3,leaf1,50e9,1e-6\n"
    "leaf0,leaf1,25e9,2e-6\n";

}  // namespace

TEST_CASE("custom edge list: counts, paths, max-flow bisection and BFS diameter") {
  const Topology topology = Topology::build(custom(2, 2, write_file("two_leaves.csv", kTwoLeaves)));
  const TopologySummary summary = topology.summary();
  CHECK(summary.accelerators == 4);
  CHECK(summary.switches == 2);
  CHECK(summary.links == 5);
  CHECK(summary.bisection_bytes_per_s == doctest::Approx(25e9));  // {gpu0,1} | {gpu2,3}
  CHECK(summary.diameter_hops == 3);
  const Path& across = topology.path(0, 3);
  REQUIRE(across.links.size() == 3);
  CHECK(across.latency_s == relative_approx(4e-6));
  CHECK(across.bottleneck_bytes_per_s == 25e9);
  // No implicit NVSwitch: same-node traffic follows the file (gpu0 -> leaf0 -> gpu1).
  CHECK(topology.path(0, 1).links.size() == 2);
  CHECK(topology.path(0, 1).bottleneck_bytes_per_s == 50e9);
}

TEST_CASE("custom: accelerators may be transit hops (a direct-connect ring)") {
  const std::string file = write_file("ring.csv",
                                      "gpu0,gpu1,100e9,0.5e-6\ngpu1,gpu2,100e9,0.5e-6\n"
                                      "gpu2,gpu3,100e9,0.5e-6\ngpu3,gpu0,100e9,0.5e-6\n");
  const Topology topology = Topology::build(custom(1, 4, file));
  CHECK(topology.summary().switches == 0);
  CHECK(topology.summary().diameter_hops == 2);
  CHECK(topology.summary().bisection_bytes_per_s == doctest::Approx(200e9));
  CHECK(topology.path(0, 2).links.size() == 2);
  CHECK(topology.path(0, 3).links.size() == 1);
}

TEST_CASE("custom: every bad line is reported with file:line") {
  const std::string text =
      "gpu0,leaf0,50e9\n"
      "gpu9,leaf0,1,0\n"
      "gpu1,gpu1,1,0\n"
      "# fine\n"
      "gpu2,x y,abc,-1\n";
  CHECK_THROWS_WITH_AS((void)parse_edge_list(text, "net.csv", 4),
                       "net.csv:1: expected 4 comma-separated fields a,b,bytes_per_s,latency_s, "
                       "got 3; net.csv:2: unknown vertex 'gpu9': the cluster has accelerators "
                       "gpu0..gpu3; net.csv:3: cable from 'gpu1' to itself; net.csv:5: bad vertex "
                       "name 'x y' (letters, digits, '_', '.', '-'); net.csv:5: bandwidth 'abc' "
                       "must be a number of bytes/s > 0; net.csv:5: latency '-1' must be a number "
                       "of seconds >= 0",
                       clustersim::ConfigError);
}

TEST_CASE("custom: disconnected accelerators, missing files and a missing path are errors") {
  const std::string file = write_file("island.csv", "gpu0,sw,1e9,0\ngpu1,sw,1e9,0\ngpu2,sw,1e9,0\n");
  CHECK_THROWS_WITH_AS(Topology::build(custom(1, 4, file)),
                       (file + ": accelerators not connected to gpu0: gpu3").c_str(),
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(custom(1, 4, "/nonexistent/net.csv")),
                       "cannot read custom topology file '/nonexistent/net.csv'",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(Topology::build(custom(1, 4, "")),
                       "custom topology needs an edge-list file (scale_out.custom_file)",
                       clustersim::ConfigError);
}

}  // namespace custom_topology_test
