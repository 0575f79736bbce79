#include "sim/sweep/training_capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/config/schema.hpp"
#include "sim/config/units.hpp"
#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/parallelism_search.hpp"

namespace clustersim::sweep {
namespace {

std::string duration_text(double seconds) {
  if (seconds >= 86400) return fmt::format("{:.3g} d", seconds / 86400);
  if (seconds >= 3600) return fmt::format("{:.3g} h", seconds / 3600);
  return fmt::format("{:.3g} s", seconds);
}

/// One cluster size of `base`'s accelerator kind: the parallelism search on `nodes` nodes, the
/// best split re-simulated.
TrainingCapacityTrial evaluate_size(const scenario::Scenario& base, int nodes, const TrainingCapacityOptions& options,
                                    double tokens, std::optional<double> price) {
  TrainingCapacityTrial t;
  t.accelerator = base.platform.cluster.accelerator.name;
  t.nodes = nodes;
  t.accelerators = nodes * base.platform.cluster.network.accelerators_per_node;
  scenario::Scenario variant = base;
  variant.platform.cluster.network.nodes = nodes;
  SearchOptions search;
  search.space = options.space;
  search.top_n = 1;
  search.resimulate = 1;
  search.threads = options.threads;
  try {
    const SearchResult result = search_parallelism(variant, search);
    const RankedCandidate& best = result.top.front();
    t.feasible = true;
    t.split = best.candidate.label();
    t.tokens_per_s = best.simulated ? best.simulated->tokens_per_s : best.analytical.estimate.tokens_per_s;
    t.time_s = tokens / t.tokens_per_s;
    t.meets = t.time_s <= options.deadline_s;
    if (price) t.cost_usd = *price * t.accelerators * t.time_s / 3600;
  } catch (const SimulationError& e) {
    t.reason = e.what();  // no split fits or simulates: a larger cluster may
  } catch (const Error& e) {
    t.reason = e.what();  // the cluster itself is invalid: a larger one is too
    t.unbuildable = true;
  }
  return t;
}

}  // namespace

TrainingCapacityKind size_kind(const std::string& accelerator,
                               const std::function<TrainingCapacityTrial(int nodes)>& evaluate,
                               const TrainingCapacityOptions& options, bool priced) {
  TrainingCapacityKind kind;
  kind.accelerator = accelerator;
  std::map<int, TrainingCapacityTrial> done;  // by size
  bool unbuildable = false;
  std::string unbuildable_reason;
  const auto trial = [&](int nodes) -> const TrainingCapacityTrial& {
    auto it = done.find(nodes);
    if (it == done.end()) {
      it = done.emplace(nodes, evaluate(nodes)).first;
      if (it->second.unbuildable) {
        unbuildable = true;
        unbuildable_reason = it->second.reason;
      }
    }
    return it->second;
  };
  int low = 0;  // the largest size tried that misses (0: none)
  std::optional<int> high;
  for (int nodes = 1; nodes <= options.max_nodes && !unbuildable; nodes *= 2) {
    if (trial(nodes).meets) {
      high = nodes;
      break;
    }
    low = nodes;
    if (nodes > options.max_nodes / 2) break;
  }
  if (high) {
    // Bisect (low, high]: assumes the best throughput grows with the cluster.
    while (*high - low > 1) {
      const int mid = low + (*high - low) / 2;
      if (trial(mid).meets) {
        high = mid;
      } else {
        low = mid;
      }
    }
    kind.smallest = done.at(*high);
    int nodes = *high;
    for (int i = 0; i < options.extra_doublings && nodes <= options.max_nodes / 2 && !unbuildable; ++i) {
      nodes *= 2;
      trial(nodes);
    }
    if (priced) {
      for (const auto& [size, t] : done) {
        if (t.meets && t.cost_usd && (!kind.cheapest || *t.cost_usd < *kind.cheapest->cost_usd)) kind.cheapest = t;
      }
    } else {
      kind.note = "no accelerator-hour price (cost.accelerator_hour_usd or --price), so no cheapest";
    }
  } else if (unbuildable) {
    kind.note = "the cluster could not grow further: " + unbuildable_reason;
  } else {
    kind.note = fmt::format("no cluster of up to {} nodes meets the deadline", options.max_nodes);
  }
  for (const auto& [size, t] : done) kind.trials.push_back(t);
  return kind;
}

double parse_deadline_s(const std::string& text) {
  std::string trimmed = text;
  for (const char* suffix : {" days", "days", " day", "day", " d", "d"}) {
    const std::string s = suffix;
    if (trimmed.size() > s.size() && trimmed.compare(trimmed.size() - s.size(), s.size(), s) == 0) {
      const auto days = config::parse_number(trimmed.substr(0, trimmed.size() - s.size()));
      if (days && *days > 0 && std::isfinite(*days)) return *days * 86400;
      break;
    }
  }
  double seconds = 0;
  try {
    seconds = config::parse_quantity(text, config::Dimension::seconds);
  } catch (const Error&) {
    seconds = 0;
  }
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    throw ConfigError(fmt::format("--deadline must be a time > 0 such as '30 d', '720 h' or '86400 s', got '{}'", text));
  }
  return seconds;
}

