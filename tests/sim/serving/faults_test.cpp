// Serving's fault draws (sim/serving/faults.hpp) against figures derived by hand: the order
// statistics of the slowest TP rank, host noise as the largest of n Poisson counts, an instance's
// failure rate from the per-component MTBFs, exponential up times and slow nodes.
#include "sim/serving/faults.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/engine/error.hpp"
#include "tests/relative_approx.hpp"

namespace faults_test {

using namespace clustersim;
using tolerance::relative_approx;

namespace {

// An iteration of 10 ms of GEMMs on each rank, nothing else.
serving::IterationCost gemm_iteration() {
  serving::IterationCost cost;
  cost.time_s = 0.010;
  cost.compute_bound_s = 0.010;
  cost.gemm_s = 0.010;
  return cost;
}

std::vector<double> factors(const serving::IterationVariability& draws, const serving::IterationCost& cost, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(draws.draw(cost, 0, i).time_s / cost.time_s);
  std::sort(out.begin(), out.end());
  return out;
}

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

}  // namespace

TEST_CASE("serving faults: a TP group waits for the slowest of its ranks' kernel draws (order statistics)") {
  platform::VariabilitySpec v;
  v.gemm_cv = 0.1;
  // One rank: the factor is lognormal of mean 1 and CV 0.1. Over 20,001 draws the mean's
  // standard error is 0.1 / sqrt(20001) = 0.0007: within 0.3 % (4 standard errors).
  const std::vector<double> one = factors(serving::IterationVariability(v, 7, 0, 1), gemm_iteration(), 20001);
  CHECK(mean_of(one) == relative_approx(1.0, 0.003));
  // Four ranks: the iteration takes the largest of four factors, whose CDF is F^4. With
  // s^2 = ln(1 + 0.1^2) = 0.0099503, s = 0.099751, the median of the maximum is
  // F^-1(0.5^(1/4)) = exp(-s^2/2 + s z), z = Phi^-1(0.840896) = 0.998149: 1.099210; its 90th
  // percentile F^-1(0.9^(1/4)) = F^-1(0.974004), z = 1.943196: 1.207873. The sample quantiles
  // of 20,001 draws are within 0.5 % of them.
  const std::vector<double> four = factors(serving::IterationVariability(v, 7, 0, 4), gemm_iteration(), 20001);
  CHECK(four[10000] == relative_approx(1.099210, 0.005));
  CHECK(four[18000] == relative_approx(1.207873, 0.005));
  // The TP=4 iteration is slower than the single rank's on average (E[max] > E[X] = 1).
  CHECK(mean_of(four) > 1.08);
}

TEST_CASE("serving faults: host noise is the largest of the ranks' Poisson counts") {
  platform::VariabilitySpec v;
  v.host_noise_rate_per_s = 100;   // x 10 ms of kernels: a mean of 1 interruption per rank
  v.host_noise_delay_s = 0.001;
  const serving::IterationCost cost = gemm_iteration();
  double one = 0, four = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    one += serving::IterationVariability(v, 3, 0, 1).draw(cost, 0, i).host_noise_s;
    four += serving::IterationVariability(v, 3, 0, 4).draw(cost, 0, i).host_noise_s;
  }
  // One rank: E[N] = 1 interruption, 1 ms. Four ranks: E[max] = sum_k (1 - F(k)^4) with F the
  // Poisson(1) CDF: F(0..5) = 0.367879, 0.735759, 0.919699, 0.981012, 0.996340, 0.999406, so
  // 0.981684 + 0.706950 + 0.284545 + 0.073817 + 0.014559 + 0.002375 + 0.000333 + 0.000041
  // = 2.064309 interruptions, 2.064 ms. Standard errors 1 / sqrt(20000) = 0.7 % and less:
  // within 3 %.
  CHECK(one / n == relative_approx(0.001, 0.03));
  CHECK(four / n == relative_approx(0.0020643, 0.03));
}

