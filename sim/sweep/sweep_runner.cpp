#include "sim/sweep/sweep_runner.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "sim/config/schema.hpp"
#include "sim/engine/error.hpp"
#include "sim/report/result_reports.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/output_paths.hpp"
#include "sim/scenario/scenario_tree_loader.hpp"

namespace clustersim::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kManifest = "sweep-manifest.json";

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  // Write aside, then rename: an interrupted sweep never leaves a half-written point file, and
  // shards sharing a folder (one process each) never write the same temporary file.
  const fs::path temporary = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream file(temporary);
    if (!file) throw Error(fmt::format("cannot write {}", temporary.string()));
    file << text;
    if (!file) throw Error(fmt::format("cannot write {}", temporary.string()));
  }
  fs::rename(temporary, path);
}

std::optional<json> read_json(const fs::path& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  try {
    return json::parse(file);
  } catch (const json::exception&) {
    return std::nullopt;  // a file cut short: the point runs again
  }
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number_text(double value) { return fmt::format("{:.9g}", value); }

const Metric* find_metric(const SweepRow& row, const std::string& column) {
  for (const Metric& metric : row.metrics) {
    if (metric.column == column) return &metric;
  }
  return nullptr;
}

json manifest_json(const SweepPlan& plan) {
  json points = json::array();
  for (const SweepPoint& point : plan.points) {
    json values = json::array();  // [key, value] pairs: the sweep's key order
    for (const auto& [key, value] : point.values) values.push_back({key, value});
    points.push_back({{"index", point.index}, {"id", point.id}, {"seed", point.seed}, {"values", values}});
  }
  return {{"fingerprint", plan.fingerprint},
          {"name", plan.name},
          {"scenario", plan.source_file},
          {"pareto", {{"maximize", plan.spec.pareto.maximize}, {"minimize", plan.spec.pareto.minimize}}},
          {"notes", plan.notes},
          {"points", points}};
}

/// Writes sweep.csv and sweep.json of `outcome` into `dir`.
void write_outputs(const fs::path& dir, SweepOutcome& outcome) {
  for (std::string& note : mark_pareto(outcome.rows, outcome.pareto)) outcome.notes.push_back(std::move(note));
  write_text(dir / "sweep.csv", sweep_csv(outcome.rows));
  write_text(dir / "sweep.json", sweep_json(outcome).dump(2) + "\n");
}

/// The rows of the manifest's points whose point files in `dir` hold `fingerprint`'s results.
std::map<std::string, SweepRow> finished_rows(const fs::path& dir, const std::string& fingerprint) {
  std::map<std::string, SweepRow> rows;
  const fs::path points = dir / "points";
  if (!fs::is_directory(points)) return rows;
  for (const auto& entry : fs::directory_iterator(points)) {
    if (entry.path().extension() != ".json") continue;
    const auto document = read_json(entry.path());
    if (!document || document->value("fingerprint", "") != fingerprint) continue;
    SweepRow row = row_from_json(*document);
    rows.emplace(row.id, std::move(row));
  }
  return rows;
}

}  // namespace

