#pragma once
/// 64-bit mixing functions behind the event fingerprint and the per-entity RNG seeds.
#include <cstdint>

namespace clustersim::engine {

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix in which every input
/// bit affects every output bit.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

/// One FNV-1a-style step of a cheap key hash (one multiply per value): for keys folded value by
/// value millions of times, such as rank groups of hundreds; finish with splitmix64.
constexpr std::uint64_t fnv_fold(std::uint64_t hash, std::uint64_t value) {
  return (hash ^ value) * 0x100000001B3ULL;
}

/// Initial fingerprint of an engine with seed `seed` (before any event fired).
constexpr std::uint64_t fingerprint_initial(std::uint64_t seed) {
  return splitmix64(seed ^ 0x636C757374657253ULL);  // "clusterS": keeps it apart from RNG seeds
}

/// Folds one fired event (time in ps, tag) into `fingerprint`. The chain is order-sensitive:
/// swapping two events, or moving one in time, changes the result.
constexpr std::uint64_t fingerprint_fold(std::uint64_t fingerprint, std::int64_t time_ps,
                                         std::uint64_t tag) {
  const std::uint64_t with_time = splitmix64(fingerprint ^ static_cast<std::uint64_t>(time_ps));
  return splitmix64(with_time ^ tag);
}

/// Seed of the RNG stream of `entity_id` under engine seed `seed`.
constexpr std::uint64_t rng_stream_seed(std::uint64_t seed, std::uint64_t entity_id) {
  return splitmix64(seed ^ splitmix64(entity_id));
}

}  // namespace clustersim::engine
