#pragma once
/// `clustersim capacity SCENARIO`: serving capacity planning (sim/sweep/capacity.hpp).
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
};

CLI::App* add_capacity_command(CLI::App& app, CapacityCommandOptions& options);
int capacity_command(const CapacityCommandOptions& options, std::ostream& out);

}  // namespace clustersim::cli
