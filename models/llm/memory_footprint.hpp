#pragma once
/// Device memory needed by one training job, per pipeline stage: weights, gradients and
/// optimizer state under ZeRO 0-3, activations by Korthikanti et al. (arXiv:2205.05198), the
/// embedding/logits extras, workspace and allocator fragmentation; the KV cache of serving.
/// Every constant is documented in docs/models.md ("Memory").
///
/// Mixture of experts (Megatron-Core's layout, `megatron/core/parallel_state.py`): the
/// expert-parallel group of `ep` ranks is carved out of the dp x cp ranks that share a
/// tensor-parallel rank, and expert tensor parallelism equals tp (Megatron-Core's default when
/// `--expert-tensor-parallel-size` is unset). So a device holds num_experts / ep routed experts
/// of every MoE layer of its stage, each sharded over tp; the expert-data-parallel group that
/// replicates them (and over which ZeRO shards their gradients and optimizer state) has
/// dp x cp / ep ranks. Attention, dense MLPs, shared experts, norms and embeddings are the
/// dense part: sharded over tp and replicated over dp x cp as before; the router is
/// replicated over tp too (Megatron's router weight is not tensor-parallel).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/llm/moe_runtime.hpp"
#include "models/llm/transformer_spec.hpp"
#include "sim/config/problems.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::models {

/// Which activations the backward pass recomputes instead of storing. `op`: torchtitan's
/// per-op selective checkpointing (activation_checkpoint.selective_ac_option "op",
/// torchtitan/models/llama3/infra/parallelize.py): inside each transformer block the outputs of
/// the attention kernel and of every other matmul (the 1st, 3rd, ... in forward order) are
/// saved, everything else is recomputed from the block input.
enum class RecomputePolicy { none, selective, full, op };
/// The loss kernel, for what the last stage holds while the cross-entropy runs (per micro-batch
/// of s b tokens, vocabulary v over t ranks; `loss_saved_bytes` and `loss_transient_bytes`).
/// fused: Megatron's vocab-parallel cross-entropy; eager: PyTorch's cross_entropy on
/// logits.float() as torchtitan calls it; compiled: the same under torch.compile.
enum class LossKernel { fused, eager, compiled };
/// Bytes per logit the loss saves for its backward, per micro-batch in flight in the last chunk.
double loss_saved_bytes(LossKernel loss);
/// Bytes per logit live beside the saved ones at the loss's peak, once.
double loss_transient_bytes(LossKernel loss);
/// The recompute policies a model can run: `op` (torchtitan's per-op checkpointing) is modelled
/// for dense MHA/GQA layers only. Key: recompute (relative to the workload).
std::optional<config::RuleProblem> recompute_policy_problem(const TransformerSpec& model, RecomputePolicy policy);
/// Pipeline schedule, for the number of micro-batches whose activations a stage holds.
enum class ScheduleKind { gpipe, one_f_one_b, interleaved };

/// cuBLAS workspace (32 MiB per stream on Hopper, x a few streams), NCCL channel buffers of
/// the TP/DP/PP communicators, and the CUDA context: 1 GiB per device. An assumption
/// (documented estimate), see docs/models.md.
inline constexpr double kDefaultWorkspaceBytes = 1024.0 * 1024.0 * 1024.0;
/// Caching-allocator fragmentation: reserved / allocated. 1.10 is an assumption (documented
/// estimate; PyTorch's caching allocator typically reserves 5-20 % more than allocated).
inline constexpr double kDefaultFragmentation = 1.10;
/// DeepSpeed ZeRO-3's defaults, in parameters (elements): stage3_max_live_parameters,
/// stage3_prefetch_bucket_size, reduce_bucket_size.
inline constexpr double kDefaultZero3MaxLiveParameters = 1e9;
inline constexpr double kDefaultZero3PrefetchBucketParameters = 5e8;
inline constexpr double kDefaultZero3ReduceBucketParameters = 5e8;

