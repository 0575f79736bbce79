#include "sim/training/step_variability.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/engine/random_draws.hpp"
#include "sim/training/op_kind.hpp"

namespace clustersim::training {
namespace {

// Purposes of draws: each gets its own keys, so turning one cause off leaves the others alone.
enum Purpose : std::uint64_t { kKernel = 1, kHost, kNetwork, kSegment, kSegmentHost, kStraggler, kDevice };

double kernel_cv(const platform::VariabilitySpec& v, KernelClass kernel) {
  switch (kernel) {
    case KernelClass::gemm: return v.gemm_cv;
    case KernelClass::attention: return v.attention_cv;
    case KernelClass::elementwise: return v.elementwise_cv;
  }
  return v.elementwise_cv;
}

bool is_comm(const exec::Task& task) { return task.traits.kind == exec::TaskKind::communication; }

engine::TimePs scaled(engine::TimePs ps, double factor) {
  return static_cast<engine::TimePs>(std::llround(static_cast<double>(ps) * factor));
}

}  // namespace

int group_size(const ParallelismConfig& par, GroupDimension dimension) {
  switch (dimension) {
    case GroupDimension::tensor: return par.tp;
    case GroupDimension::context: return par.cp;
    case GroupDimension::expert: return par.ep;
    case GroupDimension::data: return par.dp * par.cp;
    case GroupDimension::expert_data: return par.dp * par.cp / std::max(1, par.ep);
    case GroupDimension::pipeline:
    case GroupDimension::none: return 1;
  }
  return 1;
}

std::vector<bool> slow_nodes(const platform::Stragglers& stragglers, int nodes, std::uint64_t seed, int iteration) {
  std::vector<bool> slow(static_cast<std::size_t>(nodes), false);
  for (const int node : stragglers.nodes) {
    if (node >= 0 && node < nodes) slow[static_cast<std::size_t>(node)] = true;
  }
  if (stragglers.probability > 0) {
    for (int node = 0; node < nodes; ++node) {
      const double u = engine::uniform_open01(engine::draw_key(
          seed, {kStraggler, static_cast<std::uint64_t>(iteration), static_cast<std::uint64_t>(node)}));
      if (u < stragglers.probability) slow[static_cast<std::size_t>(node)] = true;
    }
  }
  return slow;
}

std::function<engine::TimePs(int, exec::TaskId, engine::TimePs)> duration_hook(const StepGraph& step,
                                                                                const IterationDraws& draws) {
  if (!draws.variability.any()) return {};
  // Tasks on a stage's compute stream are kernels (or blocking collectives); others are
  // communication (network jitter) or copies and host work (unchanged).
  std::vector<bool> on_compute(step.graph.stream_count(), false);
  for (const StageStreams& stage : step.stages) on_compute[static_cast<std::size_t>(stage.compute)] = true;
  return [&step, draws, on_compute](int instance, exec::TaskId task, engine::TimePs nominal_ps) {
    const exec::Task& info = step.graph.task(task);
    const platform::VariabilitySpec& v = draws.variability;
    const auto key = [&](Purpose purpose) {
      return engine::draw_key(draws.seed, {purpose, static_cast<std::uint64_t>(draws.iteration),
                                           static_cast<std::uint64_t>(instance), static_cast<std::uint64_t>(task)});
    };
    if (is_comm(info)) {
      if (v.network_cv <= 0) return nominal_ps;
      return scaled(nominal_ps,
                    engine::lognormal_mean1_upper_quantile(v.network_cv, engine::uniform_open01(key(kNetwork))));
    }
    if (!on_compute[static_cast<std::size_t>(info.stream)]) return nominal_ps;
    // The rank's speed this step (one draw per instance and stage) times the kernel's own draw.
    const auto device = static_cast<std::uint64_t>(step.graph.stream_device(info.stream));
    // (No key is drawn for a factor of cv 0: it would be 1 whatever the draw.)
    const double rank_factor =
        v.device_cv > 0 ? engine::lognormal_mean1_upper_quantile(
                              v.device_cv, engine::uniform_open01(engine::draw_key(
                                               draws.seed, {kDevice, static_cast<std::uint64_t>(draws.iteration),
                                                            static_cast<std::uint64_t>(instance), device})))
                        : 1.0;
    const double kernel = kernel_cv(v, step.kernel_class(task));
    const double factor =
        kernel > 0 ? rank_factor * engine::lognormal_mean1_upper_quantile(kernel, engine::uniform_open01(key(kKernel)))
                   : rank_factor;
    engine::TimePs drawn = scaled(nominal_ps, factor);
    if (v.host_noise()) {
      const double mean = v.host_noise_rate_per_s * engine::ps_to_seconds(nominal_ps);
      const auto hits = engine::poisson_upper_quantile(mean, engine::uniform_open01(key(kHost)));
      drawn += static_cast<engine::TimePs>(hits) * engine::seconds_to_ps(v.host_noise_delay_s);
    }
    return drawn;
  };
}

SymmetricDraws::SymmetricDraws(const StepGraph& step, const ParallelismConfig& par)
    : step_(step), stage_ranks_(par.tp * par.cp * par.dp) {
  const exec::TaskGraph& graph = step.graph;
  // The largest group a task waits for through its prerequisites (collectives only).
  std::vector<int> waits_for(graph.task_count(), 1);
  for (const exec::Dependency& d : graph.dependencies()) {
    const exec::Task& prerequisite = graph.task(d.prerequisite);
    if (!is_comm(prerequisite)) continue;
    int& n = waits_for[static_cast<std::size_t>(d.task)];
    n = std::max(n, group_size(par, step.collective(d.prerequisite).dimension));
  }
  for (exec::TaskId t = 0; t < static_cast<exec::TaskId>(graph.task_count()); ++t) {
    if (is_comm(graph.task(t))) communication_.push_back(t);
  }
  for (const StageStreams& stage : step.stages) {
    std::vector<Segment>& segments = segments_.emplace_back();
    Segment current;
    const auto close = [&](int group) {
      if (!current.tasks.empty()) {
        current.group = group;
        segments.push_back(std::move(current));
      }
      current = Segment{};
    };
    for (const exec::TaskId t : graph.stream_tasks(stage.compute)) {
      if (is_comm(graph.task(t))) {
        // A blocking collective on the stream: its members arrive after their own segments.
        close(group_size(par, step.collective(t).dimension));
        continue;
      }
      if (waits_for[static_cast<std::size_t>(t)] > 1) close(waits_for[static_cast<std::size_t>(t)]);
      current.tasks.push_back(t);
    }
    close(1);
  }
}

std::vector<engine::TimePs> SymmetricDraws::durations(std::span<const engine::TimePs> nominal_ps,
                                                      const IterationDraws& draws) const {
  std::vector<engine::TimePs> out(nominal_ps.begin(), nominal_ps.end());
  const platform::VariabilitySpec& v = draws.variability;
  if (!v.any()) return out;
  const auto iteration = static_cast<std::uint64_t>(draws.iteration);
  for (std::size_t p = 0; p < segments_.size(); ++p) {
    // The stage's ranks synchronise every step, so the slowest of them sets its pace.
    const double rank_factor = engine::lognormal_mean1_upper_quantile(
        v.device_cv,
        engine::max_upper_tail(engine::uniform_open01(engine::draw_key(draws.seed, {kDevice, iteration, p})),
                               static_cast<double>(stage_ranks_)));
    for (std::size_t s = 0; s < segments_[p].size(); ++s) {
      const Segment& segment = segments_[p][s];
      double mean_ps = 0, variance_ps2 = 0;
      for (const exec::TaskId t : segment.tasks) {
        const double ps = static_cast<double>(nominal_ps[static_cast<std::size_t>(t)]);
        const double cv = kernel_cv(v, step_.kernel_class(t));
        mean_ps += ps;
        variance_ps2 += cv * cv * ps * ps;
      }
      if (!(mean_ps > 0)) continue;
      const auto n = static_cast<double>(segment.group);
      if (variance_ps2 > 0 || rank_factor != 1.0) {
        const double q = engine::max_upper_tail(
            engine::uniform_open01(engine::draw_key(draws.seed, {kSegment, iteration, p, s})), n);
        const double factor =
            rank_factor * engine::lognormal_mean1_upper_quantile(std::sqrt(variance_ps2) / mean_ps, q);
        for (const exec::TaskId t : segment.tasks) out[static_cast<std::size_t>(t)] = scaled(out[static_cast<std::size_t>(t)], factor);
      }
      if (v.host_noise()) {
        const double q = engine::max_upper_tail(
            engine::uniform_open01(engine::draw_key(draws.seed, {kSegmentHost, iteration, p, s})), n);
        const auto hits =
            engine::poisson_upper_quantile(v.host_noise_rate_per_s * engine::ps_to_seconds(
                                                                         static_cast<engine::TimePs>(mean_ps)),
                                           q);
        out[static_cast<std::size_t>(segment.tasks.back())] +=
            static_cast<engine::TimePs>(hits) * engine::seconds_to_ps(v.host_noise_delay_s);
      }
    }
  }
  if (v.network_cv > 0) {
    for (const exec::TaskId t : communication_) {
      const double u = engine::uniform_open01(engine::draw_key(draws.seed, {kNetwork, iteration, 0, static_cast<std::uint64_t>(t)}));
      out[static_cast<std::size_t>(t)] = scaled(out[static_cast<std::size_t>(t)], engine::lognormal_mean1_upper_quantile(v.network_cv, u));
    }
  }
  return out;
}

}  // namespace clustersim::training
