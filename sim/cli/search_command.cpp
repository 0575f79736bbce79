#include "sim/report/progress.hpp"
#include "sim/cli/search_command.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/parallelism_search.hpp"
#include "sim/sweep/search_report.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::cli {
CLI::App* add_search_command(CLI::App& app, SearchCommandOptions& options) {
  auto* cmd = app.add_subcommand("search", "search the TP/PP/DP/CP split, virtual stages, micro-batch, ZeRO "
                                           "and recompute for the best step (analytical, then re-simulated)");
  cmd->add_option("scenario", options.scenario, "scenario YAML file")->required();
  cmd->add_option("--set", options.overrides, "override a scenario key: --set workload.global_batch=1536");
  cmd->add_option("--top", options.top, "candidates to print")->default_str("10");
  cmd->add_option("--resimulate", options.resimulate, "re-simulate the best K with the scenario's fidelity")
      ->default_str("5");
  cmd->add_option("--objective", options.objective, "throughput | cost | energy")->default_str("throughput");
  cmd->add_option("--format", options.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  cmd->add_option("--max-tp", options.max_tp, "largest tensor-parallel degree (0: the scale-up domain)")
      ->default_str("0");
  cmd->add_option("--max-pp", options.max_pp, "largest pipeline-parallel degree (0: no limit)")->default_str("0");
  cmd->add_option("--max-cp", options.max_cp, "largest context-parallel degree")->default_str("8");
  cmd->add_option("--max-ep", options.max_ep, "largest expert-parallel degree (MoE models; 0: the model's experts)")
      ->default_str("0");
  cmd->add_option("--max-vp", options.max_vp, "most virtual stages per pipeline stage")->default_str("8");
  cmd->add_option("--max-micro-batch", options.max_micro_batch, "largest micro-batch, sequences (0: no limit)")
      ->default_str("0");
  cmd->add_option("--zero", options.zero, "ZeRO stages to try")->default_str("0 1 2 3");
  cmd->add_option("--recompute", options.recompute, "recompute policies to try")->default_str("none selective full");
  cmd->add_option("--threads", options.threads, "worker threads (0: every core)")->default_str("0");
  return cmd;
}

int search_command(const SearchCommandOptions& options, std::ostream& out) {
  sweep::SearchOptions search;
  search.objective = sweep::parse_objective(options.objective);
  search.top_n = options.top;
  search.resimulate = options.resimulate;
  search.threads = options.threads;
  search.space.max_tp = options.max_tp;
  search.space.max_pp = options.max_pp;
  search.space.max_cp = options.max_cp;
  search.space.max_ep = options.max_ep;
  search.space.max_vp = options.max_vp;
  search.space.max_micro_batch = options.max_micro_batch;
  search.space.zero_stages = options.zero;
  search.space.recompute_policies.clear();
  for (const std::string& name : options.recompute) search.space.recompute_policies.push_back(training::recompute_names().parse(name));

  const auto scenario = scenario::load_scenario(options.scenario, options.overrides);
  search.on_progress = report::terminal_progress();  // stderr, on a terminal only
  const sweep::SearchResult result = sweep::search_parallelism(scenario, search);
  if (options.format == "json") {
    out << sweep::search_json(result).dump(2) << '\n';
  } else {
    out << sweep::search_table(result);
  }
  return 0;
}

}  // namespace clustersim::cli
