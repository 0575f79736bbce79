#pragma once
/// Training capacity planning (`clustersim capacity SCENARIO --deadline D`): for each
/// accelerator kind, the smallest cluster (nodes of the scenario's node with that accelerator)
/// that trains a token budget within a deadline, and the cheapest cluster found that does,
/// each with its best parallel split (the parallelism search, parallelism_search.hpp, ranked by
/// throughput; the best split re-simulated). Cluster sizes are tried doubling from one node
/// until one meets the deadline, then bisected down to the smallest that does (the best
/// throughput grows with the cluster), then up to `extra_doublings` larger sizes are tried for
/// the cheapest. Cost = accelerators x time x the accelerator-hour price.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/search_space.hpp"

namespace clustersim::sweep {

struct TrainingCapacityOptions {
  double tokens = 0;       ///< token budget; 0: the scenario's workload.train_tokens
  double deadline_s = 0;   ///< required, > 0
  std::vector<std::string> accelerators;  ///< kinds to size; empty: the scenario's
  std::map<std::string, double> price_per_hour_usd;  ///< per kind; default: cost.accelerator_hour_usd
  int max_nodes = 4096;
  int extra_doublings = 2;  ///< larger sizes tried past the smallest, for the cheapest
  SearchSpaceOptions space;
  int threads = 0;
};

/// One cluster size of one kind.
struct TrainingCapacityTrial {
  std::string accelerator;
  int nodes = 0;
  int accelerators = 0;
  bool feasible = false;   ///< a split fits and simulates
  std::string split;       ///< the best split's label
  double tokens_per_s = 0; ///< simulated (the closed form when the simulation failed)
  double time_s = 0;       ///< tokens / tokens_per_s
  std::optional<double> cost_usd;
  bool meets = false;      ///< time_s <= deadline
  std::string reason;      ///< why not feasible
  bool unbuildable = false;  ///< the cluster itself is invalid (e.g. too many nodes for the topology)
};

struct TrainingCapacityKind {
  std::string accelerator;
  std::vector<TrainingCapacityTrial> trials;  ///< in the order run
  std::optional<TrainingCapacityTrial> smallest;
  std::optional<TrainingCapacityTrial> cheapest;  ///< among the sizes tried (needs a price)
  std::string note;  ///< why there is no answer, or what limited the search
};

struct TrainingCapacityResult {
  std::string scenario_name;
  double tokens = 0;
  double deadline_s = 0;
  std::vector<TrainingCapacityKind> kinds;
  std::optional<TrainingCapacityTrial> smallest;  ///< fewest accelerators over all kinds (then the shortest time)
  std::optional<TrainingCapacityTrial> cheapest;  ///< lowest cost over all kinds
  std::vector<std::string> notes;
};

/// The search over one kind's cluster sizes, `evaluate(nodes)` timing one size (its best split,
/// whether it meets the deadline, its cost when `priced`): doubling from 1 node until a size
/// meets the deadline (or is unbuildable, or passes options.max_nodes), bisecting between the
/// last miss and that size, then options.extra_doublings larger sizes for the cheapest. Each size
/// is evaluated once; trials are returned by size.
TrainingCapacityKind size_kind(const std::string& accelerator,
                               const std::function<TrainingCapacityTrial(int nodes)>& evaluate,
                               const TrainingCapacityOptions& options, bool priced);

/// Parses a deadline: a time quantity ("720 h", "3600 s") or days ("30 d", "30 days").
double parse_deadline_s(const std::string& text);

/// Runs the search. Throws ConfigError for a scenario that is not training, no token budget, a
/// deadline <= 0, or an unknown accelerator (through the loader, with the closest names).
TrainingCapacityResult find_training_capacity(const scenario::ScenarioSource& scenario,
                                              const std::vector<std::string>& overrides,
                                              const TrainingCapacityOptions& options);

std::string training_capacity_table(const TrainingCapacityResult& result);
nlohmann::json training_capacity_json(const TrainingCapacityResult& result);

}  // namespace clustersim::sweep
