#include "models/memory/memory_hierarchy.hpp"

#include <algorithm>
#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

std::string_view memory_level_name(MemoryLevelKind kind) {
  switch (kind) {
    case MemoryLevelKind::sram: return "sram";
    case MemoryLevelKind::l2: return "l2";
    case MemoryLevelKind::hbm: return "hbm";
    case MemoryLevelKind::host: return "host";
    case MemoryLevelKind::cxl: return "cxl";
    case MemoryLevelKind::ssd: return "ssd";
  }
  return "?";
}

const config::NameTable<HostLink>& host_link_names() {
  static const config::NameTable<HostLink> names("host link", {{"pcie", HostLink::pcie}, {"c2c", HostLink::c2c}});
  return names;
}

MemoryHierarchy::MemoryHierarchy(std::vector<MemoryLevel> levels, HostLink host_link)
    : levels_(std::move(levels)), host_link_(host_link) {
  std::sort(levels_.begin(), levels_.end(),
            [](const MemoryLevel& a, const MemoryLevel& b) { return a.kind < b.kind; });
  for (std::size_t i = 0; i < levels_.size(); ++i) {
    const MemoryLevel& l = levels_[i];
    const std::string name(memory_level_name(l.kind));
    if (i > 0 && levels_[i - 1].kind == l.kind) {
      throw ConfigError("memory hierarchy: level '" + name + "' appears twice");
    }
    if (!(l.capacity_bytes > 0)) throw ConfigError("memory hierarchy: level '" + name + "' needs a positive capacity");
    if (!(l.bytes_per_s > 0)) throw ConfigError("memory hierarchy: level '" + name + "' needs a positive bandwidth");
    if (l.latency_s < 0) throw ConfigError("memory hierarchy: level '" + name + "' has a negative latency");
  }
  if (!has(MemoryLevelKind::hbm)) throw ConfigError("memory hierarchy: the 'hbm' level is required");
}

bool MemoryHierarchy::has(MemoryLevelKind kind) const {
  return std::any_of(levels_.begin(), levels_.end(), [kind](const MemoryLevel& l) { return l.kind == kind; });
}

const MemoryLevel& MemoryHierarchy::level(MemoryLevelKind kind) const {
  for (const MemoryLevel& l : levels_) {
    if (l.kind == kind) return l;
  }
  std::string present;
  for (const MemoryLevel& l : levels_) present += (present.empty() ? "" : ", ") + std::string(memory_level_name(l.kind));
  throw ConfigError("memory hierarchy has no '" + std::string(memory_level_name(kind)) + "' level (levels: " +
                    present + ")");
}

MemoryLevelKind MemoryHierarchy::serving_level(double working_set_bytes) const {
  if (working_set_bytes < 0) throw ConfigError("memory hierarchy: negative working set");
  if (has(MemoryLevelKind::l2) && working_set_bytes <= level(MemoryLevelKind::l2).capacity_bytes) {
    return MemoryLevelKind::l2;
  }
  return MemoryLevelKind::hbm;
}

double MemoryHierarchy::effective_read_bytes_per_s(double working_set_bytes) const {
  return level(serving_level(working_set_bytes)).bytes_per_s;
}

double MemoryHierarchy::offload_transfer_time_s(double bytes, MemoryLevelKind far_level) const {
  if (bytes < 0) throw ConfigError("offload transfer: negative byte count");
  if (far_level != MemoryLevelKind::host && far_level != MemoryLevelKind::cxl && far_level != MemoryLevelKind::ssd) {
    throw ConfigError("offload transfer: target must be 'host', 'cxl' or 'ssd', not '" +
                      std::string(memory_level_name(far_level)) + "'");
  }
  if (!has(far_level)) {
    throw ConfigError("offloading to '" + std::string(memory_level_name(far_level)) +
                      "' needs the accelerator preset's memory." + std::string(memory_level_name(far_level)) +
                      "_bandwidth (and _capacity)");
  }
  const MemoryLevel& far = level(far_level);
  if (bytes == 0) return 0;
  return far.latency_s + bytes / far.bytes_per_s;
}

}  // namespace clustersim::models