SweepPlan plan_sweep(const scenario::ScenarioSource& source, const std::vector<std::string>& set_overrides,
                     const fs::path& data_dir, const config::ConfigEntry* block) {
  std::vector<config::Diagnostic> diagnostics;
  config::ConfigNode root = source.tree(data_dir, diagnostics);
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  const config::ConfigEntry* entry = block != nullptr ? block : root.is_mapping() ? root.find_entry("sweep") : nullptr;
  if (entry == nullptr) {
    throw ConfigError(fmt::format("{} has no `sweep:` block (docs/sweeps.md); `clustersim run` runs it once",
                                  source.name()));
  }
  SweepPlan plan;
  plan.source_file = source.name();
  std::uint64_t base_seed = 1;  // simulation.seed's default
  if (const config::ConfigNode* seed = root.find_path("simulation.seed"); seed != nullptr && seed->is_scalar()) {
    if (const auto value = config::parse_integer(seed->text); value && *value >= 0) {
      base_seed = static_cast<std::uint64_t>(*value);
    }
  }
  plan.spec = parse_sweep(entry->value, entry->key_position, base_seed);
  root.erase("sweep");
  if (const config::ConfigNode* name = root.find("name"); name != nullptr && name->is_scalar()) plan.name = name->text;
  plan.base = std::move(root);
  plan.set_overrides = set_overrides;
  plan.data_dir = data_dir;
  plan.points = expand_points(plan.spec, base_seed);
  const std::size_t total = product_size(plan.spec);
  if (plan.spec.sample && static_cast<std::size_t>(*plan.spec.sample) >= total) {
    plan.notes.push_back(fmt::format("sweep.sample {} >= the {} points of the product: every point runs",
                                     *plan.spec.sample, total));
  }
  std::string identity = render_flow(plan.base);
  for (const std::string& text : set_overrides) identity += "\n--set " + text;
  for (const SweepPoint& point : plan.points) identity += "\n" + point.id;
  plan.fingerprint = fmt::format("{:016x}", fnv1a(identity));
  return plan;
}

std::vector<Metric> summary_metrics(const scenario::Scenario& scenario, const runner::RunResult& run) {
  std::vector<Metric> out;
  out.push_back({"gpus", static_cast<double>(scenario.primary_allocation().count)});
  if (const report::ResultReport* hooks = report::result_report(run.primary->kind); hooks != nullptr && hooks->columns) {
    hooks->columns(run, out);
  } else {
    for (const platform::Metric& metric : run.primary->metrics) {
      out.push_back({report::metric_column(metric.name, metric.unit), metric.value});
    }
  }
  for (const runner::JobResult& job : run.jobs) {
    for (const platform::Metric& metric : job.result->metrics) {
      out.push_back({"job." + job.name + "." + report::metric_column(metric.name, metric.unit), metric.value});
    }
  }
  return out;
}

SweepRow run_point(const SweepPlan& plan, const SweepPoint& point) {
  SweepRow row;
  row.index = point.index;
  row.id = point.id;
  row.seed = point.seed;
  row.values = point.values;
  try {
    const scenario::Scenario scenario =
        scenario::load_scenario_tree(plan.base, plan.source_file, plan.set_overrides, point.overrides,
                                     plan.data_dir);
    const runner::RunResult run = runner::run_scenario(scenario);
    row.metrics = summary_metrics(scenario, run);
    row.ok = true;
  } catch (const Error& e) {
    row.reason = e.what();
  } catch (const std::exception& e) {
    row.reason = std::string("internal error: ") + e.what();
  }
  return row;
}

PointRunner tbb_point_runner(int threads) {
  if (threads < 0) throw ConfigError(fmt::format("-j must be >= 0 (0: every core), got {}", threads));
  return [threads](const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
                   const std::function<void(SweepRow)>& finished) {
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 1), [&](const auto& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) finished(run_point(plan, *points[i]));
      });
    });
  };
}

