#include "models/accelerator/kernel_validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::models {

namespace {

using engine::splitmix64;

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ULL;
  }
  return hash;
}

/// Identity of a row for hashing: every key column and the time (duplicates of one shape from
/// different runs stay distinct).
std::string row_identity(const CalibrationRow& row) {
  char time[40];
  std::snprintf(time, sizeof time, "%.17g", row.time_s);
  return row.accelerator + "|" + describe_kernel(row.shape) + "|" + time + "|" + row.source;
}

std::string kind_of(OpClass op) {
  if (op == OpClass::gemm || op == OpClass::batched_gemm) return "gemm";
  if (op == OpClass::attention) return "attention";
  return "bandwidth";
}

ErrorSummary summarize(const std::vector<const KernelComparison*>& comparisons) {
  ErrorSummary summary;
  std::vector<double> best, fitted, roofline;
  for (const auto* comparison : comparisons) {
    best.push_back(comparison->best_error);
    roofline.push_back(comparison->roofline_error);
    if (comparison->fitted_error) fitted.push_back(*comparison->fitted_error);
  }
  summary.count = best.size();
  summary.best_median = median_of(best);
  summary.fitted_median = median_of(fitted);
  summary.fitted_count = fitted.size();
  summary.roofline_median = median_of(roofline);
  return summary;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * fraction);
  return text;
}

std::string time_text(double seconds) {
  char text[32];
  if (seconds >= 1e-3) {
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  }
  return text;
}

std::string pad(std::string text, std::size_t width) {
  // A cell wider than its column keeps one space before the next, so columns never run together.
  text.append(text.size() < width ? width - text.size() : 1, ' ');
  return text;
}

/// Kernel family of an attention row for the cross-accelerator pooling.
std::string attention_family(const KernelShape& shape, const AcceleratorSpec& spec) {
  std::string family(attention_kernel_family_name(shape.attention_kernel.value_or(spec.attention_kernel)));
  family.append("/");
  family.append(dtype_name(shape.dtype));
  family.append(shape.backward ? "/bwd" : "/fwd");
  family.append(shape.causal ? "/causal" : "/full");
  return family;
}

/// Adds a skipped-row reason once (the hold-out comparison and the cross-accelerator check
/// may both meet the same row).
void add_skipped(KernelValidationReport& report, const std::string& reason) {
  if (std::find(report.skipped.begin(), report.skipped.end(), reason) == report.skipped.end()) {
    report.skipped.push_back(reason);
  }
}

}  // namespace

