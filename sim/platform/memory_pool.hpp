#pragma once
/// Transfers between accelerators and their shared memory pools (`cluster.memory_pool`) as flows
/// on a max-min fair flow network of their own: each accelerator's link to its pool and the
/// pool's port, one pair per direction. Concurrent transfers of a pool's accelerators share its
/// port, so a pool read by many at once gives each a share (a CXL box's ports, a Grace's LPDDR
/// read by both of its GPUs).
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/platform/platform_spec.hpp"
#include "topologies/flow_network.hpp"

namespace clustersim::platform {

enum class PoolDirection : std::uint8_t { read, write };  ///< read: pool to accelerator

class MemoryPoolRuntime {
 public:
  /// Pools of `spec` over `accelerators` accelerators, bound to `engine` (both must outlive it).
  /// Throws ConfigError when the spec is off or its rates are not positive.
  MemoryPoolRuntime(engine::Engine& engine, const MemoryPoolSpec& spec, int accelerators);
  MemoryPoolRuntime(const MemoryPoolRuntime&) = delete;
  MemoryPoolRuntime& operator=(const MemoryPoolRuntime&) = delete;

  /// Moves `bytes` (> 0) between `accelerator` and its pool; `done` runs when they have arrived
  /// (the pool's latency after the last byte). Throws ConfigError for an accelerator out of range.
  void transfer(int accelerator, double bytes, PoolDirection direction, std::function<void()> done);
  /// Bytes moved so far through `pool` in `direction`.
  double bytes(int pool, PoolDirection direction) const;

 private:
  topologies::LinkId link_of(int accelerator, PoolDirection direction) const;
  topologies::LinkId port_of(int pool, PoolDirection direction) const;

  MemoryPoolSpec spec_;
  int accelerators_;
  int pools_;
  topologies::FlowNetwork network_;
  std::vector<double> bytes_;  // per pool and direction
};

/// The links of the pools' flow network: per accelerator its read and write link, then per pool
/// its read and write port (MemoryPoolRuntime's layout).
std::vector<topologies::Link> memory_pool_links(const MemoryPoolSpec& spec, int accelerators);

}  // namespace clustersim::platform