/// Everything the footprint depends on, in plain numbers (the models layer does not see the
/// scenario). Bytes per parameter default to Megatron mixed-precision Adam.
struct FootprintInputs {
  TransformerSpec model;
  std::int64_t seq_len = 0;       ///< tokens per sequence
  std::int64_t micro_batch = 1;   ///< sequences per micro-batch
  std::int64_t microbatches = 1;  ///< micro-batches per pipeline per step
  int tp = 1, pp = 1, dp = 1, cp = 1, vp = 1;
  /// Expert-parallel degree (MoE only): divides num_experts and dp x cp (the EP group is carved
  /// out of the data-parallel ranks). 1 for a dense model.
  int ep = 1;
  /// Capacity factor and load imbalance of the MoE layers (defaults for a dense model). The
  /// busiest EP rank's expert inputs set the activation memory.
  MoeRuntime moe;
  bool sequence_parallel = true;
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
  /// Uneven split (models::PipelineSplit): pp counts, one per stage (split evenly over its
  /// chunks when interleaved), or pp x vp counts, one per virtual stage; empty: an even split.
  std::vector<int> stage_layers;
  int zero = 1;  ///< 0..3; ZeRO shards over the dp x cp group
  RecomputePolicy recompute = RecomputePolicy::selective;
  bool flash_attention = true;   ///< no s x s score matrices stored
  double activation_bytes_per_element = 2;  ///< bf16/fp16 activations
  double weight_bytes_per_param = 2;        ///< bf16 working weights
  /// Main-gradient buffer: Megatron-Core allocates it in fp32 when grad_reduce_in_fp32 (its
  /// default for bf16) and in the parameter dtype otherwise
  /// (megatron/core/distributed/distributed_data_parallel.py), so 4 B for an fp32 reduction,
  /// 2 B for a bf16 one (the runner follows workload.gradient_reduce_dtype).
  double gradient_bytes_per_param = 4;
  /// Transformer Engine FP8 (fp8 GEMMs in the layers' linear modules): the GEMM inputs a
  /// linear saves for its weight gradient are its fp8 casts (1 B), and every linear keeps its
  /// fp8 weight and fp8 transposed weight cached across micro-batches (2 B per parameter).
  bool fp8 = false;
  /// FP8 primary weights (Megatron-Core --fp8-param-gather, NeMo fp8_params, Transformer Engine
  /// fp8_model_init): the layers' linear weights live only as fp8 (1 B per parameter, no bf16
  /// copy) and TE caches only their fp8 transpose (1 B) between micro-batches; the embedding
  /// and LM head stay in the working precision. Needs fp8.
  bool fp8_params = false;
  /// Transformer Engine keeps fp8 weight copies across micro-batches (Megatron-Core, NeMo);
  /// false: the fp8 casts are made per use and not kept (torchao's Float8 in torchtitan).
  bool fp8_weight_cache = true;
  /// With TP and sequence parallelism the LM head saves its all-gathered (full-sequence) input
  /// for its weight gradient, 2 s b h instead of Megatron's 2 s b h / t shard (torchtitan's TP
  /// plan: the output layer is ColwiseParallel with input_layouts Shard(1), so DTensor gathers
  /// its input before the matmul and autograd saves the gathered tensor).
  bool gathered_head_input = false;
  /// The loss kernel (LossKernel): what the last stage holds for the cross-entropy.
  LossKernel loss = LossKernel::fused;
  /// Dropout probabilities of the training recipe (Megatron-LM --hidden-dropout and
  /// --attention-dropout, default 0.1; Hugging Face decoder configs: attention_dropout 0.0 and
  /// no hidden dropout). hidden > 0: a 1-byte mask after the attention and after the MLP of
  /// every layer and on the embedding output (Korthikanti et al.); 0: PyTorch's dropout returns
  /// its input and stores nothing. attention > 0: unfused attention stores the score mask and the
  /// dropped-out scores (fused attention regenerates its mask from the RNG state).
  double hidden_dropout = 0.1;
  double attention_dropout = 0.1;
  /// DeepSpeed ZeRO-3's gathered-parameter limits, in parameters (elements):
  /// stage3_max_live_parameters (default 1e9) caps the gathered parameters live at once (the
  /// module being computed is held whole even above it), stage3_prefetch_bucket_size (default
  /// 5e8) the parameters prefetched ahead, reduce_bucket_size (default 5e8) the gradient
  /// bucket reduce-scattered at once. See docs/models.md ("Memory", ZeRO-3); the scenario keys
  /// are workload.memory.zero3_*.
  double zero3_max_live_parameters = kDefaultZero3MaxLiveParameters;
  double zero3_prefetch_bucket_parameters = kDefaultZero3PrefetchBucketParameters;
  double zero3_reduce_bucket_parameters = kDefaultZero3ReduceBucketParameters;
  /// Optimizer state per parameter of the shard: fp32 master weight + Adam m + v (12 B) by
  /// default; workload.optimizer sets narrower layouts (Apex DistributedFusedAdam's 16-bit
  /// remainders of the master weights, bf16 moments).
  double optimizer_bytes_per_param = 12;
  bool offload_optimizer = false;    ///< optimizer state lives in host memory
  bool offload_activations = false;  ///< stored activations live in host memory
  double workspace_bytes = kDefaultWorkspaceBytes;
  double fragmentation = kDefaultFragmentation;  ///< >= 1, reserved / allocated of the terms it applies to
  /// The persistent state is allocated once, in contiguous buffers, and never freed: weights and
  /// gradients in Megatron-Core's ParamAndGradBuffer (Apex DistributedFusedAdam's contiguous
  /// parameter and gradient buffers under NeMo), the optimizer state and Transformer Engine's
  /// fp8 weight workspaces created once and kept. The caching allocator's fragmentation then
  /// applies only to what is allocated and freed every step (activations, logits, recompute
  /// and dispatch buffers, gathered ZeRO-3 parameters). false: to every term (torchtitan's
  /// FSDP2 frees its gradients every step, zero_grad(set_to_none=True)).
  bool persistent_state_unfragmented = true;

