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

KvTierStore::KvTierStore(std::vector<KvTier> tiers, int block_size, double device_bytes_per_token,
                         std::shared_ptr<KvTierStore> shared)
    : block_size_(block_size), device_bytes_per_token_(device_bytes_per_token), shared_(std::move(shared)) {
  if (block_size < 1 || !(device_bytes_per_token > 0)) {
    throw ConfigError("KV-cache tiers need a block size >= 1 and positive bytes per token");
  }
  for (KvTier& tier : tiers) {
    const std::string& name = tier.name;
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

const KvTierStore::Level& KvTierStore::level(int index) const {
  if (static_cast<std::size_t>(index) < tiers_.size()) return tiers_[static_cast<std::size_t>(index)];
  if (shared(index)) return shared_->tiers_.front();
  throw SimulationError(fmt::format("KV-cache tier {} of {}", index, size()));
}

const KvTier& KvTierStore::tier(int index) const { return level(index).spec; }
const KvTierStats& KvTierStore::stats(int index) const { return level(index).stats; }
std::int64_t KvTierStore::used_blocks(int index) const { return level(index).used; }

void KvTierStore::put(std::size_t index, std::int64_t prefix, std::int64_t tokens) {
  if (index >= tiers_.size()) {
    if (!shared_) return;  // below the last tier: dropped
    const Hit held = shared_->find(prefix);
    shared_->put(0, prefix, tokens);
    if (on_shared_write_ && tokens > held.tokens) on_shared_write_(tokens - held.tokens);
    return;
  }
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
  if (tokens <= 0 || size() == 0) return;
  const Hit held = find(prefix);
  if (held.tokens >= tokens) {  // a tier has it all already: renew its recency
    if (shared(held.tier)) {
      shared_->store(prefix, tokens);
      return;
    }
    Level& level = tiers_[static_cast<std::size_t>(held.tier)];
    level.lru.splice(level.lru.end(), level.lru, level.entries.at(prefix).lru);
    return;
  }
  // The first tier takes the whole prefix; a shorter copy further down is superseded (a shared
  // pool's is left to the others who may read it).
  for (std::size_t i = 1; i < tiers_.size(); ++i) erase(tiers_[i], prefix);
  put(0, prefix, tokens);
}

KvTierStore::Hit KvTierStore::find(std::int64_t prefix) const {
  Hit hit;
  for (std::size_t i = 0; i < tiers_.size(); ++i) {
    const auto it = tiers_[i].entries.find(prefix);
    if (it != tiers_[i].entries.end() && it->second.tokens > hit.tokens) hit = {static_cast<int>(i), it->second.tokens};
  }
  if (shared_) {
    const Hit pooled = shared_->find(prefix);
    if (pooled.tokens > hit.tokens) hit = {static_cast<int>(tiers_.size()), pooled.tokens};
  }
  return hit;
}

double KvTierStore::transfer_s(int tier, std::int64_t tokens) const {
  if (shared(tier)) return shared_->transfer_s(0, tokens);
  const KvTier& spec = tiers_.at(static_cast<std::size_t>(tier)).spec;
  if (tokens <= 0) return 0;
  return spec.latency_s + static_cast<double>(tokens) * device_bytes_per_token_ / spec.bytes_per_s;
}

double KvTierStore::load(int tier, std::int64_t prefix, std::int64_t tokens, bool timed) {
  if (shared(tier)) return shared_->load(0, prefix, tokens, timed);
  Level& level = tiers_.at(static_cast<std::size_t>(tier));
  const auto it = level.entries.find(prefix);
  if (it == level.entries.end() || it->second.tokens < tokens) {
    throw SimulationError(fmt::format("KV-cache tier '{}' holds {} tokens of prefix {}, not the {} being loaded",
                                      level.spec.name,
                                      it == level.entries.end() ? 0 : it->second.tokens, prefix, tokens));
  }
  level.lru.splice(level.lru.end(), level.lru, it->second.lru);
  const double seconds = transfer_s(tier, tokens);
  level.stats.loaded_tokens += tokens;
  ++level.stats.hits;
  if (timed) level.stats.load_s += seconds;
  return seconds;
}

void KvTierStore::add_load_time(int tier, double seconds) {
  if (shared(tier)) {
    shared_->add_load_time(0, seconds);
    return;
  }
  tiers_.at(static_cast<std::size_t>(tier)).stats.load_s += seconds;
}

void KvTierStore::add_prefill_avoided(int tier, double seconds) {
  if (shared(tier)) {
    shared_->add_prefill_avoided(0, seconds);
    return;
  }
  tiers_.at(static_cast<std::size_t>(tier)).stats.prefill_avoided_s += seconds;
}

void KvTierStore::clear() {
  for (Level& level : tiers_) {
    level.entries.clear();
    level.lru.clear();
    level.used = 0;
  }
}

}  // namespace clustersim::serving
