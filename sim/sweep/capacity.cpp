#include "sim/sweep/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"

namespace clustersim::sweep {
namespace {

constexpr int kMaxInstances = 4096;
constexpr std::int64_t kMinRequests = 100;  // a trial's fewest requests (a p99 needs some)

/// The scenario's serving spec, checked for what capacity planning needs.
const serving::ServingSpec& serving_spec(const scenario::Scenario& s) {
  const auto* spec = dynamic_cast<const serving::ServingSpec*>(s.workload.get());
  if (spec == nullptr) {
    throw ConfigError(fmt::format("capacity needs a serving workload (a training one: --deadline, for the smallest "
                                  "and cheapest cluster); '{}' runs '{}'",
                                  s.source_file,
                                  s.workload ? std::string(s.workload->kind()) : std::string("nothing")));
  }
  if (spec->slo.ttft_s <= 0 && spec->slo.tpot_s <= 0) {
    throw ConfigError("capacity needs an SLO: set workload.slo.ttft and/or workload.slo.tpot");
  }
  using P = serving::ArrivalProcess;
  const P process = spec->requests.arrival.process;
  if (process != P::poisson && process != P::gamma && process != P::constant) {
    throw ConfigError(fmt::format(
        "capacity searches over workload.requests.arrival.rate, which needs a poisson, gamma or constant process "
        "(it is '{}')",
        serving::arrival_process_names().name(process)));
  }
  return *spec;
}

/// The window each trial sends requests for: slo.window, else the scenario's count / rate.
double trial_window_s(const serving::ServingSpec& spec) {
  return spec.slo.window_s > 0 ? spec.slo.window_s
                               : static_cast<double>(spec.requests.count) / spec.requests.arrival.rate_per_s;
}

/// Runs trials; each thread keeps one platform per pool layout (the hardware does not change
/// with the rate), so its models' memos carry over from trial to trial.
class TrialRunner {
 public:
  TrialRunner(scenario::ScenarioSource source, std::vector<std::string> overrides, const scenario::Scenario& base,
              const serving::ServingSpec& spec)
      : source_(std::move(source)), overrides_(std::move(overrides)) {
    base_nodes_ = base.platform.cluster.network.nodes;
    // Every trial sends requests for as long as the scenario does (slo.window, else its count /
    // its rate), so a higher rate is judged over as long a window, not over a shorter burst.
    window_s_ = trial_window_s(spec);
    has_window_ = spec.slo.window_s > 0;
    per_node_ = base.platform.cluster.network.accelerators_per_node;
    const int domain = base.platform.cluster.network.scale_up.domain_size;
    node_multiple_ = domain > per_node_ && per_node_ > 0 ? domain / per_node_ : 1;
    for (const serving::PoolSpec& pool : spec.pools) {
      names_.push_back(pool.name);
      per_instance_.push_back(pool.tp * pool.pp);
    }
  }

  const std::vector<std::string>& names() const { return names_; }
  int accelerators(const std::vector<int>& replicas) const {
    int total = 0;
    for (std::size_t i = 0; i < replicas.size(); ++i) total += replicas[i] * per_instance_[i];
    return total;
  }

  CapacityTrial run(double rate, const std::vector<int>& replicas) {
    std::vector<std::string> overrides = overrides_;
    overrides.push_back(fmt::format("workload.requests.arrival.rate={}", rate));
    const std::int64_t count = std::max<std::int64_t>(kMinRequests, std::llround(rate * window_s_));
    overrides.push_back(fmt::format("workload.requests.count={}", count));
    // With slo.window the loader sends rate x window requests, not the count: lengthen the
    // window where the floor of kMinRequests needs it.
    if (has_window_) overrides.push_back(fmt::format("workload.slo.window={} s", static_cast<double>(count) / rate));
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      overrides.push_back(fmt::format("workload.pools.{}.replicas={}", names_[i], replicas[i]));
    }
    const int need = accelerators(replicas);
    int nodes = base_nodes_;
    if (per_node_ > 0 && need > base_nodes_ * per_node_) {
      nodes = (need + per_node_ - 1) / per_node_;
      nodes = (nodes + node_multiple_ - 1) / node_multiple_ * node_multiple_;
    }
    if (nodes != base_nodes_) overrides.push_back(fmt::format("cluster.nodes={}", nodes));
    const scenario::Scenario s = source_.load(overrides);
    auto& platforms = platforms_.local();
    auto& platform = platforms[nodes];
    if (!platform) platform = runner::build_platform(s);
    const runner::RunResult run = runner::run_scenario(s, *platform);
    const auto& r = dynamic_cast<const serving::ServingResult&>(*run.primary);
    CapacityTrial t;
    t.rate_per_s = rate;
    t.replicas = replicas;
    t.accelerators = need;
    t.met = r.slo_met;
    t.ttft_s = r.ttft_at_slo_percentile_s;
    t.tpot_s = r.tpot_at_slo_percentile_s;
    t.rejected = r.rejected;
    t.goodput_requests_per_s = r.goodput_requests_per_s;
    t.output_tokens_per_s = r.output_tokens_per_s;
    t.limiter = r.limiter;
    if (r.rejected > 0) t.limiter = fmt::format("KV capacity and queue bound ({} rejected)", r.rejected);
    std::vector<std::string> missed;
    if (r.slo.ttft_s > 0 && t.ttft_s > r.slo.ttft_s) missed.emplace_back("TTFT");
    if (r.slo.tpot_s > 0 && t.tpot_s > r.slo.tpot_s) missed.emplace_back("TPOT");
    if (r.rejected > 0) missed.emplace_back("rejections");
    for (const std::string& m : missed) t.missed += (t.missed.empty() ? "" : ", ") + m;
    return t;
  }

