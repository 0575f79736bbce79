// The closed-form estimate must agree with the event simulation it shortcuts: the search
// ranks candidates with it before re-simulating the best.
#include "sim/training/analytical_step.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "sim/engine/error.hpp"
#include "training_test_support.hpp"

namespace analytical_step_test {

using namespace clustersim;
using namespace clustersim::training;
using training::testing::run_alone;

namespace {

double relative_difference(double a, double b) { return std::abs(a - b) / b; }

TrainingSetup setup_of(const training::testing::Bench& bench) {
  return TrainingSetup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
}

}  // namespace

TEST_CASE("closed form equals the event simulation exactly without a pipeline or data parallelism") {
  auto w = training::testing::workload(training::testing::small_gpt(), 1, 1, 1, 8, 1024);
  const training::testing::Bench bench(training::testing::test_cluster(1, 1), w);
  const auto simulated = run_alone(setup_of(bench));
  const auto estimated = estimate_training_step(setup_of(bench));
  CHECK(estimated.step_time_s == doctest::Approx(simulated.step_time_s).epsilon(1e-9));
  CHECK(estimated.breakdown.compute_s == doctest::Approx(simulated.breakdown.compute_s).epsilon(1e-9));
  CHECK(estimated.mfu == doctest::Approx(simulated.mfu).epsilon(1e-9));
  CHECK(estimated.events == 0);
}

TEST_CASE("closed form equals the event simulation with the host issuing the ops") {
  // One GPU: the host's recurrence over the step's ops is the event simulation's exactly, host-
  // bound (10 ms an op) or not (1 us).
  for (const double host_s : {1e-6, 10e-3}) {
    CAPTURE(host_s);
    auto w = training::testing::workload(training::testing::small_gpt(), 1, 1, 1, 8, 1024);
    w.host_op_time = host_s;
    const training::testing::Bench bench(training::testing::test_cluster(1, 1), w);
    const auto simulated = run_alone(setup_of(bench));
    const auto estimated = estimate_training_step(setup_of(bench));
    CHECK(estimated.step_time_s == doctest::Approx(simulated.step_time_s).epsilon(1e-9));
    CHECK(estimated.breakdown.exposed_host_s == doctest::Approx(simulated.breakdown.exposed_host_s).epsilon(1e-9));
  }
  // With a pipeline and data parallelism the host runs ahead while a stage waits for anything
  // else; the closed form takes that slack off its delay.
  for (const double host_s : {20e-6, 200e-6}) {
    CAPTURE(host_s);
    auto w = training::testing::workload(training::testing::small_gpt(8), 1, 4, 4, 64, 1024);
    w.host_op_time = host_s;
    const training::testing::Bench bench(training::testing::test_cluster(2, 8), w);
    const auto simulated = run_alone(setup_of(bench));
    const auto estimated = estimate_training_step(setup_of(bench));
    CHECK(simulated.breakdown.exposed_host_s > 0);
    CHECK(relative_difference(estimated.step_time_s, simulated.step_time_s) < 0.03);
  }
}

TEST_CASE("closed form tracks the event simulation within 3 % across splits") {
  struct Case {
    int tp, pp, dp;
    std::int64_t batch;
    bool overlap;
    int zero;
  };
  for (const Case c : {Case{1, 4, 4, 64, true, 1}, Case{2, 2, 4, 32, false, 0}, Case{4, 4, 1, 16, true, 1},
                       Case{1, 2, 8, 128, true, 0}, Case{2, 8, 1, 64, false, 1}, Case{1, 1, 16, 64, true, 2},
                       Case{2, 2, 4, 32, true, 2}, Case{1, 1, 16, 64, true, 3}, Case{2, 2, 4, 32, true, 3},
                       Case{1, 1, 16, 64, true, 4}, Case{2, 2, 4, 32, true, 4}}) {
    CAPTURE(c.zero);
    CAPTURE(c.tp);
    CAPTURE(c.pp);
    CAPTURE(c.dp);
    auto w = training::testing::workload(training::testing::small_gpt(8), c.tp, c.pp, c.dp, c.batch, 1024);
    w.overlap_grad_reduce = c.overlap;
    // zero 4 here: ZeRO-3 with one collective per parameter tensor (biases included).
    w.parallelism.zero = std::min(c.zero, 3);
    if (c.zero == 4) {
      w.parallelism.zero3_granularity = Zero3Granularity::tensor;
      w.model.linear_bias = true;
    }
    const training::testing::Bench bench(training::testing::test_cluster(2, 8), w);
    const auto simulated = run_alone(setup_of(bench));
    const auto estimated = estimate_training_step(setup_of(bench));
    // ZeRO-3: the parameter gathers run on their own stream beside the compute stream's TP and
    // DP collectives; the event simulation's analytical backend slows a communication that
    // starts while another runs on its links (since 2026-12-06), the closed form does not see
    // them meet, so it reads fast there (3.2 % at dp 16; 6.1 % per tensor with TP, where the
    // per-tensor gathers also run beside Megatron's asynchronous TP all-reduce). Elsewhere 3 %.
    if (c.zero >= 3) {
      CHECK(estimated.step_time_s <= simulated.step_time_s * (1 + 1e-9));
      CHECK(relative_difference(estimated.step_time_s, simulated.step_time_s) < 0.08);
    } else {
      CHECK(relative_difference(estimated.step_time_s, simulated.step_time_s) < 0.03);
    }
    const auto& b = estimated.breakdown;
    const double parts = b.compute_s + b.exposed_tp_s + b.exposed_cp_s + b.exposed_ep_s + b.exposed_pp_s + b.exposed_dp_s +
                         b.bubble_s + b.optimizer_s + b.exposed_host_s;
    CHECK(parts == doctest::Approx(estimated.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("closed form tracks the event simulation for MoE: expert parallelism and the experts' own DP") {
  // dp 16 on 2 nodes: with ep 1 the experts reduce over all 16 ranks (as many bytes as the
  // dense part, more with ZeRO-3's per-micro-batch gathers), with ep 8 over 2 ranks.
  for (const int ep : {1, 2, 8}) {
    for (const int zero : {0, 1, 2, 3}) {
      for (const bool overlap : {false, true}) {
        CAPTURE(ep);
        CAPTURE(zero);
        CAPTURE(overlap);
        auto model = training::testing::small_moe();
        model.moe.moe_intermediate_size = 8192;  // experts hold most of the parameters
        auto w = training::testing::workload(model, 1, 1, 16, 64, 1024);
        w.parallelism.ep = ep;
        w.parallelism.zero = zero;
        w.overlap_grad_reduce = overlap;
        const training::testing::Bench bench(training::testing::test_cluster(2, 8), w);
        const auto simulated = run_alone(setup_of(bench));
        const auto estimated = estimate_training_step(setup_of(bench));
        // The experts' reduction (and with ZeRO 2-3 their gathers and reduce-scatters) meet
        // the dense part's and the all-to-all on the NICs: the event simulation slows the one
        // that starts second, the closed form does not see them meet and reads fast, by up to
        // 16.5 % (ZeRO-3, ep 8); where nothing meets (ZeRO 0-1, ep 1) within 3 %.
        if (zero >= 2 || ep > 1) {
          CHECK(estimated.step_time_s <= simulated.step_time_s * (1 + 1e-9));
          CHECK(relative_difference(estimated.step_time_s, simulated.step_time_s) < 0.18);
        } else {
          CHECK(relative_difference(estimated.step_time_s, simulated.step_time_s) < 0.03);
          CHECK(relative_difference(estimated.breakdown.exposed_dp_s + estimated.breakdown.compute_s,
                                    simulated.breakdown.exposed_dp_s + simulated.breakdown.compute_s) < 0.03);
        }
      }
    }
  }
}

TEST_CASE("closed form rejects what the event simulation rejects") {
  auto w = training::testing::workload(training::testing::small_gpt(), 1, 1, 2, 3, 1024);
  const training::testing::Bench bench(training::testing::test_cluster(1, 2), w);
  CHECK_THROWS_AS(estimate_training_step(setup_of(bench)), ConfigError);
}

}  // namespace analytical_step_test
