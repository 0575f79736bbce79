#include "sim/cli/capacity_command.hpp"

#include <iostream>

#include <fmt/format.h>

#include "sim/config/schema.hpp"
#include "sim/engine/error.hpp"
#include "sim/sweep/capacity.hpp"
#include "sim/sweep/training_capacity.hpp"

namespace clustersim::cli {

CLI::App* add_capacity_command(CLI::App& app, CapacityCommandOptions& options) {
  auto* cmd = app.add_subcommand(
      "capacity", "serving: the highest request rate within the scenario's SLO, or (--rate) the fewest instances "
                  "that serve a rate within it; training (--deadline): the smallest and the cheapest cluster per "
                  "accelerator kind that trains --tokens within the deadline, with the best parallel split");
  cmd->add_option("scenario", options.scenario,
                  "serving scenario YAML file (with workload.slo), or training scenario with --deadline")
      ->required();
  cmd->add_option("--set", options.overrides, "override a scenario key");
  cmd->add_option("--rate", options.rate, "requests per second to size the pools for (0: find the highest rate)")
      ->default_str("0");
  cmd->add_option("--precision", options.precision, "rate search: relative width of the final bracket")
      ->default_str("0.02");
  cmd->add_option("--max-trials", options.max_trials, "most simulations to run")->default_str("60");
  cmd->add_option("--threads", options.threads, "simulations at once (0: every core)")->default_str("0");
  cmd->add_option("--deadline", options.deadline, "training: the time the run may take ('30 d', '720 h')");
  cmd->add_option("--tokens", options.tokens, "training: token budget (default: workload.train_tokens)");
  cmd->add_option("--accelerators", options.accelerators,
                  "training: accelerator kinds to size (default: the scenario's), e.g. h100-sxm h200-sxm b200");
  cmd->add_option("--price", options.prices,
                  "training: KIND=USD per accelerator-hour (default: cost.accelerator_hour_usd)");
  cmd->add_option("--max-nodes", options.max_nodes, "training: the largest cluster tried, nodes")
      ->default_str("4096");
  cmd->add_option("--format", options.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  return cmd;
}

namespace {

int training_capacity_command(const CapacityCommandOptions& options, std::ostream& out) {
  if (options.rate > 0 || options.precision != 0.02 || options.max_trials != 60) {
    throw ConfigError("--rate, --precision and --max-trials apply to serving capacity, not to a training one "
                      "(--deadline)");
  }
  sweep::TrainingCapacityOptions search;
  search.deadline_s = sweep::parse_deadline_s(options.deadline);
  search.tokens = options.tokens;
  search.accelerators = options.accelerators;
  search.max_nodes = options.max_nodes;
  search.threads = options.threads;
  for (const std::string& text : options.prices) {
    const std::size_t equals = text.find('=');
    const auto price = equals == std::string::npos ? std::nullopt : config::parse_number(text.substr(equals + 1));
    if (!price || *price < 0) throw ConfigError(fmt::format("--price must be KIND=USD (>= 0), got '{}'", text));
    search.price_per_hour_usd[text.substr(0, equals)] = *price;
  }
  const auto result = sweep::find_training_capacity(options.scenario, options.overrides, search);
  if (options.format == "json") {
    out << sweep::training_capacity_json(result).dump(2) << '\n';
  } else {
    out << sweep::training_capacity_table(result);
  }
  return result.smallest ? 0 : 1;
}

}  // namespace

int capacity_command(const CapacityCommandOptions& options, std::ostream& out) {
  if (!options.deadline.empty()) return training_capacity_command(options, out);
  if (options.tokens > 0 || !options.accelerators.empty() || !options.prices.empty() || options.max_nodes != 4096) {
    throw ConfigError("--tokens, --accelerators, --price and --max-nodes size a training run: give --deadline too");
  }
  sweep::CapacityOptions search;
  if (options.rate > 0) search.target_rate = options.rate;
  search.precision = options.precision;
  search.max_trials = options.max_trials;
  search.threads = options.threads;
  search.on_warning = [](const std::string& warning) { std::cerr << warning << std::endl; };
  const sweep::CapacityResult result = sweep::find_capacity(options.scenario, options.overrides, search);
  if (options.format == "json") {
    out << sweep::capacity_json(result).dump(2) << '\n';
  } else {
    out << sweep::capacity_table(result);
  }
  return result.answer ? 0 : 1;
}

}  // namespace clustersim::cli
