#include "sim/serving/replica.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::serving {

const config::NameTable<SchedulePolicy>& schedule_policy_names() {
  static const config::NameTable<SchedulePolicy> names(
      "schedule policy", {{"decode_first", SchedulePolicy::decode_first},
                          {"prefill_first", SchedulePolicy::prefill_first},
                          {"static_batch", SchedulePolicy::static_batch}});
  return names;
}

const config::NameTable<PreemptionMode>& preemption_mode_names() {
  static const config::NameTable<PreemptionMode> names(
      "preemption mode", {{"recompute", PreemptionMode::recompute}, {"swap", PreemptionMode::swap}});
  return names;
}

const config::NameTable<ReplicaRole>& replica_role_names() {
  static const config::NameTable<ReplicaRole> names(
      "pool role", {{"mixed", ReplicaRole::mixed}, {"prefill", ReplicaRole::prefill}, {"decode", ReplicaRole::decode}});
  return names;
}

/// Fingerprint tag of an iteration's end (plus the replica index).
constexpr std::uint64_t kIterationTag = 0x5e41'0000'0000;

/// A request inside a replica.
struct Replica::Sequence {
  RequestRecord* record = nullptr;
  std::int64_t prompt = 0;     // tokens to prefill: the input (+ generated ones after a recompute)
  std::int64_t computed = 0;   // prompt tokens whose KV exists (cached prefix included)
  std::int64_t kv = 0;         // tokens whose KV is in the cache
  std::int64_t generated = 0;  // output tokens produced
  std::int64_t blocks = 0;     // private blocks
  std::int64_t hit_blocks = 0; // blocks read from a cached prefix
  double last_token_s = -1;
  std::int64_t chunk = 0;      // query tokens scheduled this iteration
  bool swapped = false;
  std::int64_t tier_tokens = 0;  // prompt tokens loaded from a KV-cache tier
  int tier = -1;                 // ... from this one
  bool tier_unpaid = false;      // a blocking load the admitting iteration has still to carry
  engine::TimePs ready_ps = -1;  // an async tier load's copy arrives then (-1: none pending)
  RequestRecord* transfer_of = nullptr;  // prefill pool: its KV cache is being sent
  bool remote = false;         // decode pool pulling KV (set_pull_kv): its cache is still at the prefill instance
  std::int64_t redo = 0;       // prompt tokens still to prefill again after a failure lost them
  bool decoding() const { return computed >= prompt; }
};

Replica::Replica(int index, ReplicaRole role, IterationCostModel& cost, IterationCostModel* draft,
                 const SchedulerSpec& scheduler,
                 const SpeculativeSpec& speculative, std::int64_t kv_blocks, double kv_bytes_per_token,
                 double host_bytes_per_s, bool exact_cost)
    : index_(index),
      role_(role),
      cost_(&cost),
      draft_(draft),
      scheduler_(scheduler),
      speculative_(speculative),
      kv_blocks_(kv_blocks),
      kv_bytes_per_token_(kv_bytes_per_token),
      host_bytes_per_s_(host_bytes_per_s),
      exact_cost_(exact_cost) {
  if (kv_blocks < 1) throw ConfigError(fmt::format("replica {} has no KV-cache blocks", index));
  if (scheduler.block_size < 1 || scheduler.max_sequences < 1 || scheduler.max_batched_tokens < 1) {
    throw ConfigError("block_size, max_sequences and max_batched_tokens must be >= 1");
  }
}

Replica::~Replica() = default;

double Replica::now_s() const { return engine::ps_to_seconds(session_->engine().now()); }

