#pragma once
/// Which estimator produced a time: the one list of estimators every costed op names, from the
/// compute model's ladder (models/accelerator/compute_model.hpp) to the collective model.
#include <string_view>

namespace clustersim::models {

/// Which estimator produced a number, most trusted first. The first three are the compute
/// model's ladder (ComputeModel: a measured table, a fit over measured points, the analytical
/// roofline); `collective_model` marks a communication time from the closed-form collective
/// model (models::CollectiveModel), which ComputeModel never returns. The order is the order of
/// trust among compute estimates; an op is not built from compute and collective estimates
/// together, so ranking collective_model last only makes least_trusted() total.
enum class Provenance { measured_table, fitted, roofline, collective_model };

/// Number of Provenance values (for per-provenance arrays indexed by the enum value).
inline constexpr int kProvenanceCount = 4;

/// "measured_table", "fitted", "roofline" or "collective_model".
std::string_view provenance_name(Provenance provenance);

/// The later of two provenances in the enum's order: an op built from several estimates (a
/// kernel sequence, ring-attention steps) is only as trusted as its least trusted part.
constexpr Provenance least_trusted(Provenance a, Provenance b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

}  // namespace clustersim::models
