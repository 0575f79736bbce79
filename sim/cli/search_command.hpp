#pragma once
/// `clustersim search SCENARIO`: the automatic parallelism search (sim/sweep).
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace clustersim::cli {

struct SearchCommandOptions {
  std::string scenario;
  std::vector<std::string> overrides;  ///< "key.path=value"
  int top = 10;
  int resimulate = 5;
  std::string objective = "throughput";  ///< throughput | cost | energy (checked by the library)
  std::string format = "table";          ///< table | json
  int max_tp = 0;                        ///< 0: the scale-up domain
  int max_pp = 0;                        ///< 0: unlimited
  int max_cp = 8;
  int max_ep = 0;
  int max_vp = 8;
  std::int64_t max_micro_batch = 0;      ///< 0: unlimited
  std::vector<int> zero = {0, 1, 2, 3};  ///< ZeRO stages to try
  std::vector<std::string> recompute = {"none", "selective", "full"};
  int threads = 0;                       ///< 0: every core
};

/// Adds the `search` subcommand to `app`, storing into `options`; returns it.
CLI::App* add_search_command(CLI::App& app, SearchCommandOptions& options);

/// Runs the search and prints the table or JSON. Errors propagate as clustersim::Error.
int search_command(const SearchCommandOptions& options, std::ostream& out);

}  // namespace clustersim::cli