void attention_across_accelerators(
    const std::vector<CalibrationRow>& rows,
    const std::function<AcceleratorSpec(const std::string&)>& spec_for,
    KernelValidationReport& report) {
  struct Point {
    AttentionTransfer transfer;
    std::string family;
    double launch_s;
  };
  std::vector<Point> points;
  std::map<std::string, ComputeModel> models_by_name;  // uncalibrated, one per accelerator
  for (const auto& row : rows) {
    if (row.shape.op != OpClass::attention) continue;
    auto model = models_by_name.find(row.accelerator);
    if (model == models_by_name.end()) {
      model = models_by_name.emplace(row.accelerator, ComputeModel(spec_for(row.accelerator))).first;
    }
    const AcceleratorSpec& spec = model->second.spec();
    Point point;
    try {
      point.transfer.model_s = model->second.roofline(row.shape).time_s;
      point.transfer.per_score =
          attention_score_cost(spec, row.shape.attention_kernel.value_or(spec.attention_kernel),
                               row.shape.head_dim, row.shape.dtype, row.shape.backward);
    } catch (const ConfigError& error) {
      add_skipped(report, row.file + ":" + std::to_string(row.line) + ": " + error.what());
      continue;
    }
    point.transfer.row = row;
    point.transfer.family = row.shape.attention_kernel.value_or(spec.attention_kernel);
    point.family = attention_family(row.shape, spec);
    point.launch_s = spec.kernel_launch_s;
    point.transfer.model_error = std::abs(point.transfer.model_s - row.time_s) / row.time_s;
    point.transfer.own_ratio = (row.time_s - point.launch_s) / (point.transfer.model_s - point.launch_s);
    points.push_back(std::move(point));
  }
  std::vector<double> errors, pooled_errors;
  for (auto& point : points) {
    double log_sum = 0;
    std::size_t count = 0;
    for (const auto& other : points) {
      if (other.transfer.row.accelerator == point.transfer.row.accelerator || other.family != point.family ||
          !(other.transfer.own_ratio > 0)) {
        continue;
      }
      log_sum += std::log(other.transfer.own_ratio);
      ++count;
    }
    AttentionTransfer& transfer = point.transfer;
    errors.push_back(transfer.model_error);
    if (count > 0) {
      transfer.pooled_ratio = std::exp(log_sum / static_cast<double>(count));
      transfer.pooled_rows = count;
      transfer.pooled_s = point.launch_s + transfer.pooled_ratio * (transfer.model_s - point.launch_s);
      transfer.pooled_error = std::abs(transfer.pooled_s - transfer.row.time_s) / transfer.row.time_s;
      pooled_errors.push_back(transfer.pooled_error);
    }
    report.attention_transfer.push_back(transfer);
  }
  report.attention_transfer_median = median_of(errors);
  report.attention_transfer_pooled_median = median_of(pooled_errors);
  report.attention_transfer_pooled_count = pooled_errors.size();
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string validation_group(const CalibrationRow& row) {
  // append() only: GCC 12 reports a false -Wrestrict on "x" + std::string temporaries.
  std::string group = row.accelerator;
  group.append("/");
  if (is_bandwidth_op(row.shape.op) || row.shape.op == OpClass::layer_fwd ||
      row.shape.op == OpClass::layer_bwd) {
    group.append(op_class_name(row.shape.op));
    return group;
  }
  group.append(kind_of(row.shape.op));
  group.append("/");
  group.append(dtype_name(row.shape.dtype));
  if (row.shape.op == OpClass::attention) group.append(row.shape.backward ? "/bwd" : "/fwd");
  return group;
}

HoldoutSplit split_holdout(const std::vector<CalibrationRow>& rows, double fraction,
                           std::uint64_t seed) {
  if (!(fraction >= 0 && fraction < 1)) {
    throw ConfigError("holdout fraction must be in [0, 1), got " + std::to_string(fraction));
  }
  // Group -> (hash, row index); std::map keeps the group order deterministic.
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::size_t>>> groups;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t hash = splitmix64(seed ^ fnv1a(row_identity(rows[i])));
    groups[validation_group(rows[i])].emplace_back(hash, i);
  }
  std::vector<bool> held(rows.size(), false);
  for (auto& [group, members] : groups) {
    std::sort(members.begin(), members.end());
    std::size_t count = static_cast<std::size_t>(
        std::floor(fraction * static_cast<double>(members.size()) + 0.5));
    count = std::min(count, members.size() - 1);
    for (std::size_t j = 0; j < count; ++j) held[members[j].second] = true;
  }
  HoldoutSplit split;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    (held[i] ? split.held_out : split.fit).push_back(rows[i]);
  }
  return split;
}

