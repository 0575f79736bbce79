#include "sim/cli/capacity_command.hpp"

#include "sim/sweep/capacity.hpp"

namespace clustersim::cli {

CLI::App* add_capacity_command(CLI::App& app, CapacityCommandOptions& options) {
  auto* cmd = app.add_subcommand(
      "capacity", "serving: the highest request rate within the scenario's SLO, or (--rate) the fewest instances "
                  "that serve a rate within it");
  cmd->add_option("scenario", options.scenario, "serving scenario YAML file (with workload.slo)")->required();
  cmd->add_option("--set", options.overrides, "override a scenario key");
  cmd->add_option("--rate", options.rate, "requests per second to size the pools for (0: find the highest rate)")
      ->default_str("0");
  cmd->add_option("--precision", options.precision, "rate search: relative width of the final bracket")
      ->default_str("0.02");
  cmd->add_option("--max-trials", options.max_trials, "most simulations to run")->default_str("60");
  cmd->add_option("--threads", options.threads, "simulations at once (0: every core)")->default_str("0");
  cmd->add_option("--format", options.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  return cmd;
}

int capacity_command(const CapacityCommandOptions& options, std::ostream& out) {
  sweep::CapacityOptions search;
  if (options.rate > 0) search.target_rate = options.rate;
  search.precision = options.precision;
  search.max_trials = options.max_trials;
  search.threads = options.threads;
  const sweep::CapacityResult result = sweep::find_capacity(options.scenario, options.overrides, search);
  if (options.format == "json") {
    out << sweep::capacity_json(result).dump(2) << '\n';
  } else {
    out << sweep::capacity_table(result);
  }
  return result.answer ? 0 : 1;
}

}  // namespace clustersim::cli
