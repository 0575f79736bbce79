#pragma once
/// What a run may use (`simulation.limits`): a scenario that would need more memory or events
/// stops early with an estimate and a suggestion, rather than swapping or being killed.
#include <cstdint>
#include <optional>
#include <string>

#include "topologies/topology.hpp"

namespace clustersim::platform {

/// `simulation.limits`.
struct ResourceLimits {
  /// Bytes of memory the simulator may plan to use; 0: kDefaultMemoryFraction of the machine's
  /// physical memory.
  double memory_bytes = 0;
  /// Events one run may fire (the engine stops the run past it).
  std::int64_t events = 2'000'000'000;
};

/// The share of physical memory a run may use when `simulation.limits.memory` is unset.
inline constexpr double kDefaultMemoryFraction = 0.8;

/// This machine's physical memory in bytes (0 when the system does not say).
double physical_memory_bytes();

/// `limits.memory_bytes`, or kDefaultMemoryFraction of physical memory when unset (0 when
/// neither is known: no limit).
double memory_limit_bytes(const ResourceLimits& limits);

/// Why building `network` would pass the memory limit: the estimate (vertices, links, bytes),
/// the limit, and what fits (the nodes that would). nullopt when it fits. `network` must pass
/// topologies::spec_problems.
std::optional<std::string> network_memory_problem(const topologies::ClusterNetworkSpec& network,
                                                  const ResourceLimits& limits);

/// The message of a run stopped by the event limit: `engine_message` (where it stopped) and
/// what to do.
std::string event_limit_message(const std::string& engine_message, const ResourceLimits& limits);

}  // namespace clustersim::platform