 private:
  scenario::ScenarioSource source_;
  std::vector<std::string> overrides_;
  std::vector<std::string> names_;
  std::vector<int> per_instance_;
  int base_nodes_ = 1, per_node_ = 1, node_multiple_ = 1;
  double window_s_ = 0;
  bool has_window_ = false;  ///< the scenario sets slo.window (the loader then ignores the count)
  tbb::enumerable_thread_specific<std::map<int, std::unique_ptr<platform::Platform>>> platforms_;
};

/// Runs `points` in parallel (at most `threads` at a time) and records them in order.
std::vector<CapacityTrial> run_round(TrialRunner& runner, const std::vector<std::pair<double, std::vector<int>>>& points,
                                     int threads, CapacityResult& result) {
  std::vector<CapacityTrial> trials(points.size());
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, points.size(),
                      [&](std::size_t i) { trials[i] = runner.run(points[i].first, points[i].second); });
  });
  for (const CapacityTrial& t : trials) result.trials.push_back(t);
  return trials;
}

int concurrency(int threads) { return threads > 0 ? threads : tbb::this_task_arena::max_concurrency(); }

void search_rate(TrialRunner& runner, const std::vector<int>& replicas, double start, const CapacityOptions& options,
                 CapacityResult& result) {
  const int k = std::max(1, concurrency(options.threads));
  std::optional<CapacityTrial> low, high;  // highest met, lowest missed
  const auto record = [&](const std::vector<CapacityTrial>& trials) {
    for (const CapacityTrial& t : trials) {
      if (t.met && (!low || t.rate_per_s > low->rate_per_s)) low = t;
      if (!t.met && (!high || t.rate_per_s < high->rate_per_s)) high = t;
    }
    // A met rate above a missed one (arrival noise): trust the miss.
    if (low && high && low->rate_per_s >= high->rate_per_s) low.reset();
  };
  record(run_round(runner, {{start, replicas}}, options.threads, result));
  // Bracket: k rates, each twice the last, upwards from a met rate or downwards from a miss.
  double next = start;
  while ((!low || !high) && next > start / 1e4 && next < start * 1e6) {
    std::vector<std::pair<double, std::vector<int>>> points;
    for (int i = 0; i < k; ++i) {
      next = low ? next * 2 : next / 2;
      points.push_back({next, replicas});
    }
    record(run_round(runner, points, options.threads, result));
  }
  // Bisection: k interior points per round.
  while (low && high && (high->rate_per_s - low->rate_per_s) / low->rate_per_s > options.precision &&
         static_cast<int>(result.trials.size()) < options.max_trials) {
    std::vector<std::pair<double, std::vector<int>>> points;
    for (int i = 1; i <= k; ++i) {
      points.push_back({low->rate_per_s + (high->rate_per_s - low->rate_per_s) * i / (k + 1), replicas});
    }
    for (const CapacityTrial& t : run_round(runner, points, options.threads, result)) {
      if (t.met && t.rate_per_s > low->rate_per_s && t.rate_per_s < high->rate_per_s) low = t;
      if (!t.met && t.rate_per_s < high->rate_per_s && t.rate_per_s > low->rate_per_s) high = t;
    }
  }
  result.answer = low;
  result.beyond = high;
}

/// True when `more` (twice the instances of the pool being sized) improved none of the targets
/// `fewer` missed by 1 % or more: that pool is not what limits the deployment (a disaggregated
/// one whose prefill side misses the TTFT, say), so doubling it further cannot meet the SLO.
bool no_progress(const CapacityTrial& fewer, const CapacityTrial& more) {
  const auto missed = [&](std::string_view target) { return fewer.missed.find(target) != std::string::npos; };
  const auto improved = [](double before, double after) { return after < 0.99 * before; };
  return !((missed("TTFT") && improved(fewer.ttft_s, more.ttft_s)) ||
           (missed("TPOT") && improved(fewer.tpot_s, more.tpot_s)) ||
           (missed("rejections") && more.rejected < fewer.rejected));
}

