#pragma once
/// `clustersim sweep`: runs every point of a scenario's `sweep:` block (sweep_spec.hpp) in
/// parallel, one simulation per point on the scenario loaded with the point's values, and writes
/// one row per point (varied keys, seed, status, every summary metric with its unit in the column
/// name, Pareto membership) as CSV and JSON. A point that fails (does not fit, an invalid
/// combination) keeps its reason and the others still run. Each finished point is also written
/// to OUT/points/ID.json, so an interrupted sweep resumes where it stopped, `--shard i/N` runs a
/// subset, and merge_sweeps combines shard folders.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/progress.hpp"
#include "sim/report/run_report.hpp"
#include "sim/config/config_tree.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace clustersim::sweep {

/// A scenario with its sweep: the base tree (without the block, --set applied by each point's
/// load), the spec and the points.
struct SweepPlan {
  std::string source_file;
  std::string name;                        ///< the scenario's name
  config::ConfigNode base;                 ///< the scenario tree without `sweep:`
  std::vector<std::string> set_overrides;  ///< applied to every point before its values
  std::filesystem::path data_dir;          ///< the preset library the points load from
  SweepSpec spec;
  std::vector<SweepPoint> points;
  std::string fingerprint;  ///< hash of the base tree, the --set overrides and the point IDs
  std::vector<std::string> notes;
};

/// Reads the sweep block of `source` (a file, or text from the Python module). `block`, when
/// given, is the sweep block to run instead of the scenario's own (which is then ignored;
/// `clustersim.sweep` passes its axes so). Throws config::ScenarioError for a bad block,
/// ConfigError when there is none.
SweepPlan plan_sweep(const scenario::ScenarioSource& source, const std::vector<std::string>& set_overrides = {},
                     const std::filesystem::path& data_dir = config::library_data_dir(),
                     const config::ConfigEntry* block = nullptr);

/// One result column (name with its unit, e.g. step_time_s, memory_per_gpu_B, mfu_fraction).
using Metric = report::MetricColumn;

/// Every summary metric of a run, one column each (primary workload; a job's prefixed
/// `job.NAME.`), in a fixed order.
std::vector<Metric> summary_metrics(const scenario::Scenario& scenario, const runner::RunResult& run);

/// One point's row.
struct SweepRow {
  std::size_t index = 0;
  std::string id;
  std::uint64_t seed = 0;
  std::vector<std::pair<std::string, std::string>> values;
  bool ok = false;
  std::string reason;  ///< why it failed
  std::vector<Metric> metrics;
  bool pareto = false;  ///< on the Pareto front of the sweep's two objectives
};

/// Loads the plan's scenario with `point`'s values and runs it; a failure (clustersim::Error)
/// becomes a failed row with its message.
SweepRow run_point(const SweepPlan& plan, const SweepPoint& point);

/// Runs `points` (of `plan`) and hands each one's row to `finished` as it ends, in any order and
/// from any thread (finished is thread-safe). run_sweep calls it once; the default runs the
/// points with oneTBB, point_farm.hpp hands them to the ranks of a task farm.
using PointRunner = std::function<void(const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
                                       const std::function<void(SweepRow row)>& finished)>;

/// The default PointRunner: the points in parallel on `threads` oneTBB threads (0: every core).
PointRunner tbb_point_runner(int threads);

/// What a sweep is about to run, said before the first point starts (SweepOptions::on_start).
struct SweepStart {
  std::size_t points = 0;    ///< points of the sweep
  std::size_t to_run = 0;    ///< this call's: the shard's points not yet finished in out_dir
  std::size_t finished = 0;  ///< the shard's points already finished in out_dir (skipped)
};

struct SweepOptions {
  int threads = 0;       ///< points at once (0: every core); used when `runner` is empty
  Shard shard;           ///< the points this run takes
  /// Where points/ID.json, sweep.csv and sweep.json go; empty: nowhere (the rows are returned
  /// only, nothing is resumed).
  std::filesystem::path out_dir;
  bool resume = true;    ///< skip points whose points/ID.json already holds this sweep's result
  /// Called as points finish ("sweep", "points", done, points this call runs); may be empty.
  report::ProgressCallback on_progress;
  /// Called once, before the first point runs, with what the call will run; may be empty.
  std::function<void(const SweepStart&)> on_start;
  PointRunner runner;    ///< how the points run; empty: tbb_point_runner(threads)
  std::vector<std::string> notes;  ///< added to the outcome's notes (the runner's, FarmMaster::notes)
};

/// What a sweep (or merge) produced.
struct SweepOutcome {
  std::string name;            ///< the scenario's name
  std::string fingerprint;     ///< the sweep's (SweepPlan::fingerprint)
  std::vector<SweepRow> rows;  ///< every point in the folder's output, by index
  std::size_t ran = 0;         ///< points simulated by this call
  std::size_t skipped = 0;     ///< points of the shard already finished in out_dir
  std::size_t missing = 0;     ///< points of the sweep with no row (other shards, not yet run)
  ParetoSpec pareto;           ///< the objectives used (defaults filled in)
  std::vector<std::string> notes;
};

/// Runs the shard's points not yet finished in options.out_dir, writing each one's
/// points/ID.json as it ends, then sweep.csv and sweep.json over every point of the sweep
/// finished in the folder. Throws ConfigError when out_dir holds another sweep's points.
SweepOutcome run_sweep(const SweepPlan& plan, const SweepOptions& options);

/// Marks the rows on the Pareto front of (maximize `pareto.maximize`, minimize
/// `pareto.minimize`): no other successful row is at least as good in both and better in one.
/// Rows that failed or lack a column are off the front. Fills empty objectives with defaults
/// (the throughput column the rows have; gpus) and returns a note when a column is missing.
std::vector<std::string> mark_pareto(std::vector<SweepRow>& rows, ParetoSpec& pareto);

/// The column names: index, id, status, reason, seed, the varied keys, every metric (in first
/// appearance order), pareto.
std::vector<std::string> sweep_columns(const std::vector<SweepRow>& rows);
std::string sweep_csv(const std::vector<SweepRow>& rows);
nlohmann::json sweep_json(const SweepOutcome& outcome);
nlohmann::json row_json(const SweepRow& row);
SweepRow row_from_json(const nlohmann::json& json);

/// Combines the folders `inputs` (shards of one sweep) into `out_dir`: copies their point files
/// and writes sweep.csv and sweep.json. Throws ConfigError when they come from different
/// sweeps or a folder holds no sweep.
SweepOutcome merge_sweeps(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out_dir);

/// The table `clustersim sweep` prints: one line per row (id, status, varied values, the two
/// objectives, Pareto mark, reason).
std::string sweep_table(const SweepOutcome& outcome);

}  // namespace clustersim::sweep
