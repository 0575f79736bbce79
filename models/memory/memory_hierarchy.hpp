#pragma once
/// The memory levels of one accelerator (SRAM, L2, HBM, host DRAM, pooled CXL, local NVMe) and the
/// bandwidth an op sees for a given working set.
#include <optional>
#include <string_view>
#include <vector>

#include "sim/config/name_table.hpp"

namespace clustersim::models {

/// A level of the hierarchy, nearest to the math units first.
enum class MemoryLevelKind { sram, l2, hbm, host, cxl, ssd };

/// "sram", "l2", "hbm", "host", "cxl", "ssd".
std::string_view memory_level_name(MemoryLevelKind kind);

/// How host DRAM is attached: PCIe (x86 hosts) or a coherent chip-to-chip link (Grace C2C).
enum class HostLink { pcie, c2c };
/// "pcie", "c2c".
const config::NameTable<HostLink>& host_link_names();

/// One level. Capacities and bandwidths are per accelerator.
struct MemoryLevel {
  MemoryLevelKind kind = MemoryLevelKind::hbm;
  double capacity_bytes = 0;      ///< > 0
  double bytes_per_s = 0;         ///< peak read bandwidth seen by one accelerator, > 0
  double latency_s = 0;           ///< load-to-use latency, >= 0
};

/// The levels of one accelerator. SRAM and L2 are optional (omit when unknown), HBM is
/// required, host, CXL and SSD are optional. Construct with `MemoryHierarchy(levels, link)`.
class MemoryHierarchy {
 public:
  /// Throws ConfigError if there is no HBM level, a level appears twice, a capacity or
  /// bandwidth is not positive, or a latency is negative.
  explicit MemoryHierarchy(std::vector<MemoryLevel> levels, HostLink host_link = HostLink::pcie);

  bool has(MemoryLevelKind kind) const;
  /// Throws ConfigError naming the level and listing the levels present.
  const MemoryLevel& level(MemoryLevelKind kind) const;
  HostLink host_link() const { return host_link_; }
  const std::vector<MemoryLevel>& levels() const { return levels_; }

  /// The nearest cache level that holds `working_set_bytes` entirely: L2 when an L2 level
  /// exists and the working set fits in it, else HBM. (SRAM is private per SM and managed by
  /// the kernel; it is never the level an op's operands are re-read from.)
  /// Throws ConfigError for a negative working set.
  MemoryLevelKind serving_level(double working_set_bytes) const;
  /// Read bandwidth of `serving_level(working_set_bytes)`, bytes/s: L2 bandwidth when the
  /// working set is L2-resident (reuse), else HBM bandwidth.
  double effective_read_bytes_per_s(double working_set_bytes) const;

  /// Time to move `bytes` between HBM and host memory (`host`), the CXL pool (`cxl`) or local
  /// NVMe (`ssd`),
  /// seconds: latency + bytes / link bandwidth. Throws ConfigError if that level is absent
  /// (naming the missing preset field) or bytes is negative.
  double offload_transfer_time_s(double bytes, MemoryLevelKind far_level) const;

 private:
  std::vector<MemoryLevel> levels_;  // sorted nearest first
  HostLink host_link_;
};

}  // namespace clustersim::models
