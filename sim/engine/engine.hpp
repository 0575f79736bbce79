#pragma once
/// The discrete-event engine: an event queue ordered by (time, insertion sequence),
/// cancellable events, per-entity seeded RNG streams and a 64-bit event fingerprint.
/// No globals: an Engine is a value, so several can run in one process.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/engine/event_handler.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/time.hpp"

namespace clustersim::engine {

/// Handle to a scheduled event, used to cancel it. Default-constructed handles refer to nothing.
struct EventId {
  std::uint64_t sequence = 0;  ///< insertion sequence number (1-based); 0 means "no event"
  std::uint32_t slot = 0;      ///< engine-internal handler slot, so cancel() is O(1)
  bool valid() const { return sequence != 0; }
  friend bool operator==(EventId, EventId) = default;
};

// EventHandler (sim/engine/event_handler.hpp) is the work to run when an event fires: any
// callable `void(Engine&)`, called with the engine so handlers can schedule more. Lambdas with up
// to 48 bytes of captures are stored without heap allocation.

/// Counters of one `run` call.
struct RunStats {
  std::uint64_t events_fired = 0;      ///< handlers actually invoked
  std::uint64_t events_cancelled = 0;  ///< cancelled events this call dropped from the queue
  TimePs end_time_ps = 0;              ///< simulated time when the run stopped (= now())
};

/// Pseudo-random stream for one entity; deterministic for (engine seed, entity id).
using RngStream = std::mt19937_64;

/// Move-only (it owns the pending handlers). Not thread-safe: one thread drives one engine;
/// independent engines may run on different threads.
class Engine {
 public:
  /// `seed` seeds every entity's RNG stream and the fingerprint.
  explicit Engine(std::uint64_t seed = 1);

  /// Current simulated time in picoseconds.
  TimePs now() const;

  /// Schedules `handler` at absolute time `at_ps` (>= now()). `tag` is mixed into the
  /// fingerprint so that two runs that fire the same kinds of event in the same order at the
  /// same times have equal fingerprints. Throws SimulationError if `at_ps` < now().
  EventId schedule_at(TimePs at_ps, EventHandler handler, std::uint64_t tag = 0);

  /// Schedules `handler` after a delay of `delay_ps` (>= 0) from now(). Throws SimulationError
  /// if the delay is negative or now() + delay_ps would overflow.
  EventId schedule_after(TimePs delay_ps, EventHandler handler, std::uint64_t tag = 0);

  /// Cancels a pending event. Returns false if it already fired, was cancelled, or is unknown.
  bool cancel(EventId id);

  /// Runs events in (time, sequence) order until the queue is empty or the next event is
  /// later than `until_ps`; later events stay pending and a further call continues. With a
  /// finite `until_ps` the clock then advances to `until_ps`. Returns the counters of this call.
  /// Throws SimulationError if `until_ps` < now() or if called from inside a handler.
  RunStats run(TimePs until_ps = kTimeNever);

  /// Number of events scheduled and not yet fired or cancelled.
  std::size_t pending() const;

  /// 64-bit hash of the sequence of fired events (time, tag), starting from the seed; the
  /// exact chain is fingerprint_initial / fingerprint_fold in sim/engine/mix.hpp.
  std::uint64_t fingerprint() const;

  /// Total events fired since construction.
  std::uint64_t events_fired() const;

  /// Caps the events fired since construction: run() throws EventLimitError instead of firing
  /// event number `max_events` + 1. Default: no cap.
  void set_event_limit(std::uint64_t max_events);

  /// Independent RNG stream for `entity_id`, derived from (seed, entity_id) by a mixing
  /// function, so adding an entity never perturbs another entity's stream.
  RngStream rng_stream(std::uint64_t entity_id) const;

  /// The seed given at construction.
  std::uint64_t seed() const;

 private:
  // A handler's home from schedule until it fires or is cancelled: one cache line. Slots are
  // reused (LIFO free list), so the queue moves compact entries, never handlers.
  struct alignas(64) Slot {
    EventHandler handler;
    std::uint64_t sequence = 0;  // 0: free; else the sequence of the pending event living here
  };

  // schedule_at without the by-value hop, shared by both public schedule functions.
  EventId schedule(TimePs at_ps, EventHandler&& handler, std::uint64_t tag);
  std::uint32_t acquire_slot();
  void release_slot(std::uint32_t slot);
  // True if the queue holds so many cancelled entries that purging them pays off.
  bool should_purge() const;
  // Removes cancelled entries from the queue; returns how many.
  std::uint64_t purge_cancelled();

  std::uint64_t seed_;
  std::uint64_t fingerprint_;
  TimePs now_ps_ = 0;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t events_fired_ = 0;
  std::uint64_t event_limit_ = std::numeric_limits<std::uint64_t>::max();
  std::size_t pending_ = 0;
  bool running_ = false;
  EventQueue queue_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t fresh_slot_ = 0;  // slots_[fresh_slot_..] have never been used since the reset
};

}  // namespace clustersim::engine