/// The fewest instances of pool `which` (others fixed) meeting `rate`; nullopt if even
/// kMaxInstances do not, or if doubling the pool improved none of the missed targets.
std::optional<CapacityTrial> fewest(TrialRunner& runner, std::vector<int> replicas, std::size_t which, double rate,
                                    const CapacityOptions& options, CapacityResult& result,
                                    std::optional<CapacityTrial>* below = nullptr) {
  int lo = 0;  // largest known to miss (0: none)
  std::optional<CapacityTrial> hi, last_miss;
  int n = std::max(1, replicas[which]);
  while (!hi && n <= kMaxInstances && static_cast<int>(result.trials.size()) < options.max_trials) {
    replicas[which] = n;
    const CapacityTrial t = run_round(runner, {{rate, replicas}}, 1, result).front();
    if (t.met) {
      hi = t;
    } else {
      lo = n;
      if (below) *below = t;
      if (last_miss && no_progress(*last_miss, t)) break;
      last_miss = t;
      n *= 2;
    }
  }
  if (!hi) return std::nullopt;
  int top = hi->replicas[which];
  while (top - lo > 1 && static_cast<int>(result.trials.size()) < options.max_trials) {
    const int mid = (lo + top) / 2;
    replicas[which] = mid;
    const CapacityTrial t = run_round(runner, {{rate, replicas}}, 1, result).front();
    if (t.met) {
      top = mid;
      hi = t;
    } else {
      lo = mid;
      if (below) *below = t;
    }
  }
  return hi;
}

void size_pools(TrialRunner& runner, const serving::ServingSpec& spec, double rate, const CapacityOptions& options,
                CapacityResult& result) {
  std::vector<int> replicas;
  for (const serving::PoolSpec& pool : spec.pools) replicas.push_back(pool.replicas);
  if (spec.pools.size() == 1) {
    std::optional<CapacityTrial> below;
    result.answer = fewest(runner, replicas, 0, rate, options, result, &below);
    result.beyond = below;
    return;
  }
  const auto role = [&](serving::ReplicaRole r) {
    const auto it = std::find_if(spec.pools.begin(), spec.pools.end(), [r](const auto& p) { return p.role == r; });
    return static_cast<std::size_t>(it - spec.pools.begin());
  };
  if (spec.pools.size() != 2 || !spec.disaggregated()) {
    throw ConfigError("capacity sizes one mixed pool, or one prefill and one decode pool");
  }
  const std::size_t prefill = role(serving::ReplicaRole::prefill), decode = role(serving::ReplicaRole::decode);
  // For each prefill count, the fewest decode instances; the mix with the fewest accelerators.
  const int most_prefill = std::max(2, 2 * replicas[prefill]);
  for (int p = 1; p <= most_prefill && static_cast<int>(result.trials.size()) < options.max_trials; ++p) {
    std::vector<int> start = replicas;
    start[prefill] = p;
    std::optional<CapacityTrial> below;
    const auto found = fewest(runner, start, decode, rate, options, result, &below);
    if (found && (!result.answer || found->accelerators < result.answer->accelerators)) {
      result.answer = found;
      result.beyond = below;
    }
  }
}

std::string replicas_text(const CapacityResult& result, const CapacityTrial& t) {
  std::string text;
  for (std::size_t i = 0; i < t.replicas.size(); ++i) {
    text += fmt::format("{}{} {}", i ? ", " : "", t.replicas[i], result.pools[i]);
  }
  return text;
}

}  // namespace