KernelValidationReport validate_kernels(
    const std::vector<CalibrationRow>& rows,
    const std::function<AcceleratorSpec(const std::string&)>& spec_for, double holdout_fraction,
    std::uint64_t seed, std::optional<AttentionKernelFamily> attention_kernel, const RooflineClock& roofline_clock) {
  KernelValidationReport report;
  report.holdout_fraction = holdout_fraction;
  report.seed = seed;
  std::vector<CalibrationRow> usable;
  std::map<std::string, ComputeModel> rooflines;  // uncalibrated, one per accelerator
  for (const auto& row : rows) {
    if (row.shape.op == OpClass::layer_fwd || row.shape.op == OpClass::layer_bwd) {
      report.skipped.push_back(row.file + ":" + std::to_string(row.line) + ": " +
                               std::string(op_class_name(row.shape.op)) +
                               " is not costed by the compute model");
      continue;
    }
    CalibrationRow usable_row = row;
    if (row.shape.op == OpClass::attention && attention_kernel) usable_row.shape.attention_kernel = attention_kernel;
    // A row the analytical model cannot cost (e.g. attention on a chip without a
    // special-function rate) can neither calibrate nor be predicted: skipped with the reason.
    auto plain = rooflines.find(row.accelerator);
    if (plain == rooflines.end()) plain = rooflines.emplace(row.accelerator, ComputeModel(spec_for(row.accelerator))).first;
    try {
      plain->second.roofline(usable_row.shape);
    } catch (const ConfigError& error) {
      add_skipped(report, row.file + ":" + std::to_string(row.line) + ": " + error.what());
      continue;
    }
    usable.push_back(std::move(usable_row));
  }
  const HoldoutSplit split = split_holdout(usable, holdout_fraction, seed);
  report.fit_rows = split.fit.size();
  const std::vector<CalibrationRow>& compared = holdout_fraction > 0 ? split.held_out : usable;

  CalibrationTable fit_table;
  fit_table.rows = split.fit;
  std::map<std::string, ComputeModel> models_by_name;
  for (const auto& row : compared) {
    auto model = models_by_name.find(row.accelerator);
    if (model == models_by_name.end()) {
      model = models_by_name.emplace(row.accelerator, ComputeModel(spec_for(row.accelerator), fit_table)).first;
    }
    KernelComparison comparison;
    comparison.row = row;
    try {
      comparison.best = model->second.estimate(row.shape);
      const OpEstimate full_clock = model->second.roofline(row.shape);
      comparison.roofline_s = roofline_clock ? roofline_clock(row.accelerator, row.shape, full_clock) : full_clock.time_s;
      if (auto fitted = model->second.fitted(row.shape)) comparison.fitted_s = fitted->time_s;
    } catch (const ConfigError& error) {  // e.g. attention on a chip without a special-function rate
      add_skipped(report, row.file + ":" + std::to_string(row.line) + ": " + error.what());
      continue;
    }
    const auto error = [&](double predicted) { return std::abs(predicted - row.time_s) / row.time_s; };
    comparison.best_error = error(comparison.best.time_s);
    comparison.roofline_error = error(comparison.roofline_s);
    if (comparison.fitted_s) comparison.fitted_error = error(*comparison.fitted_s);
    report.comparisons.push_back(std::move(comparison));
  }
  std::vector<const KernelComparison*> all;
  std::map<std::string, std::vector<const KernelComparison*>> by_kind;
  for (const auto& comparison : report.comparisons) {
    all.push_back(&comparison);
    by_kind[kind_of(comparison.row.shape.op)].push_back(&comparison);
  }
  report.overall = summarize(all);
  for (const auto& [kind, members] : by_kind) report.by_kind[kind] = summarize(members);
  attention_across_accelerators(usable, spec_for, report);
  return report;
}

