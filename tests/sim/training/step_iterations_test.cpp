#include "sim/training/step_iterations.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/training/step_variability.hpp"
#include "tests/sim/training/training_test_support.hpp"

namespace step_iterations_test {

using namespace clustersim;
using namespace clustersim::training;
using namespace clustersim::training::testing;

namespace {

IterationSettings settings(int iterations, int nodes, int per_node) {
  IterationSettings s;
  s.iterations = iterations;
  s.nodes = nodes;
  s.per_node = per_node;
  return s;
}

}  // namespace

TEST_CASE("replaying the nominal step with nothing drawn reproduces it to the picosecond") {
  // Interleaved pipeline with overlapped gradient reduction: every kind of stream and wait.
  auto w = workload(small_gpt(4, 512, 8192), 2, 2, 2, 8, 1024);
  w.overlap_grad_reduce = true;
  w.parallelism.schedule = PipelineSchedule::interleaved;
  w.parallelism.vp = 2;
  const Bench bench(test_cluster(1, 8), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  for (const auto fidelity : {platform::Fidelity::analytical, platform::Fidelity::flow}) {
    const double nominal = run_alone(setup, fidelity).step_time_s;
    const StepStatistics stats = iterations_alone(setup, settings(3, 1, 8), fidelity);
    for (const double t : {stats.nominal_s, stats.step_s.max, stats.step_s.p50}) {
      CHECK(t == doctest::Approx(nominal).scale(0).epsilon(1e-12));
    }
    CHECK(stats.causes.empty());
  }
}

TEST_CASE("a straggler on one data-parallel ring: the ring waits for it, by hand and with a probability") {
  // dp 4 on 4 single-GPU nodes, the gradient all-reduce after the backward: a node at speed s
  // stretches its compute and optimizer by 1/s and the ring waits for it, so the step is
  // nominal + (compute + optimizer) (1/s - 1).
  auto w = workload(small_gpt(2, 512, 8192), 1, 1, 4, 8, 1024);
  w.overlap_grad_reduce = false;
  const Bench bench(test_cluster(4, 1), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 3};
  const TrainingResult nominal = run_alone(setup);
  const double speed = 0.8;
  const double slowed = nominal.step_time_s +
                        (nominal.breakdown.compute_s + nominal.breakdown.optimizer_s) * (1 / speed - 1);
  IterationSettings listed = settings(1, 4, 1);
  listed.stragglers = {{2}, speed, 0};
  setup.mode = platform::SimulationMode::full;
  const StepStatistics one = iterations_alone(setup, listed);
  CHECK(one.step_s.max == doctest::Approx(slowed).scale(0).epsilon(1e-6));
  REQUIRE(one.causes.size() == 1);
  CHECK(one.causes[0].cause == "stragglers");
  CHECK(one.causes[0].lost_s == doctest::Approx(slowed - nominal.step_time_s).scale(0).epsilon(1e-6));

  // Each node slow with probability 0.3 in each step: a step is slow unless all four are
  // fast, 1 - 0.7^4 = 76 % of steps. Both modes draw the same nodes, so they agree step by step.
  IterationSettings random = settings(200, 4, 1);
  random.stragglers = {{}, speed, 0.3};
  setup.mode = platform::SimulationMode::symmetric;
  const StepStatistics fast = iterations_alone(setup, random);
  int slow_steps = 0;
  for (const double t : fast.step_times_s) {
    const bool is_slow = std::abs(t - slowed) < 1e-6 * slowed;
    CHECK((is_slow || std::abs(t - nominal.step_time_s) < 1e-9 * slowed));
    slow_steps += is_slow ? 1 : 0;
  }
  CHECK(slow_steps / 200.0 == doctest::Approx(1 - std::pow(0.7, 4)).scale(0).epsilon(0.07));
  random.iterations = 40;
  setup.mode = platform::SimulationMode::full;
  const StepStatistics full = iterations_alone(setup, random);
  for (int k = 0; k < 40; ++k) {
    CHECK(full.step_times_s[static_cast<std::size_t>(k)] ==
          doctest::Approx(fast.step_times_s[static_cast<std::size_t>(k)]).scale(0).epsilon(1e-6));
  }
}

TEST_CASE("iterations that a cause leaves unchanged are not simulated again") {
  // Jitter and stragglers (p 0.3 per node, 4 nodes): in an iteration with no slow node the
  // stragglers-alone step is the nominal one and the jitter-alone step is the all-causes one.
  auto w = workload(small_gpt(2, 512, 8192), 1, 1, 4, 8, 1024);
  const Bench bench(test_cluster(4, 1), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 3};
  setup.mode = platform::SimulationMode::full;
  IterationSettings s = settings(8, 4, 1);
  s.stragglers = {{}, 0.8, 0.3};
  s.variability.gemm_cv = 0.05;
  int fast = 0;
  for (int k = 0; k < 8; ++k) {
    const auto slow = slow_nodes(s.stragglers, 4, 3, k);
    fast += std::none_of(slow.begin(), slow.end(), [](bool b) { return b; }) ? 1 : 0;
  }
  REQUIRE(fast > 0);
  REQUIRE(fast < 8);
  const StepStatistics stats = iterations_alone(setup, s);
  // The nominal step, every iteration with all causes, then jitter alone and stragglers alone
  // only where a node is slow.
  CHECK(stats.simulated_steps == 1 + 8 + 2 * (8 - fast));
  REQUIRE(stats.causes.size() == 2);
  CHECK(stats.causes[0].cause == "jitter");
  CHECK(stats.causes[0].mean_step_s <= stats.step_s.mean);
}

TEST_CASE("symmetric segments end at the collectives a TP group synchronises on") {
  auto w = workload(small_gpt(), 2, 2, 2, 8);
  w.parallelism.sequence_parallel = true;
  const Bench bench(test_cluster(1, 8), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  platform::SessionOptions options;
  options.fidelity = platform::Fidelity::analytical;
  platform::Session session(setup.collectives, options);
  TrainingStep step(setup);
  step.start(session, {});
  session.engine().run();
  const SymmetricDraws draws(step.step_graph(), w.parallelism);
  const StepGraph& graph = step.step_graph();
  REQUIRE(draws.segments().size() == 2);
  for (std::size_t p = 0; p < 2; ++p) {
    std::set<exec::TaskId> seen;
    int tensor_segments = 0;
    for (const auto& segment : draws.segments()[p]) {
      CHECK((segment.group == 1 || segment.group == 2 || segment.group == 4));  // none, tp, dp x cp
      tensor_segments += segment.group == 2 ? 1 : 0;
      for (const exec::TaskId t : segment.tasks) CHECK(seen.insert(t).second);
    }
    // Every kernel of the compute stream is in exactly one segment.
    std::size_t kernels = 0;
    for (const exec::TaskId t : graph.graph.stream_tasks(graph.stages[p].compute)) {
      if (graph.graph.task(t).traits.kind != exec::TaskKind::communication) ++kernels;
    }
    CHECK(seen.size() == kernels);
    // Two TP collectives per layer and pass at least: 4 layers / 2 stages x 4 micro-batches x 2.
    CHECK(tensor_segments >= 2 * 2 * 4 * 2);
  }
}

TEST_CASE("kernel jitter: the symmetric fast path's p50 and p99 agree with full mode within 2 %") {
  // tp 4 pp 2 dp 2: every layer's TP collectives wait for the slowest of 4 ranks, which is
  // what the fast path draws from its order statistics and full mode simulates rank by rank.
  auto w = workload(small_gpt(4, 1024, 32768), 4, 2, 2, 8);
  w.parallelism.sequence_parallel = true;
  const Bench bench(test_cluster(2, 8), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 11};
  IterationSettings s = settings(60, 2, 8);
  s.variability.gemm_cv = 0.1;
  s.variability.attention_cv = 0.1;
  s.variability.elementwise_cv = 0.2;
  s.variability.network_cv = 0.05;
  const StepStatistics fast = iterations_alone(setup, s);
  setup.mode = platform::SimulationMode::full;
  const StepStatistics full = iterations_alone(setup, s);
  MESSAGE("nominal ", fast.nominal_s, " fast p50 ", fast.step_s.p50, " p99 ", fast.step_s.p99, " full p50 ",
          full.step_s.p50, " p99 ", full.step_s.p99);
  CHECK(fast.nominal_s == doctest::Approx(full.nominal_s).epsilon(0.01));
  // The jitter costs time (the slowest of each group sets the pace) ...
  CHECK(full.step_s.p50 > full.nominal_s * 1.01);
  // ... and the fast path sees the same distribution.
  CHECK(fast.step_s.p50 == doctest::Approx(full.step_s.p50).epsilon(0.02));
  CHECK(fast.step_s.p99 == doctest::Approx(full.step_s.p99).epsilon(0.02));
  REQUIRE(fast.causes.size() == 1);
  CHECK(fast.causes[0].cause == "jitter");
}

TEST_CASE("host noise and several causes: each cause's loss measured alone") {
  auto w = workload(small_gpt(2, 512, 8192), 2, 1, 4, 8, 1024);
  const Bench bench(test_cluster(1, 8), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 5};
  IterationSettings s = settings(30, 1, 8);
  s.variability.gemm_cv = 0.05;
  s.variability.host_noise_rate_per_s = 200;
  s.variability.host_noise_delay_s = 1e-3;
  const StepStatistics stats = iterations_alone(setup, s);
  REQUIRE(stats.causes.size() == 2);
  CHECK(stats.causes[0].cause == "jitter");
  CHECK(stats.causes[1].cause == "host_noise");
  for (const CauseLoss& cause : stats.causes) {
    CHECK(cause.lost_s > 0);
    CHECK(cause.lost_share == doctest::Approx(cause.lost_s / stats.step_s.mean).epsilon(1e-12));
  }
  CHECK(stats.step_s.p99 >= stats.step_s.p50);
  CHECK(stats.step_s.max >= stats.step_s.p99);
  IterationSettings none = s;
  none.iterations = 0;
  CHECK_THROWS_WITH_AS(iterations_alone(setup, none), "simulation.iterations must be at least 1, got 0",
                       ConfigError);
}

}  // namespace step_iterations_test
