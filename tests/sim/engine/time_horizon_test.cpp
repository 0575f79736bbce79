// Integer time never overflows silently: converting a time at or past the representable horizon
// (2^63 ps, about 106.75 days), or NaN, is a SimulationError naming what was converted; the
// engine refuses a delay that would carry now() past it and stops a run at its event limit.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/engine/engine.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"

namespace time_horizon_test {

using namespace clustersim::engine;

TEST_CASE("seconds_to_ps is exact below the horizon and an error at or past it") {
  CHECK(seconds_to_ps(2e-6) == 2'000'000);
  CHECK(seconds_to_ps(9.2e6) == 9'200'000'000'000'000'000);  // 106.5 days: representable
  CHECK_THROWS_WITH_AS(seconds_to_ps(9.3e6),
                       "a duration of 9.3e+06 s is past the representable horizon of simulated time (2^63 ps, about "
                       "106.8 days): simulate a shorter run (fewer steps or requests)",
                       clustersim::SimulationError);
  CHECK_THROWS_AS(seconds_to_ps(-9.3e6), clustersim::SimulationError);
  CHECK_THROWS_WITH_AS(seconds_to_ps(std::nan("")), "a duration is not a number (NaN picoseconds)",
                       clustersim::SimulationError);
  CHECK_THROWS_WITH_AS(checked_ps(kHorizonPs, "a task's remaining time"),
                       "a task's remaining time of 9.22337e+06 s is past the representable horizon of simulated time "
                       "(2^63 ps, about 106.8 days): simulate a shorter run (fewer steps or requests)",
                       clustersim::SimulationError);
  CHECK(checked_ps(kHorizonPs - 2048.0) == static_cast<TimePs>(kHorizonPs - 2048.0));
}

TEST_CASE("the engine refuses a delay past the horizon") {
  Engine engine;
  engine.schedule_at(kTimeNever - 10, [](Engine& e) {
    CHECK_THROWS_AS(e.schedule_after(11, [](Engine&) {}), clustersim::SimulationError);
  });
  engine.run();
  CHECK(engine.now() == kTimeNever - 10);
}

TEST_CASE("the engine stops a run at its event limit, naming the time it reached") {
  Engine engine;
  engine.set_event_limit(3);
  int fired = 0;
  for (int i = 1; i <= 5; ++i) engine.schedule_at(i * kPsPerSecond, [&fired](Engine&) { ++fired; });
  CHECK_THROWS_WITH_AS(engine.run(), "the run reached its limit of 3 events at simulated time 4 s, with 2 events pending",
                       clustersim::EventLimitError);
  CHECK(fired == 3);
}

}  // namespace time_horizon_test
