#include "models/accelerator/fitted_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "sim/engine/error.hpp"

namespace clustersim::models {

std::optional<LinearTimeFit> LinearTimeFit::fit(const std::vector<FitSample>& samples,
                                                double fixed_offset_s) {
  if (samples.empty()) return std::nullopt;
  const std::size_t feature_count = samples.front().features.size();
  for (const auto& sample : samples) {
    if (sample.features.size() != feature_count) {
      throw ConfigError("LinearTimeFit: every sample needs " + std::to_string(feature_count) +
                        " features, got " + std::to_string(sample.features.size()));
    }
    if (!(sample.time_s > 0) || !std::isfinite(sample.time_s)) {
      throw ConfigError("LinearTimeFit: measured time must be positive, got " +
                        std::to_string(sample.time_s));
    }
  }
  // Active features: the first `samples` features that are not zero everywhere, in priority
  // order.
  std::vector<std::size_t> active;
  for (std::size_t j = 0; j < feature_count && active.size() < samples.size(); ++j) {
    const bool used = std::any_of(samples.begin(), samples.end(),
                                  [j](const FitSample& sample) { return sample.features[j] != 0; });
    if (used) active.push_back(j);
  }

  const Eigen::Index rows = static_cast<Eigen::Index>(samples.size());
  while (!active.empty()) {
    Eigen::MatrixXd system(rows, static_cast<Eigen::Index>(active.size()));
    Eigen::VectorXd target(rows);  // 1 - offset / time: relative residual of the offset alone
    for (Eigen::Index i = 0; i < rows; ++i) {
      const FitSample& sample = samples[static_cast<std::size_t>(i)];
      target(i) = 1.0 - fixed_offset_s / sample.time_s;
      for (std::size_t a = 0; a < active.size(); ++a) {
        system(i, static_cast<Eigen::Index>(a)) = sample.features[active[a]] / sample.time_s;
      }
    }
    const Eigen::VectorXd solution = system.colPivHouseholderQr().solve(target);
    // Drop the most negative coefficient (if any) and refit.
    Eigen::Index most_negative = -1;
    double lowest = 0;
    for (Eigen::Index a = 0; a < solution.size(); ++a) {
      if (solution(a) < lowest) {
        lowest = solution(a);
        most_negative = a;
      }
    }
    if (most_negative >= 0) {
      active.erase(active.begin() + most_negative);
      continue;
    }
    LinearTimeFit result;
    result.fixed_offset_s_ = fixed_offset_s;
    result.coefficients_.assign(feature_count, 0.0);
    for (std::size_t a = 0; a < active.size(); ++a) {
      result.coefficients_[active[a]] = solution(static_cast<Eigen::Index>(a));
    }
    double squared = 0;
    for (const auto& sample : samples) {
      const double relative = result.predict_s(sample.features) / sample.time_s - 1.0;
      squared += relative * relative;
    }
    result.rms_relative_error_ = std::sqrt(squared / static_cast<double>(samples.size()));
    result.sample_count_ = samples.size();
    if (!(result.predict_s(samples.front().features) > 0)) return std::nullopt;
    return result;
  }
  return std::nullopt;
}

double LinearTimeFit::predict_s(const std::vector<double>& features) const {
  double time_s = fixed_offset_s_;
  for (std::size_t j = 0; j < coefficients_.size() && j < features.size(); ++j) {
    time_s += coefficients_[j] * features[j];
  }
  return time_s;
}

}  // namespace clustersim::models
