#include "topologies/routing.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "topologies/network_graph.hpp"
#include "topology_test_support.hpp"

namespace routing_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::topologies;
using clustersim::topologies::testing::cluster;

namespace {

const Link& link_at(const Topology& topology, LinkId id) {
  return topology.links()[static_cast<std::size_t>(id)];
}

/// A path is a chain: each link starts where the previous one ended.
bool is_chain(const Topology& topology, const Path& path) {
  for (std::size_t i = 1; i < path.links.size(); ++i) {
    if (link_at(topology, path.links[i - 1]).to != link_at(topology, path.links[i]).from) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("cross-leaf path is 4 links: NIC, leaf, spine, leaf, NIC") {
  const Topology topology = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2));
  const Path& path = topology.path(0, 2);
  REQUIRE(path.links.size() == 4);
  CHECK(is_chain(topology, path));
  CHECK(link_at(topology, path.links[0]).tier == 1);
  CHECK(link_at(topology, path.links[1]).tier == 2);
  CHECK(link_at(topology, path.links[2]).tier == 2);
  CHECK(link_at(topology, path.links[3]).tier == 1);
  CHECK(path.latency_s == relative_approx(4e-6));
  CHECK(path.bottleneck_bytes_per_s == 50e9);
}

TEST_CASE("intra-node traffic never takes the NIC, even when both NICs share a leaf") {
  const Topology topology = Topology::build(cluster(2, 8, 8, "fat-tree", 64, 2));
  const Path& path = topology.path(0, 1);
  REQUIRE(path.links.size() == 2);
  CHECK(link_at(topology, path.links[0]).tier == 0);
  CHECK(path.bottleneck_bytes_per_s == 450e9);
}

TEST_CASE("shared NICs: the path leaves through the NIC serving the source") {
  // 2 nodes x 8 GPUs, 2 NICs: NIC 0 serves GPUs 0-3, NIC 1 serves 4-7. Radix 4: d = 2,
  // node 0's NICs on leaf 0, node 1's on leaf 1.
  const Topology topology = Topology::build(cluster(2, 8, 2, "fat-tree", 4, 2));
  const Path& from5 = topology.path(5, 9);
  // GPU->NVSwitch, NVSwitch->NIC, NIC->leaf, leaf->spine, spine->leaf, leaf->NIC, NIC->NVSwitch, NVSwitch->GPU
  REQUIRE(from5.links.size() == 8);
  CHECK(is_chain(topology, from5));
  CHECK(from5.latency_s == relative_approx(0.5e-6 + 0 + 4e-6 + 0 + 0.5e-6));
  CHECK(from5.bottleneck_bytes_per_s == 50e9);
  const LinkId nic_of_5 = from5.links[1];
  CHECK(topology.path(4, 9).links[1] == nic_of_5);   // same NIC (GPUs 4-7)
  CHECK(topology.path(1, 9).links[1] != nic_of_5);   // GPUs 0-3 use NIC 0
  CHECK(topology.path(1, 9).links[1] == topology.path(3, 12).links[1]);
  // The destination side enters through NIC 0 of node 1 for GPU 9, NIC 1 for GPU 13.
  CHECK(topology.path(5, 9).links[6] != topology.path(5, 13).links[6]);
}

TEST_CASE("ECMP: equal-cost routes are deterministic per pair and spread over spines") {
  const Topology topology = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2));
  const Topology again = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2));
  std::set<int> spines_used;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 0; dst < 8; ++dst) {
      if (src / 2 == dst / 2) continue;  // same leaf
      const Path& path = topology.path(src, dst);
      REQUIRE(path.links.size() == 4);
      spines_used.insert(link_at(topology, path.links[1]).to);
      CHECK(path.links == again.path(src, dst).links);
    }
  }
  CHECK(spines_used.size() == 2);
}

TEST_CASE("a path to oneself is empty") {
  const Topology topology = Topology::build(cluster(2, 8, 8, "fat-tree", 8, 2));
  const Path& path = topology.path(3, 3);
  CHECK(path.links.empty());
  CHECK(path.latency_s == 0.0);
}

TEST_CASE("path rejects unknown accelerators") {
  const Topology topology = Topology::build(cluster(2, 8, 8, "fat-tree", 8, 2));
  CHECK_THROWS_WITH_AS((void)topology.path(0, 16), "accelerator index 16 is out of range [0, 16)",
                       clustersim::ConfigError);
}

