#pragma once
/// `clustersim capacity SCENARIO`: serving capacity planning (sim/sweep/capacity.hpp), or with
/// --deadline training capacity planning (sim/sweep/training_capacity.hpp).
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace clustersim::cli {

struct CapacityCommandOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  double rate = 0;          ///< > 0: size the pools for this rate
  double precision = 0.02;
  int max_trials = 60;
  int threads = 0;
  std::string format = "table";
  // Training (with --deadline).
  std::string deadline;                    ///< e.g. "30 d"; set: training capacity
  double tokens = 0;                       ///< 0: workload.train_tokens
  std::vector<std::string> accelerators;   ///< kinds to size; empty: the scenario's
  std::vector<std::string> prices;         ///< "KIND=USD per accelerator-hour"
  int max_nodes = 4096;
};

CLI::App* add_capacity_command(CLI::App& app, CapacityCommandOptions& options);
int capacity_command(const CapacityCommandOptions& options, std::ostream& out);

}  // namespace clustersim::cli
