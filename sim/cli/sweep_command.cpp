#include "sim/report/progress.hpp"
#include "sim/cli/sweep_command.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "sim/cli/report_output.hpp"
#include "sim/engine/error.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace clustersim::cli {

void add_sweep_commands(CLI::App& app, SweepCli& cli) {
  auto& s = cli.sweep_options;
  cli.sweep = app.add_subcommand("sweep", "run every point of the scenario's sweep: block (docs/sweeps.md) and write "
                                          "one CSV/JSON row per point with the Pareto front");
  cli.sweep->add_option("scenario", s.scenario, "scenario YAML file with a sweep: block")->required();
  cli.sweep->add_option("--set", s.overrides, "override a key of every point: --set workload.global_batch=64");
  cli.sweep->add_option("-j,--jobs", s.threads, "points simulated at once (0: every core)")->default_str("0");
  cli.sweep->add_option("--shard", s.shard, "run shard i of N (1-based, round robin over the points)")
      ->default_str("1/1");
  cli.sweep->add_option("--out", s.out_dir,
                        "output folder: points/ID.json per point, sweep.csv, sweep.json (default: "
                        "sweep-<scenario file name>); points finished there are skipped");
  cli.sweep->add_flag("--list", s.list, "print the points (index, ID, shard, values) without running them");
  cli.sweep->add_option("--format", s.format, "what to print")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");

  auto& m = cli.merge_options;
  cli.merge = app.add_subcommand("sweep-merge", "combine the output folders of a sweep's shards into one");
  cli.merge->add_option("folders", m.inputs, "shard output folders")->required();
  cli.merge->add_option("--out", m.out_dir, "merged output folder")->required();
  cli.merge->add_option("--format", m.format, "what to print")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
}

int sweep_command(const SweepCommandOptions& options, std::ostream& out) {
  const sweep::SweepPlan plan = sweep::plan_sweep(options.scenario, options.overrides);
  sweep::SweepOptions run;
  run.threads = options.threads;
  run.shard = sweep::parse_shard(options.shard);
  run.out_dir = options.out_dir.empty()
                    ? std::filesystem::path("sweep-" + std::filesystem::path(options.scenario).stem().string())
                    : std::filesystem::path(options.out_dir);
  if (options.list && (!options.out_dir.empty() || options.threads != 0 || options.format != "table")) {
    throw ConfigError("--list only prints the points: --out, -j and --format have no effect with it");
  }
  if (options.list) {
    for (const sweep::SweepPoint& point : plan.points) {
      std::string values;
      for (const auto& [key, value] : point.values) values += " " + key + "=" + value;
      const int shard = static_cast<int>(point.index % static_cast<std::size_t>(run.shard.count)) + 1;
      out << fmt::format("{:>5}  {}  shard {}/{}  seed {}{}\n", point.index, point.id, shard, run.shard.count,
                         point.seed, values);
    }
    for (const std::string& note : plan.notes) out << "note: " << note << '\n';
    return 0;
  }
  run.on_progress = report::terminal_progress();  // stderr, on a terminal only
  const sweep::SweepOutcome outcome = sweep::run_sweep(plan, run);
  write_sweep_report(run.out_dir, outcome);
  if (options.format == "json") {
    out << sweep::sweep_json(outcome).dump(2) << '\n';
  } else {
    out << sweep::sweep_table(outcome);
    out << fmt::format("shard {}/{}: ran {} points, {} already finished; wrote {} and report.html\n", run.shard.index,
                       run.shard.count, outcome.ran, outcome.skipped, (run.out_dir / "sweep.csv").string());
  }
  return 0;
}

int sweep_merge_command(const SweepMergeOptions& options, std::ostream& out) {
  std::vector<std::filesystem::path> inputs(options.inputs.begin(), options.inputs.end());
  const sweep::SweepOutcome outcome = sweep::merge_sweeps(inputs, options.out_dir);
  write_sweep_report(options.out_dir, outcome);
  if (options.format == "json") {
    out << sweep::sweep_json(outcome).dump(2) << '\n';
  } else {
    out << sweep::sweep_table(outcome);
    out << fmt::format("merged {} folders: {} rows, {} points missing; wrote {} and report.html\n", inputs.size(),
                       outcome.rows.size(), outcome.missing,
                       (std::filesystem::path(options.out_dir) / "sweep.csv").string());
  }
  return outcome.missing == 0 ? 0 : 1;
}

}  // namespace clustersim::cli
