#pragma once
/// The time of one serving iteration on one model instance: the shared transformer op
/// description (models/llm/transformer_ops.hpp) applied to the exact batch composition, costed
/// with the pool's compute model and the platform's collective model.
///
/// A batch is a list of entries, each one sequence's work in this iteration: a prefill chunk
/// (query tokens q > 1 after kv - q cached tokens) or a decode step (q = 1, or 1 + the
/// speculative tokens being verified). With T = the batch's query tokens and S its sequences:
///   * the GEMMs, norms, activations, MoE routing and the TP / EP collectives run over all T
///     tokens (they depend on T only);
///   * attention is one variable-length kernel per layer over every sequence (FlashAttention's
///     varlen / paged kernels): the sum of the per-sequence (q, kv) work with one launch;
///   * the head computes the next-token logits of each of the S sequences;
///   * pipeline parallelism: the stages run one after the other for a batch, with the T h
///     activations sent between consecutive stages (an instance keeps pp batches in flight:
///     serving_workload's virtual engines);
///   * a host overhead per iteration (the framework's scheduling, sampling and launches).
/// With InstanceLayout::record_traffic the cost can also list the iteration's collectives per
/// group and kind (cost()'s `traffic`), for a replica whose groups cross the scale-out fabric to
/// run them through the platform's CommRuntime (docs/serving.md, "Collectives across scale-up
/// domains").
/// cost() memoises the T-dependent part by T, the head by S, prefill attention by (q, kv), and
/// folds the decode entries into one attention shape of their mean KV length (decode attention
/// is linear in KV length while it is memory-bound); exact() costs the op list of the exact
/// batch. bench/serving_bench.cpp and tests/sim/serving hold them within 1 %.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "models/llm/moe_runtime.hpp"
#include "models/llm/transformer_ops.hpp"
#include "models/llm/transformer_spec.hpp"

namespace clustersim::serving {

/// One sequence's work in an iteration.
struct BatchEntry {
  std::int64_t query_tokens = 1;  ///< tokens computed now (a prefill chunk, or 1 + speculated)
  std::int64_t kv_tokens = 1;     ///< keys they attend to, these included
  bool decode = false;            ///< a decode step (cost() folds these into one shape)
};

/// One collective kind on one of an instance's groups, summed over an iteration's ops: what a
/// replica whose group crosses the scale-out fabric runs through the platform's CommRuntime.
struct GroupTraffic {
  models::CollectiveKind kind = models::CollectiveKind::all_reduce;
  int group = 0;             ///< InstanceLayout::group(): 0 TP, 1 EP, 2 + s stage s's send to s + 1
  double bytes = 0;          ///< summed payload of its ops (nccl-tests convention, per op)
  double ops = 0;            ///< how many ops
  double closed_form_s = 0;  ///< their closed-form time, part of time_s and communication_s
};

/// How a model instance is laid out.
struct InstanceLayout {
  models::TransformerSpec model;
  models::TransformerSharding sharding;  ///< tp, ep, dtypes, weight bytes (cp and sequence parallelism unused)
  models::MoeRuntime routing;
  int pp = 1;
  /// Accelerators of the instance, stage-major (stage s holds [s tp, (s + 1) tp)); size tp x pp.
  std::vector<int> accelerators;
  double host_overhead_s = 0;  ///< per iteration
  /// List each iteration's collectives per group and kind (cost()'s `traffic`): set when an
  /// instance's group crosses the scale-out fabric.
  bool record_traffic = false;

  /// Groups an instance communicates over, by id: 0 the TP group (stage 0's, which times every
  /// stage's), 1 the EP group (the first ep of it), 2 + s the send from stage s to stage s + 1.
  /// `first` offsets them to an instance that starts there (this layout's first accelerator
  /// when negative). Empty for an id the layout does not have.
  std::vector<int> group(int id, int first = -1) const;
  /// Number of group ids (2 + pp - 1).
  int groups() const { return 1 + pp; }
};

/// What one iteration costs.
struct IterationCost {
  double time_s = 0;           ///< wall time: compute + communication + host
  double compute_bound_s = 0;  ///< time of ops limited by math throughput
  double memory_bound_s = 0;   ///< time of ops limited by memory bandwidth (weights, KV, activations)
  double communication_s = 0; ///< TP / EP collectives and pipeline transfers
  double host_s = 0;           ///< the framework's per-iteration overhead
  /// The kernels' time by class (simulation.variability's per-class CVs): GEMMs, attention,
  /// every other kernel (norms, activations, routing, embedding). They sum to
  /// compute_bound_s + memory_bound_s.
  double gemm_s = 0, attention_kernel_s = 0, elementwise_s = 0;
  double flops = 0;            ///< model FLOPs of the iteration (every stage)
  double hbm_bytes = 0;        ///< HBM bytes one device moves
};

class IterationCostModel {
 public:
  /// Binds `compute` (the pool's accelerator) and `collectives` (the platform's), which must
  /// outlive it. Throws ConfigError for an invalid layout (tp not dividing the heads, pp above
  /// the layers, accelerators not tp x pp).
  IterationCostModel(const models::ComputeModel& compute, const models::CollectiveModel& collectives,
                     InstanceLayout layout);

  /// Memoised cost of `batch` (non-empty). With InstanceLayout::record_traffic and `traffic`
  /// set, also its collectives per group and kind (their closed-form time is in the cost).
  IterationCost cost(std::span<const BatchEntry> batch, std::vector<GroupTraffic>* traffic = nullptr);
  /// The op list of the exact batch, costed op by op (no memo): the reference cost() is held to.
  IterationCost exact(std::span<const BatchEntry> batch, std::vector<GroupTraffic>* traffic = nullptr) const;

  const InstanceLayout& layout() const { return layout_; }
  /// KV-cache bytes per token on one device of the instance (its stage's layers, its TP share).
  double kv_bytes_per_token(double kv_element_bytes) const;

 private:
  /// A memoised part and, with record_traffic, its collectives.
  struct Part {
    IterationCost cost;
    std::vector<GroupTraffic> traffic;
  };
  const Part& tokens_part(std::int64_t tokens);
  const Part& head_part(std::int64_t sequences);
  double attention_s(std::int64_t q, std::int64_t kv, std::int64_t sequences, models::SequencePhase phase,
                     double& flops, double& bytes, bool& compute_bound);
  /// MLA: one layer's up-projection of `tokens` cached latents (the prefill chunks' context).
  const IterationCost& context_part(std::int64_t tokens);
  /// The phase a decode step or prefill chunk is costed in: training (every key computed) unless
  /// the model is MLA, whose decode and prefill differ (models::SequencePhase).
  models::SequencePhase phase_of(bool decode) const;
  /// Sums `ops` (communication over the instance's groups); attention ops skipped when
  /// `skip_attention`.
  void add_ops(const std::vector<models::TransformerOp>& ops, double repeat, bool skip_attention,
               IterationCost& into, std::vector<GroupTraffic>* traffic) const;
  /// Adds the sends between consecutive stages of `tokens` activations to `into`.
  void add_pipeline_transfers(std::int64_t tokens, IterationCost& into, std::vector<GroupTraffic>* traffic) const;

  const models::ComputeModel* compute_;
  const models::CollectiveModel* collectives_;
  InstanceLayout layout_;
  std::vector<int> tp_group_, ep_group_;
  double launch_s_ = 0;
  std::unordered_map<std::int64_t, Part> tokens_memo_, head_memo_;
  std::unordered_map<std::uint64_t, IterationCost> attention_memo_;
  std::unordered_map<std::int64_t, IterationCost> context_memo_;
};

}  // namespace clustersim::serving
