#include "sim/engine/event_queue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/engine/mix.hpp"

namespace clustersim::engine {
namespace {

// Drains every entry with time <= limit_ps, returning them in extraction order.
std::vector<QueueEntry> drain(EventQueue& queue, TimePs limit_ps = kTimeNever) {
  std::vector<QueueEntry> out;
  while (queue.ready(limit_ps)) {
    out.push_back(queue.front());
    queue.pop_front();
  }
  return out;
}

bool in_order(const std::vector<QueueEntry>& entries) {
  return std::is_sorted(
      entries.begin(), entries.end(), [](const QueueEntry& a, const QueueEntry& b) {
        return a.time_ps < b.time_ps || (a.time_ps == b.time_ps && a.sequence < b.sequence);
      });
}

TEST_CASE("entries come out by time, then insertion order, across all digit levels") {
  EventQueue queue;
  // Times spread over small and huge magnitudes, with ties; sequence = insertion order.
  const std::vector<TimePs> times{5,
                                  3,
                                  5,
                                  (TimePs{1} << 40) + 7,
                                  0,
                                  1 << 20,
                                  3,
                                  5,
                                  (TimePs{1} << 62) + 1,
                                  1 << 20,
                                  17,
                                  (TimePs{1} << 40) + 7,
                                  0,
                                  16,
                                  15};
  std::uint64_t sequence = 1;
  for (const TimePs t : times) queue.push({t, sequence++, 0, 0});
  CHECK(queue.size() == times.size());
  const std::vector<QueueEntry> out = drain(queue);
  REQUIRE(out.size() == times.size());
  CHECK(in_order(out));
  CHECK(out.front().time_ps == 0);
  CHECK(out.front().sequence == 5);
  CHECK(out[1].sequence == 13);
  CHECK(out.back().time_ps == (TimePs{1} << 62) + 1);
  CHECK(queue.empty());
}

TEST_CASE("randomised pushes interleaved with pops match a sorted reference") {
  EventQueue queue;
  std::uint64_t state = 12345;
  std::uint64_t sequence = 1;
  TimePs floor_ps = 0;
  std::vector<QueueEntry> out;
  for (int round = 0; round < 20000; ++round) {
    state = splitmix64(state);
    // Mostly short delays with many ties, sometimes long ones.
    const TimePs delay = (state & 7U) == 0 ? static_cast<TimePs>(state >> 20) % 1'000'000'000
                                           : static_cast<TimePs>(state >> 40) % 8;
    queue.push({floor_ps + delay, sequence++, 0, 0});
    if ((state & 1U) != 0 && queue.ready(kTimeNever)) {
      out.push_back(queue.front());
      floor_ps = queue.front().time_ps;
      queue.pop_front();
    }
  }
  const std::vector<QueueEntry> rest = drain(queue);
  out.insert(out.end(), rest.begin(), rest.end());
  CHECK(out.size() == 20000);
  CHECK(in_order(out));
}

TEST_CASE("ready(limit) reports later entries without extracting or disturbing them") {
  EventQueue queue;
  queue.push({100, 1, 0, 0});
  queue.push({40, 2, 0, 0});
  CHECK(drain(queue, 50).size() == 1);
  CHECK_FALSE(queue.ready(99));
  CHECK(queue.size() == 1);
  // A push between the last extracted time and the waiting entry still comes first.
  queue.push({60, 3, 0, 0});
  const std::vector<QueueEntry> out = drain(queue);
  REQUIRE(out.size() == 2);
  CHECK(out[0].sequence == 3);
  CHECK(out[1].sequence == 1);
}

TEST_CASE("an entry earlier than the last extracted time is still ordered correctly") {
  EventQueue queue;
  queue.push({1000, 1, 0, 0});
  queue.push({1000, 2, 0, 0});
  queue.push({5000, 3, 0, 0});
  REQUIRE(queue.ready(kTimeNever));
  queue.pop_front();          // floor is now 1000, entry 2 still current
  queue.push({10, 4, 0, 0});  // earlier than the floor: forces a rebuild
  queue.push({5000, 5, 0, 0});
  const std::vector<QueueEntry> out = drain(queue);
  REQUIRE(out.size() == 4);
  CHECK(out[0].sequence == 4);
  CHECK(out[1].sequence == 2);
  CHECK(out[2].sequence == 3);
  CHECK(out[3].sequence == 5);
}

TEST_CASE("remove_if drops matching entries and keeps the order of the rest") {
  EventQueue queue;
  for (std::uint64_t i = 1; i <= 100; ++i) {
    queue.push({static_cast<TimePs>((i * 37) % 11), i, 0, static_cast<std::uint32_t>(i)});
  }
  REQUIRE(queue.ready(kTimeNever));
  queue.pop_front();  // also exercises removal with a partly consumed current bucket
  const std::size_t removed = queue.remove_if([](const QueueEntry& e) { return e.slot % 3 == 0; });
  CHECK(removed == 33);
  CHECK(queue.size() == 66);
  const std::vector<QueueEntry> out = drain(queue);
  CHECK(out.size() == 66);
  CHECK(in_order(out));
  CHECK(std::none_of(out.begin(), out.end(), [](const QueueEntry& e) { return e.slot % 3 == 0; }));
}

}  // namespace
}  // namespace clustersim::engine
