#include "sim/platform/replica_index.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>

#include "sim/engine/mix.hpp"

namespace clustersim::platform {

std::uint64_t ReplicaIndex::key(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) {
  // Hashed as CollectiveModel's line cache.
  std::uint64_t hash = engine::fnv_fold(static_cast<std::uint64_t>(kind) + 1, std::bit_cast<std::uint64_t>(bytes));
  for (const auto& g : groups) {
    for (const int rank : g) hash = engine::fnv_fold(hash, static_cast<std::uint32_t>(rank));
    hash = engine::fnv_fold(hash, 0xFFFFFFFFULL);  // group separator
  }
  return engine::splitmix64(hash);
}

std::optional<int> ReplicaIndex::find(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                      double bytes) const {
  const auto bucket = buckets_.find(key(kind, groups, bytes));
  if (bucket == buckets_.end()) return std::nullopt;
  const auto same_groups = [&groups](const std::vector<int>& flat) {
    std::size_t i = 0;
    for (const auto& g : groups) {
      if (flat.size() < i + g.size() + 1 ||
          !std::equal(g.begin(), g.end(), flat.begin() + static_cast<std::ptrdiff_t>(i)) || flat[i + g.size()] != -1) {
        return false;
      }
      i += g.size() + 1;
    }
    return i == flat.size();
  };
  for (const Entry& entry : bucket->second) {
    if (entry.kind == static_cast<int>(kind) && entry.bytes == bytes && same_groups(entry.flat)) return entry.value;
  }
  return std::nullopt;
}

void ReplicaIndex::insert(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes,
                          int value) {
  std::vector<int> flat;
  for (const auto& g : groups) {
    flat.insert(flat.end(), g.begin(), g.end());
    flat.push_back(-1);
  }
  buckets_[key(kind, groups, bytes)].push_back(Entry{static_cast<int>(kind), bytes, std::move(flat), value});
}

}  // namespace clustersim::platform
