// Event-engine throughput: how many events per second the engine schedules and fires.
// Results and the command that produced them: docs/performance.md, section "Engine".
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/engine/mix.hpp"

namespace {

using clustersim::engine::Engine;
using clustersim::engine::EventId;
using clustersim::engine::TimePs;

// Cheap deterministic delays so the benchmark measures the engine, not an RNG.
class DelaySource {
 public:
  explicit DelaySource(std::uint64_t seed) : state_(seed) {}
  /// Uniform-ish delay in [1, 2 * kMeanDelayPs] picoseconds.
  TimePs next_ps() {
    state_ = clustersim::engine::splitmix64(state_);
    return 1 + static_cast<TimePs>(state_ % (2 * kMeanDelayPs));
  }
  static constexpr std::uint64_t kMeanDelayPs = 1'000'000;  // 1 us

 private:
  std::uint64_t state_;
};

// Classic "hold" model: every fired event schedules one successor at now + random delay, so
// the number of pending events stays at N. Each handler is a trivially copyable 8-byte callable.
struct HoldEvent {
  DelaySource* delays;
  void operator()(Engine& engine) const {
    engine.schedule_after(delays->next_ps(), HoldEvent{delays});
  }
};

void BM_Hold(benchmark::State& state) {
  const auto pending = static_cast<std::uint64_t>(state.range(0));
  Engine engine(1);
  DelaySource delays(7);
  for (std::uint64_t i = 0; i < pending; ++i) {
    engine.schedule_after(delays.next_ps(), HoldEvent{&delays});
  }
  engine.run(engine.now() + 4 * static_cast<TimePs>(DelaySource::kMeanDelayPs));  // warm up
  // Each iteration covers a simulated window in which about 100k events fire.
  const auto window_ps = static_cast<TimePs>(100'000 * DelaySource::kMeanDelayPs / pending);
  std::uint64_t fired = 0;
  for (auto _ : state) {
    fired += engine.run(engine.now() + window_ps).events_fired;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(fired));
  state.counters["pending"] = static_cast<double>(engine.pending());
}
BENCHMARK(BM_Hold)->Arg(1 << 10)->Arg(1 << 16);

// Schedules a batch of events at random future times (uniform over 2 us, so the firing order is
// unrelated to the scheduling order), then runs them all. One item is one event scheduled and
// fired. Steady state: the engine is reused, as in a long simulation.
void BM_ScheduleThenRun(benchmark::State& state) {
  const auto batch = static_cast<std::uint64_t>(state.range(0));
  Engine engine(1);
  DelaySource delays(11);
  std::uint64_t counter = 0;
  const auto run_batch = [&] {
    const TimePs start_ps = engine.now();
    for (std::uint64_t i = 0; i < batch; ++i) {
      engine.schedule_at(start_ps + delays.next_ps(), [&counter](Engine&) { ++counter; });
    }
    engine.run();
  };
  run_batch();  // untimed: grows the engine's pools once (first-touch page faults)
  for (auto _ : state) run_batch();
  benchmark::DoNotOptimize(counter);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_ScheduleThenRun)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// Schedules a batch, cancels every other event, then runs. One item is one event scheduled
// (half of them are cancelled, half fired).
void BM_ScheduleCancelHalf(benchmark::State& state) {
  const auto batch = static_cast<std::uint64_t>(state.range(0));
  Engine engine(1);
  DelaySource delays(13);
  std::vector<EventId> ids(batch);
  std::uint64_t counter = 0;
  const auto run_batch = [&] {
    const TimePs start_ps = engine.now();
    for (std::uint64_t i = 0; i < batch; ++i) {
      ids[i] = engine.schedule_at(start_ps + delays.next_ps(), [&counter](Engine&) { ++counter; });
    }
    for (std::uint64_t i = 0; i < batch; i += 2) engine.cancel(ids[i]);
    engine.run();
  };
  run_batch();  // untimed: grows the engine's pools once (first-touch page faults)
  for (auto _ : state) run_batch();
  benchmark::DoNotOptimize(counter);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_ScheduleCancelHalf)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
