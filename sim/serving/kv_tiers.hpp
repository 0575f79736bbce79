#pragma once
/// KV-cache tiers below HBM for serving (`workload.kv_offload`): the prefix cache's blocks kept
/// in host DRAM, a CXL pool or local NVMe after HBM lets them go, and brought back over that
/// tier's link when a request with the same prefix or session returns.
///
/// What the serving stacks do, and what this models of it:
///   * vLLM V1's OffloadingConnector (CPU, LRU; docs.vllm.ai, vllm/v1/kv_offload) and Dynamo's
///     KV block manager (G1 device, G2 host, G3 disk; docs.nvidia.com/dynamo, KVBM components)
///     copy every completed block to the host as it is registered, and load a prefix HBM no
///     longer holds back asynchronously: the request waits, the batch runs on;
///   * SGLang's HiCache (GPU L1, host L2, storage L3; docs.sglang.io, HiCache design) writes
///     through or back (`--hicache-write-policy write_through | write_back`);
///   * LMCache (local CPU, local disk; chunk 256 tokens) stores the prompt's KV once it is
///     computed and, without its layer-wise mode, retrieves before the forward pass.
/// Here: `write: write_through` copies a request's reusable context to the nearest tier when it
/// ends (its blocks join the HBM prefix cache at the same moment); `write_back` copies a prefix
/// only when HBM evicts it. A tier full evicts its least recently used prefix to the next tier
/// (the last one drops it). A request finding more of its prefix in a tier than in HBM loads
/// the difference: `load: async` keeps it out of the batch until the copy has arrived (a flow
/// on the tier's link: loads at once share it), `blocking` adds the copy to the iteration
/// that admits it. A tier holds a prefix once (exclusive below the first); loads leave it there.
/// The last tier may be `pool`: a memory pool shared by the instances whose accelerators attach
/// to it (cluster.memory_pool): one store for them all, so an instance finds the prefixes
/// another stored, and its loads and copies are flows on the pool's links (MemoryPoolRuntime).
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/memory/memory_hierarchy.hpp"
#include "sim/config/name_table.hpp"

namespace clustersim::serving {

enum class TierWrite : std::uint8_t { write_through, write_back };
const config::NameTable<TierWrite>& tier_write_names();
enum class TierLoad : std::uint8_t { async, blocking };
const config::NameTable<TierLoad>& tier_load_names();
/// The accelerator's levels a tier may be: "host", "cxl", "ssd" (and "pool", no level of its own).
const config::NameTable<models::MemoryLevelKind>& kv_tier_level_names();
/// The tier name of a shared memory pool (cluster.memory_pool).
inline constexpr const char* kPoolTier = "pool";

/// `workload.kv_offload`.
struct KvOffloadSpec {
  /// Tier names, nearest first ("host", "cxl", "ssd", "pool" last); empty: no tiers.
  std::vector<std::string> tiers;
  /// Capacity per accelerator of each tier for the KV cache; 0: the accelerator's memory level.
  double host_capacity_bytes = 0, cxl_capacity_bytes = 0, ssd_capacity_bytes = 0;
  TierWrite write = TierWrite::write_through;
  TierLoad load = TierLoad::async;
  bool on() const { return !tiers.empty(); }
};

/// One tier as a scheduler sees it.
struct KvTier {
  std::string name;          ///< "host", "cxl", "ssd", "pool"
  std::int64_t blocks = 0;   ///< capacity in KV blocks of this scheduler (> 0)
  double bytes_per_s = 0;    ///< the link to it, per accelerator, one direction (> 0)
  double latency_s = 0;      ///< setup of one transfer
};

/// What a tier did over a run.
struct KvTierStats {
  std::int64_t stored_tokens = 0;   ///< tokens copied into it (from HBM, or from the tier above)
  std::int64_t loaded_tokens = 0;   ///< tokens brought back from it to HBM (its hits)
  std::int64_t hits = 0;            ///< requests that loaded from it
  std::int64_t evicted_tokens = 0;  ///< tokens it let go (to the next tier, or dropped)
  double load_s = 0;                ///< transfer time of its loads
  double prefill_avoided_s = 0;     ///< estimate: prefill time of its hits' tokens (each alone)
};

/// The tiers of one scheduler: which prefixes each holds and what moved.
class KvTierStore {
 public:
  /// `tiers` nearest first; `block_size` tokens per block; `device_bytes_per_token` the KV bytes
  /// of one token on one accelerator (what crosses each accelerator's link). `shared`: a store
  /// of one tier after these, shared with other schedulers (a memory pool); what goes down into
  /// it is reported to `on_shared_write` (tokens).
  KvTierStore(std::vector<KvTier> tiers, int block_size, double device_bytes_per_token,
              std::shared_ptr<KvTierStore> shared = nullptr);

