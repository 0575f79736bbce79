#pragma once
/// `clustersim compare A B`: what differs between two runs' inputs (their resolved scenarios,
/// key by key) and their metrics side by side with the relative change.
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::report {

/// One side of a comparison: a label (the file or folder) and what the run used and produced.
struct ComparedRun {
  std::string label;
  std::map<std::string, std::string> resolved;                   ///< Scenario::resolved
  std::vector<std::pair<std::string, std::string>> metrics;       ///< summary_metrics
};

/// "+50.0%" for 2 -> 3, "-25.0%" for 4 -> 3, "0%" for equal values, "new" for 0 -> non-zero.
std::string relative_change(double a, double b);

/// The comparison as text: the input keys that differ (or are only on one side), then every
/// metric of either run with A's value, B's value and the change (numbers) or "differs"
/// (text).
std::string compare_table(const ComparedRun& a, const ComparedRun& b);

}  // namespace clustersim::report
