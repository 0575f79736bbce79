#pragma once
/// Estimator (2): a least-squares model fitted to measured points (Eigen).
///
/// Time is modelled as a fixed offset plus a non-negative combination of terms
///   time = offset + c_0 f_0 + c_1 f_1 + ...
/// ComputeModel builds the terms from its own roofline, so the fit corrects the physics rather
/// than replacing it (the roofline carries tile and wave quantization, stream-K, the memory
/// bound, the exposed epilogue and L2 residency, which a handful of points could not teach a
/// free-form model):
///   offset = the accelerator's kernel launch time,
///   f_j    = roofline time - launch (for GEMMs one such column per dtype, zero for the other
///            formats, so each format gets its own scale c_j),
///   f_last = 1, an extra fixed overhead (library dispatch, host-side cost) beyond the launch.
/// c_j = 1 reproduces the roofline; c_j > 1 means the format reaches a smaller fraction of
/// peak (or of bandwidth) than the preset says.
/// A fixed overhead can only be fitted from points of very different sizes: when a group's
/// roofline times span less than kMinOverheadSpan, ComputeModel zeroes f_last (an overhead
/// fitted from large transfers alone would be noise, and would be charged to every small
/// kernel).
/// The fit minimises the relative error sum ((predicted - measured) / measured)^2, which is
/// linear in c: row i of the system is f(i) / time_i = 1 - offset / time_i.
#include <optional>
#include <string>
#include <vector>

namespace clustersim::models {

/// One measured point as the fit sees it.
/// Smallest ratio max(f_0) / min(f_0) over a group's points for its overhead to be fitted.
inline constexpr double kMinOverheadSpan = 10.0;

struct FitSample {
  std::vector<double> features;  ///< f_j of the point, in the fit's feature order
  double time_s = 0;             ///< measured time, seconds
};

/// Fitted coefficients of time = sum c_j f_j.
class LinearTimeFit {
 public:
  /// Fits time = fixed_offset_s + sum c_j f_j to `samples` (all with the same feature count).
  /// Features that are zero for every sample are not used. With fewer samples than features
  /// only the first samples.size() usable features are used (priority order). A feature whose
  /// coefficient comes out negative is dropped and the rest refitted (coefficients are
  /// physical rates and overheads). Returns nullopt for no samples or when every feature is
  /// dropped. Throws ConfigError for a non-positive time or mismatched feature counts.
  static std::optional<LinearTimeFit> fit(const std::vector<FitSample>& samples,
                                          double fixed_offset_s = 0);

  /// Predicted time for `features`, seconds (fixed offset included).
  double predict_s(const std::vector<double>& features) const;

  /// c_j (0 for a dropped or unused feature), one per feature.
  const std::vector<double>& coefficients() const { return coefficients_; }
  /// The fixed offset added to every prediction, seconds.
  double fixed_offset_s() const { return fixed_offset_s_; }
  /// Root-mean-square relative error over the fitted samples.
  double rms_relative_error() const { return rms_relative_error_; }
  /// Number of samples the fit used.
  std::size_t sample_count() const { return sample_count_; }

 private:
  std::vector<double> coefficients_;
  double fixed_offset_s_ = 0;
  double rms_relative_error_ = 0;
  std::size_t sample_count_ = 0;
};

}  // namespace clustersim::models
