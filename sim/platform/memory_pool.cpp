#include "sim/platform/memory_pool.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::platform {

std::vector<topologies::Link> memory_pool_links(const MemoryPoolSpec& spec, int accelerators) {
  if (!spec.on() || accelerators < 1) throw ConfigError("memory pools: no pool, or no accelerator to attach");
  if (!(spec.bytes_per_s > 0) || !(spec.link_bytes_per_s > 0) || !(spec.capacity_bytes > 0) || spec.latency_s < 0) {
    throw ConfigError("cluster.memory_pool needs a positive capacity, bandwidth and link_bandwidth");
  }
  const int pools = (accelerators + spec.accelerators - 1) / spec.accelerators;
  std::vector<topologies::Link> links;
  links.reserve(static_cast<std::size_t>(2 * (accelerators + pools)));
  // Vertices: accelerators 0..n-1, pools n..n+pools-1 (only for reading the links).
  for (int a = 0; a < accelerators; ++a) {
    const int pool = accelerators + spec.pool_of(a);
    links.push_back({pool, a, spec.link_bytes_per_s, 0.0, 1});  // read
    links.push_back({a, pool, spec.link_bytes_per_s, 0.0, 1});  // write
  }
  for (int p = 0; p < pools; ++p) {
    links.push_back({accelerators + p, accelerators + p, spec.bytes_per_s, 0.0, 2});  // read port
    links.push_back({accelerators + p, accelerators + p, spec.bytes_per_s, 0.0, 2});  // write port
  }
  return links;
}

MemoryPoolRuntime::MemoryPoolRuntime(engine::Engine& engine, const MemoryPoolSpec& spec, int accelerators)
    : spec_(spec),
      accelerators_(accelerators),
      pools_(spec.on() ? (accelerators + spec.accelerators - 1) / spec.accelerators : 0),
      network_(engine, memory_pool_links(spec, accelerators)),
      bytes_(static_cast<std::size_t>(2 * pools_), 0.0) {}

topologies::LinkId MemoryPoolRuntime::link_of(int accelerator, PoolDirection direction) const {
  return static_cast<topologies::LinkId>(2 * accelerator + (direction == PoolDirection::read ? 0 : 1));
}

topologies::LinkId MemoryPoolRuntime::port_of(int pool, PoolDirection direction) const {
  return static_cast<topologies::LinkId>(2 * accelerators_ + 2 * pool + (direction == PoolDirection::read ? 0 : 1));
}

void MemoryPoolRuntime::transfer(int accelerator, double bytes, PoolDirection direction, std::function<void()> done) {
  if (accelerator < 0 || accelerator >= accelerators_) {
    throw ConfigError(fmt::format("memory pool transfer: accelerator {} out of range [0, {})", accelerator, accelerators_));
  }
  const int pool = spec_.pool_of(accelerator);
  bytes_[static_cast<std::size_t>(2 * pool + (direction == PoolDirection::read ? 0 : 1))] += bytes;
  const std::array<topologies::LinkId, 2> path{link_of(accelerator, direction), port_of(pool, direction)};
  network_.start_flow(path, bytes, spec_.latency_s, [done = std::move(done)](engine::Engine&) {
    if (done) done();
  });
}

double MemoryPoolRuntime::bytes(int pool, PoolDirection direction) const {
  return bytes_.at(static_cast<std::size_t>(2 * pool + (direction == PoolDirection::read ? 0 : 1)));
}

}  // namespace clustersim::platform
