#pragma once
/// How far predictions are from measurements over a set of rows: one implementation for every
/// `validate` dataset (training, serving, collectives).
#include <string>
#include <utility>
#include <vector>

namespace clustersim::validate {

/// Median of `values` (the mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);

/// MAPE, median and worst absolute error over rows.
struct ErrorSummary {
  int rows = 0;
  double mape_pct = 0;
  double median_pct = 0;  ///< median of absolute errors
  double max_pct = 0;     ///< worst absolute error
  std::string worst_id;   ///< the first row with the worst error
};

/// The summary of (row id, signed error %) pairs.
ErrorSummary summarise_errors(const std::vector<std::pair<std::string, double>>& errors);

}  // namespace clustersim::validate
