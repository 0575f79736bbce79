#pragma once
/// Grouping of gradients into data-parallel reduction buckets (Megatron DDP).
#include <vector>

namespace clustersim::training {

/// Megatron-Core's default bucket size in parameters: max(40M, 1M x data-parallel size).
double megatron_bucket_parameters(int data_parallel_size);

/// A bucket: consecutive parameter units (indices into the caller's list) reduced together.
struct GradientBucket {
  std::vector<int> units;
  double parameters = 0;
};

/// Packs units, given in the order their gradients become ready (backward order), into
/// buckets: a bucket closes as soon as it holds >= `bucket_parameters`; the last may be
/// smaller. Units are never split. Throws ConfigError if `bucket_parameters` <= 0.
std::vector<GradientBucket> form_gradient_buckets(const std::vector<double>& unit_parameters,
                                                  double bucket_parameters);

}  // namespace clustersim::training
