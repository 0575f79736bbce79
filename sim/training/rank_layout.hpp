#pragma once
/// Megatron rank order: tensor-parallel index fastest, then context, then data, then pipeline.
/// A placement maps each global rank to the accelerator it runs on (identity: "packed"); the
/// groups below are the accelerators a collective spans.
#include <vector>

#include "sim/training/training_config.hpp"

namespace clustersim::training {

/// Global ranks of the process groups of the representative rank (tp, cp, dp indices 0) of
/// each pipeline stage.
class RankLayout {
 public:
  /// `placement[r]` is the accelerator of global rank r; empty means the identity. Throws
  /// ConfigError unless a non-empty placement is a permutation of 0..world_size-1.
  explicit RankLayout(const ParallelismConfig& parallelism, std::vector<int> placement = {});

  /// Accelerator of global rank tp_i + tp * (cp_i + cp * (dp_i + dp * pp_i)).
  int rank(int tp_index, int cp_index, int dp_index, int pp_index) const;
  /// The rank simulated for `stage`: rank(0, 0, 0, stage).
  int representative(int stage) const { return rank(0, 0, 0, stage); }
  /// Tensor-parallel group of the representative: tp consecutive ranks.
  std::vector<int> tp_group(int stage) const;
  /// Context-parallel group of the representative: cp ranks with stride tp.
  std::vector<int> cp_group(int stage) const;
  /// Data-parallel group of the representative: dp ranks with stride tp * cp.
  std::vector<int> dp_group(int stage) const;
  /// Ranks that hold the same parameter shard and reduce gradients together: the dp x cp
  /// ranks of the stage with the same tp index (Megatron's data-parallel-with-context group),
  /// cp index fastest; equals dp_group when cp == 1.
  std::vector<int> gradient_group(int stage) const;
  /// Expert-parallel group of the representative (MoE, Megatron-Core's convention): the first
  /// ep ranks of its gradient group (the EP group is carved out of the dp x cp ranks).
  std::vector<int> expert_group(int stage) const;
  /// The ranks that reduce the representative's expert gradients together: every ep-th rank
  /// of its gradient group (dp x cp / ep of them).
  std::vector<int> expert_gradient_group(int stage) const;
  /// Rank of index i of the gradient group of tp index `tp_index` on `stage` (cp fastest).
  int gradient_rank(int tp_index, int i, int stage) const;

 private:
  ParallelismConfig parallelism_;
  std::vector<int> placement_;
};

/// Full mode: instance i is the (tp, cp, dp) replica t = i mod tp, c = (i / tp) mod cp,
/// d = i / (tp cp), running every pipeline stage of the template (stage p on rank (t, c, d, p)).
struct ReplicaIndex {
  int t = 0, c = 0, d = 0;
};

inline ReplicaIndex replica_of(const ParallelismConfig& par, int instance) {
  return {instance % par.tp, (instance / par.tp) % par.cp, instance / (par.tp * par.cp)};
}

}  // namespace clustersim::training