TEST_CASE("100k distinct paths on a 2048-GPU radix-64 tree all have the expected hop count") {
  // Speed is measured by bench/, not here (machines are shared and noisy).
  // 256 nodes x 8 GPUs x 8 NICs = 2048 NICs = d*k: 64 leaves of 4 nodes each, 32 spines.
  const Topology topology = Topology::build(cluster(256, 8, 8, "fat-tree", 64, 2));
  std::size_t correct = 0;
  std::size_t same_leaf = 0;
  for (int src = 0; src < 2048; ++src) {
    for (int step = 1; step <= 49; ++step) {
      const int dst = (src + step * 3) % 2048;
      const bool one_leaf = src / 32 == dst / 32;  // 32 NICs per leaf, GPU i on NIC i
      same_leaf += one_leaf ? 1U : 0U;
      if (topology.path(src, dst).links.size() == (one_leaf ? 2U : 4U)) ++correct;
    }
  }
  CHECK(correct == 2048 * 49);
  CHECK(same_leaf > 0);
  CHECK(same_leaf < 2048 * 49);
}

TEST_CASE("ECMP per flow: flow keys spread one pair over both spines, deterministically") {
  const Topology topology = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2));
  const Topology again = Topology::build(cluster(8, 1, 1, "fat-tree", 4, 2));
  // Key 0 is the per-pair route (same cache entry as the two-argument call).
  CHECK(&topology.path(0, 2, 0) == &topology.path(0, 2));
  std::set<int> spines_used;
  for (std::uint64_t key = 1; key <= 16; ++key) {
    const Path& path = topology.path(0, 2, key);
    REQUIRE(path.links.size() == 4);
    CHECK(is_chain(topology, path));
    CHECK(path.links == again.path(0, 2, key).links);
    CHECK(&path == &topology.path(0, 2, key));  // cached per key
    spines_used.insert(link_at(topology, path.links[1]).to);
  }
  CHECK(spines_used.size() == 2);
  // Same-leaf and same-node routes have no choice to make.
  CHECK(topology.path(0, 1, 7).links == topology.path(0, 1).links);
}

TEST_CASE("d-mod-k: a ring's shift pattern gets disjoint uplinks where per-flow ECMP collides") {
  // 256 nodes x 8 GPUs on a 2-tier radix-64 fat-tree: 64 leaves of 4 nodes (32 NICs), 32
  // spines. Eight rings (one per GPU index, as data-parallel rings with TP8), each hop node n
  // -> n + 1: the 8 flows leaving a leaf at its last node go to 8 different NICs.
  const auto busiest_uplink = [](const Topology& topology) {
    std::map<LinkId, int> load;
    for (int gpu = 0; gpu < 8; ++gpu) {
      for (int node = 0; node < 256; ++node) {
        const Path& path = topology.path(node * 8 + gpu, ((node + 1) % 256) * 8 + gpu);
        if (path.links.size() == 4) ++load[path.links[1]];  // leaf -> spine
      }
    }
    int most = 0;
    for (const auto& [link, flows] : load) most = std::max(most, flows);
    return most;
  };
  auto spec = cluster(256, 8, 8, "fat-tree", 64, 2);
  const Topology hashed = Topology::build(spec);
  spec.scale_out.routing = "d-mod-k";
  const Topology by_destination = Topology::build(spec);
  CHECK(busiest_uplink(by_destination) == 1);
  CHECK(busiest_uplink(hashed) > 1);
  // Every flow to one NIC takes one route, whatever the source or flow key; routes stay chains.
  const Path& a = by_destination.path(0, 100);
  CHECK(is_chain(by_destination, a));
  CHECK(&by_destination.path(0, 100, 5) == &a);  // the flow key is ignored
  const Path& b = by_destination.path(40, 100);
  CHECK(link_at(by_destination, a.links[1]).to == link_at(by_destination, b.links[1]).to);  // same spine
}

TEST_CASE("routing: unknown names are rejected; d-mod-k keys other topologies' choices by destination") {
  auto spec = cluster(8, 1, 1, "fat-tree", 4, 2);
  spec.scale_out.routing = "random";
  CHECK_THROWS_WITH_AS((void)Topology::build(spec), doctest::Contains("unknown scale-out routing 'random'; valid: d-mod-k, ecmp"),
                       clustersim::ConfigError);
  // A 1D torus of 8: 0 -> 4 is 4 hops either way, an equal-cost choice. By destination, every
  // flow key takes the per-pair route (one cache entry), a chain of 4 links.
  auto torus = cluster(8, 1, 1, "torus");
  torus.scale_out.torus_dims = {8};
  torus.scale_out.routing = "d-mod-k";
  const Topology by_destination = Topology::build(torus);
  const Path& route = by_destination.path(0, 4);
  CHECK(route.links.size() == 4);
  CHECK(is_chain(by_destination, route));
  CHECK(&by_destination.path(0, 4, 3) == &route);
  CHECK(&by_destination.path(0, 4, 11) == &route);
}

