// Rings and paths on a full mesh: every directed link used once, the known exceptions.
#include "models/comm/mesh_rings.hpp"

#include <doctest/doctest.h>

#include <set>
#include <utility>
#include <vector>

#include "sim/engine/error.hpp"

namespace mesh_rings_test {

using namespace clustersim;
using namespace clustersim::models;

namespace {

/// The directed edges of `walks` (closed: rings; open: paths), checking each visits all n
/// vertices once; fails the test on a repeated edge.
std::set<std::pair<int, int>> edges_of(const std::vector<std::vector<int>>& walks, int n, bool closed) {
  std::set<std::pair<int, int>> edges;
  for (const auto& walk : walks) {
    REQUIRE(walk.size() == static_cast<std::size_t>(n));
    CHECK(std::set<int>(walk.begin(), walk.end()).size() == static_cast<std::size_t>(n));
    const std::size_t hops = closed ? walk.size() : walk.size() - 1;
    for (std::size_t i = 0; i < hops; ++i) {
      const std::pair<int, int> edge{walk[i], walk[(i + 1) % walk.size()]};
      CHECK(edge.first != edge.second);
      CHECK_MESSAGE(edges.insert(edge).second, "edge " << edge.first << "->" << edge.second << " used twice");
    }
  }
  return edges;
}

}  // namespace

TEST_CASE("n - 1 edge-disjoint Hamiltonian rings on a full mesh, except n = 4 and 6") {
  for (int n = 2; n <= 12; ++n) {
    CAPTURE(n);
    const auto rings = disjoint_hamiltonian_rings(n);
    const int expected = n == 4 ? 2 : n == 6 ? 4 : n - 1;
    CHECK(rings.size() == static_cast<std::size_t>(expected));
    const auto edges = edges_of(rings, n, n > 2);
    // Every directed link of the mesh carries exactly one ring where n - 1 rings exist.
    if (expected == n - 1 && n > 2) CHECK(edges.size() == static_cast<std::size_t>(n * (n - 1)));
  }
  CHECK_THROWS_AS(disjoint_hamiltonian_rings(1), ConfigError);
}

TEST_CASE("m disjoint Hamiltonian paths from c to c + m/2 cover every directed link once") {
  for (int m = 2; m <= 16; m += 2) {
    CAPTURE(m);
    const auto paths = disjoint_hamiltonian_paths(m);
    REQUIRE(paths.size() == static_cast<std::size_t>(m));
    for (int c = 0; c < m; ++c) {
      CHECK(paths[static_cast<std::size_t>(c)].front() == c);
      CHECK(paths[static_cast<std::size_t>(c)].back() == (c + m / 2) % m);
    }
    CHECK(edges_of(paths, m, false).size() == static_cast<std::size_t>(m * (m - 1)));
  }
  CHECK_THROWS_WITH_AS(disjoint_hamiltonian_paths(7),
                       "disjoint Hamiltonian paths need an even vertex count >= 2, got 7", ConfigError);
}

}  // namespace mesh_rings_test
