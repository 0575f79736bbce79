#pragma once
/// ZeRO and data-parallel sharding, written once: how a ZeRO stage splits one set of
/// parameters' weights, gradients and optimizer state over the data-parallel group that holds
/// the same shard, and which collectives keep them consistent. The memory footprint, the step
/// simulation (sim/training/step_graph), its closed form (sim/training/analytical_step), the
/// optimizer's shard (sim/training/stage_program) and the power model's traffic all read it.
///
/// Stages (Rajbhandari et al., ZeRO, SC20; Megatron-Core's distributed optimizer is stage 1):
///   0: everything replicated; gradients all-reduced once per step.
///   1: optimizer state sharded; gradients reduce-scattered, updated parameters all-gathered.
///   2: gradients sharded too: reduce-scattered every micro-batch's backward.
///   3: parameters sharded too: all-gathered before every pass of every unit (FSDP).
#include "models/comm/collective_kind.hpp"

namespace clustersim::models {

class ZeroSharding {
 public:
  /// Stage `stage` over a group of `ranks` (>= 1). Throws ConfigError for a stage outside 0..3
  /// or fewer than one rank.
  ZeroSharding(int stage, double ranks);
  /// Stage 1 over one rank (nothing to shard).
  ZeroSharding() = default;

  int stage() const { return stage_; }
  double ranks() const { return ranks_; }

  /// What a rank's share of each state is divided by: the group size where that state is
  /// sharded, else 1.
  double weight_divisor() const { return stage_ >= 3 ? ranks_ : 1.0; }
  double gradient_divisor() const { return stage_ >= 2 ? ranks_ : 1.0; }
  double optimizer_divisor() const { return stage_ >= 1 ? ranks_ : 1.0; }

  /// The gradient reduction: all-reduce (stage 0) or reduce-scatter (the shard owner keeps it).
  CollectiveKind gradient_reduction() const {
    return stage_ >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  }
  /// Stage >= 1: updated parameters are all-gathered from their owners.
  bool gathers_parameters() const { return stage_ >= 1; }
  /// Stage 2: gradients are reduce-scattered every micro-batch, and the updated parameters are
  /// gathered after the optimizer (DeepSpeed).
  bool reduces_every_microbatch() const { return stage_ == 2; }
  /// Stage 3: each unit's parameters are gathered before every pass and its gradients
  /// reduce-scattered after its backward.
  bool gathers_every_pass() const { return stage_ == 3; }
  /// Whether the parameter all-gather follows the optimizer step (stage 1 without overlap, and
  /// stage 2) rather than the next step's start (stage 1 with overlap_grad_reduce, Megatron's
  /// --overlap-param-gather).
  bool gathers_after_optimizer(bool overlap_grad_reduce) const {
    return (stage_ == 1 && !overlap_grad_reduce) || stage_ == 2;
  }

 private:
  int stage_ = 1;
  double ranks_ = 1;
};

/// The dense parameters' sharding: over the dp x cp ranks of the same tensor-parallel shard
/// (Megatron's data-parallel-with-context group).
ZeroSharding dense_sharding(int stage, int dp, int cp);
/// The routed experts' sharding: over the dp x cp / ep ranks of the same expert shard.
ZeroSharding expert_sharding(int stage, int dp, int cp, int ep);

}  // namespace clustersim::models