SweepOutcome run_sweep(const SweepPlan& plan, const SweepOptions& options) {
  const PointRunner runner = options.runner ? options.runner : tbb_point_runner(options.threads);
  const fs::path dir = options.out_dir;
  const bool files = !dir.empty();  // no folder: the rows in memory only (the Python module's sweep)
  if (files) {
    report::prepare_output_dir(dir, "the sweep's output folder");  // before any point runs
    if (const auto manifest = read_json(dir / kManifest)) {
      const std::string existing = manifest->value("fingerprint", "");
      if (existing != plan.fingerprint) {
        throw ConfigError(fmt::format(
            "{} holds the points of another sweep (fingerprint {}, this one {}: the scenario, its --set overrides "
            "or its sweep block changed); use another --out folder",
            dir.string(), existing, plan.fingerprint));
      }
    } else {
      write_text(dir / kManifest, manifest_json(plan).dump(2) + "\n");
    }
  }
  std::map<std::string, SweepRow> finished =
      files && options.resume ? finished_rows(dir, plan.fingerprint) : std::map<std::string, SweepRow>{};
  SweepOutcome outcome;
  outcome.name = plan.name;
  outcome.fingerprint = plan.fingerprint;
  outcome.notes = plan.notes;
  outcome.notes.insert(outcome.notes.end(), options.notes.begin(), options.notes.end());
  outcome.pareto = plan.spec.pareto;
  std::vector<const SweepPoint*> todo;
  for (const SweepPoint& point : plan.points) {
    if (!in_shard(point.index, options.shard)) continue;
    if (finished.count(point.id) != 0) {
      ++outcome.skipped;
    } else {
      todo.push_back(&point);
    }
  }
  std::mutex finished_mutex;  // the runner may hand rows over from several threads
  std::size_t points_done = 0;
  if (options.on_start) options.on_start({plan.points.size(), todo.size(), outcome.skipped});
  if (options.on_progress) options.on_progress("sweep", "points", 0, todo.size());  // the work starts now
  runner(plan, todo, [&](SweepRow row) {
    if (files) {
      json document = row_json(row);
      document["fingerprint"] = plan.fingerprint;
      write_text(dir / "points" / (row.id + ".json"), document.dump(2) + "\n");
    }
    const std::lock_guard lock(finished_mutex);
    ++outcome.ran;
    finished[row.id] = std::move(row);
    if (options.on_progress) options.on_progress("sweep", "points", ++points_done, todo.size());
  });
  for (const SweepPoint& point : plan.points) {
    const auto it = finished.find(point.id);
    if (it == finished.end()) {
      ++outcome.missing;
      continue;
    }
    it->second.index = point.index;
    it->second.values = point.values;  // the sweep's key order (a point file's JSON sorts keys)
    outcome.rows.push_back(it->second);
  }
  if (outcome.missing > 0) {
    outcome.notes.push_back(fmt::format("{} of {} points have no result in {} yet (other shards, or not run)",
                                        outcome.missing, plan.points.size(), dir.string()));
  }
  if (files) {
    write_outputs(dir, outcome);
  } else {
    for (std::string& note : mark_pareto(outcome.rows, outcome.pareto)) outcome.notes.push_back(std::move(note));
  }
  return outcome;
}

std::vector<std::string> mark_pareto(std::vector<SweepRow>& rows, ParetoSpec& pareto) {
  std::vector<std::string> notes;
  const auto has_column = [&](const std::string& column) {
    return std::any_of(rows.begin(), rows.end(), [&](const SweepRow& r) { return find_metric(r, column) != nullptr; });
  };
  if (pareto.maximize.empty()) {
    for (const char* column : {"tokens_per_s", "output_tokens_per_s", "requests_per_s"}) {
      if (has_column(column)) {
        pareto.maximize = column;
        break;
      }
    }
  }
  if (pareto.minimize.empty()) pareto.minimize = "gpus";
  for (SweepRow& row : rows) row.pareto = false;
  for (const std::string& column : {pareto.maximize, pareto.minimize}) {
    if (!column.empty() && !has_column(column) &&
        std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.ok; })) {
      std::set<std::string> columns;
      for (const SweepRow& row : rows) {
        for (const Metric& metric : row.metrics) columns.insert(metric.column);
      }
      const std::vector<std::string> valid(columns.begin(), columns.end());
      notes.push_back(fmt::format("sweep.pareto: no row has the column '{}', so there is no Pareto front ({})",
                                  column, config::choices_hint("columns", valid, config::closest_match(column, valid))));
    }
  }
  if (pareto.maximize.empty() || !notes.empty()) return notes;
  for (SweepRow& row : rows) {
    const Metric* up = find_metric(row, pareto.maximize);
    const Metric* down = find_metric(row, pareto.minimize);
    if (!row.ok || up == nullptr || down == nullptr || !std::isfinite(up->value) || !std::isfinite(down->value)) {
      continue;
    }
    bool dominated = false;
    for (const SweepRow& other : rows) {
      const Metric* other_up = find_metric(other, pareto.maximize);
      const Metric* other_down = find_metric(other, pareto.minimize);
      if (&other == &row || !other.ok || other_up == nullptr || other_down == nullptr) continue;
      if (other_up->value >= up->value && other_down->value <= down->value &&
          (other_up->value > up->value || other_down->value < down->value)) {
        dominated = true;
        break;
      }
    }
    row.pareto = !dominated;
  }
  return notes;
}

