#pragma once
/// The random draws of one training iteration: kernel-time jitter per kernel class, host/OS
/// noise, per-collective network jitter and the nodes that straggle in this step.
///
/// Full mode draws for every rank and task (duration_hook): each compute kernel's time is
/// its nominal time x a lognormal factor of mean 1 and its class's CV x its rank's factor for
/// the step (device_cv), plus host_noise_delay
/// x a Poisson count of mean rate x nominal time; each collective (a group task: one draw
/// for its group) or send its time x a lognormal factor of the network CV.
///
/// Symmetric mode has one representative rank per pipeline stage, so it draws what its group
/// would see (SymmetricDraws::durations): a rank's kernels between two synchronisations of its
/// group run on their own, and the collective that ends the run waits for the slowest of the n
/// members. The representative's compute stream is therefore split into segments, each ending
/// where the stream waits for a collective over n > 1 ranks (a blocking TP/CP/EP collective on
/// the stream, or a task that waits on an overlapped one or on a data-parallel one), or at the
/// stream's end (n = 1). A segment's time on one rank, S = sum t_i X_i, is approximated by the
/// lognormal of the same mean m = sum t_i and variance v = sum (cv_i t_i)^2 (Fenton-Wilkinson),
/// and its maximum over n iid ranks is drawn from its order statistics: F^-1(U^(1/n)). Every
/// kernel of the segment is scaled by max / m. Host noise is drawn the same way, as the largest
/// Poisson count of the n ranks, and added to the segment's last kernel. A rank's speed over the
/// step (device_cv) is one draw per stage: the slowest of the stage's tp x cp x dp ranks, which
/// every collective of the stage waits for. What this neglects
/// (docs/reliability.md, "Faults"): differences that ranks carry across a synchronisation of
/// a smaller group into one of a larger group (pipelines drifting apart before a data-parallel
/// collective), and the skew an overlapped collective sees at its start.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/exec/task_graph.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/platform/variability.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::training {

/// Which draws one iteration makes: its index, the seed, and the causes switched on (turning a
/// cause off leaves the others' draws unchanged, so each cause's share can be measured).
struct IterationDraws {
  std::uint64_t seed = 1;
  int iteration = 0;
  platform::VariabilitySpec variability;
};

/// The ranks that synchronise in a collective along `dimension` (tensor: tp, context: cp,
/// expert: ep, data: dp x cp, expert data: dp x cp / ep, pipeline and none: 1).
int group_size(const ParallelismConfig& par, GroupDimension dimension);

/// Per node of `nodes`: slow in `iteration` (listed in `stragglers.nodes`, or drawn with its
/// probability from the seed; the same nodes in both simulation modes).
std::vector<bool> slow_nodes(const platform::Stragglers& stragglers, int nodes, std::uint64_t seed, int iteration);

/// Full mode: the executor's duration hook (exec::ExecutionOptions::duration) for `step`'s
/// template under `draws`. Empty when `draws` has no variability.
std::function<engine::TimePs(int, exec::TaskId, engine::TimePs)> duration_hook(const StepGraph& step,
                                                                                const IterationDraws& draws);

/// Symmetric mode: the duration of every task of `step`'s graph (nominal_ps: every task's
/// nominal duration, asynchronous ones as they ran) for one iteration, drawn as the header says.
/// Its segments are planned once per graph, when it is constructed (segments()).
class SymmetricDraws {
 public:
  SymmetricDraws(const StepGraph& step, const ParallelismConfig& par);
  std::vector<engine::TimePs> durations(std::span<const engine::TimePs> nominal_ps, const IterationDraws& draws) const;
  /// Segments planned (for tests): per stage, each segment's tasks and group size.
  struct Segment {
    std::vector<exec::TaskId> tasks;
    int group = 1;
  };
  const std::vector<std::vector<Segment>>& segments() const { return segments_; }

 private:
  const StepGraph& step_;
  int stage_ranks_ = 1;                         // tp x cp x dp: the ranks of one stage
  std::vector<std::vector<Segment>> segments_;  // per stage
  std::vector<exec::TaskId> communication_;     // every communication task
};

}  // namespace clustersim::training
