#pragma once
/// The metrics glossary: every summary metric `clustersim` writes (the result document of
/// `run --format json` and `--out`, whose dotted paths are also the `--format csv` columns, and
/// the columns of `sweep`) declared once with its unit and one-line meaning. `clustersim docs
/// metrics` prints it as docs/metrics.md; tests/sim/report/metric_glossary_test.cpp runs a
/// training, a serving and a two-job run and a sweep row of each, and fails on a metric that is
/// emitted but not declared, declared but never emitted, or (job metrics) emitted with another
/// unit, so the glossary cannot drift from the reports.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace clustersim::report {

/// One metric: where it appears, its unit and what it means.
struct MetricDeclaration {
  /// Result document: the dotted JSON path (`training.step_time_s`; `[]` stands for every element
  /// of an array, `memory.stages[].total_bytes`). Sweep: the column name (`job.<name>.` for a job's).
  std::string_view path;
  /// Unit of the value: `s`, `B`, `B/s`, `W`, `J`, `USD`, `FLOP`, `TFLOP/s`, `tokens/s`, ...;
  /// `fraction` (0 to 1), `count`, `index`, `bool`, `text`.
  std::string_view unit;
  std::string_view meaning;  ///< one line
  /// Non-empty for an object of statistics: its keys, each in `unit` unless said otherwise
  /// (`mean p50 p90 p99 max count; count: requests`). The keys before `;` are the covered fields.
  std::string_view fields = {};
};

/// A group of metrics, one table of the glossary.
struct MetricSection {
  std::string_view title;
  std::string_view where;  ///< which runs write it and where
  std::vector<MetricDeclaration> metrics;
};

/// Every result-document section, then the sweep columns (the last section), in glossary order.
const std::vector<MetricSection>& metric_sections();

/// The declarations of the result document (every section but the sweep columns').
std::vector<const MetricDeclaration*> result_metric_declarations();
/// The declarations of `clustersim sweep`'s metric columns.
std::vector<const MetricDeclaration*> sweep_metric_declarations();

/// `path` with each per-tier segment (`tier_2`) written as its declaration has it (`tier_<N>`).
std::string generic_metric_path(std::string_view path);

/// The declaration covering `path` among `declarations`: the same path, or a statistic field of
/// one (`serving.ttft_s.p99` under `serving.ttft_s`); nullptr if none does.
const MetricDeclaration* find_metric(const std::vector<const MetricDeclaration*>& declarations,
                                     std::string_view path);

/// The metric paths a result document holds, in document order, `[]` for array elements: every
/// leaf outside `scenario` (the inputs). A job's metric (`{value, unit}`) is one leaf,
/// `jobs[].metrics.NAME`, paired with its unit; other leaves have an empty unit.
std::vector<std::pair<std::string, std::string>> result_metric_paths(const nlohmann::json& document);

/// docs/metrics.md.
std::string metrics_glossary_markdown();

}  // namespace clustersim::report
