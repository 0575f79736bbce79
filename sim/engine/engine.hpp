#pragma once
/// The discrete-event engine: an event queue ordered by (time, insertion sequence),
/// cancellable events, per-entity seeded RNG streams and a 64-bit event fingerprint.
/// No globals: an Engine is a value, so several can run in one process.
#include <cstdint>
#include <functional>
#include <random>

#include "sim/engine/time.hpp"

namespace clustersim::engine {

/// Handle to a scheduled event, used to cancel it. Default-constructed handles refer to nothing.
struct EventId {
  std::uint64_t sequence = 0;  ///< insertion sequence number (1-based); 0 means "no event"
  bool valid() const { return sequence != 0; }
  friend bool operator==(EventId, EventId) = default;
};

/// Work to run when an event fires. Called with the engine so handlers can schedule more.
class Engine;
using EventHandler = std::function<void(Engine&)>;

/// Counters of one `run` call.
struct RunStats {
  std::uint64_t events_fired = 0;      ///< handlers actually invoked
  std::uint64_t events_cancelled = 0;  ///< popped but skipped because cancelled
  TimePs end_time_ps = 0;              ///< simulated time when the run stopped
};

/// Pseudo-random stream for one entity; deterministic for (engine seed, entity id).
using RngStream = std::mt19937_64;

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

  /// Schedules `handler` after a delay of `delay_ps` (>= 0) from now().
  EventId schedule_after(TimePs delay_ps, EventHandler handler, std::uint64_t tag = 0);

  /// Cancels a pending event. Returns false if it already fired, was cancelled, or is unknown.
  bool cancel(EventId id);

  /// Runs events in (time, sequence) order until the queue is empty or the next event is
  /// later than `until_ps`. Returns the counters of this call.
  RunStats run(TimePs until_ps = kTimeNever);

  /// Number of events scheduled and not yet fired or cancelled.
  std::size_t pending() const;

  /// 64-bit hash of the sequence of fired events (time, tag), starting from the seed.
  std::uint64_t fingerprint() const;

  /// Total events fired since construction.
  std::uint64_t events_fired() const;

  /// Independent RNG stream for `entity_id`, derived from (seed, entity_id) by a mixing
  /// function, so adding an entity never perturbs another entity's stream.
  RngStream rng_stream(std::uint64_t entity_id) const;

  std::uint64_t seed() const;
};

}  // namespace clustersim::engine
