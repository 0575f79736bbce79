#include "topologies/torus.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::topologies {
namespace {

std::string dims_text(const std::vector<int>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

}  // namespace

void check_torus_parameters(const ClusterNetworkSpec& spec, std::vector<std::string>& problems) {
  const ScaleOutSpec& out = spec.scale_out;
  if (out.torus_dims.empty() || out.torus_dims.size() > 3) {
    problems.push_back(fmt::format("torus dims must list 1 to 3 dimension sizes, got {}",
                                   dims_text(out.torus_dims)));
    return;
  }
  std::int64_t product = 1;
  bool sizes_ok = true;
  for (const int d : out.torus_dims) {
    if (d < 1) sizes_ok = false;
    product *= std::max(d, 1);
  }
  if (!sizes_ok) {
    problems.push_back(fmt::format("torus dims must all be >= 1, got {}", dims_text(out.torus_dims)));
    return;
  }
  const std::int64_t accelerators =
      static_cast<std::int64_t>(spec.nodes) * spec.accelerators_per_node;
  if (product != accelerators) {
    problems.push_back(fmt::format(
        "torus dims {} hold {} accelerators, but the cluster has {} ({} nodes x {}); one "
        "accelerator sits at each torus coordinate",
        dims_text(out.torus_dims), product, accelerators, spec.nodes, spec.accelerators_per_node));
  }
  const double bw = out.fabric_link_bytes_per_s();
  if (accelerators > 1 && !(std::isfinite(bw) && bw > 0)) {
    problems.push_back(fmt::format(
        "torus link bandwidth (scale_out.link_bytes_per_s, else nic_bytes_per_s) must be a "
        "finite number > 0, got {}",
        bw));
  }
}

TorusRouter::TorusRouter(std::vector<int> dims, std::vector<std::vector<LinkId>> plus_link,
                         std::vector<std::vector<LinkId>> minus_link)
    : dims_(std::move(dims)), plus_link_(std::move(plus_link)), minus_link_(std::move(minus_link)) {}

void TorusRouter::append_route(int from, int to, std::uint64_t flow_hash,
                               std::vector<LinkId>& links) const {
  int current = from;
  int stride = 1;
  for (std::size_t dim = 0; dim < dims_.size(); ++dim) {
    const int d = dims_[dim];
    const int s = (from / stride) % d;
    const int t = (to / stride) % d;
    const int forward = ((t - s) % d + d) % d;
    const int backward = d - forward;
    if (forward != 0) {
      bool plus = forward < backward;
      if (forward == backward) plus = (engine::splitmix64(flow_hash + dim) & 1U) == 0;
      int x = s;
      for (int step = 0; step < (plus ? forward : backward); ++step) {
        const auto at = static_cast<std::size_t>(current);
        links.push_back(plus ? plus_link_[dim][at] : minus_link_[dim][at]);
        const int next = plus ? (x + 1) % d : (x + d - 1) % d;
        current += (next - x) * stride;
        x = next;
      }
    }
    stride *= d;
  }
  if (current != to) {
    throw SimulationError(fmt::format("torus route from {} ended at {}, not {}", from, current, to));
  }
}

int TorusRouter::distance(int from, int to) const {
  int hops = 0;
  int stride = 1;
  for (const int d : dims_) {
    const int forward = (((to / stride) % d - (from / stride) % d) % d + d) % d;
    hops += std::min(forward, d - forward);
    stride *= d;
  }
  return hops;
}

DirectNetwork build_torus(NetworkGraph& graph, const ClusterNetworkSpec& spec) {
  std::vector<std::string> problems;
  check_torus_parameters(spec, problems);
  if (!problems.empty()) throw ConfigError(problems.front());
  const std::vector<int>& dims = spec.scale_out.torus_dims;
  const int n = spec.nodes * spec.accelerators_per_node;
  const double bw = spec.scale_out.fabric_link_bytes_per_s();
  const double latency_s = spec.scale_out.link_latency_s;

  DirectNetwork network;
  const int first_vertex = graph.vertex_count();
  if (first_vertex != 0) {
    // TorusRouter indexes its link tables by vertex, so accelerators must be vertices 0..n-1.
    throw SimulationError("a torus must be built on an empty network graph");
  }
  for (int a = 0; a < n; ++a) {
    network.accelerator_vertex.push_back(
        graph.add_vertex(VertexKind::accelerator, a / spec.accelerators_per_node, 0));
  }
  std::vector<std::vector<LinkId>> plus(dims.size(), std::vector<LinkId>(static_cast<std::size_t>(n), -1));
  std::vector<std::vector<LinkId>> minus = plus;
  int stride = 1;
  int largest = 1;
  for (std::size_t dim = 0; dim < dims.size(); ++dim) {
    const int d = dims[dim];
    largest = std::max(largest, d);
    for (int a = 0; d > 1 && a < n; ++a) {
      const int x = (a / stride) % d;
      if (d == 2 && x == 1) continue;  // the pair's single cable was added from x = 0
      const int b = a + (((x + 1) % d) - x) * stride;
      const Cable cable = graph.add_cable(first_vertex + a, first_vertex + b, bw, latency_s,
                                          1 + static_cast<int>(dim));
      plus[dim][static_cast<std::size_t>(a)] = cable.forward;
      minus[dim][static_cast<std::size_t>(b)] = cable.backward;
      if (d == 2) {
        plus[dim][static_cast<std::size_t>(b)] = cable.backward;
        minus[dim][static_cast<std::size_t>(a)] = cable.forward;
      }
    }
    network.diameter_hops += d / 2;
    stride *= d;
  }
  if (largest >= 3) {
    network.bisection_bytes_per_s = 2.0 * static_cast<double>(n / largest) * bw;
  } else if (largest == 2) {
    network.bisection_bytes_per_s = static_cast<double>(n / 2) * bw;
  }
  network.router = std::make_unique<TorusRouter>(dims, std::move(plus), std::move(minus));
  return network;
}

}  // namespace clustersim::topologies
