#pragma once
/// What a training workload asks for: model, batch, precision, parallel split, schedule.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/dtype.hpp"
#include "models/llm/moe_runtime.hpp"
#include "models/llm/transformer_spec.hpp"

namespace clustersim::training {

enum class Recompute { none, selective, full };
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };
/// `flash`: the FlashAttention-style fused kernel family the accelerator preset names
/// (models::AcceleratorSpec::attention_kernel); `fa2` / `fa3` / `cudnn`: that fused family explicitly
/// (models/accelerator/attention_cost.hpp); `unfused`: the s x s scores go through HBM
/// (Megatron before 2022).
enum class AttentionKernel { flash, fa2, fa3, cudnn, unfused };
/// How collectives are timed: `analytical` (closed-form CollectiveModel, no contention between
/// collectives) or `flow` (phases of flows on one shared max-min fair FlowNetwork).
enum class NetworkFidelity { analytical, flow };
/// Which ranks the step simulates: one representative per pipeline stage (`symmetric`) or all
/// of them (`full`).
enum class SimulationMode { symmetric, full };

/// A second job sharing the fabric: the last `gpus` accelerators of the cluster repeat a
/// collective of `bytes` back to back, in accelerator order, for the whole training step
/// (flow fidelity; the analytical fidelity has no contention and ignores it).
struct BackgroundTraffic {
  enum class Pattern { ring, all_to_all };
  Pattern pattern = Pattern::ring;  ///< ring all-reduce, or pairwise all-to-all
  int gpus = 0;                     ///< 0: no background job
  double bytes = 0;                 ///< per collective, nccl-tests convention
};

/// Parallel split. Rank order (fastest-varying first) is tp, cp, dp, pp, as in Megatron.
/// ZeRO-3 collective granularity (ParallelismConfig::zero3_granularity).
enum class Zero3Granularity { layer, tensor };

struct ParallelismConfig {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vp = 1;
  bool sequence_parallel = true;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int zero = 1;  ///< ZeRO stage 0..3
  /// What ZeRO-3 gathers and reduce-scatters at a time: a whole unit (a layer, the embedding,
  /// the head: FSDP units, Megatron-FSDP, DeepSpeed's coalesced fetch), or each parameter
  /// tensor on its own (DeepSpeed stage 3 as of 2021: one collective per parameter).
  Zero3Granularity zero3_granularity = Zero3Granularity::layer;
  /// ZeRO-3's parameter all-gathers return one tensor per rank (PyTorch's list-form
  /// all_gather, which DeepSpeed stage 3 called in 2021): after the collective the process
  /// group copies the flat buffer out into each rank's tensor, one copy kernel per rank on the
  /// collective's stream (training_simulation.cpp, zero3_gather_copies_s).
  bool zero3_list_gathers = false;
  /// Transformer layers per pipeline stage for an uneven split (e.g. fewer on the first and
  /// last stages, which also hold the embedding and the LM head); empty: an even split.
  std::vector<int> stage_layers;
  int world_size() const { return tp * pp * dp * cp; }
};

/// A training workload on a given model.
struct TrainingWorkload {
  models::TransformerSpec model;
  std::int64_t seq_len = 0;
  std::int64_t global_batch = 0;  ///< sequences per optimizer step
  std::int64_t micro_batch = 1;   ///< sequences per micro-batch
  models::Dtype precision = models::Dtype::bf16;
  ParallelismConfig parallelism;
  Recompute recompute = Recompute::selective;
  AttentionKernel attention = AttentionKernel::flash;
  /// Mixture-of-experts routing (capacity factor, imbalance); ignored for dense models.
  models::MoeRuntime moe;
  bool overlap_grad_reduce = true;  ///< DP gradient reduction overlaps the backward pass
  /// Megatron-Core / Transformer Engine --tp-comm-overlap (needs sequence parallelism): each
  /// layer's TP all-gather and reduce-scatter is split into tp chunks pipelined with the GEMM
  /// that consumes or produces it; one chunk stays exposed.
  bool tp_comm_overlap = false;
  /// Megatron's asynchronous TP communication in the backward (LinearWithGradAccumulation-
  /// AndAsyncCommunication, Megatron-LM since 2022): a column-parallel linear launches the
  /// all-reduce (reduce-scatter with sequence parallelism) of its input gradient right after
  /// the dgrad GEMM and runs its wgrad GEMM beside it. false: the collective follows the wgrad
  /// (Megatron-LM 2021 and its forks). Collectives Transformer Engine already overlaps
  /// (tp_comm_overlap) are not affected.
  bool tp_async_backward = true;
  double grad_bytes_per_param = 2;  ///< bytes per gradient element in the DP reduction
  /// Tokens of a whole training run, for the time / energy / cost to train them; 0: not asked.
  double train_tokens = 0;

  /// Micro-batches each pipeline runs per step: global_batch / (dp * micro_batch).
  std::int64_t microbatches_per_pipeline() const {
    return global_batch / (parallelism.dp * micro_batch);
  }
};

}  // namespace clustersim::training