TrainingCapacityResult find_training_capacity(const scenario::ScenarioSource& source,
                                              const std::vector<std::string>& overrides,
                                              const TrainingCapacityOptions& options) {
  if (!(options.deadline_s > 0)) throw ConfigError("training capacity needs a deadline > 0 (--deadline)");
  if (options.max_nodes < 1) throw ConfigError(fmt::format("--max-nodes must be >= 1, got {}", options.max_nodes));
  if (options.extra_doublings < 0) throw ConfigError("extra doublings must be >= 0");
  const scenario::Scenario first = source.load(overrides);
  const training::TrainingWorkload& workload = first.training();  // throws for another kind
  TrainingCapacityResult result;
  result.scenario_name = first.name;
  result.tokens = options.tokens > 0 ? options.tokens : workload.train_tokens;
  result.deadline_s = options.deadline_s;
  if (!(result.tokens > 0)) {
    throw ConfigError("training capacity needs a token budget: --tokens N or workload.train_tokens");
  }
  std::vector<std::string> kinds = options.accelerators;
  if (kinds.empty()) kinds.push_back(first.platform.cluster.accelerator.name);
  for (const auto& [name, price] : options.price_per_hour_usd) {
    if (std::find(kinds.begin(), kinds.end(), name) == kinds.end()) {
      throw ConfigError(fmt::format("--price names '{}', which is not sized (accelerators: {})", name,
                                    fmt::join(kinds, ", ")));
    }
  }
  for (const std::string& kind : kinds) {
    std::vector<std::string> with_kind = overrides;
    with_kind.push_back("cluster.node.accelerator=" + kind);
    const scenario::Scenario base = source.load(with_kind);
    std::optional<double> price = base.platform.cost.accelerator_hour_usd;
    if (const auto it = options.price_per_hour_usd.find(kind); it != options.price_per_hour_usd.end()) {
      price = it->second;
    }
    result.kinds.push_back(size_kind(
        kind, [&](int nodes) { return evaluate_size(base, nodes, options, result.tokens, price); }, options,
        price.has_value()));
    const TrainingCapacityKind& answer = result.kinds.back();
    if (answer.smallest && (!result.smallest || answer.smallest->accelerators < result.smallest->accelerators ||
                            (answer.smallest->accelerators == result.smallest->accelerators &&
                             answer.smallest->time_s < result.smallest->time_s))) {
      result.smallest = answer.smallest;
    }
    if (answer.cheapest && (!result.cheapest || *answer.cheapest->cost_usd < *result.cheapest->cost_usd)) {
      result.cheapest = answer.cheapest;
    }
  }
  if (options.price_per_hour_usd.empty() && kinds.size() > 1 && first.platform.cost.accelerator_hour_usd) {
    result.notes.push_back("every accelerator kind is priced at cost.accelerator_hour_usd; --price KIND=USD sets "
                           "each kind's own price");
  }
  return result;
}