std::vector<std::string> sweep_columns(const std::vector<SweepRow>& rows) {
  std::vector<std::string> columns = {"index", "id", "status", "reason", "seed"};
  const auto add = [&](const std::string& column) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
  };
  for (const SweepRow& row : rows) {
    for (const auto& [key, value] : row.values) add(key);
  }
  for (const SweepRow& row : rows) {
    for (const Metric& metric : row.metrics) add(metric.column);
  }
  add("pareto");
  return columns;
}

std::string sweep_csv(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> columns = sweep_columns(rows);
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) out += (c > 0 ? "," : "") + csv_cell(columns[c]);
  out += "\n";
  for (const SweepRow& row : rows) {
    std::vector<std::string> cells;
    for (const std::string& column : columns) {
      std::string cell;
      if (column == "index") {
        cell = std::to_string(row.index);
      } else if (column == "id") {
        cell = row.id;
      } else if (column == "status") {
        cell = row.ok ? "ok" : "failed";
      } else if (column == "reason") {
        cell = row.reason;
        std::replace(cell.begin(), cell.end(), '\n', ';');
      } else if (column == "seed") {
        cell = std::to_string(row.seed);
      } else if (column == "pareto") {
        cell = row.pareto ? "true" : "false";
      } else if (const Metric* metric = find_metric(row, column)) {
        cell = number_text(metric->value);
      } else {
        for (const auto& [key, value] : row.values) {
          if (key == column) cell = value;
        }
      }
      cells.push_back(csv_cell(cell));
    }
    out += fmt::format("{}\n", fmt::join(cells, ","));
  }
  return out;
}

json row_json(const SweepRow& row) {
  json values = json::object();
  for (const auto& [key, value] : row.values) values[key] = value;
  json metrics = json::array();
  for (const Metric& metric : row.metrics) metrics.push_back({{"column", metric.column}, {"value", metric.value}});
  return {{"index", row.index},   {"id", row.id},         {"seed", row.seed},       {"status", row.ok ? "ok" : "failed"},
          {"reason", row.reason}, {"values", values},     {"metrics", metrics},     {"pareto", row.pareto}};
}

SweepRow row_from_json(const json& document) {
  SweepRow row;
  row.index = document.value("index", std::size_t{0});
  row.id = document.value("id", "");
  row.seed = document.value("seed", std::uint64_t{0});
  row.ok = document.value("status", "") == "ok";
  row.reason = document.value("reason", "");
  row.pareto = document.value("pareto", false);
  // nlohmann::json sorts object keys: callers restore the sweep's key order from its points.
  for (const auto& [key, value] : document.at("values").items()) row.values.emplace_back(key, value.get<std::string>());
  for (const json& metric : document.at("metrics")) {
    row.metrics.push_back({metric.at("column").get<std::string>(), metric.at("value").get<double>()});
  }
  return row;
}

json sweep_json(const SweepOutcome& outcome) {
  json rows = json::array();
  for (const SweepRow& row : outcome.rows) rows.push_back(row_json(row));
  return {{"sweep",
           {{"name", outcome.name},
            {"fingerprint", outcome.fingerprint},
            {"rows", outcome.rows.size()},
            {"missing", outcome.missing},
            {"pareto", {{"maximize", outcome.pareto.maximize}, {"minimize", outcome.pareto.minimize}}},
            {"notes", outcome.notes}}},
          {"columns", sweep_columns(outcome.rows)},
          {"rows", rows}};
}

