#pragma once
/// Faults of serving instances, in the vocabulary of training's (docs/reliability.md, "Faults in
/// serving"): the same simulation.variability, cluster.stragglers and simulation.failures keys,
/// with what they mean for a deployment that runs iterations of batches instead of steps.
///
///  * Variability, per iteration of an instance over `ranks` = tp accelerators (a pipeline's
///    stages are folded into one draw): the iteration's kernels on one rank, S = g X_g +
///    a X_a + e X_e (GEMM, attention and other kernel time, each factor lognormal of mean 1 and
///    its class's CV), are approximated by the lognormal of mean m = g + a + e and variance
///    (cv_g g)^2 + (cv_a a)^2 + (cv_e e)^2 (Fenton-Wilkinson, as training's symmetric mode); the
///    TP collectives wait for the slowest rank, so the kernels take m times the maximum of
///    `ranks` such factors, drawn from its order statistics F^-1(U^(1/ranks)); times the slowest
///    rank's speed this iteration (device_cv, its own maximum of `ranks` draws). Host noise: the
///    largest of `ranks` Poisson counts of mean host_noise_rate x m, each costing
///    host_noise_delay. The iteration's collectives: one lognormal draw of network_cv (every
///    member sees it). The framework's host overhead and swap copies are not drawn.
///  * Stragglers: each node is slow (at cluster.stragglers.compute_speed) with
///    cluster.stragglers.probability, drawn once per run from the seed (a serving run is one
///    deployment; training redraws per step); an instance with an accelerator on a slow node
///    runs every iteration at that speed (its TP collectives wait for the slow rank).
///  * Failures: each instance fails as a Poisson process of rate instance_failure_rate_per_s()
///    (training's per-component MTBFs scaled to the instance), is down for
///    simulation.failures.restart, and its queued and running requests lose their KV cache and
///    go back to the router (re-prefill).
///
/// Every draw is a pure function of the seed, a purpose and the indices of what is drawn for
/// (sim/engine/random_draws.hpp): a run reproduces byte for byte.
#include <cstdint>
#include <vector>

#include "models/reliability/goodput.hpp"
#include "sim/platform/variability.hpp"
#include "sim/serving/iteration_cost.hpp"

namespace clustersim::serving {

/// One iteration's time under variability and what each cause added.
struct DrawnIteration {
  double time_s = 0;        ///< the iteration's wall time (before a straggler's slowdown)
  double jitter_s = 0;      ///< kernel and network jitter: drawn time - nominal time (may be < 0)
  double kernel_jitter_s = 0, network_jitter_s = 0;  ///< its two parts
  double host_noise_s = 0;  ///< host/OS interruptions
};

/// The variability draws of one instance.
class IterationVariability {
 public:
  /// `instance`: the key of the draws (one per scheduler); `ranks`: the TP ranks every
  /// iteration waits for (>= 1).
  IterationVariability(const platform::VariabilitySpec& variability, std::uint64_t seed, int instance, int ranks);
  /// `cost` (its time_s everything but the framework's host overhead and swaps, which `extra_s`
  /// holds) drawn for iteration `iteration` of the instance.
  DrawnIteration draw(const IterationCost& cost, double extra_s, std::int64_t iteration) const;
  bool any() const { return variability_.any(); }

 private:
  platform::VariabilitySpec variability_;
  std::uint64_t seed_;
  std::uint64_t instance_;
  double ranks_;
};

/// The component counts an instance's failure rate multiplies: tp x pp GPUs, every node it
/// has an accelerator on (a host failure takes the instance down), its share of the nodes'
/// scale-out NICs (nics_per_node per node over the node's accelerators).
models::JobComponents instance_components(int first_accelerator, int accelerators, int per_node, double nics_per_node);

/// Failures per second of an instance with `components`: GPUs x (1/gpu + 1/network +
/// 1/software MTBF) + hosts / host MTBF + NICs / NIC MTBF (as training's job rate). Throws
/// ConfigError for a non-positive MTBF.
double instance_failure_rate_per_s(const models::FailureSpec& failures, const models::JobComponents& components);

/// The up time before instance `instance`'s failure number `k` (0, 1, ...): exponential of mean
/// `mtbf_s`, -mtbf ln(U) with U drawn from (seed, instance, k). The k-th failure happens
/// `restart_s` after the previous one's recovery (the first: this long after time 0).
double failure_gap_s(std::uint64_t seed, int instance, int k, double mtbf_s);

/// Per node of `nodes`: is it slow for the whole run (drawn with `probability` from the seed)?
std::vector<bool> straggling_nodes(double probability, int nodes, std::uint64_t seed);

}  // namespace clustersim::serving
