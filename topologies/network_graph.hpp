#pragma once
/// The Boost.Graph representation shared by the topology builders (private to topologies/).
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// Per-vertex data: what the vertex is, which node it belongs to (-1 for fabric switches) and
/// its tier (0 inside a node, 1 leaf, 2 spine/aggregation, 3 core).
struct VertexProperties {
  VertexKind kind = VertexKind::accelerator;
  int node = -1;
  int tier = 0;
};

/// Per-edge data: the index of the directed Link the edge stands for.
struct EdgeProperties {
  LinkId link = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    VertexProperties, EdgeProperties>;

/// The two directed links of one full-duplex cable.
struct Cable {
  LinkId forward = 0;   ///< from the first vertex to the second
  LinkId backward = 0;  ///< from the second vertex to the first
};

/// A graph plus its link table; builders only add to it.
class NetworkGraph {
 public:
  /// Adds a vertex and returns its index.
  int add_vertex(VertexKind kind, int node, int tier);

  /// Adds one full-duplex cable between `a` and `b`: two directed links of equal bandwidth
  /// (bytes/s, one direction) and latency (s).
  Cable add_cable(int a, int b, double bytes_per_s, double latency_s, int tier);

  /// Sets every link's efficiency: `scale_up` on tier-0 links, `scale_out` on the others.
  void set_efficiencies(double scale_up, double scale_out);

  int vertex_count() const { return static_cast<int>(boost::num_vertices(graph_)); }
  const VertexProperties& vertex(int v) const { return graph_[static_cast<std::size_t>(v)]; }
  const Graph& graph() const { return graph_; }
  const std::vector<Link>& links() const { return links_; }

 private:
  Graph graph_;
  std::vector<Link> links_;
};

}  // namespace clustersim::topologies
