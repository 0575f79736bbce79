#pragma once
/// Output of `clustersim collective`: the nccl-tests-style sweep table / JSON (the comparison
/// with measured curves is sim/validate/nccl_validation's).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/comm/collective_sweep.hpp"

namespace clustersim::report {

/// What was swept, for the table header and the JSON document.
struct SweepHeader {
  std::string scenario;  ///< scenario name
  std::string op;        ///< collective name
  std::string algorithm; ///< "auto" or the fixed algorithm
  std::string fidelity;  ///< analytical | flow
  int ranks = 0;
};

/// Columns: size (B), time (us), algbw (GB/s), busbw (GB/s), algorithm/protocol.
std::string collective_sweep_table(const SweepHeader& header, const std::vector<models::SweepPoint>& points);

/// {"scenario","op","algorithm","fidelity","ranks","points":[{bytes,time_us,algbw_gb_per_s,
/// busbw_gb_per_s,algorithm,protocol}]}.
nlohmann::json collective_sweep_json(const SweepHeader& header, const std::vector<models::SweepPoint>& points);

}  // namespace clustersim::report