  /// Throws ConfigError naming the field when a size, degree or factor is out of range, or
  /// layers / heads / sequence do not divide by the parallel split, or ep does not fit the
  /// model (dense model, experts or dp x cp not divisible by ep).
  void validate() const;
};

/// Ranks that replicate one expert shard: dp x cp / ep (Megatron-Core's expert-data-parallel
/// group; ZeRO shards expert gradients and optimizer state over it). dp x cp for a dense model.
int expert_data_parallel_size(const FootprintInputs& inputs);

/// Global indices (0-based) of the transformer layers pipeline stage `stage` holds, chunk by
/// chunk: 1F1B / GPipe [stage L/p, (stage+1) L/p); interleaved, chunk c holds model chunk
/// c p + stage of L/(p v) layers (Megatron's assignment); an uneven split as PipelineSplit lays it. Throws ConfigError for a stage out of
/// range or invalid inputs.
std::vector<std::int64_t> stage_layer_indices(const FootprintInputs& inputs, int stage);

/// One named part of a footprint, bytes per device.
struct FootprintTerm {
  std::string name;
  double bytes = 0;
};

/// Memory of one device of one pipeline stage, bytes.
struct StageFootprint {
  int stage = 0;
  int inflight_microbatches = 0;    ///< micro-batches (x chunks when interleaved) held
  double stored_layer_activations = 0;  ///< layer x micro-batch activation sets held
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;          ///< transformer layers, all in-flight micro-batches
  /// Embedding dropout masks (first chunk) / final norm and LM-head inputs and the saved fp32
  /// softmax of the cross-entropy (last chunk), plus one micro-batch's bf16 logits.
  double embedding_head_bytes = 0;
  double recompute_buffer_bytes = 0;     ///< one layer recomputed at a time (full / selective)
  /// One MoE layer's dispatch/combine buffers: the permuted token copies before and after the
  /// expert-parallel all-to-all, live while the layer runs (0 without MoE layers).
  double moe_dispatch_bytes = 0;
  /// ZeRO-3 (DeepSpeed stage 3): the gathered (whole) weights of the module computed and of
  /// those prefetched, under the live-parameter and prefetch caps, plus the largest module's
  /// whole gradient and the reduce bucket (0 below ZeRO-3).
  double zero3_gathered_bytes = 0;
  /// FP8 (Transformer Engine): the cached fp8 weights and fp8 transposed weights of the
  /// stage's linear modules (0 without fp8).
  double fp8_weight_cache_bytes = 0;
  double workspace_bytes = 0;
  double fragmentation_bytes = 0;
  double total_bytes = 0;
  /// The terms above with their names, largest first (ties: declaration order).
  std::vector<FootprintTerm> terms_largest_first() const;
};

/// Footprint of every pipeline stage and the largest one.
struct TrainingFootprint {
  std::vector<StageFootprint> stages;
  int peak_stage = 0;  ///< stage with the largest total (ties: lowest)
  const StageFootprint& peak() const { return stages.at(static_cast<std::size_t>(peak_stage)); }
};