SweepOutcome merge_sweeps(const std::vector<fs::path>& inputs, const fs::path& out_dir) {
  if (inputs.empty()) throw ConfigError("sweep-merge needs at least one shard folder");
  json manifest;
  std::string first_folder;
  for (const fs::path& input : inputs) {
    const auto document = read_json(input / kManifest);
    if (!document) throw ConfigError(fmt::format("{} holds no sweep ({} is missing)", input.string(), kManifest));
    if (manifest.is_null()) {
      manifest = *document;
      first_folder = input.string();
    } else if (document->value("fingerprint", "") != manifest.value("fingerprint", "")) {
      throw ConfigError(fmt::format("{} holds another sweep than {} (fingerprint {} vs {})", input.string(),
                                    first_folder, document->value("fingerprint", ""),
                                    manifest.value("fingerprint", "")));
    }
  }
  const std::string fingerprint = manifest.value("fingerprint", "");
  std::map<std::string, SweepRow> rows;
  for (const fs::path& input : inputs) {
    for (auto& [id, row] : finished_rows(input, fingerprint)) rows.emplace(id, std::move(row));
  }
  report::prepare_output_dir(out_dir / "points", "the merged output folder");
  write_text(out_dir / kManifest, manifest.dump(2) + "\n");
  SweepOutcome outcome;
  outcome.name = manifest.value("name", "");
  outcome.fingerprint = fingerprint;
  outcome.pareto.maximize = manifest["pareto"].value("maximize", "");
  outcome.pareto.minimize = manifest["pareto"].value("minimize", "");
  for (const json& note : manifest.value("notes", json::array())) outcome.notes.push_back(note.get<std::string>());
  for (const json& point : manifest.at("points")) {
    const std::string id = point.at("id").get<std::string>();
    const auto it = rows.find(id);
    if (it == rows.end()) {
      ++outcome.missing;
      continue;
    }
    SweepRow row = it->second;
    row.index = point.at("index").get<std::size_t>();
    json document = row_json(it->second);
    document["fingerprint"] = fingerprint;
    write_text(out_dir / "points" / (id + ".json"), document.dump(2) + "\n");
    row.values.clear();
    for (const json& pair : point.at("values")) {
      row.values.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    }
    outcome.rows.push_back(std::move(row));
  }
  if (outcome.missing > 0) {
    outcome.notes.push_back(fmt::format("{} of {} points have no result in the merged folders",
                                        outcome.missing, manifest.at("points").size()));
  }
  write_outputs(out_dir, outcome);
  return outcome;
}

std::string sweep_table(const SweepOutcome& outcome) {
  std::string out;
  const std::string& up = outcome.pareto.maximize;
  const std::string& down = outcome.pareto.minimize;
  out += fmt::format("{:<16}  {:<6}  {:>14}  {:>14}  {:<6}  {}\n", "id", "status", up.empty() ? "-" : up,
                     down.empty() ? "-" : down, "pareto", "values / reason");
  for (const SweepRow& row : outcome.rows) {
    std::vector<std::string> values;
    for (const auto& [key, value] : row.values) values.push_back(key + "=" + value);
    const Metric* a = find_metric(row, up);
    const Metric* b = find_metric(row, down);
    std::string detail = fmt::format("{}", fmt::join(values, " "));
    if (!row.ok) {
      std::string reason = row.reason.substr(0, row.reason.find('\n'));
      detail += "  (" + reason + ")";
    }
    out += fmt::format("{:<16}  {:<6}  {:>14}  {:>14}  {:<6}  {}\n", row.id, row.ok ? "ok" : "failed",
                       a != nullptr ? fmt::format("{:.6g}", a->value) : "-",
                       b != nullptr ? fmt::format("{:.6g}", b->value) : "-", row.pareto ? "*" : "", detail);
  }
  for (const std::string& note : outcome.notes) out += "note: " + note + "\n";
  return out;
}

}  // namespace clustersim::sweep
