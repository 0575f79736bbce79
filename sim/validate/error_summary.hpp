#pragma once
/// How far predictions are from measurements over a set of rows: one implementation for every
/// `validate` dataset (training, serving, collectives).
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

/// A summary as every `validate` report writes it: mape_pct, median_pct, max_pct, worst_id, rows.
nlohmann::json summary_json(const ErrorSummary& summary);

/// Appends what a `validate` table prints under its rows: each noted row's note ("notes (*):",
/// ids padded to `width`), then the skipped rows and why.
template <class Row, class Skipped>
void append_notes_and_skipped(std::string& out, const std::vector<Row>& rows, const std::vector<Skipped>& skipped,
                              int width) {
  bool any_note = false;
  for (const Row& r : rows) {
    if (r.note.empty()) continue;
    if (!any_note) out += "notes (*):\n";
    any_note = true;
    out += fmt::format("  {:<{}} {}\n", r.id, width, r.note);
  }
  if (skipped.empty()) return;
  out += fmt::format("skipped {} rows:\n", skipped.size());
  for (const Skipped& s : skipped) out += fmt::format("  {:<{}} {}\n", s.id, width, s.reason);
}

/// Skipped rows (anything with an id and a reason) as [{id, reason}, ...].
template <class Skipped>
nlohmann::json skipped_json(const std::vector<Skipped>& skipped) {
  nlohmann::json out = nlohmann::json::array();
  for (const Skipped& s : skipped) out.push_back({{"id", s.id}, {"reason", s.reason}});
  return out;
}

}  // namespace clustersim::validate
