#pragma once
/// Counter-based random draws: each draw is a pure function of a key (the seed, a purpose and
/// the indices of what is drawn for), so a run draws the same numbers whatever order its events
/// fire in and a fast path can draw for rank r without drawing for ranks 0..r-1. Distributions
/// are sampled by their inverse CDF, which also gives the maximum of n iid draws from one
/// uniform: max(X_1..X_n) = F^-1(U^(1/n)) (the CDF of the maximum is F^n).
#include <cstdint>
#include <initializer_list>

namespace clustersim::engine {

/// The key of a draw: splitmix64 folded over `seed` and `parts` (purpose code, iteration, ...).
std::uint64_t draw_key(std::uint64_t seed, std::initializer_list<std::uint64_t> parts);

/// A uniform number in the open interval (0, 1) from `key` (53 random bits, offset by half a
/// step so that neither 0 nor 1 occurs).
double uniform_open01(std::uint64_t key);

/// The quantile of the standard normal distribution at probability p, given as its complement
/// q = 1 - p (exact near p = 1, where the maxima of many draws fall). q in (0, 1).
double normal_quantile_upper(double q);

/// The upper tail 1 - U^(1/n) of the maximum of n iid draws' uniform: the probability q at which
/// to read a distribution's upper quantile for that maximum (n >= 1; 1 - u for n = 1).
double max_upper_tail(double u, double n);

/// The quantile of a lognormal factor with mean 1 and coefficient of variation `cv` (>= 0) at
/// upper tail q: exp(-s^2/2 + s z), s^2 = ln(1 + cv^2), z the normal quantile. 1 for cv = 0.
double lognormal_mean1_upper_quantile(double cv, double q);

/// The quantile of a Poisson count of mean `mean` (>= 0) at upper tail q: the smallest k with
/// P(N > k) <= q. Exact summation up to mean 1e4; a normal approximation above.
std::int64_t poisson_upper_quantile(double mean, double q);

}  // namespace clustersim::engine