namespace {

/// Hops from every vertex to every other along the graph's directed links (Floyd-Warshall),
/// -1 where none leads.
std::vector<std::vector<int>> all_pairs_hops(const NetworkGraph& graph, const std::vector<std::uint8_t>& failed) {
  const auto n = static_cast<std::size_t>(graph.vertex_count());
  constexpr int kFar = 1 << 20;
  std::vector<std::vector<int>> hops(n, std::vector<int>(n, kFar));
  for (std::size_t v = 0; v < n; ++v) hops[v][v] = 0;
  for (std::size_t id = 0; id < graph.links().size(); ++id) {
    if (failed.empty() || failed[id] == 0) hops[static_cast<std::size_t>(graph.links()[id].from)][static_cast<std::size_t>(graph.links()[id].to)] = 1;
  }
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) hops[i][j] = std::min(hops[i][j], hops[i][k] + hops[k][j]);
    }
  }
  for (auto& row : hops) {
    for (int& h : row) h = h >= kFar ? -1 : h;
  }
  return hops;
}

}  // namespace

TEST_CASE("switches with the same neighbours share a BFS: every distance and route as a per-destination search gives") {
  // Two pods of two leaves (0-1 on spines 4-5, 2-3 on spines 6-7), spines on cores 8 and 9, leaf
  // 10 on spine 4 alone (a subset of pod A's neighbours: no twin), switch 11 cabled to nothing.
  // Leaf 0 has two cables to spine 4, leaf 1 one: the same neighbours, so twins.
  NetworkGraph graph;
  for (int v = 0; v < 12; ++v) graph.add_vertex(VertexKind::switch_, -1, v < 4 || v == 10 ? 1 : v < 8 ? 2 : 3);
  const std::vector<std::pair<int, int>> cables = {{0, 4}, {0, 4}, {0, 5}, {1, 4}, {1, 5}, {2, 6}, {2, 7}, {3, 6},
                                                   {3, 7}, {4, 8}, {6, 8}, {5, 9}, {7, 9}, {10, 4}};
  std::vector<Cable> added;
  for (const auto& [a, b] : cables) added.push_back(graph.add_cable(a, b, 50e9, 1e-6, 2));
  const auto check_against_reference = [&](const std::vector<std::uint8_t>& failed, bool routes) {
    const SwitchRouter router(graph, 0, false, failed);
    const auto reference = all_pairs_hops(graph, failed);
    for (int from = 0; from < 12; ++from) {
      for (int to = 0; to < 12; ++to) {
        CAPTURE(from);
        CAPTURE(to);
        // The router's distance to `to` is the search from `to` (a cable's two links make it symmetric).
        const int expected = reference[static_cast<std::size_t>(to)][static_cast<std::size_t>(from)];
        CHECK(router.connected(from, to) == (expected >= 0));
        if (expected < 0) {
          CHECK_THROWS_AS((void)router.distance(from, to), clustersim::SimulationError);
          continue;
        }
        CHECK(router.distance(from, to) == expected);
        if (!routes) continue;
        for (std::uint64_t hash = 0; hash < 4; ++hash) {
          std::vector<LinkId> links;
          router.append_route(from, to, hash, links);
          REQUIRE(static_cast<int>(links.size()) == expected);
          int at = from;
          for (const LinkId id : links) {
            CHECK(graph.links()[static_cast<std::size_t>(id)].from == at);
            at = graph.links()[static_cast<std::size_t>(id)].to;
          }
          CHECK(at == to);
        }
      }
    }
  };
  check_against_reference({}, true);
  // The links into leaf 1 failed, those out of it not: leaf 1 still has leaf 0's neighbours,
  // but nothing reaches it while it reaches leaf 0 in two hops. The links no longer pair up, so
  // each destination gets its own search again.
  std::vector<std::uint8_t> failed(graph.links().size(), 0);
  failed[static_cast<std::size_t>(added[3].backward)] = 1;
  failed[static_cast<std::size_t>(added[4].backward)] = 1;
  check_against_reference(failed, false);
}

}  // namespace routing_test
