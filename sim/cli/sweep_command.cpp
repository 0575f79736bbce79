#include "sim/cli/sweep_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "sim/cli/report_output.hpp"
#include "sim/engine/error.hpp"
#include "sim/report/progress.hpp"
#include "sim/sweep/sweep_runner.hpp"
#ifdef CLUSTERSIM_WITH_MPI
#include "sim/mpi/mpi_channel.hpp"
#include "sim/sweep/point_farm.hpp"
#endif

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
  cli.sweep->add_flag("--mpi", s.mpi,
                      "run as a task farm under mpirun/srun: rank 0 hands the points to the other ranks "
                      "(needs a build with -DCLUSTERSIM_WITH_MPI=ON)");
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

std::string sweep_start_line(const sweep::SweepStart& start, const std::string& folder, int threads) {
  const std::string at_once = threads > 0 ? fmt::format("{} at once", threads) : "as many at once as there are cores";
  std::string line = fmt::format("sweep: {} points; {} to run here{}, {}\n", start.points, start.to_run,
                                 start.finished > 0 ? fmt::format(" ({} already finished in {})", start.finished, folder)
                                                    : std::string(),
                                 at_once);
  if (start.to_run > 1000) {
    line += fmt::format(
        "sweep: {} points each run a whole simulation; on a terminal the progress line says how long is left once the "
        "first ones finish (--list prints the points without running them; --shard i/N splits them over machines)\n",
        start.to_run);
  }
  return line;
}

namespace {

sweep::SweepOptions run_options(const SweepCommandOptions& options) {
  sweep::SweepOptions run;
  run.threads = options.threads;
  run.shard = sweep::parse_shard(options.shard);
  run.out_dir = options.out_dir.empty()
                    ? std::filesystem::path("sweep-" + std::filesystem::path(options.scenario).stem().string())
                    : std::filesystem::path(options.out_dir);
  run.on_progress = report::terminal_progress();  // stderr, on a terminal only
  // Before anything runs, what will: on stderr, so the table and JSON on stdout stay as they are.
  const std::string folder = run.out_dir.string();
  const int threads = options.threads;
  run.on_start = [folder, threads](const sweep::SweepStart& start) {
    std::cerr << sweep_start_line(start, folder, threads) << std::flush;
  };
  return run;
}

/// Prints what a sweep produced; `where` says which ranks ran it ("" for threads).
void print_outcome(const SweepCommandOptions& options, const sweep::SweepOptions& run,
                   const sweep::SweepOutcome& outcome, const std::string& where, std::ostream& out) {
  write_sweep_report(run.out_dir, outcome);
  if (options.format == "json") {
    out << sweep::sweep_json(outcome).dump(2) << '\n';
    return;
  }
  out << sweep::sweep_table(outcome);
  out << fmt::format("shard {}/{}: ran {} points{}, {} already finished; wrote {} and report.html\n", run.shard.index,
                     run.shard.count, outcome.ran, where, outcome.skipped, (run.out_dir / "sweep.csv").string());
}

void check_mpi_options(const SweepCommandOptions& options) {
#ifndef CLUSTERSIM_WITH_MPI
  throw ConfigError(
      "--mpi: this clustersim was built without MPI; configure with -DCLUSTERSIM_WITH_MPI=ON after installing "
      "OpenMPI (Debian: apt-get install libopenmpi-dev openmpi-bin; scripts/setup.sh does both), then run it "
      "under mpirun or srun. Without MPI, split the sweep over machines with --shard i/N (docs/sweeps.md)");
#endif
  if (options.threads != 0) {
    throw ConfigError(fmt::format("-j {} has no effect with --mpi: each rank runs one point at a time; start more "
                                  "ranks instead (mpirun -np N)",
                                  options.threads));
  }
}

#ifdef CLUSTERSIM_WITH_MPI
/// `sweep --mpi`: every rank plans the sweep from the same file; rank 0 farms the points out
/// and writes the folder, the others run what they are handed (sim/sweep/point_farm.hpp).
int sweep_mpi_command(const SweepCommandOptions& options, std::ostream& out) {
  mpi::MpiSession session;
  mpi::MpiChannel channel;
  if (channel.rank() != 0) {
    std::optional<sweep::SweepPlan> plan;
    std::string plan_error;
    try {
      plan.emplace(sweep::plan_sweep(options.scenario, options.overrides));
    } catch (const Error& e) {
      plan_error = e.what();  // rank 0 reports it, naming this rank
    }
    try {
      sweep::serve_points(channel, plan ? &*plan : nullptr, plan_error);
    } catch (const std::exception& e) {
      // A broken protocol: rank 0 would wait for this rank for ever, so the whole job ends.
      std::cerr << fmt::format("error: rank {}: {}\n", channel.rank(), e.what());
      session.abort(1);
    }
    return 0;
  }
  sweep::SweepOptions run = run_options(options);
  sweep::FarmMaster master(channel, run.out_dir / "farm-running.json");
  try {
    const sweep::SweepPlan plan = sweep::plan_sweep(options.scenario, options.overrides);
    run.runner = master.runner();
    run.notes = master.notes();
    const sweep::SweepOutcome outcome = sweep::run_sweep(plan, run);
    const std::string where =
        channel.size() == 1 ? " on rank 0 alone (mpirun -np 1)" : fmt::format(" on {} worker ranks", channel.size() - 1);
    print_outcome(options, run, outcome, where, out);
  } catch (...) {
    master.dismiss();  // no worker waits for work for ever
    throw;
  }
  return 0;
}
#endif

}  // namespace

int sweep_command(const SweepCommandOptions& options, std::ostream& out) {
  if (options.list && (!options.out_dir.empty() || options.threads != 0 || options.format != "table" || options.mpi)) {
    throw ConfigError("--list only prints the points: --out, -j, --format and --mpi have no effect with it");
  }
  if (options.mpi) {
    check_mpi_options(options);
#ifdef CLUSTERSIM_WITH_MPI
    return sweep_mpi_command(options, out);
#endif
  }
  const sweep::SweepPlan plan = sweep::plan_sweep(options.scenario, options.overrides);
  const sweep::SweepOptions run = run_options(options);
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
  print_outcome(options, run, sweep::run_sweep(plan, run), "", out);
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