std::string render_kernel_validation(const KernelValidationReport& report) {
  std::string out;
  char line[512];
  if (report.holdout_fraction > 0) {
    std::snprintf(line, sizeof line,
                  "held-out validation: %zu rows fitted, %zu held out (fraction %.2f, seed %llu)\n",
                  report.fit_rows, report.comparisons.size(), report.holdout_fraction,
                  static_cast<unsigned long long>(report.seed));
  } else {
    std::snprintf(line, sizeof line,
                  "in-sample validation: %zu rows (the table reproduces its own points; the "
                  "fitted column is the in-sample fit)\n",
                  report.comparisons.size());
  }
  out += line;
  out += pad("accelerator", 15) + pad("kernel", 48) + pad("measured", 12) + pad("best", 12) +
         pad("from", 16) + pad("err", 8) + pad("fitted", 12) + pad("err", 8) + pad("roofline", 12) +
         "err\n";
  for (const auto& c : report.comparisons) {
    out += pad(c.row.accelerator, 15) + pad(describe_kernel(c.row.shape), 48) +
           pad(time_text(c.row.time_s), 12) + pad(time_text(c.best.time_s), 12) +
           pad(std::string(provenance_name(c.best.provenance)), 16) + pad(percent(c.best_error), 8) +
           pad(c.fitted_s ? time_text(*c.fitted_s) : "-", 12) +
           pad(c.fitted_error ? percent(*c.fitted_error) : "-", 8) +
           pad(time_text(c.roofline_s), 12) + percent(c.roofline_error) + "\n";
  }
  const auto summary_line = [&](const std::string& name, const ErrorSummary& s) {
    std::snprintf(line, sizeof line,
                  "median error %-10s n=%-3zu best %-7s fitted %-7s (n=%zu)  roofline %s\n",
                  name.c_str(), s.count, percent(s.best_median).c_str(),
                  s.fitted_count > 0 ? percent(s.fitted_median).c_str() : "-", s.fitted_count,
                  percent(s.roofline_median).c_str());
    out += line;
  };
  summary_line("all", report.overall);
  for (const auto& [kind, summary] : report.by_kind) summary_line(kind, summary);
  if (!report.attention_transfer.empty()) {
    out += "attention across accelerators: fused-attention model from each accelerator's own rates (no "
           "constant fitted to attention rows); per score element: matmul, exp and fp32 parts in ps; "
           "'pooled' scales the model by the other accelerators' measured/model ratios (same family, "
           "dtype, direction, masking):\n";
    out += pad("accelerator", 15) + pad("kernel", 48) + pad("family", 7) + pad("measured", 12) +
           pad("matmul/exp/fp32 ps", 20) + pad("model", 12) + pad("err", 8) + pad("ratio", 7) +
           pad("pooled", 14) + pad("predicted", 12) + "err\n";
    for (const auto& t : report.attention_transfer) {
      char parts[48], ratio[32], pooled[32];
      std::snprintf(parts, sizeof parts, "%.3f/%.3f/%.3f", t.per_score.matmul_s * 1e12,
                    t.per_score.exp_s * 1e12, t.per_score.fp32_s * 1e12);
      std::snprintf(ratio, sizeof ratio, "%.3f", t.own_ratio);
      if (t.pooled_rows > 0) {
        std::snprintf(pooled, sizeof pooled, "%.3f (n=%zu)", t.pooled_ratio, t.pooled_rows);
      } else {
        std::snprintf(pooled, sizeof pooled, "-");
      }
      out += pad(t.row.accelerator, 15) + pad(describe_kernel(t.row.shape), 48) +
             pad(std::string(attention_kernel_family_name(t.family)), 7) + pad(time_text(t.row.time_s), 12) +
             pad(parts, 20) + pad(time_text(t.model_s), 12) + pad(percent(t.model_error), 8) + pad(ratio, 7) +
             pad(pooled, 14) + pad(t.pooled_rows > 0 ? time_text(t.pooled_s) : "-", 12) +
             (t.pooled_rows > 0 ? percent(t.pooled_error) : "-") + "\n";
    }
    std::snprintf(line, sizeof line,
                  "median error attention across accelerators n=%-3zu model %-7s pooled %s (n=%zu)\n",
                  report.attention_transfer.size(), percent(report.attention_transfer_median).c_str(),
                  report.attention_transfer_pooled_count > 0
                      ? percent(report.attention_transfer_pooled_median).c_str()
                      : "-",
                  report.attention_transfer_pooled_count);
    out += line;
  }
  for (const auto& skipped : report.skipped) out += "skipped " + skipped + "\n";
  return out;
}

}  // namespace clustersim::models
