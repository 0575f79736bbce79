#pragma once
/// A scenario's `sweep:` block (docs/sweeps.md) and the points it stands for: the Cartesian
/// product of `grid` lists and `zip` groups (lists varied together), optionally a random
/// `sample` of N of them. Every point has a stable ID (a hash of its varied keys and values, so
/// it survives reordering the run or splitting it into shards) and its own simulation seed,
/// derived from the scenario's seed and the ID.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/scenario/scenario_tree_loader.hpp"

namespace clustersim::sweep {

/// One dimension of the product: a single `grid` key, or a `zip` group of keys whose lists are
/// varied together. values[i] holds the i-th value of every key.
struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<config::Position> key_positions;
  std::vector<std::vector<config::ConfigNode>> values;  ///< [row][key]
};

/// The two result columns the Pareto front is drawn over.
struct ParetoSpec {
  std::string maximize;  ///< e.g. tokens_per_s; empty: the throughput column the rows have
  std::string minimize;  ///< e.g. gpus, cost_per_million_tokens_usd, cluster_power_average_w
};

struct SweepSpec {
  std::vector<SweepAxis> axes;       ///< grid keys in order, then zip groups in order
  std::optional<std::int64_t> sample;  ///< run this many points drawn from the product
  std::uint64_t sample_seed = 1;     ///< the draw's seed (`seed`, default the scenario's seed)
  ParetoSpec pareto;
  config::Position position;         ///< where `sweep:` is written
};

/// One point: its place in the product, its ID, the values it sets and its seed.
struct SweepPoint {
  std::size_t index = 0;  ///< position in the sweep's point list (product order)
  std::string id;         ///< 16 hex digits: FNV-1a of its sorted "key=value" lines
  std::vector<std::pair<std::string, std::string>> values;  ///< key path -> value as written (flow YAML)
  std::vector<scenario::KeyOverride> overrides;  ///< the values, with their positions in the block
  std::uint64_t seed = 0;                         ///< simulation.seed of this point
  bool seed_swept = false;                        ///< simulation.seed is one of the varied keys
};

/// A node as one line of flow YAML (scalars as written, `[a, b]`, `{k: v}`); positions dropped.
std::string render_flow(const config::ConfigNode& node);

/// 64-bit FNV-1a of `text`.
std::uint64_t fnv1a(std::string_view text);

/// Reads a `sweep:` block. `default_seed` is the scenario's simulation.seed (the sample's seed
/// unless `seed` is given). Every problem (unknown key with the closest valid one, a list that
/// is not a list, zip lists of different lengths, a key swept twice, a sample < 1) is reported
/// with its position in one config::ScenarioError.
SweepSpec parse_sweep(const config::ConfigNode& block, const config::Position& block_position,
                      std::uint64_t default_seed);

/// How many points the full product has.
std::size_t product_size(const SweepSpec& spec);

/// The product's indices a sample of `count` draws from `total` with `seed`: `count` distinct
/// indices in increasing order (all of them when count >= total). Deterministic for a seed.
std::vector<std::size_t> sample_indices(std::size_t total, std::size_t count, std::uint64_t seed);

/// The seed of the point with ID `id` in a scenario seeded `base_seed` (splitmix64 of both),
/// within simulation.seed's range.
std::uint64_t point_seed(std::uint64_t base_seed, const std::string& id);

/// The sweep's points in product order (the last axis varies fastest), sampled when `sample` is
/// set. `base_seed` is the scenario's simulation.seed. Throws ConfigError when two points are
/// the same (a value listed twice).
std::vector<SweepPoint> expand_points(const SweepSpec& spec, std::uint64_t base_seed);

/// `--shard i/N`: shard i (1-based) of N.
struct Shard {
  int index = 1;
  int count = 1;
};
/// Parses "i/N" (1 <= i <= N). Throws ConfigError otherwise.
Shard parse_shard(const std::string& text);
/// True if the point at `index` of the point list belongs to `shard` (round robin: index mod N
/// == i - 1), so shards have sizes within one of each other.
bool in_shard(std::size_t index, const Shard& shard);

}  // namespace clustersim::sweep