/// Activations of one transformer layer for one micro-batch on one device, bytes, as stored
/// for the backward pass under `inputs.recompute` (Korthikanti et al. eqs. 1-6, generalized
/// to GQA and SwiGLU; reduces to s b h (34 + 5 a s / h) for MHA with a 4h GELU MLP).
/// Sequence length per device is seq_len / cp. For an MoE model: the mean over all its layers
/// (dense and MoE layers differ; see the overload taking a LayerKind).
double layer_activation_bytes(const FootprintInputs& inputs);
/// Activations of one layer of `kind` for one micro-batch, bytes, as stored under
/// `inputs.recompute`. MoE layer: the attention and norms as a dense layer, the router logits
/// and scores (2 x num_experts elements per token), and for each routed token copy on the
/// busiest EP rank (k x busiest_rank_load_factor copies per token) its expert input and the
/// expert MLP's intermediates (/ tp), plus the shared experts' intermediates (/ tp). MLA: Q, K,
/// V and the output-projection input at qk_head_dim / v_head_dim per head (/ tp), plus the
/// latents c_q, c_kv and the RoPE key with their norm inputs (not divided by tp: Megatron-Core
/// computes the down projections on every TP rank). Throws ConfigError for kind moe on a dense
/// model.
double layer_activation_bytes(const FootprintInputs& inputs, LayerKind kind);
/// Activations of one layer for one micro-batch with no recompute (the peak working set the
/// backward of one layer needs), bytes. For an MoE model: the mean over all its layers.
double layer_full_activation_bytes(const FootprintInputs& inputs);
/// Activations of one layer of `kind` for one micro-batch with no recompute, bytes.
double layer_full_activation_bytes(const FootprintInputs& inputs, LayerKind kind);
/// Micro-batch (x chunk) activation sets pipeline stage `stage` holds at its peak: 1F1B
/// min(m, pp - stage); GPipe m; interleaved min(m vp, 2 (pp - stage - 1) + (vp - 1) pp + 1)
/// chunks (Megatron-Core's warm-up count + 1, microbatch_group_size_per_vp_stage = pp).
int inflight_microbatches(const FootprintInputs& inputs, int stage);
/// Micro-batches of virtual chunk `chunk` (0-based; 0 without interleaving) that stage `stage`
/// holds at once at most, walking the schedule's order of forwards and backwards: GPipe m;
/// 1F1B min(m, pp - stage); interleaved as Megatron-Core's schedule
/// (megatron/core/pipeline_parallel/schedules.py: warm-up of min(m vp, 2 (pp - stage - 1) +
/// (vp - 1) pp) forwards, then one forward and one backward at a time; forward k runs chunk
/// (k mod pp vp) / pp, backward k chunk vp - 1 - (k mod pp vp) / pp). On the last stage the
/// last chunk holds 1 (its backward follows its forward at once). Throws ConfigError for a
/// stage or chunk out of range.
int inflight_microbatches_of_chunk(const FootprintInputs& inputs, int stage, int chunk);
/// Footprint of one stage. Throws ConfigError (validate()) or for a stage out of range.
StageFootprint stage_footprint(const FootprintInputs& inputs, int stage);
/// Footprint of all stages.
TrainingFootprint training_footprint(const FootprintInputs& inputs);

/// Thrown when a scenario needs more device memory than it has. what() reads
/// "does not fit: needs X GiB of Y GiB on pipeline stage S (weights A GiB, ...)".
/// `key` names the workload setting that chose the layout, relative to the workload
/// ("parallelism", "pools.chat"; empty: unknown), so that whoever knows where the workload was
/// written (the scenario runner) can point at it.
class DoesNotFitError : public SimulationError {
 public:
  explicit DoesNotFitError(const std::string& message, std::string key = {})
      : SimulationError(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

/// Throws DoesNotFitError when the peak stage's total exceeds `capacity_bytes`, listing the
/// four largest terms. Throws ConfigError for a non-positive capacity.
void check_fits(const TrainingFootprint& footprint, double capacity_bytes);

/// KV cache of serving, bytes per device: 2 (K and V) x layers x kv_heads x head_dim x tokens
/// x bytes_per_element / min(tp, kv_heads) (with tp > kv_heads each rank keeps one replicated
/// KV head). MLA caches the latent instead: layers x (kv_lora_rank + qk_rope_head_dim) x tokens
/// x bytes_per_element, on every TP rank (the latent is shared by all heads). Throws
/// ConfigError for negative tokens or non-positive bytes or tp.
double kv_cache_bytes(const TransformerSpec& model, double tokens, double bytes_per_element, int tp);

/// Rough HBM traffic of one training step on one device of `stage`, bytes: weights read
/// three times per micro-batch per layer (forward, data-gradient and weight-gradient GEMMs;
/// four with full recompute), every stored activation written once and read once per
/// micro-batch (forward and backward: 4x the no-recompute set), fp32 main-gradient
/// accumulation (read + write 4 B/param per micro-batch), and Adam over the optimizer shard
/// (12 B read + 12 B written + gradient read + 2 B written). An estimate for energy. MoE: the
/// device's local experts count as its parameters (all are read each micro-batch), their
/// optimizer shard is over expert_data_parallel_size.
double estimated_step_hbm_bytes(const FootprintInputs& inputs, int stage);

}  // namespace clustersim::models
