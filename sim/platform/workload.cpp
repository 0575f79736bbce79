#include "sim/platform/workload.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::platform {

Allocation primary_allocation(int accelerators, std::span<const Allocation> pinned) {
  std::vector<Allocation> ranges(pinned.begin(), pinned.end());
  std::sort(ranges.begin(), ranges.end(), [](const Allocation& a, const Allocation& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const Allocation& r = ranges[i];
    if (r.count < 1 || r.first < 0 || r.end() > accelerators) {
      throw ConfigError(fmt::format("accelerators [{}, {}) are not a range of the platform's {} accelerators", r.first,
                                    r.end(), accelerators));
    }
    if (i > 0 && r.first < ranges[i - 1].end()) {
      throw ConfigError(fmt::format("accelerators [{}, {}) and [{}, {}) overlap: two jobs cannot share an accelerator",
                                    ranges[i - 1].first, ranges[i - 1].end(), r.first, r.end()));
    }
  }
  const int end = ranges.empty() ? accelerators : ranges.front().first;
  if (end < 1) throw ConfigError("the other jobs take every accelerator: none is left for the workload");
  return {0, end};
}

}  // namespace clustersim::platform
