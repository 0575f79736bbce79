#include "sim/report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "models/accelerator/provenance.hpp"
#include "sim/config/units.hpp"
#include "sim/engine/time.hpp"
#include "sim/report/result_reports.hpp"
#include "sim/report/scenario_json.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/report/training_report.hpp"
#include "sim/serving/serving_workload.hpp"
#include "sim/training/op_kind.hpp"

namespace clustersim::report {
namespace {

using svg::escape;

constexpr std::size_t kCdfPoints = 400;     ///< points of a latency CDF (quantiles)
constexpr std::size_t kUtilisationBins = 200;  ///< bins of the link-utilisation-over-time chart

constexpr std::string_view kStyle = R"(
body{font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;margin:0;background:#f4f5f7;color:#222}
header{background:#1f2d3d;color:#fff;padding:18px 32px}
header h1{margin:0 0 6px;font-size:22px}
header p{margin:2px 0;font-size:13px;color:#cfd8e3}
main{padding:8px 32px 32px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e6;border-radius:4px;margin:16px 0;padding:12px 20px}
h2{font-size:17px;margin:4px 0 10px;color:#1f2d3d}
p.note{font-size:13px;color:#555;margin:4px 0 10px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 10px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;background:#eef1f4}
table.sortable th[data-order=asc]::after{content:" \25B2"}
table.sortable th[data-order=desc]::after{content:" \25BC"}
tr.failed td{color:#a33}
tr.front td{font-weight:bold}
svg.chart{display:inline-block;vertical-align:top;margin:8px 16px 8px 0}
div.wide{overflow-x:auto}
td.reason{min-width:320px;max-width:560px}
ul.notes{font-size:13px;color:#444}
)";

/// Sorts a table.sortable by the clicked column (numbers by data-value, else text), then marks
/// the page ready. A script error leaves the mark unset.
constexpr std::string_view kScript = R"(
(function () {
  function key(cell) {
    var value = cell.getAttribute('data-value');
    return value === null ? cell.textContent : parseFloat(value);
  }
  function sortBy(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = header.getAttribute('data-order') !== 'asc';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) { cell.removeAttribute('data-order'); });
    header.setAttribute('data-order', ascending ? 'asc' : 'desc');
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      var order = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.addEventListener('click', function () { sortBy(table, column, header); });
    });
  });
  document.body.setAttribute('data-report-ready', '1');
})();
)";

/// "1.234e+05"-free text for a value: 4 significant digits.
std::string value_text(double value) { return fmt::format("{:.4g}", value); }

/// A table cell: its text, and its number for sorting (none: sorted as text).
struct Cell {
  std::string text;
  std::optional<double> number;
  std::string style;  ///< a class for the <td>, e.g. "reason"
  Cell(std::string text_) : text(std::move(text_)) {}  // NOLINT: cells are written as lists
  Cell(const char* text_) : text(text_) {}              // NOLINT
  Cell(double value) : text(value_text(value)), number(value) {}  // NOLINT
};

/// A table; `sortable` adds the click-to-sort header; `row_classes` (empty or one per row)
/// style rows.
std::string table(const std::string& id, const std::vector<std::string>& headers,
                  const std::vector<std::vector<Cell>>& rows, bool sortable,
                  const std::vector<std::string>& row_classes = {}) {
  std::string out = fmt::format(R"(<table id="{}"{}><thead><tr>)", escape(id), sortable ? R"( class="sortable")" : "");
  for (const std::string& header : headers) out += "<th>" + escape(header) + "</th>";
  out += "</tr></thead><tbody>";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::string& style = r < row_classes.size() ? row_classes[r] : std::string();
    out += style.empty() ? "<tr>" : fmt::format(R"(<tr class="{}">)", escape(style));
    for (const Cell& cell : rows[r]) {
      out += cell.number ? fmt::format(R"(<td class="num" data-value="{}">{}</td>)", fmt::format("{:.17g}", *cell.number),
                                       escape(cell.text))
             : cell.style.empty() ? "<td>" + escape(cell.text) + "</td>"
                                  : fmt::format(R"(<td class="{}">{}</td>)", escape(cell.style), escape(cell.text));
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

/// The key-metrics table: (metric, value, unit) rows.
std::string metrics_table(const std::vector<std::vector<Cell>>& rows) {
  return table("table-metrics", {"metric", "value", "unit"}, rows, false);
}

/// The page: a header naming what produced it, sections, and the script.
class Page {
 public:
  Page(const std::string& title, const std::vector<std::string>& meta_lines) {
    html_ = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style>"
                        "</head><body><header><h1>{}</h1>",
                        escape(title), kStyle, escape(title));
    for (const std::string& line : meta_lines) html_ += "<p>" + escape(line) + "</p>";
    html_ += "</header><main>";
  }
  /// A section with a heading, an optional explanation and its content (HTML).
  void section(const std::string& heading, const std::string& note, const std::string& content) {
    html_ += "<section><h2>" + escape(heading) + "</h2>";
    if (!note.empty()) html_ += "<p class=\"note\">" + escape(note) + "</p>";
    html_ += content + "</section>";
  }
  void notes(const std::vector<std::string>& notes) {
    if (notes.empty()) return;
    std::string list = "<ul class=\"notes\">";
    for (const std::string& note : notes) list += "<li>" + escape(note) + "</li>";
    section("Notes", "", list + "</ul>");
  }
  std::string finish() { return html_ + "</main><script>" + std::string(kScript) + "</script></body></html>\n"; }

 private:
  std::string html_;
};

std::vector<std::string> run_meta(const scenario::Scenario& scenario, const runner::RunResult& run) {
  return {fmt::format("scenario file {} · {} workload", scenario.source_file.empty() ? "(none)" : scenario.source_file,
                      run.primary->kind),
          fmt::format("resolved hash {} · fingerprint {} · {} events", resolved_hash(scenario),
                      fingerprint_hex(run.fingerprint), run.events)};
}

double ms_of(engine::TimePs ps) { return engine::ps_to_seconds(ps) * 1e3; }

/// A line of `count` points, point(i) giving point i's (x, y).
template <typename Point>
svg::LineSeries series_of(std::string name, bool step, std::size_t count, Point point) {
  svg::LineSeries series{std::move(name), {}, {}, step};
  for (std::size_t i = 0; i < count; ++i) {
    const auto [x, y] = point(i);
    series.x.push_back(x);
    series.y.push_back(y);
  }
  return series;
}

// ---- training ----

std::vector<std::vector<Cell>> training_metrics(const training::TrainingResult& r) {
  std::vector<std::vector<Cell>> rows = {
      {"step time", r.step_time_s * 1e3, "ms"},
      {"throughput", r.tokens_per_s, "tokens/s"},
      {"model FLOP/s per GPU", r.model_tflops_per_gpu, "TFLOP/s"},
      {"MFU", 100 * r.mfu, "%"},
      {"HFU", 100 * r.hfu, "%"},
      {"GPUs", static_cast<double>(r.gpus), ""},
      {"micro-batches per pipeline", static_cast<double>(r.microbatches), ""},
      {"critical pipeline stage", static_cast<double>(r.critical_stage), ""},
      {"network fidelity", r.fidelity, ""},
      {"simulation mode", r.mode, ""}};
  if (r.memory.computed) {
    rows.push_back({"memory per GPU (peak stage)", r.memory.total_bytes / config::kGiB, "GiB"});
    rows.push_back({"HBM capacity", r.memory.capacity_bytes / config::kGiB, "GiB"});
  }
  if (r.power.computed) {
    rows.push_back({"device power (average)", r.power.device_average_w, "W"});
    rows.push_back({"energy per step (cluster)", r.power.energy_per_step_j, "J"});
    if (r.power.cost_computed) rows.push_back({"cost per million tokens", r.power.usd_per_million_tokens, "USD"});
  }
  return rows;
}

std::string timeline_chart(const RunTimeline* timeline) {
  svg::GanttChart chart;
  chart.id = "chart-timeline";
  chart.title = "One step per pipeline stage and stream";
  chart.x = {"time", "ms"};
  chart.width = 1100;
  if (timeline != nullptr) {
    // Rows by accelerator (a stage's streams together), then in the order they first ran.
    const std::vector<TimelineRow>& rows = timeline->rows();
    std::vector<std::size_t> order(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(),
                     [&rows](std::size_t a, std::size_t b) { return rows[a].accelerator < rows[b].accelerator; });
    std::vector<std::size_t> position(rows.size());
    for (std::size_t p = 0; p < order.size(); ++p) {
      const TimelineRow& row = rows[order[p]];
      position[order[p]] = p;
      chart.rows.push_back(row.accelerator >= 0 ? fmt::format("GPU {} {}", row.accelerator, row.stream) : row.stream);
    }
    chart.kinds = timeline->kinds();
    for (const TimelineSlice& slice : timeline->slices()) {
      chart.bars.push_back({position[slice.row], ms_of(slice.start_ps), ms_of(slice.end_ps), slice.kind});
    }
  }
  return svg::gantt_chart(chart);
}

std::string breakdown_chart(const training::TrainingResult& r) {
  const training::StepBreakdown& b = r.breakdown;
  const std::vector<std::pair<std::string, double>> parts = {
      {"compute", b.compute_s},          {"exposed TP comm", b.exposed_tp_s}, {"exposed CP comm", b.exposed_cp_s},
      {"exposed EP comm", b.exposed_ep_s}, {"exposed PP comm", b.exposed_pp_s}, {"exposed DP comm", b.exposed_dp_s},
      {"pipeline bubble", b.bubble_s},   {"optimizer", b.optimizer_s},        {"offload", b.offload_s},
      {"exposed host dispatch", b.exposed_host_s}};
  svg::BarChart chart;
  chart.id = "chart-breakdown";
  chart.title = "Where the step time goes";
  chart.x = {"critical pipeline stage", ""};
  chart.y = {"time", "ms"};
  chart.width = 560;
  chart.categories = {fmt::format("stage {}", r.critical_stage)};
  for (const auto& [name, seconds] : parts) {
    if (seconds > 0) chart.segments.push_back({name, {seconds * 1e3}});
  }
  chart.limits = {r.step_time_s * 1e3};
  chart.limit_name = "step time";
  return svg::bar_chart(chart);
}

std::string memory_chart(const training::MemoryReport& memory) {
  svg::BarChart chart;
  chart.id = "chart-memory";
  chart.title = "Device memory per pipeline stage";
  chart.x = {"pipeline stage", ""};
  chart.y = {"memory per device", "GiB"};
  svg::BarSegment weights{"weights", {}}, gradients{"gradients", {}}, optimizer{"optimizer state", {}},
      activations{"activations", {}}, other{"buffers and other", {}};
  for (const training::StageMemory& stage : memory.stages) {
    chart.categories.push_back(fmt::format("stage {}", stage.stage));
    weights.values.push_back(stage.weights_bytes / config::kGiB);
    gradients.values.push_back(stage.gradients_bytes / config::kGiB);
    optimizer.values.push_back(stage.optimizer_bytes / config::kGiB);
    activations.values.push_back(stage.activations_bytes / config::kGiB);
    other.values.push_back(std::max(0.0, stage.total_bytes - stage.weights_bytes - stage.gradients_bytes -
                                             stage.optimizer_bytes - stage.activations_bytes) /
                           config::kGiB);
    chart.limits.push_back(memory.capacity_bytes / config::kGiB);
  }
  chart.segments = {weights, gradients, optimizer, activations, other};
  chart.limit_name = "HBM capacity";
  return svg::bar_chart(chart);
}

std::string hbm_chart(const std::vector<StageHbmSeries>& stages) {
  svg::LineChart chart;
  chart.id = "chart-hbm";
  chart.title = "HBM occupancy over the step";
  chart.x = {"time", "ms"};
  chart.y = {"HBM per device", "GiB"};
  for (const StageHbmSeries& stage : stages) {
    chart.series.push_back(series_of(fmt::format("stage {} (GPU {})", stage.stage, stage.accelerator), true,
                                     stage.times_ps.size(), [&stage](std::size_t i) {
                                       return std::pair{ms_of(stage.times_ps[i]), stage.bytes[i] / config::kGiB};
                                     }));
  }
  return svg::line_chart(chart);
}

std::string network_charts(const training::TrainingResult& r) {
  svg::BarChart bars;
  bars.id = "chart-network";
  bars.title = "Link utilisation per network tier over the step";
  bars.x = {"network tier", ""};
  bars.y = {"utilisation", "%"};
  svg::BarSegment mean{"mean over the step", {}}, peak{"peak instant (above the mean)", {}};
  std::vector<std::vector<Cell>> rows;
  for (const training::TierUtilisation& t : r.network_tiers) {
    bars.categories.push_back(std::string(network_tier_name(t.tier)));
    mean.values.push_back(100 * t.mean_utilisation);
    peak.values.push_back(100 * std::max(0.0, t.peak_utilisation - t.mean_utilisation));
    rows.push_back({static_cast<double>(t.tier), std::string(network_tier_name(t.tier)), static_cast<double>(t.links),
                    100 * t.mean_utilisation, 100 * t.max_utilisation, 100 * t.peak_utilisation,
                    100 * t.peak_link_utilisation, t.bytes / 1e9});
  }
  bars.segments = {mean, peak};
  svg::LineChart lines;
  lines.id = "chart-network-time";
  lines.title = "Link utilisation per tier over time";
  lines.x = {"time", "ms"};
  lines.y = {"tier utilisation", "%"};
  const topologies::TierUtilisationSeries& series = r.network_series;
  const engine::TimePs end_ps = engine::seconds_to_ps(r.step_time_s);
  for (std::size_t t = 0; t < series.tiers.size() && end_ps > 0; ++t) {
    svg::LineSeries line{std::string(network_tier_name(series.tiers[t])), {}, {}, true};
    const std::vector<double> bins = series.binned(t, 0, end_ps, kUtilisationBins);
    for (std::size_t b = 0; b < bins.size(); ++b) {
      line.x.push_back(r.step_time_s * 1e3 * static_cast<double>(b) / static_cast<double>(bins.size()));
      line.y.push_back(100 * bins[b]);
    }
    lines.series.push_back(std::move(line));
  }
  return svg::bar_chart(bars) + svg::line_chart(lines) +
         table("table-network", {"tier", "name", "links", "mean %", "busiest link mean %", "peak tier %", "peak link %", "GB"},
               rows, true);
}

std::string power_chart(const scenario::Scenario& scenario, const training::PowerReport& power) {
  svg::BarChart chart;
  chart.id = "chart-power";
  chart.title = "Power per device";
  chart.x = {"", ""};
  chart.y = {"power", "W"};
  chart.width = 560;
  if (power.computed) {
    chart.categories = {"average over the step", "peak (kernels running)"};
    chart.segments = {{"device power", {power.device_average_w, power.device_peak_w}}};
    const double tdp = scenario.platform.cluster.accelerator.tdp_w;
    if (tdp > 0) {
      chart.limits = {tdp, tdp};
      chart.limit_name = "TDP";
    }
  }
  return svg::bar_chart(chart);
}

/// Op classes (an op name and kind) over every stage: the estimator(s) behind them and their
/// time per micro-batch summed over the stages' layers.
std::string estimator_table(const std::vector<training::StageProgram>* programs) {
  struct OpClass {
    std::set<std::string> estimators;
    std::set<int> stages;
    double seconds = 0;
  };
  std::map<std::pair<std::string, std::string>, OpClass> classes;
  auto add = [&classes](const std::vector<training::StageOp>& ops, int stage, int times) {
    for (const training::StageOp& op : ops) {
      OpClass& entry = classes[{op.name, std::string(training::op_kind_name(op.kind))}];
      entry.estimators.insert(std::string(models::provenance_name(op.provenance)));
      entry.stages.insert(stage);
      entry.seconds += engine::ps_to_seconds(op.duration_ps) * times;
    }
  };
  if (programs != nullptr) {
    for (const training::StageProgram& program : *programs) {
      add(program.embedding_forward, program.stage, 1);
      add(program.embedding_backward, program.stage, 1);
      for (int l = 0; l < program.local_layers(); ++l) {
        add(program.layer(l).forward, program.stage, 1);
        add(program.layer(l).backward, program.stage, 1);
      }
      add(program.head_forward, program.stage, 1);
      add(program.head_backward, program.stage, 1);
    }
  }
  std::vector<std::vector<Cell>> rows;
  for (const auto& [key, entry] : classes) {
    rows.push_back({key.first, key.second, fmt::format("{}", fmt::join(entry.estimators, ", ")),
                    static_cast<double>(entry.stages.size()), entry.seconds * 1e3});
  }
  return table("table-estimators", {"op", "kind", "estimator", "stages", "ms per micro-batch (all stages)"}, rows, true);
}

std::string training_page(const scenario::Scenario& scenario, const runner::RunResult& run,
                          const training::TrainingResult& r, const RunReportInputs& inputs) {
  Page page(fmt::format("ClusterSim training report: {}", scenario.name), run_meta(scenario, run));
  page.section("Key metrics", "", metrics_table(training_metrics(r)));
  page.section("Timeline", "Task slices of one step on the representative rank of every pipeline stage, per stream.",
               timeline_chart(inputs.timeline));
  page.section("Step time breakdown", "The critical stage's step split into its parts; they add up to the step time.",
               breakdown_chart(r));
  const std::vector<StageHbmSeries> hbm =
      inputs.timeline != nullptr ? hbm_occupancy(*inputs.timeline, r.memory) : std::vector<StageHbmSeries>{};
  page.section("Memory",
               "The memory model's footprint per stage against HBM capacity; over time, the activations term "
               "follows the micro-batches the schedule holds.",
               memory_chart(r.memory) + hbm_chart(hbm));
  page.section("Network",
               r.network_tiers.empty()
                   ? "Link utilisation is measured with simulation.fidelity: flow; this run used the analytical fidelity."
                   : "Utilisation against each tier's line rate: mean over the step and its links, the busiest instant "
                     "of the whole tier, and the busiest instant of one link.",
               network_charts(r));
  page.section("Power", r.power.computed ? "" : "No power report: the accelerator has no TDP.", power_chart(scenario, r.power));
  page.section("Estimators", "Which estimator produced each op class's time (measured table, fitted, roofline, collective model).",
               estimator_table(inputs.programs));
  page.notes(r.notes);
  return page.finish();
}

// ---- serving ----

/// The CDF of `values` as at most kCdfPoints (value, fraction) points.
svg::LineSeries cdf(const std::string& name, std::vector<double> values, double scale) {
  std::sort(values.begin(), values.end());
  svg::LineSeries series{name, {}, {}, true};
  const std::size_t n = values.size();
  const std::size_t step = std::max<std::size_t>(1, n / kCdfPoints);
  for (std::size_t i = 0; i < n; i += step) {
    series.x.push_back(values[i] * scale);
    series.y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
  }
  if (n > 0 && series.y.back() < 1) {
    series.x.push_back(values.back() * scale);
    series.y.push_back(1);
  }
  return series;
}

std::string cdf_chart(const std::string& id, const std::string& title, const std::string& axis, svg::LineSeries series) {
  svg::LineChart chart;
  chart.id = id;
  chart.title = title;
  chart.x = {axis, "ms"};
  chart.y = {"fraction of requests", ""};
  chart.width = 560;
  chart.y_max = 1;
  chart.series.push_back(std::move(series));
  return svg::line_chart(chart);
}

std::string latency_charts(const serving::ServingResult& r) {
  std::vector<double> ttft, tpot, e2e;
  for (const serving::RequestRecord& record : r.records) {
    if (record.rejected || record.finish_s < 0) continue;
    const serving::Request& q = record.request;
    ttft.push_back(record.first_token_s - q.arrival_s);
    if (q.output_tokens > 1) tpot.push_back((record.finish_s - record.first_token_s) / static_cast<double>(q.output_tokens - 1));
    e2e.push_back(record.finish_s - q.arrival_s);
  }
  return cdf_chart("chart-ttft-cdf", "Time to first token", "TTFT", cdf("TTFT", ttft, 1e3)) +
         cdf_chart("chart-tpot-cdf", "Time per output token", "TPOT", cdf("TPOT", tpot, 1e3)) +
         cdf_chart("chart-e2e-cdf", "End-to-end latency", "end-to-end latency", cdf("end-to-end", e2e, 1e3));
}

std::string series_chart(const std::string& id, const std::string& title, const svg::Axis& y,
                         const std::vector<serving::ServingSample>& samples, double (*value)(const serving::ServingSample&),
                         double y_max = 0) {
  svg::LineChart chart;
  chart.id = id;
  chart.title = title;
  chart.x = {"time", "s"};
  chart.y = y;
  chart.width = 560;
  chart.y_max = y_max;
  chart.series.push_back(series_of(y.label, false, samples.size(), [&samples, value](std::size_t i) {
    return std::pair{samples[i].time_s, value(samples[i])};
  }));
  return svg::line_chart(chart);
}

std::string pool_charts(const serving::ServingResult& r) {
  svg::BarChart chart;
  chart.id = "chart-pools";
  chart.title = "Utilisation per pool, by what bounds its busy time";
  chart.x = {"pool", ""};
  chart.y = {"busy time / (replicas x duration)", "%"};
  svg::BarSegment compute{"compute-bound", {}}, memory{"memory-bound", {}}, comm{"communication", {}}, host{"host", {}};
  std::vector<std::vector<Cell>> rows;
  for (const serving::PoolResult& pool : r.pools) {
    chart.categories.push_back(pool.name);
    compute.values.push_back(100 * pool.utilisation * pool.compute_share);
    memory.values.push_back(100 * pool.utilisation * pool.memory_share);
    comm.values.push_back(100 * pool.utilisation * pool.communication_share);
    host.values.push_back(100 * pool.utilisation * pool.host_share);
    rows.push_back({pool.name, pool.role, pool.accelerator, static_cast<double>(pool.replicas),
                    fmt::format("tp {} pp {} ep {}", pool.tp, pool.pp, pool.ep), 100 * pool.utilisation,
                    100 * pool.kv_utilisation_mean, 100 * pool.kv_utilisation_peak, static_cast<double>(pool.iterations)});
  }
  chart.segments = {compute, memory, comm, host};
  return svg::bar_chart(chart) + table("table-pools",
                                       {"pool", "role", "accelerator", "replicas", "split", "utilisation %",
                                        "KV mean %", "KV peak %", "iterations"},
                                       rows, true);
}

std::string serving_page(const scenario::Scenario& scenario, const runner::RunResult& run, const serving::ServingResult& r) {
  Page page(fmt::format("ClusterSim serving report: {}", scenario.name), run_meta(scenario, run));
  std::vector<std::vector<Cell>> metrics = {
      {"throughput", r.throughput_tokens_per_s, "tokens/s"},
      {"output throughput", r.output_tokens_per_s, "tokens/s"},
      {"requests", r.requests_per_s, "requests/s"},
      {"goodput (within the SLO)", r.goodput_requests_per_s, "requests/s"},
      {"TTFT p50 / p99", fmt::format("{:.4g} / {:.4g}", r.ttft_s.p50 * 1e3, r.ttft_s.p99 * 1e3), "ms"},
      {"TPOT p50 / p99", fmt::format("{:.4g} / {:.4g}", r.tpot_s.p50 * 1e3, r.tpot_s.p99 * 1e3), "ms"},
      {"end-to-end p50 / p99", fmt::format("{:.4g} / {:.4g}", r.e2e_s.p50 * 1e3, r.e2e_s.p99 * 1e3), "ms"},
      {"completed / rejected", fmt::format("{} / {}", r.completed, r.rejected), "requests"},
      {"KV-cache use mean / peak", fmt::format("{:.1f} / {:.1f}", 100 * r.kv_utilisation_mean, 100 * r.kv_utilisation_peak), "%"},
      {"GPU utilisation", 100 * r.gpu_utilisation, "%"},
      {"accelerators", static_cast<double>(r.accelerators), ""},
      {"limiter", r.limiter, ""}};
  if (r.energy_per_token_j) metrics.push_back({"energy per token", *r.energy_per_token_j, "J"});
  if (r.cost_per_million_tokens) metrics.push_back({"cost per million tokens", *r.cost_per_million_tokens, "USD"});
  page.section("Key metrics", "", metrics_table(metrics));
  page.section("Latency", "Cumulative distributions over the completed requests.", latency_charts(r));
  page.section(
      "Over time", "Per second of simulated time.",
      series_chart("chart-throughput", "Output throughput", {"output tokens", "tokens/s"}, r.series,
                   [](const serving::ServingSample& s) { return s.output_tokens_per_s; }) +
          series_chart("chart-queue", "Queue length", {"waiting requests", "requests"}, r.series,
                       [](const serving::ServingSample& s) { return static_cast<double>(s.queued); }) +
          series_chart("chart-kv", "KV-cache use", {"used blocks", "%"}, r.series,
                       [](const serving::ServingSample& s) { return 100 * s.kv_utilisation; }, 100));
  page.section("Pools", "", pool_charts(r));
  page.notes(r.notes);
  return page.finish();
}

std::string generic_page(const scenario::Scenario& scenario, const runner::RunResult& run) {
  Page page(fmt::format("ClusterSim report: {}", scenario.name), run_meta(scenario, run));
  std::vector<std::vector<Cell>> rows;
  for (const platform::Metric& metric : run.primary->metrics) rows.push_back({metric.name, metric.value, metric.unit});
  page.section("Key metrics", "", metrics_table(rows));
  page.notes(run.primary->notes);
  return page.finish();
}

}  // namespace

std::string run_report_html(const scenario::Scenario& scenario, const runner::RunResult& run,
                            const RunReportInputs& inputs) {
  const ResultReport* hooks = result_report(run.primary->kind);
  return hooks != nullptr && hooks->html ? hooks->html(scenario, run, inputs) : generic_page(scenario, run);
}

std::string training_report_html(const scenario::Scenario& scenario, const runner::RunResult& run,
                                 const training::TrainingResult& result, const RunReportInputs& inputs) {
  return training_page(scenario, run, result, inputs);
}

std::string serving_report_html(const scenario::Scenario& scenario, const runner::RunResult& run,
                                const serving::ServingResult& result) {
  return serving_page(scenario, run, result);
}

std::string sweep_report_html(const SweepReport& sweep) {
  std::size_t ok = 0, front = 0;
  for (const SweepReportPoint& point : sweep.points) {
    ok += point.ok ? 1 : 0;
    front += point.pareto ? 1 : 0;
  }
  Page page(fmt::format("ClusterSim sweep report: {}", sweep.name),
            {fmt::format("sweep fingerprint {} · {} points, {} succeeded, {} failed, {} on the Pareto front",
                         sweep.fingerprint, sweep.points.size(), ok, sweep.points.size() - ok, front),
             fmt::format("objectives: maximize {}, minimize {}", sweep.maximize, sweep.minimize)});
  svg::ScatterChart chart;
  chart.id = "chart-pareto";
  chart.title = fmt::format("{} against {}", sweep.maximize, sweep.minimize);
  chart.x = {sweep.minimize, "minimized"};
  chart.y = {sweep.maximize, "maximized"};
  chart.points_name = "point";
  chart.highlighted_name = "Pareto front";
  std::vector<std::string> metric_columns;  // in first-appearance order
  std::vector<std::string> value_keys;
  for (const SweepReportPoint& point : sweep.points) {
    for (const auto& [key, value] : point.values) {
      if (std::find(value_keys.begin(), value_keys.end(), key) == value_keys.end()) value_keys.push_back(key);
    }
    for (const auto& [column, value] : point.metrics) {
      if (std::find(metric_columns.begin(), metric_columns.end(), column) == metric_columns.end()) {
        metric_columns.push_back(column);
      }
    }
    if (!point.ok) continue;
    std::optional<double> x, y;
    for (const auto& [column, value] : point.metrics) {
      if (column == sweep.minimize) x = value;
      if (column == sweep.maximize) y = value;
    }
    if (x && y) chart.points.push_back({*x, *y, point.pareto, fmt::format("{}: {} {}, {} {}", point.id, sweep.minimize,
                                                                          value_text(*x), sweep.maximize, value_text(*y))});
  }
  std::vector<std::string> headers = {"id", "status", "pareto", "reason"};
  headers.insert(headers.end(), value_keys.begin(), value_keys.end());
  headers.insert(headers.end(), metric_columns.begin(), metric_columns.end());
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  for (const SweepReportPoint& point : sweep.points) {
    std::vector<Cell> row = {point.id, point.ok ? "ok" : "failed", point.pareto ? "yes" : "", point.reason};
    row.back().style = "reason";
    for (const std::string& key : value_keys) {
      const auto found = std::find_if(point.values.begin(), point.values.end(), [&key](const auto& v) { return v.first == key; });
      row.emplace_back(found == point.values.end() ? std::string() : found->second);
    }
    for (const std::string& column : metric_columns) {
      const auto found = std::find_if(point.metrics.begin(), point.metrics.end(), [&column](const auto& m) { return m.first == column; });
      row.push_back(found == point.metrics.end() ? Cell("") : Cell(found->second));
    }
    rows.push_back(std::move(row));
    classes.push_back(!point.ok ? "failed" : point.pareto ? "front" : "");
  }
  page.section("Pareto front", "Each successful point; the front (no other point better in both objectives) is highlighted.",
               svg::scatter_chart(chart));
  page.section("Points", "Click a column header to sort.",
               "<div class=\"wide\">" + table("table-points", headers, rows, true, classes) + "</div>");
  page.notes(sweep.notes);
  return page.finish();
}

}  // namespace clustersim::report
