#include "sim/serving/faults.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/random_draws.hpp"

namespace clustersim::serving {
namespace {

// Purposes of serving's draws (apart from training's: a serving job beside a training job
// draws its own numbers). Each cause has its own, so turning one off leaves the others alone.
enum Purpose : std::uint64_t {
  kKernels = 0x5e41'2001,
  kDevice,
  kNetwork,
  kHostNoise,
  kStraggler,
  kFailure,
};

}  // namespace

IterationVariability::IterationVariability(const platform::VariabilitySpec& variability, std::uint64_t seed,
                                           int instance, int ranks)
    : variability_(variability),
      seed_(seed),
      instance_(static_cast<std::uint64_t>(instance)),
      ranks_(static_cast<double>(std::max(1, ranks))) {}

DrawnIteration IterationVariability::draw(const IterationCost& cost, double extra_s, std::int64_t iteration) const {
  DrawnIteration out;
  out.time_s = cost.time_s + extra_s;
  const platform::VariabilitySpec& v = variability_;
  if (!v.any()) return out;
  const auto u = [&](Purpose purpose) {
    return engine::uniform_open01(engine::draw_key(seed_, {purpose, instance_, static_cast<std::uint64_t>(iteration)}));
  };
  // The kernels' time on one rank; a draft model's steps (not split by class) take the
  // target's mix of classes.
  const double kernels_s = cost.compute_bound_s + cost.memory_bound_s;
  const double classed_s = cost.gemm_s + cost.attention_kernel_s + cost.elementwise_s;
  double drawn_kernels_s = kernels_s;
  if (kernels_s > 0 && classed_s > 0) {
    const double scale = kernels_s / classed_s;
    const double g = v.gemm_cv * cost.gemm_s * scale, a = v.attention_cv * cost.attention_kernel_s * scale,
                 e = v.elementwise_cv * cost.elementwise_s * scale;
    const double cv = std::sqrt(g * g + a * a + e * e) / kernels_s;
    // The slowest of the ranks, both for its kernels and for its speed this iteration.
    const double kernel_factor = engine::lognormal_mean1_upper_quantile(cv, engine::max_upper_tail(u(kKernels), ranks_));
    const double device_factor =
        engine::lognormal_mean1_upper_quantile(v.device_cv, engine::max_upper_tail(u(kDevice), ranks_));
    drawn_kernels_s = kernels_s * kernel_factor * device_factor;
  }
  const double network_s =
      cost.communication_s * engine::lognormal_mean1_upper_quantile(v.network_cv, u(kNetwork));
  out.kernel_jitter_s = drawn_kernels_s - kernels_s;
  out.network_jitter_s = network_s - cost.communication_s;
  out.jitter_s = out.kernel_jitter_s + out.network_jitter_s;
  if (v.host_noise() && kernels_s > 0) {
    const auto hits = engine::poisson_upper_quantile(v.host_noise_rate_per_s * kernels_s,
                                                     engine::max_upper_tail(u(kHostNoise), ranks_));
    out.host_noise_s = static_cast<double>(hits) * v.host_noise_delay_s;
  }
  out.time_s += out.jitter_s + out.host_noise_s;
  return out;
}

models::JobComponents instance_components(int first_accelerator, int accelerators, int per_node, double nics_per_node) {
  const int per = std::max(1, per_node);
  const int first_node = first_accelerator / per, last_node = (first_accelerator + accelerators - 1) / per;
  models::JobComponents c;
  c.gpus = accelerators;
  c.hosts = last_node - first_node + 1;
  c.nics = nics_per_node * static_cast<double>(accelerators) / per;
  return c;
}

double instance_failure_rate_per_s(const models::FailureSpec& f, const models::JobComponents& c) {
  for (const double mtbf : {f.gpu_mtbf_s, f.host_mtbf_s, f.nic_mtbf_s, f.network_mtbf_s, f.software_mtbf_s}) {
    if (!(mtbf > 0)) throw ConfigError(fmt::format("a mean time between failures must be > 0, got {}", mtbf));
  }
  return c.gpus * (1 / f.gpu_mtbf_s + 1 / f.network_mtbf_s + 1 / f.software_mtbf_s) + c.hosts / f.host_mtbf_s +
         c.nics / f.nic_mtbf_s;
}

double failure_gap_s(std::uint64_t seed, int instance, int k, double mtbf_s) {
  const double u = engine::uniform_open01(
      engine::draw_key(seed, {kFailure, static_cast<std::uint64_t>(instance), static_cast<std::uint64_t>(k)}));
  return -mtbf_s * std::log(u);
}

std::vector<bool> straggling_nodes(double probability, int nodes, std::uint64_t seed) {
  std::vector<bool> slow(static_cast<std::size_t>(std::max(0, nodes)), false);
  if (!(probability > 0)) return slow;
  for (int node = 0; node < nodes; ++node) {
    const double u = engine::uniform_open01(engine::draw_key(seed, {kStraggler, static_cast<std::uint64_t>(node)}));
    slow[static_cast<std::size_t>(node)] = u < probability;
  }
  return slow;
}

}  // namespace clustersim::serving
