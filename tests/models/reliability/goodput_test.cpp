#include "models/reliability/goodput.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/engine/error.hpp"

namespace goodput_test {

using namespace clustersim;
using namespace clustersim::models;

TEST_CASE("Young and Daly intervals, derived by hand for C = 60 s, M = 1 h") {
  // Young: sqrt(2 x 60 x 3600) = sqrt(432000) = 657.267 s.
  CHECK(young_interval(60, 3600) == doctest::Approx(657.2671).epsilon(1e-6));
  // Daly: 657.267 (1 + sqrt(60/7200)/3 + (60/7200)/9) - 60 = 657.267 x 1.031355 - 60 = 617.876 s.
  CHECK(daly_interval(60, 3600) == doctest::Approx(617.876).epsilon(1e-5));
  // C >= 2M: checkpoint every M.
  CHECK(daly_interval(8000, 3600) == 3600);
  // Goodput at tau = 600 s, R = 0: 600 / (3600 (e^(660/3600) - 1)) = 600 / 724.37 = 0.82831;
  // with R = 300 s it is divided by e^(300/3600) = 1.086904: 0.76208.
  CHECK(daly_goodput(600, 60, 0, 3600) == doctest::Approx(0.82831).epsilon(1e-4));
  CHECK(daly_goodput(600, 60, 300, 3600) == doctest::Approx(0.76208).epsilon(1e-4));
}

TEST_CASE("the numerical optimum agrees with Daly's higher-order estimate and beats Young's") {
  for (const double c : {10.0, 60.0, 600.0}) {
    for (const double m : {3600.0, 36000.0}) {
      CAPTURE(c);
      CAPTURE(m);
      const double best = optimal_interval(c, 120, m);
      // The restart only scales goodput by e^(-R/M): it does not move the optimum.
      CHECK(best == doctest::Approx(optimal_interval(c, 0, m)).epsilon(1e-6));
      CHECK(best == doctest::Approx(daly_interval(c, m)).epsilon(0.01));
      const double g = daly_goodput(best, c, 120, m);
      CHECK(g >= daly_goodput(young_interval(c, m), c, 120, m));
      CHECK(g > daly_goodput(best * 1.2, c, 120, m));
      CHECK(g > daly_goodput(best / 1.2, c, 120, m));
    }
  }
}

TEST_CASE("Llama 3's interruption rates give the 16K-GPU job a 3.09 h MTBF") {
  // 419 unexpected interruptions in 54 days on 16,384 GPUs (2,048 hosts, a NIC per GPU):
  // M = 54 x 24 h / 419 = 3.0931 h.
  const FailureSpec spec;
  const GoodputReport report = goodput_report(spec, {16384, 2048, 16384}, 4e12, 4e12 / 2048);
  CHECK(report.job_mtbf_s / 3600 == doctest::Approx(54.0 * 24 / 419).epsilon(1e-9));
  // C = 4 TB / 2 TB/s = 2 s; R = 600 s + 2 s read back.
  CHECK(report.checkpoint_s == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(report.restart_s == doctest::Approx(602.0).epsilon(1e-12));
  CHECK(report.causes.front().name == "gpu");  // 268 of 419
  CHECK(report.causes.front().rate_per_s * 54 * 86400 == doctest::Approx(268).epsilon(1e-9));
  double shares = report.goodput + report.checkpoint_lost_share;
  for (const FailureCause& cause : report.causes) shares += cause.lost_share;
  CHECK(shares == doctest::Approx(1.0).epsilon(1e-12));
  // A node link of 0.5 GB/s makes the busiest node's 2 GB the bottleneck: C = 4 s.
  FailureSpec slow_nodes = spec;
  slow_nodes.node_storage_bytes_per_s = 0.5e9;
  CHECK(goodput_report(slow_nodes, {16384, 2048, 16384}, 4e12, 2e9).checkpoint_s == doctest::Approx(4.0).epsilon(1e-12));
  FailureSpec bad = spec;
  bad.gpu_mtbf_s = 0;
  CHECK_THROWS_WITH_AS(goodput_report(bad, {16384, 2048, 16384}, 4e12, 2e9),
                       "simulation.failures.gpu_mtbf must be positive and finite, got 0", ConfigError);
}

}  // namespace goodput_test
