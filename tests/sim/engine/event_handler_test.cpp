#include "sim/engine/event_handler.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "sim/engine/engine.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

// Counts calls of the global allocation function in this test executable, to check that
// small handlers and a warmed-up engine allocate nothing per event.
namespace {
std::size_t allocation_count = 0;
}  // namespace

void* operator new(std::size_t size) {
  ++allocation_count;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace clustersim::engine {
namespace {

static_assert(sizeof(EventHandler) == 56, "handler + sequence fill one cache line");
static_assert(std::is_nothrow_move_constructible_v<EventHandler>);
static_assert(!std::is_copy_constructible_v<EventHandler>);

TEST_CASE("a lambda capturing four pointers and ints is stored inline and callable") {
  static_assert(sizeof(std::function<void(Engine&)>) <= EventHandler::kInlineBytes);
  Engine engine;
  int a = 0;
  int b = 0;
  long c = 5;
  int d = 7;
  EventHandler handler = [pa = &a, pb = &b, c, d](Engine&) {
    *pa += static_cast<int>(c);
    *pb += d;
  };
  REQUIRE(static_cast<bool>(handler));
  handler(engine);
  handler(engine);
  CHECK(a == 10);
  CHECK(b == 14);

  EventHandler moved = std::move(handler);
  CHECK_FALSE(static_cast<bool>(handler));  // NOLINT(bugprone-use-after-move): documented state
  moved(engine);
  CHECK(a == 15);
}

TEST_CASE("small handlers allocate nothing; boxed ones allocate once") {
  Engine engine;
  int a = 0;
  const std::size_t before = allocation_count;
  {
    EventHandler handler = [pa = &a, pb = &a, x = 1L, y = 2L](Engine&) {
      *pa += static_cast<int>(x + y) + (pb == pa ? 1 : 0);
    };
    EventHandler moved = std::move(handler);
    moved(engine);
  }
  CHECK(allocation_count == before);
  CHECK(a == 4);
  {
    std::array<long, 16> big{};
    EventHandler boxed = [big](Engine&) { (void)big; };
    EventHandler moved = std::move(boxed);
  }
  CHECK(allocation_count == before + 1);
}

TEST_CASE("a warmed-up engine schedules and fires without allocating per event") {
  Engine engine(5);
  std::uint64_t state = 99;
  struct Hold {
    std::uint64_t* state;
    void operator()(Engine& e) const {
      *state = splitmix64(*state);
      e.schedule_after(static_cast<TimePs>(*state % 100'000), Hold{state});
    }
  };
  for (int i = 0; i < 256; ++i) engine.schedule_after(i, Hold{&state});
  engine.run(engine.now() + 50'000'000);  // warm-up: buckets and pools reach their sizes
  const std::size_t before = allocation_count;
  const RunStats stats = engine.run(engine.now() + 50'000'000);
  CHECK(stats.events_fired > 100'000);
  // Amortised growth of a rarely used bucket may allocate; per-event allocation would not fit.
  CHECK(allocation_count - before < 64);
}

TEST_CASE("non-trivial captures are moved and destroyed exactly once") {
  Engine engine;
  auto token = std::make_shared<int>(3);
  int seen = 0;
  {
    EventHandler first = [token, &seen](Engine&) { seen = *token; };
    CHECK(token.use_count() == 2);
    EventHandler second = std::move(first);
    CHECK(token.use_count() == 2);  // moved, not copied
    second(engine);
    CHECK(seen == 3);
    second.reset();
    CHECK(token.use_count() == 1);
    CHECK_FALSE(static_cast<bool>(second));
  }
  CHECK(token.use_count() == 1);
}

TEST_CASE("callables larger than the inline buffer are boxed and still work") {
  Engine engine;
  std::array<long, 16> big{};
  big[15] = 42;
  long result = 0;
  auto token = std::make_shared<int>(0);
  {
    EventHandler handler = [big, &result, token](Engine&) { result = big[15]; };
    EventHandler moved;
    moved = std::move(handler);
    moved(engine);
    CHECK(token.use_count() == 2);
  }
  CHECK(result == 42);
  CHECK(token.use_count() == 1);  // the boxed callable was deleted
}

TEST_CASE("std::function and function pointers convert; empty ones give an empty handler") {
  Engine engine;
  int calls = 0;
  std::function<void(Engine&)> function = [&calls](Engine&) { ++calls; };
  EventHandler from_function = function;
  from_function(engine);
  CHECK(calls == 1);

  EventHandler from_empty = std::function<void(Engine&)>{};
  CHECK_FALSE(static_cast<bool>(from_empty));
  void (*null_pointer)(Engine&) = nullptr;
  EventHandler from_null = null_pointer;
  CHECK_FALSE(static_cast<bool>(from_null));
  EventHandler from_nullptr = nullptr;
  CHECK_FALSE(static_cast<bool>(from_nullptr));
}

TEST_CASE("engine accepts std::function handlers and rejects empty ones") {
  Engine engine;
  int calls = 0;
  engine.schedule_at(3, std::function<void(Engine&)>([&calls](Engine&) { ++calls; }));
  CHECK_THROWS_WITH_AS(engine.schedule_at(4, std::function<void(Engine&)>{}),
                       "cannot schedule an event at 4 ps (tag 0) with an empty handler",
                       SimulationError);
  engine.run();
  CHECK(calls == 1);
}

}  // namespace
}  // namespace clustersim::engine
