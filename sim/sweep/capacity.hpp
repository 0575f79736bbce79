#pragma once
/// Capacity planning for a serving scenario (`clustersim capacity`):
///   * the highest request rate its deployment serves within the SLO (workload.slo: the
///     percentile of TTFT and of TPOT within their targets, nothing rejected): a bracket found
///     by doubling or halving the scenario's rate, then bisection to a relative precision;
///   * with a target rate: the fewest instances (one mixed pool) or the cheapest mix of a
///     prefill and a decode pool that serve it within the SLO (fewest accelerators; with one
///     price per accelerator-hour the cheapest is the same mix), growing the cluster's nodes
///     when the pools need more accelerators than it has.
/// Every trial is a full serving simulation of the scenario with `--set` overrides, sending
/// requests for as long as the scenario does (count = rate x the scenario's count / its rate,
/// at least 100), so higher rates are judged over the same window; trials of
/// one pool layout share one platform (its models and their memos), and a round's trials run
/// in parallel. Each answer says what limited the first trial beyond it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario_loader.hpp"

namespace clustersim::sweep {

struct CapacityOptions {
  std::optional<double> target_rate;  ///< set: size the pools for this rate (requests/s)
  double precision = 0.02;            ///< rate search: stop when (high - low) / low is below it
  int max_trials = 60;                ///< give up (with what was found) after this many simulations
  int threads = 0;                    ///< 0: every core
  /// Called before the first trial with what the user should know before waiting (a trial
  /// window of more than kLongTrialWindowS); the CLI prints it to standard error at once.
  std::function<void(const std::string&)> on_warning;
};

/// A trial sends requests for the scenario's count / rate seconds; past this many the search
/// warns before it starts (each trial at a higher rate simulates proportionally more requests).
inline constexpr double kLongTrialWindowS = 600;

/// One simulated point.
struct CapacityTrial {
  double rate_per_s = 0;
  std::vector<int> replicas;  ///< per pool, in the scenario's pool order (name order)
  int accelerators = 0;
  bool met = false;
  double ttft_s = 0, tpot_s = 0;  ///< at the SLO's percentile
  std::int64_t rejected = 0;
  double goodput_requests_per_s = 0;
  double output_tokens_per_s = 0;
  std::string limiter;
  std::string missed;  ///< which targets it missed: "TTFT", "TPOT", "TTFT, TPOT", "rejections"; empty when met
};

struct CapacityResult {
  bool sizing = false;                  ///< true: pools sized for a target rate
  std::vector<std::string> pools;       ///< pool names, in order
  double slo_ttft_s = 0, slo_tpot_s = 0, slo_percentile = 99;
  std::optional<CapacityTrial> answer;  ///< the highest rate met, or the smallest pools meeting the target
  std::optional<CapacityTrial> beyond;  ///< the first trial past the answer that missed (what limits it)
  std::vector<CapacityTrial> trials;    ///< every simulation, in the order run
  std::string summary;                  ///< one sentence
};

/// Runs the search. Throws ConfigError when the scenario is not a serving workload, has no SLO
/// target, has arrivals without a rate (closed loop, offline, trace), or (sizing) has pools
/// other than one mixed pool or one prefill and one decode pool.
CapacityResult find_capacity(const scenario::ScenarioSource& scenario, const std::vector<std::string>& overrides,
                             const CapacityOptions& options);

/// The trials and the answer as a table.
std::string capacity_table(const CapacityResult& result);
nlohmann::json capacity_json(const CapacityResult& result);

}  // namespace clustersim::sweep
