#include "sim/training/step_iterations.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/exec/executor.hpp"
#include "sim/platform/session.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/training/step_variability.hpp"

namespace clustersim::training {
namespace {

/// One configuration of causes: the variability draws and whether stragglers are drawn.
struct Causes {
  std::string name;
  platform::VariabilitySpec variability;
  bool stragglers = false;
  /// Its variability is that of the configuration with every cause (which adds stragglers):
  /// in an iteration where no node is slow the two are the same step.
  bool draws_as_all = false;
};

/// The configurations: every cause together, then each active one alone.
std::vector<Causes> cause_configurations(const IterationSettings& settings) {
  const platform::VariabilitySpec& v = settings.variability;
  const bool stragglers = settings.stragglers.probability > 0 || !settings.stragglers.nodes.empty();
  std::vector<Causes> configurations{{"all", v, stragglers}};
  if (v.jitter()) {
    platform::VariabilitySpec jitter = v;
    jitter.host_noise_rate_per_s = 0;
    configurations.push_back({"jitter", jitter, false, !v.host_noise()});
  }
  if (v.host_noise()) {
    platform::VariabilitySpec host;
    host.host_noise_rate_per_s = v.host_noise_rate_per_s;
    host.host_noise_delay_s = v.host_noise_delay_s;
    configurations.push_back({"host_noise", host, false, !v.jitter()});
  }
  if (stragglers) configurations.push_back({"stragglers", {}, true});
  return configurations;
}

/// The iteration's step times of one configuration.
using StepRunner = std::function<double(const Causes& causes, int iteration)>;

/// Symmetric replays of `nominal`'s graph with every task fixed.
StepRunner replay_runner(const TrainingSetup& setup, const IterationSettings& settings, const TrainingStep& nominal) {
  const StepGraph& step = nominal.step_graph();
  const exec::TaskGraph& source = step.graph;
  auto durations = std::make_shared<const std::vector<engine::TimePs>>(nominal.nominal_durations());
  // The graph with every task at a fixed duration (the duration hook sets each run's).
  auto graph = std::make_shared<exec::TaskGraph>();
  graph->reserve_dependencies(source.dependencies().size());
  for (exec::StreamId s = 0; s < static_cast<exec::StreamId>(source.stream_count()); ++s) {
    graph->add_stream(source.stream_name(s), source.stream_device(s), source.stream_role(s));
  }
  for (exec::TaskId t = 0; t < static_cast<exec::TaskId>(source.task_count()); ++t) {
    const exec::Task& task = source.task(t);
    graph->add_task(task.stream, (*durations)[static_cast<std::size_t>(t)], task.traits, source.label(t));
    if (task.release_ps > 0) graph->set_release(t, task.release_ps);
  }
  for (const exec::Dependency& d : source.dependencies()) graph->add_dependency(d.task, d.prerequisite);
  // The nodes that host each stage's ranks (a straggler among them slows the stage).
  const ParallelismConfig& par = setup.workload.parallelism;
  const RankLayout layout(par, setup.placement);
  std::vector<std::vector<int>> stage_nodes(static_cast<std::size_t>(par.pp));
  for (int p = 0; p < par.pp; ++p) {
    std::set<int> nodes;
    for (int d = 0; d < par.dp; ++d) {
      for (int c = 0; c < par.cp; ++c) {
        for (int t = 0; t < par.tp; ++t) nodes.insert(layout.rank(t, c, d, p) / settings.per_node);
      }
    }
    stage_nodes[static_cast<std::size_t>(p)].assign(nodes.begin(), nodes.end());
  }
  auto draws = std::make_shared<SymmetricDraws>(step, par);
  exec::ExecutionOptions base = nominal.execution_options();
  return [&setup, &settings, graph, durations, draws, stage_nodes, base](const Causes& causes, int iteration) {
    const std::vector<engine::TimePs> drawn =
        draws->durations(*durations, {setup.seed, iteration, causes.variability});
    exec::ExecutionOptions options = base;
    options.duration = [&drawn](int, exec::TaskId t, engine::TimePs) { return drawn[static_cast<std::size_t>(t)]; };
    engine::Engine engine(setup.seed);
    exec::Executor executor(engine, *graph, options);
    std::vector<bool> slow;
    if (causes.stragglers) slow = slow_nodes(settings.stragglers, settings.nodes, setup.seed, iteration);
    for (std::size_t p = 0; p < stage_nodes.size(); ++p) {
      const bool straggles = std::any_of(stage_nodes[p].begin(), stage_nodes[p].end(),
                                         [&slow](int node) { return !slow.empty() && slow[static_cast<std::size_t>(node)]; });
      const double speed = setup.throttle * (straggles ? settings.stragglers.compute_speed : 1.0);
      if (speed != 1.0) executor.set_device_speed(0, static_cast<int>(p), speed);
    }
    executor.start();
    engine.run();
    return engine::ps_to_seconds(executor.finish().makespan_ps);
  };
}

/// Full mode: every iteration simulated anew with its draws and straggling nodes.
StepRunner full_runner(const TrainingSetup& setup, const IterationSettings& settings) {
  return [&setup, &settings](const Causes& causes, int iteration) {
    TrainingSetup drawn = setup;
    drawn.record_task_times = false;
    drawn.iteration = iteration;
    drawn.variability = causes.variability;
    if (causes.stragglers) {
      const std::vector<bool> slow = slow_nodes(settings.stragglers, settings.nodes, setup.seed, iteration);
      drawn.accelerator_speed.assign(static_cast<std::size_t>(settings.nodes * settings.per_node),
                                     engine::Profile::constant(1.0));
      for (std::size_t a = 0; a < drawn.accelerator_speed.size(); ++a) {
        if (slow[a / static_cast<std::size_t>(settings.per_node)]) {
          drawn.accelerator_speed[a] = engine::Profile::constant(settings.stragglers.compute_speed);
        }
      }
    } else {
      drawn.accelerator_speed.clear();
    }
    const std::unique_ptr<platform::Session> session = settings.session();
    return run_step_time(drawn, *session);
  };
}

}  // namespace

bool needs_iterations(const IterationSettings& settings) {
  return settings.iterations > 1 || settings.variability.any() || settings.stragglers.probability > 0;
}

StepStatistics simulate_iterations(const TrainingSetup& setup, const IterationSettings& settings,
                                   const TrainingStep& nominal) {
  if (settings.iterations < 1) {
    throw ConfigError(fmt::format("simulation.iterations must be at least 1, got {}", settings.iterations));
  }
  const bool full = setup.mode == platform::SimulationMode::full;
  if (full && !settings.session) throw SimulationError("full-mode iterations need a session to run each step in");
  const StepRunner run = full ? full_runner(setup, settings) : replay_runner(setup, settings, nominal);
  StepStatistics stats;
  stats.computed = true;
  stats.iterations = settings.iterations;
  stats.method = full ? "full: every iteration simulates every rank"
                      : "symmetric replay: the step's graph re-timed per iteration, the slowest rank of each "
                        "synchronising group drawn from its order statistics";
  stats.nominal_s = run(Causes{"none", {}, false}, 0);
  stats.simulated_steps = 1;
  // An iteration that draws nothing (stragglers alone, none slow this time) is the nominal step;
  // one whose only missing cause is stragglers, none slow this time, is that of every cause.
  const bool with_stragglers = settings.stragglers.probability > 0 || !settings.stragglers.nodes.empty();
  const auto step_s = [&](const Causes& causes, int iteration) {
    const bool none_slow =
        !with_stragglers || std::ranges::none_of(slow_nodes(settings.stragglers, settings.nodes, setup.seed, iteration),
                                                 [](bool slow) { return slow; });
    if (!causes.variability.any() && (!causes.stragglers || none_slow)) return stats.nominal_s;
    if (causes.draws_as_all && with_stragglers && none_slow &&
        static_cast<std::size_t>(iteration) < stats.step_times_s.size()) {
      return stats.step_times_s[static_cast<std::size_t>(iteration)];
    }
    ++stats.simulated_steps;
    return run(causes, iteration);
  };
  const std::vector<Causes> configurations = cause_configurations(settings);
  for (std::size_t c = 0; c < configurations.size(); ++c) {
    // With a single cause its run alone is the run with every cause (the same draws).
    if (c > 0 && configurations.size() == 2) {
      const double mean = stats.step_s.mean;
      stats.causes.push_back({configurations[c].name, mean, mean - stats.nominal_s, (mean - stats.nominal_s) / mean});
      break;
    }
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(settings.iterations));
    for (int k = 0; k < settings.iterations; ++k) times.push_back(step_s(configurations[c], k));
    if (c == 0) {
      stats.step_times_s = times;
      stats.step_s = engine::summarize(times);
      continue;
    }
    double sum = 0;
    for (const double t : times) sum += t;
    const double mean = sum / static_cast<double>(times.size());
    stats.causes.push_back({configurations[c].name, mean, mean - stats.nominal_s, (mean - stats.nominal_s) / stats.step_s.mean});
  }
  return stats;
}

}  // namespace clustersim::training