TEST_CASE("serving faults: network jitter is one draw every member sees; no variability draws nothing") {
  platform::VariabilitySpec v;
  v.network_cv = 0.2;
  serving::IterationCost cost;
  cost.time_s = 0.001;
  cost.communication_s = 0.001;
  // Four ranks, but one draw per collective: its mean stays the nominal 1 ms (standard error
  // 0.2 / sqrt(20000) = 0.14 %).
  CHECK(mean_of(factors(serving::IterationVariability(v, 5, 2, 4), cost, 20000)) == relative_approx(1.0, 0.006));
  const serving::IterationVariability none(platform::VariabilitySpec{}, 5, 2, 4);
  CHECK_FALSE(none.any());
  const serving::DrawnIteration same = none.draw(gemm_iteration(), 0.002, 9);
  CHECK(same.time_s == relative_approx(0.012));
  CHECK(same.jitter_s == 0.0);
  // Same seed, instance and iteration: the same draw; another instance: another.
  v.gemm_cv = 0.1;
  const serving::IterationVariability a(v, 5, 2, 4), b(v, 5, 3, 4);
  CHECK(a.draw(gemm_iteration(), 0, 11).time_s == a.draw(gemm_iteration(), 0, 11).time_s);
  CHECK(a.draw(gemm_iteration(), 0, 11).time_s != b.draw(gemm_iteration(), 0, 11).time_s);
}

TEST_CASE("serving faults: an instance's failure rate sums its components' rates") {
  models::FailureSpec f;
  f.gpu_mtbf_s = 1000;
  f.host_mtbf_s = 2000;
  f.nic_mtbf_s = 4000;
  f.network_mtbf_s = 8000;
  f.software_mtbf_s = 16000;
  // TP 2 on the first node of 8 accelerators with 8 NICs: 2 GPUs, 1 host, 2 NICs.
  const models::JobComponents c = serving::instance_components(0, 2, 8, 8);
  CHECK(c.gpus == 2);
  CHECK(c.hosts == 1);
  CHECK(c.nics == 2);
  // 2 (1/1000 + 1/8000 + 1/16000) + 1/2000 + 2/4000 = 0.002375 + 0.0005 + 0.0005 = 0.003375 /s.
  CHECK(serving::instance_failure_rate_per_s(f, c) == relative_approx(0.003375));
  // Accelerators 6..9 of nodes of 4 (one NIC each) span nodes 1 and 2: 2 hosts, 1 NIC.
  const models::JobComponents spread = serving::instance_components(6, 4, 4, 1);
  CHECK(spread.hosts == 2);
  CHECK(spread.nics == 1);
  f.gpu_mtbf_s = 0;
  CHECK_THROWS_AS((void)serving::instance_failure_rate_per_s(f, c), ConfigError);
}

TEST_CASE("serving faults: up times are exponential of the MTBF; slow nodes follow the probability") {
  // The mean of 10,000 exponential gaps: standard error 1 %, within 4 %.
  double sum = 0;
  for (int k = 0; k < 10000; ++k) sum += serving::failure_gap_s(11, 0, k, 100.0);
  CHECK(sum / 10000 == relative_approx(100.0, 0.04));
  // Linear in the MTBF: the same draw scaled (what a test forcing a failure's time relies on).
  CHECK(serving::failure_gap_s(11, 3, 2, 50.0) == relative_approx(50.0 * serving::failure_gap_s(11, 3, 2, 1.0)));
  const std::vector<bool> all = serving::straggling_nodes(1.0, 16, 1), none = serving::straggling_nodes(0.0, 16, 1);
  CHECK(std::count(all.begin(), all.end(), true) == 16);
  CHECK(std::count(none.begin(), none.end(), true) == 0);
  // 10,000 nodes at 0.3: standard deviation sqrt(10000 x 0.3 x 0.7) = 46 nodes; within 200.
  const std::vector<bool> some = serving::straggling_nodes(0.3, 10000, 1);
  CHECK(std::abs(static_cast<double>(std::count(some.begin(), some.end(), true)) - 3000.0) < 200.0);
  CHECK(serving::straggling_nodes(0.3, 10000, 1) == some);
}

}  // namespace faults_test
