#pragma once
/// The candidate parallel configurations of a parallelism search: every TP/PP/DP/CP split,
/// virtual-stage count, micro-batch size, ZeRO stage and recompute policy the scenario's
/// model, batch and cluster admit, in a stable order.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::sweep {

/// One configuration the search evaluates. `vp > 1` means the interleaved 1F1B schedule.
struct Candidate {
  int tp = 1, pp = 1, dp = 1, cp = 1, vp = 1;
  std::int64_t micro_batch = 1;  ///< sequences per micro-batch
  int zero = 0;                  ///< ZeRO stage 0..3
  training::Recompute recompute = training::Recompute::none;
  int ep = 1;  ///< expert parallelism (MoE models), carved out of dp x cp
  /// Layer layout: false, even (layers / (pp vp) per virtual stage); true, the embedding and
  /// the loss each take one layer's place (Megatron-Core's --account-for-embedding-in-pipeline-
  /// split and --account-for-loss-in-pipeline-split): (layers + 2) / (pp vp) per virtual
  /// stage, one fewer on the very first and the very last.
  bool ends_lighter = false;

  /// The stable ordering key (tp, pp, dp, cp, ep, vp, layout, micro_batch, zero, recompute):
  /// ties in the ranking are broken by it, so the output order never depends on thread
  /// scheduling.
  auto key() const {
    return std::tuple(tp, pp, dp, cp, ep, vp, ends_lighter, micro_batch, zero, static_cast<int>(recompute));
  }
  friend bool operator==(const Candidate& a, const Candidate& b) { return a.key() == b.key(); }
  friend bool operator<(const Candidate& a, const Candidate& b) { return a.key() < b.key(); }
  /// "tp8 pp4 dp32 cp1 vp1 mb1 zero1 selective" (" ep8" appended when ep > 1, " ends-1" when
  /// the first and last virtual stage hold one layer fewer).
  std::string label() const;
};

/// Limits of the enumeration. 0 means "derive from the scenario".
struct SearchSpaceOptions {
  int max_tp = 0;   ///< 0: the cluster's scale-up domain (tp stays on NVLink)
  int max_pp = 0;   ///< 0: no limit beyond layers and accelerators
  int max_cp = 8;   ///< context-parallel degrees 1..max_cp (powers of two dividing seq_len)
  int max_vp = 8;   ///< virtual stages per pipeline stage
  int max_ep = 0;   ///< 0: up to the model's experts (MoE models only; dense models use ep 1)
  std::int64_t max_micro_batch = 0;  ///< 0: no limit beyond global_batch / dp
  /// ZeRO stages to try (each with its own communication: sim/training/training_simulation.cpp).
  std::vector<int> zero_stages = {0, 1, 2, 3};
  std::vector<training::Recompute> recompute_policies = {training::Recompute::none, training::Recompute::selective,
                                                         training::Recompute::full};
};

/// Accelerators in one scale-up domain of the scenario's cluster (scale_up.domain_size, or
/// one node when it is 0).
int scale_up_domain_size(const scenario::Scenario& scenario);

/// Accelerators the training job spans: the cluster's, less a background job's
/// (cluster.background.gpus).
int training_accelerators(const scenario::Scenario& scenario);

/// Every candidate, sorted by Candidate::key():
///   tp divides num_attention_heads (and num_key_value_heads when kv heads >= tp) and is at
///      most max_tp;
///   cp is a power of two dividing seq_len, at most max_cp;
///   pp divides num_hidden_layers, at most max_pp;
///   dp = training_accelerators / (tp pp cp) is a whole number;
///   vp = 1, or (pp > 1) a divisor of layers / pp up to max_vp with the micro-batch count a
///      multiple of pp (Megatron's interleaved-schedule requirement);
///   ep (MoE models) divides num_experts and dp x cp, at most max_ep; 1 for dense models;
///   micro_batch is a power of two dividing global_batch / dp;
///   every listed ZeRO stage and recompute policy.
/// Throws ConfigError for non-positive limits, an empty stage or policy list, or a ZeRO stage
/// outside 0..3.
std::vector<Candidate> enumerate_candidates(const scenario::Scenario& scenario, const SearchSpaceOptions& options);

/// The scenario's training workload with the candidate's split, schedule (interleaved when
/// vp > 1; 1F1B when the scenario asked for interleaved and vp == 1), micro-batch size, ZeRO
/// stage and recompute policy. Everything else (sequence parallelism, overlap, precision)
/// is kept.
training::TrainingWorkload apply_candidate(const training::TrainingWorkload& base, const Candidate& candidate);

/// "none" | "selective" | "full".
const char* recompute_name(training::Recompute recompute);

}  // namespace clustersim::sweep
