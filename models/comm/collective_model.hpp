#pragma once
/// Closed-form collective times for the training step (the `analytical` fidelity): the
/// algorithm and protocol the tuner picks (collective_tuner.hpp, NCCL's way: every applicable
/// (algorithm, protocol) is costed and the fastest wins, or the scenario's fixed algorithm
/// where it applies), lowered onto the real topology (collective_plan.hpp) and timed by the
/// analytical evaluator (plan_evaluators.hpp). The flow fidelity runs the same plans as flows
/// (sim/platform/flow_comm.hpp), so an uncontended collective takes the same time in
/// both.
///
/// Because a plan's latency does not depend on the size and its transfer time is linear in
/// it, each (collective, group) is lowered once per candidate and cached as
/// time(S) = latency + S x seconds_per_byte; time_s is then a minimum over a few lines.
/// Other collectives' traffic is not seen (no contention between collectives: that is the
/// `flow` fidelity's job).
#include <cstdint>
#include <unordered_map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "models/comm/collective_tuner.hpp"
#include "topologies/topology.hpp"

namespace clustersim::models {

/// The scenario's collective-library settings (`simulation.comm`).
struct CommConfig {
  TunerParams tuner;
  /// Fixed algorithm where it can run the collective on the group; elsewhere (e.g. nvls for
  /// a group that spans nodes) the tuner chooses. Empty: auto everywhere.
  std::optional<Algorithm> algorithm;
};

/// Time of collectives among accelerators, given by global accelerator index. Not
/// thread-safe (it caches, like the Topology it wraps); one per simulation or thread.
class CollectiveModel {
  /// One (algorithm, protocol) of a (kind, group): time(S) = latency + S x seconds_per_byte.
  struct Line {
    Algorithm algorithm = Algorithm::ring;
    Protocol protocol = Protocol::simple;
    double latency_s = 0;
    double seconds_per_byte = 0;
  };

 public:
  /// Keeps a reference to `topology`, which must outlive the model. Throws ConfigError for
  /// bad tunables or hardware (check_tuner_params, check_collective_hardware).
  CollectiveModel(const topologies::Topology& topology, CommConfig config, CollectiveHardware hardware);

  /// Seconds. `bytes` follows nccl-tests: the per-rank buffer for all-reduce, the full output
  /// for all-gather, the full input for reduce-scatter, the message for send/recv.
  /// `group` lists the participants in ring order; a group of one, or 0 bytes, costs
  /// nothing; send_recv needs exactly two (source, destination). Throws ConfigError for an
  /// empty group, a repeated or out-of-range accelerator, or negative or non-finite bytes.
  double time_s(CollectiveKind kind, std::span<const int> group, double bytes) const;

  /// time_s of one (kind, group) at any size, with the group looked up once: for a caller
  /// that costs the same group many times (a ZeRO-3 stage gathers each unit over its
  /// data-parallel group). Valid while the model lives; the same numbers as time_s.
  class Curve {
   public:
    /// time_s(kind, group, bytes) for the curve's kind and group.
    double time_s(double bytes) const;

   private:
    friend class CollectiveModel;
    CollectiveKind kind_{};
    std::span<const Line> lines_;  ///< empty: a group of one, which costs nothing
  };

  /// The curve of (kind, group); validates the group as time_s does (ConfigError).
  Curve curve(CollectiveKind kind, std::span<const int> group) const;

  /// Seconds for a point-to-point transfer of `bytes` from `src` to `dst` (0 when src == dst).
  double send_recv_time_s(int src, int dst, double bytes) const;

  /// The algorithm and protocol time_s uses for (kind, group, bytes), lowered. Needs a group
  /// of >= 2 and bytes > 0 (ConfigError otherwise).
  TunedPlan plan(CollectiveKind kind, std::span<const int> group, double bytes) const;

  /// The plans of `kind` of `bytes` when every group of `groups` runs it at once (replicas of
  /// one collective): the algorithm and protocol plan() picks for the first group of two or
  /// more, lowered on each such group (a group it cannot run on gets its own choice), in the
  /// groups' order. Groups of fewer than two are dropped. Throws ConfigError as plan().
  std::vector<CollectivePlan> replica_plans(CollectiveKind kind, std::span<const std::vector<int>> groups,
                                            double bytes) const;

  const CollectiveTuner& tuner() const { return tuner_; }
  const CommConfig& config() const { return config_; }
  const topologies::Topology& topology() const { return tuner_.lowering().topology(); }

 private:
  const std::vector<Line>& lines(CollectiveKind kind, std::span<const int> group) const;
  const Line& best_line(CollectiveKind kind, std::span<const int> group, double bytes) const;
  /// The checks of a group that need no lowering: not empty; a group of one is not a
  /// send_recv and names an accelerator of the topology (ConfigError).
  void check_single(CollectiveKind kind, std::span<const int> group) const;

  /// The costed lines of one (kind, group), in the bucket of their hash.
  struct CachedLines {
    CollectiveKind kind;
    std::vector<int> group;
    std::vector<Line> lines;
  };

  CollectiveTuner tuner_;
  CommConfig config_;
  /// Hash of (kind, group) -> the entries with that hash. Looked up without copying the group
  /// (the search costs the same groups millions of times); never iterated, so its order
  /// cannot reach a result.
  mutable std::unordered_map<std::uint64_t, std::vector<CachedLines>> cache_;
};

}  // namespace clustersim::models
