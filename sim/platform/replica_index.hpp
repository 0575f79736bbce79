#pragma once
/// Lookup of a communication request, (collective kind, bytes, replica groups), that a
/// backend has already prepared. Full mode asks once per group collective's start, so a hit
/// must not allocate or compare long keys in order: the key is hashed, and the groups are
/// compared in place only within the hash's bucket.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "models/comm/collective_kind.hpp"

namespace clustersim::platform {

class ReplicaIndex {
 public:
  /// The value stored for (kind, groups, bytes), if any.
  std::optional<int> find(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) const;
  /// Stores `value` for (kind, groups, bytes), which must not be stored yet.
  void insert(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes, int value);

 private:
  struct Entry {
    int kind = 0;
    double bytes = 0;
    std::vector<int> flat;  // the groups' ranks, each group followed by -1
    int value = -1;
  };
  static std::uint64_t key(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes);
  std::unordered_map<std::uint64_t, std::vector<Entry>> buckets_;
};

}  // namespace clustersim::platform
