#include "sim/serving/kv_tiers.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::serving {

const config::NameTable<TierWrite>& tier_write_names() {
  static const config::NameTable<TierWrite> names(
      "tier write policy", {{"write_through", TierWrite::write_through}, {"write_back", TierWrite::write_back}});
  return names;
}

const config::NameTable<TierLoad>& tier_load_names() {
  static const config::NameTable<TierLoad> names("tier load mode",
                                                 {{"async", TierLoad::async}, {"blocking", TierLoad::blocking}});
  return names;
}

const config::NameTable<models::MemoryLevelKind>& kv_tier_level_names() {
  static const config::NameTable<models::MemoryLevelKind> names(
      "KV-cache tier",
      {{"host", models::MemoryLevelKind::host}, {"cxl", models::MemoryLevelKind::cxl}, {"ssd", models::MemoryLevelKind::ssd}});
  return names;
}

KvTierStore::KvTierStore(std::vector<KvTier> tiers, int block_size, double device_bytes_per_token)
    : block_size_(block_size), device_bytes_per_token_(device_bytes_per_token) {
  if (block_size < 1 || !(device_bytes_per_token > 0)) {
    throw ConfigError("KV-cache tiers need a block size >= 1 and positive bytes per token");
  }
  for (KvTier& tier : tiers) {
    const std::string name(models::memory_level_name(tier.level));
    if (tier.blocks < 1) {
      throw ConfigError(fmt::format("KV-cache tier '{}' holds no block of {} tokens", name, block_size));
    }
    if (!(tier.bytes_per_s > 0) || tier.latency_s < 0) {
      throw ConfigError(fmt::format("KV-cache tier '{}' needs a positive bandwidth and a latency >= 0", name));
    }
    tiers_.push_back(Level{tier, 0, {}, {}, {}});
  }
}

void KvTierStore::erase(Level& level, std::int64_t prefix) {
  const auto it = level.entries.find(prefix);
  if (it == level.entries.end()) return;
  level.used -= it->second.tokens / block_size_;
  level.lru.erase(it->second.lru);
  level.entries.erase(it);
}

void KvTierStore::put(std::size_t index, std::int64_t prefix, std::int64_t tokens) {
  if (index >= tiers_.size()) return;  // below the last tier: dropped
  Level& level = tiers_[index];
  const std::int64_t blocks = tokens / block_size_;
  if (blocks > level.spec.blocks) {  // larger than the whole tier: the next one may hold it
    erase(level, prefix);
    put(index + 1, prefix, tokens);
    return;
  }
  auto found = level.entries.find(prefix);
  const std::int64_t had = found == level.entries.end() ? 0 : found->second.tokens;
  if (tokens <= had) {
    level.lru.splice(level.lru.end(), level.lru, found->second.lru);
    return;
  }
  const std::int64_t need = blocks - had / block_size_;
  while (level.used + need > level.spec.blocks) {
    auto victim = level.lru.begin();
    if (*victim == prefix) ++victim;  // never itself (its blocks count in `had`)
    const std::int64_t id = *victim;
    const std::int64_t moved = level.entries.at(id).tokens;
    erase(level, id);
    level.stats.evicted_tokens += moved;
    put(index + 1, id, moved);
  }
  found = level.entries.find(prefix);  // still there: the victims were others
  if (found == level.entries.end()) {
    found = level.entries.emplace(prefix, Entry{0, level.lru.insert(level.lru.end(), prefix)}).first;
  } else {
    level.lru.splice(level.lru.end(), level.lru, found->second.lru);
  }
  found->second.tokens = tokens;
  level.used += need;
  level.stats.stored_tokens += tokens - had;
}

void KvTierStore::store(std::int64_t prefix, std::int64_t tokens) {
  tokens = tokens / block_size_ * block_size_;
  if (tokens <= 0 || tiers_.empty()) return;
  const Hit held = find(prefix);
  if (held.tokens >= tokens) {  // a tier has it all already: renew its recency
    Level& level = tiers_[static_cast<std::size_t>(held.tier)];
    level.lru.splice(level.lru.end(), level.lru, level.entries.at(prefix).lru);
    return;
  }
  // The first tier takes the whole prefix; a shorter copy further down is superseded.
  for (std::size_t i = 1; i < tiers_.size(); ++i) erase(tiers_[i], prefix);
  put(0, prefix, tokens);
}

KvTierStore::Hit KvTierStore::find(std::int64_t prefix) const {
  Hit hit;
  for (std::size_t i = 0; i < tiers_.size(); ++i) {
    const auto it = tiers_[i].entries.find(prefix);
    if (it != tiers_[i].entries.end() && it->second.tokens > hit.tokens) hit = {static_cast<int>(i), it->second.tokens};
  }
  return hit;
}

double KvTierStore::transfer_s(int tier, std::int64_t tokens) const {
  const KvTier& spec = tiers_.at(static_cast<std::size_t>(tier)).spec;
  if (tokens <= 0) return 0;
  return spec.latency_s + static_cast<double>(tokens) * device_bytes_per_token_ / spec.bytes_per_s;
}

double KvTierStore::load(int tier, std::int64_t prefix, std::int64_t tokens) {
  Level& level = tiers_.at(static_cast<std::size_t>(tier));
  const auto it = level.entries.find(prefix);
  if (it == level.entries.end() || it->second.tokens < tokens) {
    throw SimulationError(fmt::format("KV-cache tier '{}' holds {} tokens of prefix {}, not the {} being loaded",
                                      models::memory_level_name(level.spec.level),
                                      it == level.entries.end() ? 0 : it->second.tokens, prefix, tokens));
  }
  level.lru.splice(level.lru.end(), level.lru, it->second.lru);
  const double seconds = transfer_s(tier, tokens);
  level.stats.loaded_tokens += tokens;
  ++level.stats.hits;
  level.stats.load_s += seconds;
  return seconds;
}

void KvTierStore::clear() {
  for (Level& level : tiers_) {
    level.entries.clear();
    level.lru.clear();
    level.used = 0;
  }
}

}  // namespace clustersim::serving
