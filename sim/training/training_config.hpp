#pragma once
#include <optional>
/// What a training workload asks for: model, batch, precision, parallel split, schedule.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/attention_kernel_family.hpp"
#include "models/accelerator/dtype.hpp"
#include "models/llm/moe_runtime.hpp"
#include "models/llm/transformer_spec.hpp"
#include "models/llm/memory_footprint.hpp"
#include "sim/config/name_table.hpp"
#include "sim/platform/workload.hpp"

namespace clustersim::training {

/// Activation recomputation and the pipeline schedule: the memory model's enums (one of each).
using Recompute = models::RecomputePolicy;
using PipelineSchedule = models::ScheduleKind;
/// `flash`: the FlashAttention-style fused kernel family the accelerator preset names
/// (models::AcceleratorSpec::attention_kernel); `fa2` / `fa3` / `cudnn` / `fa4` / `fused_sdpa` /
/// `pallas`: that fused family explicitly (models/accelerator/attention_cost.hpp; it must run on
/// the accelerator's matrix path); `unfused`: the s x s scores go through HBM (Megatron before
/// 2022).
enum class AttentionKernel { flash, fa2, fa3, cudnn, fa4, fused_sdpa, pallas, unfused };
/// ZeRO-3 collective granularity (ParallelismConfig::zero3_granularity).
enum class Zero3Granularity { layer, tensor };

/// "none", "selective", "full", "op".
const config::NameTable<Recompute>& recompute_names();
/// The training stack whose memory conventions the footprint follows: Megatron-Core / NeMo
/// (Transformer Engine fp8 weight caching, fused vocab-parallel cross-entropy) or torchtitan
/// (PyTorch FSDP2, torchao Float8 casts per use, cross_entropy on fp32 logits).
enum class TrainingFramework { megatron, torchtitan };
/// "megatron", "torchtitan".
const config::NameTable<TrainingFramework>& training_framework_names();
/// The loss kernel (models::LossKernel), or the framework's own: Megatron's fused
/// vocab-parallel cross-entropy, torchtitan's eager cross_entropy (compiled only with
/// torch.compile, and only in the torchtitan versions that compile the loss).
enum class CrossEntropy { automatic, fused, eager, compiled };
/// "auto", "fused", "eager", "compiled".
const config::NameTable<CrossEntropy>& cross_entropy_names();
/// The loss kernel a workload runs: `choice`, or for auto the framework's.
models::LossKernel loss_kernel(CrossEntropy choice, TrainingFramework framework);
/// The framework's host time per op of the stage programs, seconds: what plain PyTorch eager
/// took to issue the forward and backward of a GPT layer on the faster of the two H200 hosts
/// measured (validation/kernels/host_gating.py: 26.98 ms for 24 layers of 24 modelled ops, 1,403
/// kernels; docs/models.md "Host dispatch"), for both frameworks.
inline constexpr double kFrameworkHostOpTimeS = 47e-6;
/// "1f1b", "gpipe", "interleaved".
const config::NameTable<PipelineSchedule>& pipeline_schedule_names();
/// "flash", "unfused" and the fused family names (models::attention_kernel_family_names()).
const config::NameTable<AttentionKernel>& attention_kernel_names();
/// The fused family `attention` names explicitly; nullopt for flash (the accelerator's) and
/// unfused.
std::optional<models::AttentionKernelFamily> explicit_family(AttentionKernel attention);
/// "layer", "tensor".
const config::NameTable<Zero3Granularity>& zero3_granularity_names();

/// Parallel split. Rank order (fastest-varying first) is tp, cp, dp, pp, as in Megatron.
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

/// The optimizer's state per parameter of its shard (`workload.optimizer`): Adam's two moments
/// and the master weights the update is applied to. The default is Megatron-Core's distributed
/// optimizer: an fp32 master copy and fp32 moments, 12 B.
struct OptimizerState {
  /// Bytes per parameter of the master weights: 4 = a separate fp32 copy; 2 = the 16-bit
  /// remainders that make the fp32 value with the bf16 parameter (Apex DistributedFusedAdam's
  /// store_param_remainders, which NeMo picks for a bf16 model with an fp32 optimizer); 0 =
  /// none, the working parameters are updated in place (DistributedFusedAdam when NeMo's
  /// optim.dtype is the model's dtype).
  double master_bytes = 4;
  double moment_bytes = 4;  ///< per Adam moment (m and v): fp32 4, bf16 2
  double bytes_per_param() const { return master_bytes + 2.0 * moment_bytes; }
};

/// Where offloaded state goes (`workload.offload.target`): the accelerator's host memory, or
/// the memory pool it shares with others (cluster.memory_pool).
enum class OffloadTarget : std::uint8_t { host, pool };
const config::NameTable<OffloadTarget>& offload_target_names();

/// Memory options of a training job (`workload.offload`, `workload.memory`); the defaults are
/// the memory model's (models/llm/memory_footprint.hpp).
struct MemoryOptions {
  bool offload_optimizer = false;    ///< optimizer state in host memory (or the pool), streamed each step
  bool offload_activations = false;  ///< stored activations in host memory (or the pool)
  OffloadTarget offload_target = OffloadTarget::host;
  /// Per device: CUDA context, cuBLAS workspace, NCCL buffers.
  double workspace_bytes = models::kDefaultWorkspaceBytes;
  double fragmentation = models::kDefaultFragmentation;  ///< caching-allocator reserved / allocated
  /// ZeRO-3 working set, in parameters (elements), DeepSpeed's defaults: cap on gathered
  /// parameters live at once, parameters prefetched ahead, gradient reduce bucket.
  double zero3_max_live_parameters = models::kDefaultZero3MaxLiveParameters;
  double zero3_prefetch_bucket_parameters = models::kDefaultZero3PrefetchBucketParameters;
  double zero3_reduce_bucket_parameters = models::kDefaultZero3ReduceBucketParameters;
};

/// A training workload on a given model: one optimizer step of a data/tensor/pipeline/context/
/// expert-parallel job (training_job.hpp runs it on a platform).
class TrainingWorkload : public platform::WorkloadSpec {
 public:
  std::string_view kind() const override { return "training"; }
  /// Checks that the job fits in device memory (models::DoesNotFitError otherwise, unless
  /// `enforce_memory_fit` is false), then a TrainingJob of one step on `platform`'s
  /// accelerators `allocation` (training_job.cpp).
  std::unique_ptr<platform::Workload> instantiate(const platform::Platform& platform,
                                                  const platform::Allocation& allocation,
                                                  const platform::SessionOptions& options) const override;

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
  /// FP8 primary weights (Megatron-Core --fp8-param-gather, NeMo fp8_params): the layers'
  /// weights exist only in fp8 (memory) and the distributed optimizer's parameter all-gathers
  /// move them as fp8. Needs precision fp8.
  bool fp8_params = false;
  /// Whose memory conventions the footprint follows (TrainingFramework).
  TrainingFramework framework = TrainingFramework::megatron;
  /// The loss kernel, for the last stage's memory (CrossEntropy); auto: the framework's.
  CrossEntropy cross_entropy = CrossEntropy::automatic;
  /// The run's dropout probability (hidden and attention), overriding the model card's; < 0:
  /// the model's own (models::TransformerSpec::hidden_dropout / attention_dropout).
  double dropout = -1;
  /// Host time to dispatch one op of the stage programs (the framework's Python, PyTorch's
  /// dispatcher, the kernel launch): each rank's host runs ahead of its device on a host stream,
  /// and a kernel starts no earlier than the host has issued it. < 0: the framework's default
  /// (host_op_time_s); 0: the host never gates.
  double host_op_time = -1;
  /// Tokens of a whole training run, for the time / energy / cost to train them; 0: not asked.
  double train_tokens = 0;
  MemoryOptions memory;
  OptimizerState optimizer;
  /// Simulate anyway when the footprint exceeds device memory (the result then shows it):
  /// `validate` compares the time of published runs that did fit. Default: refuse.
  bool enforce_memory_fit = true;

  /// host_op_time, or the framework's default when unset.
  double host_op_time_s() const { return host_op_time >= 0 ? host_op_time : kFrameworkHostOpTimeS; }

  /// Micro-batches each pipeline runs per step: global_batch / (dp * micro_batch).
  std::int64_t microbatches_per_pipeline() const {
    return global_batch / (parallelism.dp * micro_batch);
  }
};

}  // namespace clustersim::training
