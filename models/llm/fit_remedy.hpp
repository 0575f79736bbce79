#pragma once
/// What would make a training job that does not fit in device memory fit, on the same
/// accelerators: each candidate is costed by the memory model itself (training_footprint), so
/// the advice "does not fit ... it fits with zero: 3 (70.1 GiB)" is a computed fact.
#include <optional>
#include <string>
#include <vector>

#include "models/llm/memory_footprint.hpp"

namespace clustersim::models {

/// One change to a job's split, ZeRO stage or recompute policy, and the peak it gives.
struct FitRemedy {
  std::string change;  ///< as the scenario writes it: "recompute: full", "zero: 3", "tp 4, pp 2, dp 1"
  double peak_bytes = 0;
};

/// Changes that make `inputs` fit `capacity_bytes` on the same tp x pp x dp x cp accelerators,
/// at most `max_count`, the smallest change first: full recompute alone, then a higher ZeRO
/// stage alone, then other splits (least model parallelism first; a split keeps the ZeRO stage
/// and recompute policy, or takes ZeRO 3 and full recompute when that is what it needs). A
/// split obeys the rules of models/llm/parallel_rules.hpp, an even layer split and whole
/// micro-batches per replica. Empty when nothing fits.
std::vector<FitRemedy> fit_remedies(const FootprintInputs& inputs, double capacity_bytes, std::size_t max_count = 3);

/// The "does not fit" message of `inputs` on `capacity_bytes` (check_fits's, then the
/// remedies or "no split ... fits"), or nullopt when it fits.
std::optional<std::string> does_not_fit_message(const FootprintInputs& inputs, double capacity_bytes);

}  // namespace clustersim::models