  /// `prefix` has `tokens` cached (whole blocks): the first tier takes what it lacks (a copy
  /// from HBM). A prefix larger than a tier skips it.
  void store(std::int64_t prefix, std::int64_t tokens);
  struct Hit {
    int tier = -1;            ///< -1: none
    std::int64_t tokens = 0;
  };
  /// The tier holding the most tokens of `prefix` (the nearest on a tie).
  Hit find(std::int64_t prefix) const;
  /// Brings `tokens` of `prefix` from `tier` to HBM (counted, its recency renewed); returns the
  /// transfer time, seconds: latency + tokens x device bytes per token / bandwidth, which joins
  /// the tier's load time unless `timed` is false (the caller times it: add_load_time).
  double load(int tier, std::int64_t prefix, std::int64_t tokens, bool timed = true);
  /// Adds a load's time as the caller measured it (a shared pool's flows).
  void add_load_time(int tier, double seconds);
  /// The transfer time of `tokens` from `tier`, seconds (nothing counted).
  double transfer_s(int tier, std::int64_t tokens) const;
  /// Adds an estimate of the prefill time a hit on `tier` avoided.
  void add_prefill_avoided(int tier, double seconds);
  /// Its own tiers are emptied (the instance failed: its offload buffers lived in the serving
  /// process); a shared pool keeps what it holds.
  void clear();
  /// Copies into the shared tier are reported here (tokens), to be moved over the pool's links.
  void on_shared_write(std::function<void(std::int64_t)> report) { on_shared_write_ = std::move(report); }

  /// Tiers, the shared one included (last).
  std::size_t size() const { return tiers_.size() + (shared_ ? 1 : 0); }
  /// Is `index` the shared tier?
  bool shared(int index) const { return shared_ && static_cast<std::size_t>(index) == tiers_.size(); }
  const KvTierStore* shared_store() const { return shared_.get(); }
  const KvTier& tier(int index) const;
  const KvTierStats& stats(int index) const;
  /// Blocks in use in `tier`.
  std::int64_t used_blocks(int index) const;

 private:
  struct Entry {
    std::int64_t tokens = 0;
    std::list<std::int64_t>::iterator lru;
  };
  struct Level {
    KvTier spec;
    std::int64_t used = 0;  // blocks
    std::unordered_map<std::int64_t, Entry> entries;
    std::list<std::int64_t> lru;  // front: least recently used
    KvTierStats stats;
  };
  /// Puts `tokens` of `prefix` into tier `index` (past the last: the shared pool, else dropped),
  /// evicting its least recently used prefixes down to the next tier.
  void put(std::size_t index, std::int64_t prefix, std::int64_t tokens);
  void erase(Level& level, std::int64_t prefix);

  const Level& level(int index) const;

  std::vector<Level> tiers_;
  int block_size_;
  double device_bytes_per_token_;
  std::shared_ptr<KvTierStore> shared_;
  std::function<void(std::int64_t)> on_shared_write_;
};

}  // namespace clustersim::serving
