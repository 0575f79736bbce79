#pragma once
/// Run-to-run timing variability a workload draws per run (`simulation.variability`): kernel
/// times per op class, host/OS noise and per-collective network jitter. Every draw is a pure
/// function of the scenario seed, the iteration and the task (sim/engine/random_draws.hpp), so
/// results do not depend on the order events run in.
namespace clustersim::platform {

/// The variability settings. Every coefficient of variation (CV = standard deviation / mean) is
/// of a lognormal factor with mean 1 (the modelled time stays the mean). All zero (the
/// default): no variability, every run is the nominal one.
struct VariabilitySpec {
  double gemm_cv = 0;         ///< of a GEMM kernel's time
  double attention_cv = 0;    ///< of an attention kernel's time (forward or backward)
  double elementwise_cv = 0;  ///< of every other kernel's time (norms, activations, optimizer, copies)
  /// Of a rank's speed over one step: one factor per rank and step on all its kernels (a slower
  /// part, a clock held down by the power limit: the correlated term measured kernel spreads
  /// show, docs/reliability.md, "Faults").
  double device_cv = 0;
  /// Of each collective's or point-to-point transfer's time (communication kernels included):
  /// one draw per collective, which every member of its group sees.
  double network_cv = 0;
  /// Host/OS interruptions of a rank's compute stream: a Poisson process of this rate per
  /// second of compute, each delaying the kernel it hits by host_noise_delay_s.
  double host_noise_rate_per_s = 0;
  double host_noise_delay_s = 0;  ///< length of one interruption, seconds

  /// True when any kernel or network CV is set.
  bool jitter() const { return gemm_cv > 0 || attention_cv > 0 || elementwise_cv > 0 || device_cv > 0 || network_cv > 0; }
  /// True when host noise is set (a rate and a delay).
  bool host_noise() const { return host_noise_rate_per_s > 0 && host_noise_delay_s > 0; }
  bool any() const { return jitter() || host_noise(); }
};

}  // namespace clustersim::platform
