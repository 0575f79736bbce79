#include "topologies/min_cut.hpp"

#include <vector>

#include <doctest/doctest.h>

namespace min_cut_test {

using namespace clustersim::topologies;

TEST_CASE("min cut between accelerator halves: a path graph is cut at its thinnest link") {
  // a0 -(10)- s0 -(3)- s1 -(7)- a1 and a second parallel route a0 -(2)- a1.
  NetworkGraph graph;
  const int a0 = graph.add_vertex(VertexKind::accelerator, 0, 0);
  const int a1 = graph.add_vertex(VertexKind::accelerator, 1, 0);
  const int s0 = graph.add_vertex(VertexKind::switch_, -1, 1);
  const int s1 = graph.add_vertex(VertexKind::switch_, -1, 1);
  graph.add_cable(a0, s0, 10, 0, 1);
  graph.add_cable(s0, s1, 3, 0, 1);
  graph.add_cable(s1, a1, 7, 0, 1);
  graph.add_cable(a0, a1, 2, 0, 1);
  const std::vector<int> accelerators{a0, a1};
  CHECK(half_split_min_cut_bytes_per_s(graph, accelerators) == doctest::Approx(3 + 2));
}

TEST_CASE("min cut of a 4x4x4 torus matches the closed form 2 N / D links") {
  NetworkGraph graph;
  std::vector<int> accelerators;
  for (int a = 0; a < 64; ++a) accelerators.push_back(graph.add_vertex(VertexKind::accelerator, a, 0));
  int stride = 1;
  for (int dim = 0; dim < 3; ++dim) {
    for (int a = 0; a < 64; ++a) {
      const int x = (a / stride) % 4;
      graph.add_cable(a, a + ((x + 1) % 4 - x) * stride, 1.0, 0, 1);
    }
    stride *= 4;
  }
  // Indices [0, 32) are the planes z = 0, 1: cut between z = 1|2 and the wraparound 3|0.
  CHECK(half_split_min_cut_bytes_per_s(graph, accelerators) == doctest::Approx(2.0 * 64 / 4));
}

TEST_CASE("min cut of fewer than two accelerators is zero") {
  NetworkGraph graph;
  const std::vector<int> one{graph.add_vertex(VertexKind::accelerator, 0, 0)};
  CHECK(half_split_min_cut_bytes_per_s(graph, one) == 0.0);
}

}  // namespace min_cut_test
