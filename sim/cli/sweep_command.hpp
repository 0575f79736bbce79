#pragma once
/// `clustersim sweep SCENARIO` and `clustersim sweep-merge DIR...` (sim/sweep/sweep_runner.hpp).
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/sweep/sweep_runner.hpp"

namespace clustersim::cli {

struct SweepCommandOptions {
  std::string scenario;
  std::vector<std::string> overrides;  ///< "key.path=value", applied to every point
  int threads = 0;                     ///< -j: points at once (0: every core)
  std::string shard = "1/1";
  std::string out_dir;                 ///< default: sweep-<scenario file stem>
  bool list = false;                   ///< print the points (ID, shard, values) without running
  bool mpi = false;                    ///< a task farm over MPI ranks (sim/sweep/point_farm.hpp)
  std::string format = "table";
};

struct SweepMergeOptions {
  std::vector<std::string> inputs;
  std::string out_dir;
  std::string format = "table";
};

struct SweepCli {
  CLI::App* sweep = nullptr;
  CLI::App* merge = nullptr;
  SweepCommandOptions sweep_options;
  SweepMergeOptions merge_options;
};

void add_sweep_commands(CLI::App& app, SweepCli& cli);
int sweep_command(const SweepCommandOptions& options, std::ostream& out);
int sweep_merge_command(const SweepMergeOptions& options, std::ostream& out);
/// The lines `sweep` writes to stderr before its first point runs: the points, how many this
/// call runs (and how many `folder` already holds), how many at once (`threads` 0: every core);
/// above 1,000 points, where to see the time left and how to split them.
std::string sweep_start_line(const sweep::SweepStart& start, const std::string& folder, int threads);

}  // namespace clustersim::cli
