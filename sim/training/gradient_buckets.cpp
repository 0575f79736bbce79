#include "sim/training/gradient_buckets.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::training {

double megatron_bucket_parameters(int data_parallel_size) {
  return std::max(40e6, 1e6 * data_parallel_size);
}

std::vector<GradientBucket> form_gradient_buckets(const std::vector<double>& unit_parameters,
                                                  double bucket_parameters) {
  if (!(bucket_parameters > 0)) {
    throw ConfigError(fmt::format("gradient bucket size must be positive, got {}", bucket_parameters));
  }
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  for (std::size_t i = 0; i < unit_parameters.size(); ++i) {
    open.units.push_back(static_cast<int>(i));
    open.parameters += unit_parameters[i];
    if (open.parameters >= bucket_parameters) {
      buckets.push_back(std::move(open));
      open = GradientBucket{};
    }
  }
  if (!open.units.empty()) buckets.push_back(std::move(open));
  return buckets;
}

}  // namespace clustersim::training