std::string training_capacity_table(const TrainingCapacityResult& result) {
  std::string out = fmt::format("training capacity: {} — {:.4g} tokens within {} ({:.6g} s)\n", result.scenario_name,
                                result.tokens, duration_text(result.deadline_s), result.deadline_s);
  out += fmt::format("{:<14} {:>6} {:>7}  {:<40} {:>12} {:>10} {:>12}  {}\n", "accelerator", "nodes", "accel.",
                     "best split", "tokens/s", "time", "cost USD", "meets");
  for (const TrainingCapacityKind& kind : result.kinds) {
    for (const TrainingCapacityTrial& t : kind.trials) {
      if (!t.feasible) {
        out += fmt::format("{:<14} {:>6} {:>7}  {}\n", t.accelerator, t.nodes, t.accelerators,
                           "infeasible: " + t.reason.substr(0, t.reason.find('\n')).substr(0, 150));
        continue;
      }
      out += fmt::format("{:<14} {:>6} {:>7}  {:<40} {:>12.5g} {:>10} {:>12}  {}\n", t.accelerator, t.nodes,
                         t.accelerators, t.split, t.tokens_per_s, duration_text(t.time_s),
                         t.cost_usd ? fmt::format("{:.4g}", *t.cost_usd) : "-", t.meets ? "yes" : "no");
    }
    if (!kind.note.empty()) out += fmt::format("  {}: {}\n", kind.accelerator, kind.note);
  }
  const auto line = [](const char* what, const TrainingCapacityTrial& t) {
    return fmt::format("{}: {} x {} ({} nodes), {}: {} at {:.5g} tokens/s{}\n", what, t.accelerators, t.accelerator,
                       t.nodes, t.split, duration_text(t.time_s), t.tokens_per_s,
                       t.cost_usd ? fmt::format(", {:.4g} USD", *t.cost_usd) : "");
  };
  out += result.smallest ? line("smallest", *result.smallest) : "smallest: none meets the deadline\n";
  out += result.cheapest ? line("cheapest", *result.cheapest)
                         : "cheapest: none (no cluster meets the deadline, or no price)\n";
  for (const std::string& note : result.notes) out += "note: " + note + "\n";
  return out;
}

nlohmann::json training_capacity_json(const TrainingCapacityResult& result) {
  const auto trial_json = [](const TrainingCapacityTrial& t) {
    nlohmann::json j = {{"accelerator", t.accelerator}, {"nodes", t.nodes},       {"accelerators", t.accelerators},
                        {"feasible", t.feasible},       {"split", t.split},       {"tokens_per_s", t.tokens_per_s},
                        {"time_s", t.time_s},           {"meets", t.meets},       {"reason", t.reason}};
    j["cost_usd"] = t.cost_usd ? nlohmann::json(*t.cost_usd) : nlohmann::json(nullptr);
    return j;
  };
  nlohmann::json kinds = nlohmann::json::array();
  for (const TrainingCapacityKind& kind : result.kinds) {
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& t : kind.trials) trials.push_back(trial_json(t));
    kinds.push_back({{"accelerator", kind.accelerator},
                     {"trials", trials},
                     {"smallest", kind.smallest ? trial_json(*kind.smallest) : nlohmann::json(nullptr)},
                     {"cheapest", kind.cheapest ? trial_json(*kind.cheapest) : nlohmann::json(nullptr)},
                     {"note", kind.note}});
  }
  return {{"kind", "training-capacity"},
          {"scenario", result.scenario_name},
          {"tokens", result.tokens},
          {"deadline_s", result.deadline_s},
          {"accelerators", kinds},
          {"smallest", result.smallest ? trial_json(*result.smallest) : nlohmann::json(nullptr)},
          {"cheapest", result.cheapest ? trial_json(*result.cheapest) : nlohmann::json(nullptr)},
          {"notes", result.notes}};
}

}  // namespace clustersim::sweep