void Replica::start(platform::Session& session, const engine::Profile& speed, ReplicaEvents events,
                    int first_accelerator) {
  session_ = &session;
  first_accelerator_ = first_accelerator;
  events_ = std::move(events);
  if (pull_kv_ && !events_.pull) throw SimulationError(fmt::format("replica {}: nothing moves pulled KV caches", index_));
  acceptance_rng_.seed(engine::rng_stream_seed(session.options().seed, 0x5e41'1000 + static_cast<std::uint64_t>(index_)));
  speed_ = speed;
  constant_speed_ = speed == engine::Profile::constant(1.0);
  if (tiers_ && tier_load_ == TierLoad::async) {
    // One link per private tier (a shared pool's flows are the MemoryPoolRuntime's).
    std::vector<topologies::Link> links;
    for (std::size_t t = 0; t < tiers_->size(); ++t) {
      const KvTier& tier = tiers_->tier(static_cast<int>(t));
      links.push_back({0, 0, tier.bytes_per_s, 0.0, 1});
    }
    tier_links_ = std::make_unique<topologies::FlowNetwork>(session.engine(), links);
  }
}

std::int64_t Replica::blocks_for(std::int64_t tokens) const {
  return (tokens + scheduler_.block_size - 1) / scheduler_.block_size;
}

std::int64_t Replica::cached_prefix_tokens(std::int64_t prefix_id) const {
  const auto it = prefixes_.find(prefix_id);
  const std::int64_t hbm = it == prefixes_.end() ? 0 : it->second.tokens;
  return tiers_ ? std::max(hbm, tiers_->find(prefix_id).tokens) : hbm;
}

void Replica::set_kv_tiers(KvTierStore tiers, TierWrite write, TierLoad load) {
  if (!scheduler_.prefix_caching) throw ConfigError("KV-cache tiers need scheduler.prefix_caching: true");
  tiers_.emplace(std::move(tiers));
  tier_write_ = write;
  tier_load_ = load;
}

bool Replica::evict_prefix(std::int64_t needed) {
  for (auto it = prefix_lru_.begin(); it != prefix_lru_.end() && needed > 0;) {
    CachedPrefix& entry = prefixes_.at(*it);
    if (entry.users > 0) {
      ++it;
      continue;
    }
    const std::int64_t blocks = entry.tokens / scheduler_.block_size;
    if (tiers_ && tier_write_ == TierWrite::write_back) tiers_->store(*it, entry.tokens);
    used_blocks_ -= blocks;
    cached_blocks_ -= blocks;
    needed -= blocks;
    prefixes_.erase(*it);
    it = prefix_lru_.erase(it);
  }
  return needed <= 0;
}

bool Replica::take_blocks(std::int64_t blocks) {
  if (blocks <= 0) return true;
  const std::int64_t free = kv_blocks_ - used_blocks_;
  if (free < blocks && !evict_prefix(blocks - free)) return false;
  used_blocks_ += blocks;
  stats_.peak_blocks = std::max(stats_.peak_blocks, used_blocks_);
  return true;
}

bool Replica::grow(Sequence& s, std::int64_t kv_after) {
  const std::int64_t need = blocks_for(kv_after) - s.hit_blocks - s.blocks;
  if (!take_blocks(need)) return false;
  s.blocks += std::max<std::int64_t>(0, need);
  return true;
}

void Replica::release(Sequence& s, bool keep_prefix) {
  const RequestRecord& r = *s.record;
  if (keep_prefix && scheduler_.prefix_caching && r.request.prefix_id >= 0 && r.request.reusable_tokens > 0) {
    // Its full blocks of the reusable context stay cached (moved from the sequence to the cache).
    const std::int64_t want = std::min(r.request.reusable_tokens, s.kv) / scheduler_.block_size * scheduler_.block_size;
    auto [it, fresh] = prefixes_.try_emplace(r.request.prefix_id);
    if (fresh) it->second.lru = prefix_lru_.insert(prefix_lru_.end(), r.request.prefix_id);
    const std::int64_t moved = std::min(s.blocks, want / scheduler_.block_size - it->second.tokens / scheduler_.block_size);
    if (moved > 0) {
      it->second.tokens += moved * scheduler_.block_size;
      cached_blocks_ += moved;
      s.blocks -= moved;
    }
    prefix_lru_.splice(prefix_lru_.end(), prefix_lru_, it->second.lru);
    if (tiers_ && tier_write_ == TierWrite::write_through) tiers_->store(r.request.prefix_id, it->second.tokens);
  }
  if (s.hit_blocks > 0) {
    if (auto it = prefixes_.find(r.request.prefix_id); it != prefixes_.end()) --it->second.users;
  }
  used_blocks_ -= s.blocks;
  s.blocks = 0;
  s.hit_blocks = 0;
}

std::unique_ptr<Replica::Sequence> Replica::accept(RequestRecord& record, Rejection rejection) {
  record.replica = index_;
  if (rejection != Rejection::none) {
    record.rejected = true;
    record.rejection = rejection;
    record.finish_s = now_s();
    if (events_.finished) events_.finished(record);
    return nullptr;
  }
  auto s = std::make_unique<Sequence>();
  s->record = &record;
  s->prompt = record.request.input_tokens;
  if (record.redo_tokens > 0) {
    // Back from a failed instance: its prompt and the tokens it had generated are prefilled
    // again (as a recompute preemption), the tokens it had stay delivered.
    s->generated = record.resume_generated;
    s->prompt += std::max<std::int64_t>(0, s->generated - 1);
    s->last_token_s = record.last_token_s;
    s->redo = record.redo_tokens;
  }
  return s;
}

void Replica::submit(RequestRecord& record) {
  const Request& r = record.request;
  Rejection rejection = Rejection::none;
  if (blocks_for(r.input_tokens + (role_ == ReplicaRole::prefill ? 1 : r.output_tokens)) > kv_blocks_) {
    rejection = Rejection::kv_capacity;
  } else if (!scheduler_.chunked_prefill && r.input_tokens > scheduler_.max_batched_tokens) {
    rejection = Rejection::token_budget;
  } else if (scheduler_.max_queue > 0 && queued() >= scheduler_.max_queue) {
    rejection = Rejection::queue_full;
  }
  auto s = accept(record, rejection);
  if (!s) return;
  enqueue(std::move(s));
  ++outstanding_;
  active_blocks_ += blocks_for(r.input_tokens);
  maybe_schedule();
}

void Replica::enqueue(std::unique_ptr<Sequence> s) {
  // An idle instance's scheduler loop spins and takes the request in at once; a decoding one
  // holds it until its next receive (recv_interval).
  if (scheduler_.recv_interval > 1 && (busy_ || !running_.empty())) {
    inbox_.push_back(std::move(s));
  } else {
    waiting_.push_back(std::move(s));
  }
}

void Replica::receive() {
  since_receive_ = 0;
  for (auto& s : inbox_) waiting_.push_back(std::move(s));
  inbox_.clear();
}

void Replica::submit_prefilled(RequestRecord& record) {
  const Request& r = record.request;
  auto s = accept(record, blocks_for(r.input_tokens + r.output_tokens) > kv_blocks_ ? Rejection::kv_capacity : Rejection::none);
  if (!s) return;
  if (pull_kv_) {
    s->remote = true;  // computed here up to its last prompt token once its KV cache has arrived (admit)
  } else {
    s->computed = s->prompt;
    s->kv = s->prompt;
    s->generated = 1;  // the prefill pool sampled the first token
    s->last_token_s = record.first_token_s;
  }
  enqueue(std::move(s));
  ++outstanding_;
  active_blocks_ += blocks_for(r.input_tokens);
  maybe_schedule();
}

void Replica::start_pull(Sequence& s) {
  lookup_prefix(s);  // a prefix cached here is not read again
  const std::int64_t hit = s.computed;
  if (!grow(s, s.prompt)) {
    undo_lookup(s);
    return;
  }
  // vLLM computes the last prompt token again to sample the first output token.
  s.computed = s.kv = s.prompt - 1;
  s.ready_ps = std::numeric_limits<engine::TimePs>::max();  // until it has arrived
  stats_.prefix_hit_tokens += hit;
  stats_.prompt_tokens += s.prompt;
  events_.pull(*s.record, s.prompt - hit, [this, sequence = &s, generation = load_generation_] {
    if (generation != load_generation_) return;  // the instance failed meanwhile
    sequence->ready_ps = session_->engine().now();
    maybe_schedule();
  });
}

void Replica::preempt_last() {
  // The most recently admitted running sequence, not yet in this batch (vLLM's choice).
  std::unique_ptr<Sequence> victim = std::move(running_.back());
  running_.pop_back();
  Sequence& s = *victim;
  ++s.record->preemptions;
  ++stats_.preemptions;
  if (scheduler_.preemption == PreemptionMode::swap) {
    iteration_swap_s_ += static_cast<double>(s.kv) * kv_bytes_per_token_ / host_bytes_per_s_;
    release(s, false);
    s.swapped = true;
  } else {
    release(s, false);
    s.prompt = s.record->request.input_tokens + std::max<std::int64_t>(0, s.generated - 1);
    s.computed = 0;
    s.kv = 0;
    s.tier_tokens = 0;
    s.tier = -1;
  }
  waiting_.push_front(std::move(victim));
}

void Replica::undo_lookup(Sequence& s) {
  if (s.computed == 0) return;
  release(s, false);
  s.computed = s.kv = s.tier_tokens = 0;
  s.tier = -1;
  s.tier_unpaid = false;
}

bool Replica::load_from_tier(Sequence& s) {
  const Request& r = s.record->request;
  const KvTierStore::Hit held = tiers_->find(r.prefix_id);
  const std::int64_t bs = scheduler_.block_size;
  const std::int64_t usable = std::min({held.tokens, r.prefix_tokens / bs * bs, (s.prompt - 1) / bs * bs});
  if (usable <= s.computed) return true;  // HBM gave it as much
  const std::int64_t extra = usable - s.computed;
  if (tier_load_ == TierLoad::async && !grow(s, usable)) return false;  // the copy's blocks, now
  s.computed = s.kv = usable;
  s.redo = std::max<std::int64_t>(0, s.redo - extra);
  s.tier_tokens = extra;
  s.tier = held.tier;
  if (tiers_->shared(held.tier)) {
    load_from_pool(s, held.tier, extra);
    return true;
  }
  if (tier_load_ == TierLoad::blocking) {  // loaded with its first chunk
    s.tier_unpaid = true;
    return true;
  }
  // A flow on the tier's link (every accelerator of the instance moves its own shard at once
  // over its own link: one flow stands for them): loads at once share the link.
  tiers_->load(held.tier, r.prefix_id, extra, false);
  count_prefill_avoided(held.tier, extra);
  s.ready_ps = std::numeric_limits<engine::TimePs>::max();  // until it has arrived
  const KvTier& tier = tiers_->tier(held.tier);
  const topologies::LinkId link = held.tier;
  const double started = now_s();
  tier_links_->start_flow(std::span(&link, 1), static_cast<double>(extra) * kv_bytes_per_token_, tier.latency_s,
                          [this, sequence = &s, tier_index = held.tier, started, generation = load_generation_](engine::Engine&) {
                            if (generation != load_generation_) return;
                            tiers_->add_load_time(tier_index, now_s() - started);
                            sequence->ready_ps = session_->engine().now();
                            maybe_schedule();
                          });
  return true;
}

void Replica::set_memory_pool(platform::MemoryPoolRuntime* pools, std::vector<int> accelerators) {
  memory_pools_ = pools;
  pool_accelerators_ = std::move(accelerators);
  if (!tiers_) return;
  // Copies into the pool (write-through, or a prefix handed down): write flows nothing waits for.
  tiers_->on_shared_write([this](std::int64_t tokens) {
    for (const int a : pool_accelerators_) {
      memory_pools_->transfer(a, static_cast<double>(tokens) * kv_bytes_per_token_, platform::PoolDirection::write, {});
    }
  });
}

void Replica::load_from_pool(Sequence& s, int tier, std::int64_t tokens) {
  if (memory_pools_ == nullptr || pool_accelerators_.empty() || tier_load_ != TierLoad::async) {
    throw SimulationError(fmt::format("replica {}: a load from the shared pool needs the pool's runtime and async "
                                      "loads",
                                      index_));
  }
  tiers_->load(tier, s.record->request.prefix_id, tokens, false);
  count_prefill_avoided(tier, tokens);
  s.ready_ps = std::numeric_limits<engine::TimePs>::max();  // until its flows have arrived
  auto left = std::make_shared<std::size_t>(pool_accelerators_.size());
  const double started = now_s();
  for (const int a : pool_accelerators_) {
    memory_pools_->transfer(a, static_cast<double>(tokens) * kv_bytes_per_token_, platform::PoolDirection::read,
                            [this, sequence = &s, left, tier, started, generation = load_generation_] {
                              if (generation != load_generation_ || --*left > 0) return;
                              tiers_->add_load_time(tier, now_s() - started);
                              sequence->ready_ps = session_->engine().now();
                              maybe_schedule();
                            });
  }
}

void Replica::count_prefill_avoided(int tier, std::int64_t tokens) {
  // The prefill these tokens would have cost: a prompt of them alone, less a one-token one (the
  // weights a batch reads anyway). An estimate: in a batch the marginal cost differs.
  const BatchEntry alone{tokens, tokens, false}, minimal{1, 1, false};
  const double avoided = cost_->cost(std::span(&alone, 1)).time_s - cost_->cost(std::span(&minimal, 1)).time_s;
  tiers_->add_prefill_avoided(tier, std::max(0.0, avoided));
}

void Replica::lookup_prefix(Sequence& s) {
  const Request& r = s.record->request;
  if (s.computed != 0 || !scheduler_.prefix_caching || r.prefix_id < 0) return;
  const auto it = prefixes_.find(r.prefix_id);
  if (it == prefixes_.end()) return;
  const std::int64_t bs = scheduler_.block_size;
  const std::int64_t hit = std::min({it->second.tokens, r.prefix_tokens / bs * bs, (s.prompt - 1) / bs * bs});
  if (hit <= 0) return;
  s.hit_blocks = hit / bs;
  s.computed = s.kv = hit;
  s.redo = std::max<std::int64_t>(0, s.redo - hit);
  ++it->second.users;
  prefix_lru_.splice(prefix_lru_.end(), prefix_lru_, it->second.lru);
}

bool Replica::admit(Sequence& s, std::int64_t budget, std::vector<BatchEntry>& batch) {
  if (s.swapped) {
    if (!take_blocks(blocks_for(s.kv))) return false;
    s.blocks = blocks_for(s.kv);
    s.swapped = false;
    iteration_swap_s_ += static_cast<double>(s.kv) * kv_bytes_per_token_ / host_bytes_per_s_;
  }
  if (s.remote) {  // a pulled KV cache: blocks and the read first, its last prompt token once it is here
    if (s.ready_ps < 0) {
      start_pull(s);
      return false;
    }
    if (s.ready_ps > session_->engine().now()) return false;
    if (budget < 1) return false;
    s.remote = false;
    s.ready_ps = -1;
    s.chunk = 1;
    batch.push_back({1, s.kv + 1, false});
    return true;
  }
  if (s.decoding()) {  // swapped back in, or a prefilled request at a decode replica
    const std::int64_t q = 1 + speculative_.tokens;
    if (budget < q || !grow(s, s.kv + q)) return false;
    s.chunk = q;
    batch.push_back({q, s.kv + q, true});
    return true;
  }
  const Request& r = s.record->request;
  if (s.computed == 0 && scheduler_.prefix_caching && r.prefix_id >= 0) {
    lookup_prefix(s);
    if (tiers_ && !load_from_tier(s)) {
      undo_lookup(s);
      return false;
    }
  }
  if (s.ready_ps >= 0) {  // an async tier load
    if (s.ready_ps > session_->engine().now()) return false;  // its copy is on the way
    s.ready_ps = -1;
  }
  const std::int64_t remaining = s.prompt - s.computed;
  const std::int64_t chunk = scheduler_.chunked_prefill ? std::min(remaining, budget) : remaining;
  // GUARANTEED_NO_EVICT: the blocks of the whole output are taken at admission.
  const std::int64_t reserve =
      scheduler_.reserve_output ? s.prompt + r.output_tokens - std::max<std::int64_t>(0, s.generated - 1) : s.kv + chunk;
  if (chunk < 1 || chunk > budget || !grow(s, std::max(reserve, s.kv + chunk))) {
    if (s.blocks == 0) undo_lookup(s);  // it is retried next iteration
    return false;
  }
  if (s.tier_unpaid) {
    iteration_load_s_ += tiers_->load(s.tier, r.prefix_id, s.tier_tokens);
    count_prefill_avoided(s.tier, s.tier_tokens);
    s.tier_unpaid = false;
  }
  if (s.record->scheduled_s < 0) {
    s.record->scheduled_s = now_s();
    s.record->prefix_hit_tokens = s.computed;
    stats_.prefix_hit_tokens += s.computed;
    stats_.tier_hit_tokens += s.tier_tokens;
    stats_.prompt_tokens += r.input_tokens;
  }
  s.chunk = chunk;
  batch.push_back({chunk, s.kv + chunk, false});
  return true;
}

void Replica::maybe_schedule() {
  if (!busy_ && !held_ && !down_ && (!waiting_.empty() || !running_.empty() || !inbox_.empty())) run_iteration();
}

void Replica::release() {
  held_ = false;
  maybe_schedule();
}

void Replica::admit_waiting(std::int64_t& budget) {
  const engine::TimePs now = session_->engine().now();
  for (std::size_t i = 0; i < waiting_.size() && budget > 0 && static_cast<int>(batch_.size()) < scheduler_.max_sequences &&
                          static_cast<int>(running_.size()) < scheduler_.max_sequences;) {
    Sequence& s = *waiting_[i];
    if (!admit(s, budget, batch_)) {
      if (s.ready_ps > now) {  // its tier copy is on the way: the next one may go
        ++i;
        continue;
      }
      break;
    }
    budget -= s.chunk;
    batch_sequences_.push_back(&s);
    running_.push_back(std::move(waiting_[i]));
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Replica::run_iteration() {
  if (since_receive_ >= scheduler_.recv_interval || running_.empty()) receive();
  batch_.clear();
  batch_sequences_.clear();
  iteration_swap_s_ = iteration_load_s_ = 0;
  const double now = now_s();
  stats_.block_seconds += static_cast<double>(used_blocks_) * (now - last_change_s_);
  last_change_s_ = now;
  std::int64_t budget = scheduler_.max_batched_tokens;
  const auto schedule_running = [&](bool decodes, bool prefills) {
    for (std::size_t i = 0; i < running_.size() && static_cast<int>(batch_.size()) < scheduler_.max_sequences; ++i) {
      Sequence& s = *running_[i];
      if (s.decoding() ? !decodes : !prefills) continue;
      if (s.decoding()) {
        const std::int64_t q = 1 + speculative_.tokens;
        if (budget < q) break;
        bool fits = grow(s, s.kv + q);
        while (!fits && running_.size() > i + 1) {
          preempt_last();
          fits = grow(s, s.kv + q);
        }
        if (!fits) {  // nothing left to preempt but itself
          preempt_last();
          break;
        }
        s.chunk = q;
        batch_.push_back({q, s.kv + q, true});
      } else {
        const std::int64_t chunk = std::min(s.prompt - s.computed, budget);
        if (chunk < 1 || !grow(s, s.kv + chunk)) continue;
        s.chunk = chunk;
        batch_.push_back({chunk, s.kv + chunk, false});
      }
      budget -= s.chunk;
      batch_sequences_.push_back(&s);
    }
  };
  if (scheduler_.policy == SchedulePolicy::decode_first) {
    schedule_running(true, true);
    admit_waiting(budget);
  } else if (scheduler_.policy == SchedulePolicy::static_batch) {
    if (running_.empty()) {
      admit_waiting(budget);
    } else {
      schedule_running(true, true);
    }
  } else {
    schedule_running(false, true);  // chunks of prompts already started
    admit_waiting(budget);
    if (batch_.empty()) schedule_running(true, false);
  }
  if (batch_.empty()) return;  // nothing fits: wait for an arrival (cannot happen with a running set)
  std::vector<GroupTraffic>* traffic = fabric_groups_.empty() ? nullptr : &traffic_;
  IterationCost cost = exact_cost_ ? cost_->exact(batch_, traffic) : cost_->cost(batch_, traffic);
  // Prefill of KV cache a failure lost: its share of the batch's query tokens.
  std::int64_t redo_tokens = 0, batch_tokens = 0;
  for (Sequence* s : batch_sequences_) {
    batch_tokens += s->chunk;
    if (s->redo <= 0 || s->decoding()) continue;
    const std::int64_t redo = std::min(s->chunk, s->redo);
    s->redo -= redo;
    redo_tokens += redo;
  }
  if (speculative_.tokens > 0) {
    // Draft proposals: `tokens` draft steps over the decoding sequences.
    draft_batch_.clear();
    for (const BatchEntry& e : batch_) {
      if (e.decode) draft_batch_.push_back({1, e.kv_tokens - e.query_tokens + 1, true});
    }
    if (!draft_batch_.empty()) {
      // One draft decode step per proposed token (its KV grows by one each step: costed at the
      // first step's lengths), or a fraction of the target's iteration without a draft model.
      const double draft = draft_ != nullptr ? speculative_.tokens * draft_->cost(draft_batch_).time_s
                                             : speculative_.tokens * speculative_.draft_cost_fraction * cost.time_s;
      cost.time_s += draft;
      cost.memory_bound_s += draft;
    }
  }
  // Variability (faults.hpp): the GPU part of the iteration, drawn before the host work.
  const DrawnIteration drawn = variability_ ? variability_->draw(cost, 0, stats_.iterations) : DrawnIteration{};
  // Host work: scheduling, input preparation, sampling and output processing of this batch.
  const double host = scheduler_.iteration_overhead_s +
                      scheduler_.iteration_overhead_per_sequence_s * static_cast<double>(batch_.size());
  const double exposed = scheduler_.overlap_host ? std::max(0.0, host - cost.time_s) : host;
  cost.time_s += exposed;
  cost.host_s += exposed;
  cost.time_s += iteration_swap_s_ + iteration_load_s_;
  stats_.swap_s += iteration_swap_s_;
  stats_.tier_wait_s += iteration_load_s_;
  const double duration = apply_faults(cost, drawn, now);
  stats_.compute_bound_s += cost.compute_bound_s;
  stats_.memory_bound_s += cost.memory_bound_s;
  stats_.communication_s += cost.communication_s;
  stats_.host_s += cost.host_s;
  stats_.flops += cost.flops;
  stats_.hbm_bytes += cost.hbm_bytes;
  stats_.busy_s += cost.time_s;
  ++stats_.iterations;
  busy_ = true;
  if (redo_tokens > 0) {
    stats_.reprefill_tokens += redo_tokens;
    stats_.reprefill_s += duration * static_cast<double>(redo_tokens) / static_cast<double>(batch_tokens);
  }
  iteration_duration_s_ = duration;
  if (session_->trace() != nullptr) {
    iteration_sequences_ = static_cast<int>(batch_.size());
    iteration_prefill_ = iteration_decode_ = 0;
    for (const BatchEntry& e : batch_) (e.decode ? iteration_decode_ : iteration_prefill_) += e.query_tokens;
    trace_kv_cache();
  }
  iteration_start_ps_ = session_->engine().now();
  iteration_end_ps_ = iteration_start_ps_ + engine::seconds_to_ps(duration);
  const std::uint64_t generation = ++iteration_generation_;
  // Collectives on groups that cross the scale-out fabric run after the rest, through the
  // platform's communication runtime: each kind once, its ops' bytes summed.
  double local_s = duration;
  fabric_.clear();
  fabric_next_ = 0;
  if (traffic != nullptr) {
    for (const GroupTraffic& t : *traffic) {
      const auto group = static_cast<std::size_t>(t.group);
      if (group >= fabric_groups_.size() || fabric_groups_[group].empty()) continue;
      fabric_.push_back(t);
      local_s -= session_->comm().time_s(t.kind, fabric_groups_[group], t.bytes);
    }
  }
  if (fabric_.empty()) {
    iteration_end_ = session_->engine().schedule_after(engine::seconds_to_ps(duration),
                                                       [this](engine::Engine&) { finish_iteration(); },
                                                       kIterationTag + static_cast<std::uint64_t>(index_));
    return;
  }
  iteration_end_ = session_->engine().schedule_after(
      engine::seconds_to_ps(std::max(0.0, local_s)), [this, generation](engine::Engine&) { run_fabric(generation); },
      kIterationTag + static_cast<std::uint64_t>(index_));
}

void Replica::run_fabric(std::uint64_t generation) {
  if (generation != iteration_generation_ || !busy_) return;  // the instance failed meanwhile
  if (fabric_next_ == fabric_.size()) {
    // Time the fabric took beyond the closed form (contention): busy, communicating.
    const double extra = engine::ps_to_seconds(session_->engine().now() - iteration_end_ps_);
    stats_.busy_s += extra;
    stats_.communication_s += extra;
    finish_iteration();
    return;
  }
  const GroupTraffic& t = fabric_[fabric_next_++];
  const std::vector<int>& group = fabric_groups_[static_cast<std::size_t>(t.group)];
  exec::Work work = session_->comm().collective(t.kind, std::span<const std::vector<int>>(&group, 1), t.bytes);
  auto next = [this, generation](engine::Engine&) { run_fabric(generation); };
  if (work.asynchronous()) {
    work.start(session_->engine(), std::move(next));
  } else {
    session_->engine().schedule_after(work.duration_ps, std::move(next), kIterationTag + static_cast<std::uint64_t>(index_));
  }
}

void Replica::finish_iteration() {
  if (!busy_) return;
  busy_ = false;
  const double now = now_s();
  stats_.block_seconds += static_cast<double>(used_blocks_) * (now - last_change_s_);
  last_change_s_ = now;
  std::bernoulli_distribution accept(std::clamp(speculative_.acceptance, 0.0, 1.0));
  // SGLang's receive counter: a decode-only iteration weighs 1, one with prefill work enough to
  // take new requests in before the next.
  if (scheduler_.recv_interval > 1) {
    const bool prefill = std::any_of(batch_.begin(), batch_.end(), [](const BatchEntry& e) { return !e.decode; });
    since_receive_ += prefill ? scheduler_.recv_interval : 1;
  }
  bool any_done = false;
  for (Sequence* s : batch_sequences_) {
    RequestRecord& r = *s->record;
    std::int64_t tokens = 0;
    if (!s->decoding()) {
      s->computed += s->chunk;
      s->kv += s->chunk;
      stats_.prefill_tokens += s->chunk;
      if (s->decoding()) tokens = 1;  // the prompt is done: its next token is sampled
    } else {
      tokens = 1;
      for (int k = 0; k < speculative_.tokens && accept(acceptance_rng_); ++k) ++tokens;
      s->kv += tokens;
      stats_.decode_tokens += tokens;
    }
    if (tokens == 0) continue;
    if (s->generated == 0) {
      r.first_token_s = now;
    } else {
      const double gap = now - s->last_token_s;
      if (gap != pending_gap_) {
        if (pending_count_ > 0) stats_.itl.add(pending_gap_, pending_count_);
        pending_gap_ = gap;
        pending_count_ = 0;
      }
      pending_count_ += 1;
      if (tokens > 1) stats_.itl.add(0.0, static_cast<double>(tokens - 1));
    }
    s->generated = std::min(r.request.output_tokens, s->generated + tokens);
    s->last_token_s = now;
    const bool handoff = role_ == ReplicaRole::prefill;
    if (s->generated >= r.request.output_tokens || handoff) {
      const bool moves = handoff && r.request.output_tokens > 1;
      if (moves) {
        s->transfer_of = &r;  // its blocks stay until its KV cache has left (transfer_done)
      } else {
        release(*s, true);
      }
      s->record = nullptr;  // marks it for removal below
      any_done = true;
      --outstanding_;
      active_blocks_ -= blocks_for(r.request.input_tokens);
      if (moves) {
        if (events_.prefilled) events_.prefilled(r);
      } else {
        r.finish_s = now;
        if (events_.finished) events_.finished(r);
      }
    }
  }
  if (any_done) {
    for (auto& s : running_) {
      if (s->record == nullptr && s->transfer_of != nullptr) transferring_.emplace(s->transfer_of, std::move(s));
    }
    std::erase_if(running_, [](const std::unique_ptr<Sequence>& s) { return !s || s->record == nullptr; });
  }
  if (platform::TraceSink* trace = session_->trace()) {
    platform::TraceSpan span;
    span.lane = replica_trace_lane(index_, first_accelerator_);
    span.name = iteration_prefill_ > 0 && iteration_decode_ > 0 ? "mixed" : iteration_prefill_ > 0 ? "prefill" : "decode";
    span.category = "iteration";
    span.start_ps = iteration_start_ps_;
    span.end_ps = session_->engine().now();
    span.args = {{"sequences", iteration_sequences_},
                 {"prefill_tokens", iteration_prefill_},
                 {"decode_tokens", iteration_decode_}};
    trace->span(span);
    trace_kv_cache();
  }
  maybe_schedule();
}

double Replica::apply_faults(IterationCost& cost, const DrawnIteration& drawn, double now) {
  if (variability_) {
    // Each cause's time joins its part of the busy time (the kernels' by their bound).
    const double kernels_s = cost.compute_bound_s + cost.memory_bound_s;
    const double compute_part = kernels_s > 0 ? cost.compute_bound_s / kernels_s : 0.0;
    cost.compute_bound_s += drawn.kernel_jitter_s * compute_part;
    cost.memory_bound_s += drawn.kernel_jitter_s * (1 - compute_part);
    cost.communication_s += drawn.network_jitter_s;
    cost.host_s += drawn.host_noise_s;
    cost.time_s += drawn.jitter_s + drawn.host_noise_s;
    stats_.jitter_s += drawn.jitter_s;
    stats_.host_noise_s += drawn.host_noise_s;
  }
  if (constant_speed_ && straggler_speed_ == 1.0) return cost.time_s;
  // A slow accelerator (its speed profile, or a straggling node) stretches the whole iteration:
  // the instance is busy for all of it.
  const double speed = std::min(constant_speed_ ? 1.0 : speed_.value_at(session_->engine().now()), straggler_speed_);
  if (!(speed > 0)) {
    throw SimulationError(
        fmt::format("replica {}: its accelerator's speed is {} at {} s; serving needs it > 0", index_, speed, now));
  }
  const double slowed = cost.time_s / speed;
  stats_.straggler_s += slowed - cost.time_s;
  cost.compute_bound_s /= speed;
  cost.memory_bound_s /= speed;
  cost.communication_s /= speed;
  cost.host_s /= speed;
  cost.time_s = slowed;
  return slowed;
}

void Replica::set_faults(std::optional<IterationVariability> variability, double straggler_speed) {
  variability_ = std::move(variability);
  if (variability_ && !variability_->any()) variability_.reset();
  straggler_speed_ = straggler_speed;
}

std::vector<RequestRecord*> Replica::fail() {
  if (!transferring_.empty()) {
    throw SimulationError(fmt::format("replica {} failed with {} KV caches in transfer: failures of disaggregated "
                                      "pools are not modelled",
                                      index_, transferring_.size()));
  }
  const double now = now_s();
  stats_.block_seconds += static_cast<double>(used_blocks_) * (now - last_change_s_);
  last_change_s_ = now;
  if (busy_) {
    // The running iteration never ends: its time is lost, not busy.
    session_->engine().cancel(iteration_end_);
    ++iteration_generation_;  // its collectives on the fabric, if any are running, end unheard
    const double left_s = std::max(0.0, engine::ps_to_seconds(iteration_end_ps_ - session_->engine().now()));
    stats_.busy_s -= left_s;
    stats_.lost_work_s += iteration_duration_s_ - left_s;
    busy_ = false;
  }
  std::vector<RequestRecord*> lost;
  const auto take = [&](Sequence& s) {
    RequestRecord& r = *s.record;
    ++r.restarts;
    r.resume_generated = s.generated;
    r.last_token_s = s.last_token_s;
    // The KV cache it had (a swapped one lived in this instance's host memory): prefilled again.
    const std::int64_t had = s.swapped ? s.kv : std::max(s.computed, s.kv);
    r.redo_tokens = std::max<std::int64_t>(s.generated > 0 ? r.request.input_tokens + s.generated - 1 : 0, had);
    lost.push_back(&r);
  };
  for (auto& s : running_) take(*s);
  for (auto& s : waiting_) take(*s);
  for (auto& s : inbox_) take(*s);
  running_.clear();
  waiting_.clear();
  inbox_.clear();
  batch_sequences_.clear();
  prefixes_.clear();
  prefix_lru_.clear();
  ++load_generation_;
  if (tiers_) {
    tiers_->clear();
  }
  used_blocks_ = cached_blocks_ = outstanding_ = active_blocks_ = 0;
  down_ = true;
  return lost;
}

void Replica::recover() {
  down_ = false;
  last_change_s_ = now_s();
  maybe_schedule();
}

void Replica::trace_kv_cache() const {
  session_->trace()->sample({first_accelerator_, fmt::format("KV cache (replica {})", index_), "HBM bytes",
                             session_->engine().now(),
                             static_cast<double>(used_blocks_ * scheduler_.block_size) * kv_bytes_per_token_});
}

platform::TraceLane replica_trace_lane(int replica, int accelerator) {
  return {accelerator, replica, fmt::format("replica {} iterations", replica)};
}

void Replica::transfer_done(RequestRecord& record) {
  const auto it = transferring_.find(&record);
  if (it == transferring_.end()) {
    throw SimulationError(fmt::format("replica {}: request {} has no KV cache in transfer", index_, record.request.id));
  }
  const double now = now_s();
  stats_.block_seconds += static_cast<double>(used_blocks_) * (now - last_change_s_);
  last_change_s_ = now;
  it->second->record = &record;
  release(*it->second, true);
  transferring_.erase(it);
  maybe_schedule();  // the freed blocks may admit a waiting prompt
}

void Replica::close(double now_s) {
  if (pending_count_ > 0) stats_.itl.add(pending_gap_, pending_count_);
  pending_count_ = 0;
  stats_.block_seconds += static_cast<double>(used_blocks_) * (now_s - last_change_s_);
  last_change_s_ = now_s;
}

}  // namespace clustersim::serving
