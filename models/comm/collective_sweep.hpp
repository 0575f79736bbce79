#pragma once
/// An nccl-tests-style sweep: one collective over a range of sizes on one group, with the
/// algorithm chosen per size (or fixed), timed by the analytical or the flow evaluator.
#include <optional>
#include <string_view>
#include <vector>

#include "models/comm/comm_fidelity.hpp"
#include "models/comm/collective_tuner.hpp"

namespace clustersim::models {


/// What to sweep.
struct SweepRequest {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::optional<Algorithm> algorithm;  ///< empty: auto
  std::vector<int> group;              ///< global accelerator indices, in ring order
  double min_bytes = 8;
  double max_bytes = 8.0 * (1ull << 30);
  double factor = 2;
  CommFidelity fidelity = CommFidelity::analytical;
};

/// One row of the sweep.
struct SweepPoint {
  double bytes = 0;
  double time_s = 0;
  double algbw_bytes_per_s = 0;  ///< bytes / time
  double busbw_bytes_per_s = 0;  ///< algbw x bus_bandwidth_factor
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
};

/// Sizes min, min*factor, ... up to max inclusive (nccl-tests -b/-e/-f). Throws ConfigError
/// unless 0 < min <= max (finite) and factor > 1.
std::vector<double> sweep_sizes(double min_bytes, double max_bytes, double factor);

/// Runs the sweep. Throws ConfigError for a bad request (sizes, group, algorithm).
std::vector<SweepPoint> run_collective_sweep(const CollectiveTuner& tuner, const SweepRequest& request);

}  // namespace clustersim::models
