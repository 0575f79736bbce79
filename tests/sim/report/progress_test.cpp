#include "sim/report/progress.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <sstream>
#include <thread>
#include <vector>

namespace progress_test {

using namespace clustersim::report;

TEST_CASE("progress text: done out of total, rate and time left") {
  CHECK(progress_text("sweep", 0, 40, "points", 0) == "sweep: 0/40 points (0 %)");
  // 10 of 40 in 5 s: 2 points/s, 30 left take 15 s.
  CHECK(progress_text("sweep", 10, 40, "points", 5) == "sweep: 10/40 points (25 %), 2.0 points/s, 15 s left");
  // Slower than one a second: the time per item; minutes left.
  CHECK(progress_text("validate", 3, 118, "rows", 6) ==
        "validate: 3/118 rows (2 %), 2.0 s each, 3 min 50 s left");
  CHECK(progress_text("search", 7, 7, "candidates", 3601) ==
        "search: 7/7 candidates (100 %), 514.4 s each, done in 1 h 00 min");
}

TEST_CASE("progress: quiet when disabled; from several threads the highest count wins; the last draw ends the line") {
  std::ostringstream quiet;
  Progress off("sweep", 4, "points", false, quiet);
  for (std::size_t i = 1; i <= 4; ++i) off.update(i);
  CHECK(off.done() == 4);
  CHECK(quiet.str().empty());

  std::ostringstream shown;
  Progress on("sweep", 400, "points", true, shown);
  // Four threads report a shared counter, as TBB workers do; their reports may arrive out of order.
  std::atomic<std::size_t> counter{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) on.update(++counter);
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(on.done() == 400);
  const std::string text = shown.str();
  REQUIRE_FALSE(text.empty());
  CHECK(text.front() == '\r');
  CHECK(text.back() == '\n');
  CHECK(text.find("sweep: 400/400 points (100 %)") != std::string::npos);
  CHECK(text.find("done in") != std::string::npos);
}

}  // namespace progress_test