CapacityResult find_capacity(const scenario::ScenarioSource& source, const std::vector<std::string>& overrides,
                             const CapacityOptions& options) {
  const scenario::Scenario base = source.load(overrides);
  const serving::ServingSpec& spec = serving_spec(base);
  if (!(options.precision > 0)) throw ConfigError("capacity: --precision must be > 0");
  if (options.target_rate && !(*options.target_rate > 0)) throw ConfigError("capacity: --rate must be > 0");
  TrialRunner runner(source, overrides, base, spec);
  const double window_s = trial_window_s(spec);
  if (window_s > kLongTrialWindowS && options.on_warning) {
    const double rate = options.target_rate.value_or(spec.requests.arrival.rate_per_s);
    const std::string why = spec.slo.window_s > 0 ? "workload.slo.window"
                                                  : fmt::format("workload.requests.count {} / arrival.rate {:g}/s",
                                                                spec.requests.count, spec.requests.arrival.rate_per_s);
    options.on_warning(fmt::format(
        "warning: each trial sends requests for {:.0f} s ({}), so a trial at {:g} req/s simulates about {:.0f} requests "
        "and the search may take long; set workload.slo.window (e.g. 120 s) for a faster answer",
        window_s, why, rate, rate * window_s));
  }
  CapacityResult result;
  result.pools = runner.names();
  result.slo_ttft_s = spec.slo.ttft_s;
  result.slo_tpot_s = spec.slo.tpot_s;
  result.slo_percentile = spec.slo.percentile;
  result.sizing = options.target_rate.has_value();
  if (result.sizing) {
    size_pools(runner, spec, *options.target_rate, options, result);
    result.summary = result.answer
                         ? fmt::format("{} req/s within the SLO needs {} ({} accelerators){}", *options.target_rate,
                                       replicas_text(result, *result.answer), result.answer->accelerators,
                                       result.beyond ? "; one instance fewer is limited by " + result.beyond->limiter
                                                     : "")
                         : fmt::format("no pool size up to {} instances serves {} req/s within the SLO", kMaxInstances,
                                       *options.target_rate);
  } else {
    std::vector<int> replicas;
    for (const serving::PoolSpec& pool : spec.pools) replicas.push_back(pool.replicas);
    search_rate(runner, replicas, spec.requests.arrival.rate_per_s, options, result);
    result.summary =
        result.answer
            ? fmt::format("highest rate within the SLO: {:.3g} req/s ({:.0f} output tokens/s) on {} ({} accelerators){}",
                          result.answer->rate_per_s, result.answer->output_tokens_per_s,
                          replicas_text(result, *result.answer), result.answer->accelerators,
                          result.beyond ? fmt::format("; at {:.3g} req/s it misses {}, limited by {}",
                                                      result.beyond->rate_per_s, result.beyond->missed,
                                                      result.beyond->limiter)
                                        : "")
            : fmt::format("no rate down to {:.3g} req/s meets the SLO{}", result.trials.empty() ? 0.0
                                                                                                   : result.trials.back().rate_per_s,
                          result.beyond ? "; limited by " + result.beyond->limiter : "");
  }
  return result;
}

std::string capacity_table(const CapacityResult& result) {
  std::string out = fmt::format("SLO: p{:g} TTFT <= {}, p{:g} TPOT <= {}\n", result.slo_percentile,
                                result.slo_ttft_s > 0 ? fmt::format("{:.1f} ms", result.slo_ttft_s * 1e3) : "-",
                                result.slo_percentile,
                                result.slo_tpot_s > 0 ? fmt::format("{:.1f} ms", result.slo_tpot_s * 1e3) : "-");
  out += fmt::format("{:>10}  {:<28} {:>6} {:>11} {:>11} {:>8}  {:<22} {}\n", "rate/s", "instances", "accel",
                     "TTFT", "TPOT", "rejected", "SLO", "limited by");
  for (const CapacityTrial& t : result.trials) {
    out += fmt::format("{:>10.4g}  {:<28} {:>6} {:>8.1f} ms {:>8.1f} ms {:>8}  {:<22} {}\n", t.rate_per_s,
                       replicas_text(result, t), t.accelerators, t.ttft_s * 1e3, t.tpot_s * 1e3, t.rejected,
                       t.met ? "met" : "missed " + t.missed, t.limiter);
  }
  out += result.summary + "\n";
  return out;
}

nlohmann::json capacity_json(const CapacityResult& result) {
  const auto trial = [&](const CapacityTrial& t) {
    nlohmann::json replicas = nlohmann::json::object();
    for (std::size_t i = 0; i < t.replicas.size(); ++i) replicas[result.pools[i]] = t.replicas[i];
    return nlohmann::json{{"rate_per_s", t.rate_per_s},
                          {"replicas", replicas},
                          {"accelerators", t.accelerators},
                          {"met", t.met},
                          {"ttft_s", t.ttft_s},
                          {"tpot_s", t.tpot_s},
                          {"rejected", t.rejected},
                          {"goodput_requests_per_s", t.goodput_requests_per_s},
                          {"output_tokens_per_s", t.output_tokens_per_s},
                          {"limiter", t.limiter},
                          {"missed", t.missed}};
  };
  nlohmann::json trials = nlohmann::json::array();
  for (const CapacityTrial& t : result.trials) trials.push_back(trial(t));
  return {{"mode", result.sizing ? "size" : "rate"},
          {"slo", {{"ttft_s", result.slo_ttft_s}, {"tpot_s", result.slo_tpot_s}, {"percentile", result.slo_percentile}}},
          {"answer", result.answer ? trial(*result.answer) : nlohmann::json(nullptr)},
          {"beyond", result.beyond ? trial(*result.beyond) : nlohmann::json(nullptr)},
          {"trials", trials},
          {"summary", result.summary}};
}

}  // namespace clustersim::sweep
