#include "sim/engine/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::engine {
namespace {

// Records the (time, label) of each handler call.
struct Firing {
  TimePs time_ps;
  int label;
  friend bool operator==(const Firing&, const Firing&) = default;
};

EventHandler record(std::vector<Firing>& log, int label) {
  return [&log, label](Engine& engine) { log.push_back({engine.now(), label}); };
}

std::string message_of(const auto& action) {
  try {
    action();
  } catch (const SimulationError& error) {
    return error.what();
  }
  return "<no SimulationError thrown>";
}

TEST_CASE("events fire in time order, FIFO among equal times") {
  Engine engine;
  std::vector<Firing> log;
  engine.schedule_at(30, record(log, 1));
  engine.schedule_at(10, record(log, 2));
  engine.schedule_at(20, record(log, 3));
  engine.schedule_at(10, record(log, 4));
  engine.schedule_at(10, record(log, 5));
  engine.schedule_at(0, record(log, 6));
  CHECK(engine.pending() == 6);

  const RunStats stats = engine.run();

  const std::vector<Firing> expected{{0, 6}, {10, 2}, {10, 4}, {10, 5}, {20, 3}, {30, 1}};
  CHECK(log == expected);
  CHECK(stats.events_fired == 6);
  CHECK(stats.events_cancelled == 0);
  CHECK(stats.end_time_ps == 30);
  CHECK(engine.now() == 30);
  CHECK(engine.pending() == 0);
  CHECK(engine.events_fired() == 6);
}

TEST_CASE("ordering holds for many events with colliding times") {
  // 2000 events at times (i * 7919) % 97: the heap must return them sorted by time, and by
  // insertion index within a time.
  Engine engine;
  std::vector<Firing> log;
  for (int i = 0; i < 2000; ++i) engine.schedule_at((i * 7919) % 97, record(log, i));
  engine.run();
  REQUIRE(log.size() == 2000);
  for (std::size_t i = 1; i < log.size(); ++i) {
    const bool ordered = log[i - 1].time_ps < log[i].time_ps ||
                         (log[i - 1].time_ps == log[i].time_ps && log[i - 1].label < log[i].label);
    REQUIRE(ordered);
  }
}

TEST_CASE("randomised schedules, cancels and zero delays fire every live event in order") {
  // Handlers schedule children (often with zero delay or equal times) and cancel random
  // pending events. Correct order means the fired (time, sequence) pairs strictly increase;
  // completeness means every event not cancelled fired.
  struct Model {
    Engine engine{77};
    std::uint64_t rng = 4242;
    std::vector<EventId> issued;
    std::vector<std::pair<TimePs, std::uint64_t>> fired;
    std::uint64_t cancelled = 0;
    std::uint64_t draw() { return rng = splitmix64(rng); }
    void spawn(TimePs at_ps) {
      const std::size_t index = issued.size();
      issued.push_back(engine.schedule_at(at_ps, [this, index](Engine& e) { on_fire(e, index); }));
    }
    void on_fire(Engine& e, std::size_t index) {
      fired.emplace_back(e.now(), issued[index].sequence);
      if (issued.size() < 30000) {
        const std::uint64_t r = draw();
        const TimePs delay =
            (r & 3U) == 0 ? 0 : static_cast<TimePs>((r >> 8) % ((r & 4U) ? 5 : 70000));
        spawn(e.now() + delay);
        if ((r & 16U) != 0) spawn(e.now() + delay);  // an exact tie
      }
      const std::uint64_t pick = draw();
      if ((pick & 7U) == 0 && e.cancel(issued[(pick >> 8) % issued.size()])) ++cancelled;
    }
  };
  Model model;
  for (int i = 0; i < 64; ++i) model.spawn(i % 4);
  model.engine.run();
  CHECK(model.fired.size() + model.cancelled == model.issued.size());
  CHECK(model.cancelled > 100);
  CHECK(std::is_sorted(model.fired.begin(), model.fired.end()));
  CHECK(std::adjacent_find(model.fired.begin(), model.fired.end()) == model.fired.end());
}

TEST_CASE("event ids carry 1-based insertion sequence numbers") {
  Engine engine;
  auto noop = [](Engine&) {};
  CHECK_FALSE(EventId{}.valid());
  const EventId first = engine.schedule_at(5, noop);
  const EventId second = engine.schedule_after(5, noop);
  CHECK(first.sequence == 1);
  CHECK(second.sequence == 2);
  CHECK(first.valid());
  CHECK_FALSE(first == second);
}

TEST_CASE("cancel skips the event and reports whether it was pending") {
  Engine engine;
  std::vector<Firing> log;
  const EventId a = engine.schedule_at(10, record(log, 1));
  const EventId b = engine.schedule_at(20, record(log, 2));
  const EventId c = engine.schedule_at(30, record(log, 3));
  CHECK(engine.pending() == 3);

  CHECK(engine.cancel(b));
  CHECK(engine.pending() == 2);
  CHECK_FALSE(engine.cancel(b));  // already cancelled
  CHECK_FALSE(engine.cancel(EventId{}));
  CHECK_FALSE(engine.cancel(EventId{999, 0}));             // never issued
  CHECK_FALSE(engine.cancel(EventId{a.sequence, 12345}));  // slot out of range

  const RunStats stats = engine.run();
  CHECK(log == std::vector<Firing>{{10, 1}, {30, 3}});
  CHECK(stats.events_fired == 2);
  CHECK(stats.events_cancelled == 1);
  CHECK_FALSE(engine.cancel(a));  // already fired
  CHECK_FALSE(engine.cancel(c));
  CHECK(engine.pending() == 0);
}

TEST_CASE("a cancelled event's reused slot does not resurrect or confuse it") {
  Engine engine;
  std::vector<Firing> log;
  const EventId old_event = engine.schedule_at(10, record(log, 1));
  REQUIRE(engine.cancel(old_event));
  // The new event reuses the freed slot but has a new sequence number.
  const EventId new_event = engine.schedule_at(20, record(log, 2));
  CHECK(new_event.slot == old_event.slot);
  CHECK(new_event.sequence != old_event.sequence);
  CHECK_FALSE(engine.cancel(old_event));  // must not cancel the slot's new tenant
  engine.run();
  CHECK(log == std::vector<Firing>{{20, 2}});
}

TEST_CASE("handlers may cancel other events and schedule new ones") {
  Engine engine;
  std::vector<Firing> log;
  const EventId victim = engine.schedule_at(50, record(log, 99));
  engine.schedule_at(10, [&log, victim](Engine& e) {
    log.push_back({e.now(), 1});
    CHECK(e.cancel(victim));
    e.schedule_after(5, [&log](Engine& inner) {
      log.push_back({inner.now(), 2});
      inner.schedule_after(0, [&log](Engine& last) { log.push_back({last.now(), 3}); });
    });
  });
  const RunStats stats = engine.run();
  CHECK(log == std::vector<Firing>{{10, 1}, {15, 2}, {15, 3}});
  CHECK(stats.events_fired == 3);
  CHECK(stats.events_cancelled == 1);
}

TEST_CASE("a handler cannot cancel itself while it runs") {
  Engine engine;
  EventId self;
  bool cancelled_self = true;
  self = engine.schedule_at(1, [&](Engine& e) { cancelled_self = e.cancel(self); });
  engine.run();
  CHECK_FALSE(cancelled_self);
}

TEST_CASE("a chain of self-rescheduling handlers runs to the end") {
  Engine engine;
  int remaining = 1000;
  struct Tick {
    int* remaining;
    void operator()(Engine& e) const {
      if (--*remaining > 0) e.schedule_after(3, Tick{remaining});
    }
  };
  engine.schedule_at(0, Tick{&remaining});
  const RunStats stats = engine.run();
  CHECK(remaining == 0);
  CHECK(stats.events_fired == 1000);
  CHECK(engine.now() == 999 * 3);
}

TEST_CASE("scheduling in the past or with a bad delay throws with both times") {
  Engine engine;
  engine.schedule_at(100, [](Engine& e) {
    const std::string message = message_of([&] { e.schedule_at(40, [](Engine&) {}); });
    CHECK(message.find("40 ps") != std::string::npos);
    CHECK(message.find("100 ps") != std::string::npos);
    CHECK(message.find("past") != std::string::npos);
  });
  engine.run();
  CHECK(engine.pending() == 0);

  const std::string negative = message_of([&] { engine.schedule_after(-7, [](Engine&) {}); });
  CHECK(negative.find("negative delay of -7 ps") != std::string::npos);
  CHECK(negative.find("100 ps") != std::string::npos);

  const std::string overflow =
      message_of([&] { engine.schedule_after(kTimeNever, [](Engine&) {}); });
  CHECK(overflow.find("overflows") != std::string::npos);

  const std::string empty = message_of([&] { engine.schedule_at(200, EventHandler{}, 7); });
  CHECK(empty.find("empty handler") != std::string::npos);
  CHECK(empty.find("200 ps") != std::string::npos);
  CHECK(engine.pending() == 0);  // failed schedules leave no trace
}

TEST_CASE("run(until) stops before later events and can continue") {
  Engine engine;
  std::vector<Firing> log;
  engine.schedule_at(10, record(log, 1));
  engine.schedule_at(20, record(log, 2));
  engine.schedule_at(30, record(log, 3));

  const RunStats first = engine.run(20);  // inclusive bound: the event at 20 fires
  CHECK(log == std::vector<Firing>{{10, 1}, {20, 2}});
  CHECK(first.events_fired == 2);
  CHECK(first.end_time_ps == 20);
  CHECK(engine.pending() == 1);

  const RunStats idle = engine.run(25);  // nothing due; clock advances to the bound
  CHECK(idle.events_fired == 0);
  CHECK(engine.now() == 25);
  engine.schedule_after(1, record(log, 4));  // relative to the advanced clock

  const RunStats rest = engine.run();
  CHECK(log == std::vector<Firing>{{10, 1}, {20, 2}, {26, 4}, {30, 3}});
  CHECK(rest.events_fired == 2);
  CHECK(rest.end_time_ps == 30);
  CHECK(engine.pending() == 0);
  CHECK(engine.events_fired() == 4);
}

TEST_CASE("run rejects a bound in the past and re-entry from a handler") {
  Engine engine;
  engine.schedule_at(50, [](Engine&) {});
  engine.run();
  const std::string past = message_of([&] { engine.run(10); });
  CHECK(past.find("cannot run until 10 ps") != std::string::npos);
  CHECK(past.find("50 ps") != std::string::npos);

  std::string nested;
  engine.schedule_at(60, [&nested](Engine& e) { nested = message_of([&] { e.run(); }); });
  engine.run();
  CHECK(nested.find("inside an event handler at time 60 ps") != std::string::npos);
}

TEST_CASE("an exception from a handler propagates and leaves the engine usable") {
  Engine engine;
  std::vector<Firing> log;
  engine.schedule_at(1, [](Engine&) { throw SimulationError("handler failed"); });
  engine.schedule_at(2, record(log, 2));
  CHECK_THROWS_WITH_AS(engine.run(), "handler failed", SimulationError);
  CHECK(engine.pending() == 1);
  engine.run();
  CHECK(log == std::vector<Firing>{{2, 2}});
}

// Runs a fixed little model: events at the given times with tags 1..n.
std::uint64_t fingerprint_of(std::uint64_t seed, const std::vector<TimePs>& times) {
  Engine engine(seed);
  std::uint64_t tag = 1;
  for (const TimePs t : times)
    engine.schedule_at(
        t, [](Engine&) {}, tag++);
  engine.run();
  return engine.fingerprint();
}

TEST_CASE("fingerprint is reproducible and sensitive to time, order, tag and seed") {
  const std::vector<TimePs> base{5, 10, 15, 20};
  const std::uint64_t reference = fingerprint_of(1, base);
  CHECK(fingerprint_of(1, base) == reference);
  CHECK(fingerprint_of(1, {5, 10, 16, 20}) != reference);  // one time differs
  CHECK(fingerprint_of(1, {10, 5, 15, 20}) != reference);  // order of tags 1 and 2 swapped
  CHECK(fingerprint_of(2, base) != reference);             // seed differs

  // Hand-folded expectation: the fingerprint is exactly the documented chain.
  std::uint64_t expected = fingerprint_initial(1);
  std::uint64_t tag = 1;
  for (const TimePs t : base) expected = fingerprint_fold(expected, t, tag++);
  CHECK(reference == expected);

  Engine fresh(1);
  CHECK(fresh.fingerprint() == fingerprint_initial(1));
}

TEST_CASE("cancelled events do not enter the fingerprint") {
  Engine with_cancel(3);
  with_cancel.schedule_at(
      1, [](Engine&) {}, 10);
  const EventId dropped = with_cancel.schedule_at(
      2, [](Engine&) {}, 20);
  with_cancel.schedule_at(
      3, [](Engine&) {}, 30);
  with_cancel.cancel(dropped);
  with_cancel.run();

  Engine without(3);
  without.schedule_at(
      1, [](Engine&) {}, 10);
  without.schedule_at(
      3, [](Engine&) {}, 30);
  without.run();
  CHECK(with_cancel.fingerprint() == without.fingerprint());
}

TEST_CASE("splitmix64 matches the reference sequence") {
  // Reference: SplitMix64 state advanced from 0 (Vigna's splitmix64.c), first output.
  CHECK(splitmix64(0) == 0xE220A8397B1DCDAFULL);
}

TEST_CASE("rng streams are reproducible, distinct per entity and independent of each other") {
  Engine engine(42);
  RngStream a1 = engine.rng_stream(7);
  RngStream a2 = engine.rng_stream(7);
  RngStream b = engine.rng_stream(8);
  const std::uint64_t a_first = a1();
  CHECK(a_first == a2());
  CHECK(a_first != b());
  CHECK(a1() == a2());

  // Documented derivation: mt19937_64 seeded with splitmix64(seed ^ splitmix64(entity)).
  RngStream reference(splitmix64(42 ^ splitmix64(7)));
  CHECK(engine.rng_stream(7)() == reference());

  // Drawing from other streams (or creating many) does not perturb entity 7's stream.
  for (std::uint64_t entity = 0; entity < 100; ++entity) engine.rng_stream(entity)();
  CHECK(engine.rng_stream(7)() == a_first);

  // Another seed gives another stream for the same entity.
  Engine other(43);
  CHECK(other.rng_stream(7)() != a_first);
  CHECK(engine.seed() == 42);
}

TEST_CASE("two engines in one process are independent") {
  Engine left(1);
  Engine right(1);
  std::vector<Firing> left_log;
  std::vector<Firing> right_log;
  left.schedule_at(10, record(left_log, 1), 1);
  right.schedule_at(99, record(right_log, 2), 1);
  left.schedule_at(20, record(left_log, 3), 2);

  left.run();
  CHECK(left_log == std::vector<Firing>{{10, 1}, {20, 3}});
  CHECK(right_log.empty());
  CHECK(right.now() == 0);
  CHECK(right.pending() == 1);
  CHECK(right.events_fired() == 0);
  CHECK(right.fingerprint() == fingerprint_initial(1));

  right.run();
  CHECK(right_log == std::vector<Firing>{{99, 2}});
  CHECK(left.fingerprint() != right.fingerprint());
  // Same seed, same schedule in a third engine reproduces the first.
  Engine replay(1);
  replay.schedule_at(
      10, [](Engine&) {}, 1);
  replay.schedule_at(
      20, [](Engine&) {}, 2);
  replay.run();
  CHECK(replay.fingerprint() == left.fingerprint());
}

TEST_CASE("heavy cancel-and-reschedule purges stale entries without changing results") {
  // A flow-model pattern: one completion event per flow, cancelled and rescheduled on every
  // rate change. Purging must not change which events fire or the fingerprint.
  auto simulate = [](int flows, int updates) {
    Engine engine(9);
    std::vector<EventId> ids(static_cast<std::size_t>(flows));
    std::uint64_t cancelled = 0;
    int fired = 0;
    for (int round = 0; round < updates; ++round) {
      for (int f = 0; f < flows; ++f) {
        auto& id = ids[static_cast<std::size_t>(f)];
        if (id.valid()) engine.cancel(id);
        id = engine.schedule_at(
            1'000'000 + f * 10 + round, [&fired](Engine&) { ++fired; },
            static_cast<std::uint64_t>(f));
      }
      cancelled += engine.run(round).events_cancelled;  // nothing due yet; purges may happen
    }
    const RunStats last = engine.run();
    cancelled += last.events_cancelled;
    CHECK(fired == flows);
    CHECK(cancelled == static_cast<std::uint64_t>(flows) * static_cast<std::uint64_t>(updates - 1));
    return engine.fingerprint();
  };
  const std::uint64_t fp = simulate(3000, 8);
  CHECK(fp == simulate(3000, 8));
  // Independent check: the final fired events are flow f at 1e6 + 10 f + 7, tag f.
  std::uint64_t expected = fingerprint_initial(9);
  for (int f = 0; f < 3000; ++f) {
    expected = fingerprint_fold(expected, 1'000'000 + f * 10 + 7, static_cast<std::uint64_t>(f));
  }
  CHECK(fp == expected);
}

}  // namespace
}  // namespace clustersim::engine
