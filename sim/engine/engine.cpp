#include "sim/engine/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::engine {

namespace {

// Cancelled entries are purged once they outnumber live ones and exceed this count, so a model
// that cancels and reschedules constantly (flow completions) keeps the heap near its live size.
constexpr std::size_t kMinPurgeEntries = 4096;

// Clears a flag when a scope ends, also by exception.
class FlagGuard {
 public:
  explicit FlagGuard(bool& flag) : flag_(flag) { flag_ = true; }
  ~FlagGuard() { flag_ = false; }
  FlagGuard(const FlagGuard&) = delete;
  FlagGuard& operator=(const FlagGuard&) = delete;

 private:
  bool& flag_;
};

}  // namespace

static_assert(sizeof(EventHandler) + sizeof(std::uint64_t) <= 64,
              "a handler and its sequence number must fit one cache-line slot");

Engine::Engine(std::uint64_t seed) : seed_(seed), fingerprint_(fingerprint_initial(seed)) {}

TimePs Engine::now() const { return now_ps_; }

EventId Engine::schedule_at(TimePs at_ps, EventHandler handler, std::uint64_t tag) {
  return schedule(at_ps, std::move(handler), tag);
}

EventId Engine::schedule(TimePs at_ps, EventHandler&& handler, std::uint64_t tag) {
  if (at_ps < now_ps_) {
    throw SimulationError(fmt::format(
        "cannot schedule an event in the past: requested time {} ps is before the current time "
        "{} ps (tag {})",
        at_ps, now_ps_, tag));
  }
  if (!handler) {
    throw SimulationError(fmt::format(
        "cannot schedule an event at {} ps (tag {}) with an empty handler", at_ps, tag));
  }
  const std::uint32_t slot = acquire_slot();
  const std::uint64_t sequence = next_sequence_++;
  Slot& home = slots_[slot];
  home.handler = std::move(handler);
  home.sequence = sequence;
  queue_.push(QueueEntry{at_ps, sequence, tag, slot});
  ++pending_;
  return EventId{sequence, slot};
}

EventId Engine::schedule_after(TimePs delay_ps, EventHandler handler, std::uint64_t tag) {
  if (delay_ps < 0) {
    throw SimulationError(fmt::format(
        "cannot schedule an event with a negative delay of {} ps at time {} ps (tag {})", delay_ps,
        now_ps_, tag));
  }
  if (delay_ps > kTimeNever - now_ps_) {
    throw SimulationError(fmt::format(
        "cannot schedule an event {} ps after time {} ps (tag {}): the time overflows 64 bits",
        delay_ps, now_ps_, tag));
  }
  return schedule(now_ps_ + delay_ps, std::move(handler), tag);
}

bool Engine::cancel(EventId id) {
  if (!id.valid() || id.slot >= slots_.size()) return false;
  Slot& home = slots_[id.slot];
  if (home.sequence != id.sequence) return false;  // fired, cancelled, or never issued
  home.handler.reset();
  release_slot(id.slot);
  --pending_;
  // The queue entry stays (lazy deletion): it no longer matches its slot and is skipped.
  return true;
}

RunStats Engine::run(TimePs until_ps) {
  if (running_) {
    throw SimulationError(
        fmt::format("Engine::run called from inside an event handler at time {} ps", now_ps_));
  }
  if (until_ps < now_ps_) {
    throw SimulationError(fmt::format("cannot run until {} ps: it is before the current time {} ps",
                                      until_ps, now_ps_));
  }
  const FlagGuard running(running_);
  RunStats stats;
  // Events fire in time order but their slots were filled in schedule order, so each firing
  // would miss the cache on a large queue; prefetching the slots of events about to fire hides
  // that latency.
  const auto prefetch_slot = [this](const QueueEntry& entry) {
    __builtin_prefetch(&slots_[entry.slot]);
  };
  while (queue_.ready(until_ps, prefetch_slot)) {
    if (should_purge()) {
      stats.events_cancelled += purge_cancelled();
      continue;
    }
    const QueueEntry next = queue_.front();
    queue_.pop_front();
    Slot& home = slots_[next.slot];
    if (home.sequence != next.sequence) {  // cancelled (its slot may already hold another event)
      ++stats.events_cancelled;
      continue;
    }
    if (events_fired_ == event_limit_) {
      throw EventLimitError(fmt::format("the run reached its limit of {} events at simulated time {:.6g} s, with {} "
                                        "events pending",
                                        event_limit_, ps_to_seconds(next.time_ps), pending_));
    }
    now_ps_ = next.time_ps;
    fingerprint_ = fingerprint_fold(fingerprint_, next.time_ps, next.tag);
    // Move the handler out before calling it: it may schedule events, which can grow slots_.
    EventHandler handler = std::move(home.handler);
    release_slot(next.slot);
    --pending_;
    ++events_fired_;
    ++stats.events_fired;
    handler(*this);
  }
  if (until_ps != kTimeNever) now_ps_ = until_ps;
  stats.end_time_ps = now_ps_;
  return stats;
}

std::size_t Engine::pending() const { return pending_; }

void Engine::set_event_limit(std::uint64_t max_events) { event_limit_ = max_events; }

std::uint64_t Engine::fingerprint() const { return fingerprint_; }

std::uint64_t Engine::events_fired() const { return events_fired_; }

RngStream Engine::rng_stream(std::uint64_t entity_id) const {
  return RngStream(rng_stream_seed(seed_, entity_id));
}

std::uint64_t Engine::seed() const { return seed_; }

std::uint32_t Engine::acquire_slot() {
  if (pending_ == 0) {
    // Every slot is free: hand them out in index order again, so a batch scheduled into an
    // empty engine fills memory sequentially. Stale queue entries still never match a slot,
    // since sequences are never reused.
    free_slots_.clear();
    fresh_slot_ = 0;
  }
  if (!free_slots_.empty()) {
    const std::uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  if (fresh_slot_ == slots_.size()) {
    if (slots_.size() >= std::numeric_limits<std::uint32_t>::max()) {
      throw SimulationError(
          fmt::format("too many pending events: {} (the limit is 2^32 - 1)", slots_.size()));
    }
    slots_.emplace_back();
  }
  return fresh_slot_++;
}

void Engine::release_slot(std::uint32_t slot) {
  slots_[slot].sequence = 0;
  free_slots_.push_back(slot);
}

bool Engine::should_purge() const {
  const std::size_t cancelled_entries = queue_.size() - pending_;
  return cancelled_entries > kMinPurgeEntries && cancelled_entries > pending_;
}

std::uint64_t Engine::purge_cancelled() {
  return queue_.remove_if(
      [this](const QueueEntry& entry) { return slots_[entry.slot].sequence != entry.sequence; });
}

}  // namespace clustersim::engine
