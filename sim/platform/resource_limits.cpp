#include "sim/platform/resource_limits.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "topologies/topology_size.hpp"

namespace clustersim::platform {

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0.0;
}

double memory_limit_bytes(const ResourceLimits& limits) {
  return limits.memory_bytes > 0 ? limits.memory_bytes : kDefaultMemoryFraction * physical_memory_bytes();
}

std::optional<std::string> network_memory_problem(const topologies::ClusterNetworkSpec& network,
                                                  const ResourceLimits& limits) {
  const double limit = memory_limit_bytes(limits);
  if (!(limit > 0)) return std::nullopt;
  const topologies::TopologySize size = topologies::topology_size(network);
  const double bytes = topologies::topology_memory_bytes(size);
  if (bytes <= limit) return std::nullopt;
  // The graph grows with the nodes: this many would fit.
  const auto nodes_fit = static_cast<std::int64_t>(std::floor(network.nodes * limit / bytes));
  return fmt::format(
      "the cluster's network needs about {:.3g} GB of memory ({} accelerators: {} graph vertices, {} links), more "
      "than simulation.limits.memory allows ({:.3g} GB{}): simulate fewer nodes (about {} fit), or raise "
      "simulation.limits.memory",
      bytes / 1e9, size.accelerators, size.vertices, size.links, limit / 1e9,
      limits.memory_bytes > 0 ? "" : fmt::format(", {:.0f} % of this machine's memory", kDefaultMemoryFraction * 100),
      nodes_fit);
}

std::string event_limit_message(const std::string& engine_message, const ResourceLimits& limits) {
  return fmt::format(
      "{} (simulation.limits.events: {}): simulate less (simulation.mode: symmetric, fewer steps, requests or "
      "nodes) or raise simulation.limits.events",
      engine_message, limits.events);
}

}  // namespace clustersim::platform
