#include "sim/validate/error_summary.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim::validate {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

ErrorSummary summarise_errors(const std::vector<std::pair<std::string, double>>& errors) {
  ErrorSummary s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> absolute;
  double sum = 0;
  for (const auto& [id, error] : errors) {
    const double e = std::abs(error);
    absolute.push_back(e);
    sum += e;
    if (e > s.max_pct || s.worst_id.empty()) {
      s.max_pct = e;
      s.worst_id = id;
    }
  }
  s.mape_pct = sum / static_cast<double>(errors.size());
  s.median_pct = median(std::move(absolute));
  return s;
}

nlohmann::json summary_json(const ErrorSummary& summary) {
  return {{"mape_pct", summary.mape_pct},
          {"median_pct", summary.median_pct},
          {"max_pct", summary.max_pct},
          {"worst_id", summary.worst_id},
          {"rows", summary.rows}};
}

}  // namespace clustersim::validate
