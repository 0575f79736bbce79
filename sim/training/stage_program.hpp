#pragma once
/// The ops one pipeline stage's representative rank runs per micro-batch, each costed once
/// (all layers of a stage are identical) from the compute and collective models.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "models/llm/transformer_ops.hpp"
#include "sim/engine/time.hpp"
#include "sim/training/op_kind.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/training/training_config.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::training {

/// Whether a communication op runs concurrently with a neighbouring compute op: on a side
/// stream, starting with the compute op before it (with_previous) or after it (with_next); the
/// op after that pair waits for it. `none`: it blocks the compute stream.
enum class Overlap : std::uint8_t { none, with_previous, with_next };

/// Where an overlapped communication op runs, which decides whether the compute beside it slows.
enum class CommEngine : std::uint8_t {
  shared_sms,    ///< a kernel on SMs it takes from the compute beside it (NCCL): that compute slows
  copy_engine,   ///< the GPU's copy engines (Transformer Engine's ring exchange): no SMs taken
  reserved_sms,  ///< SMs reserved up front (Transformer Engine's SM margin): the GEMM beside it
                 ///< was costed on the remaining SMs, so it does not slow further
};

/// One kernel or collective of the stage's compute stream (or overlapped beside it).
struct StageOp {
  std::string name;                ///< e.g. "qkv", "attn bwd", "tp all-gather"
  OpKind kind = OpKind::compute;  ///< compute, recompute, tp_comm or cp_comm
  engine::TimePs duration_ps = 0;  ///< from the compute or collective model, picoseconds
  /// Matmul FLOPs in the Megatron model-FLOP convention (GEMMs 2mnk; attention counted as
  /// full non-causal QK^T and PV, backward = 2 x forward; elementwise ops 0). Recompute ops
  /// carry their FLOPs too: they count in hardware, not model, FLOPs.
  double flops = 0;
  /// Communication ops (tp_comm, cp_comm) only: the collective over the op's process group
  /// (the stage's TP or CP group) and its bytes (nccl-tests convention), which the flow
  /// fidelity runs as flows; duration_ps is its uncontended time.
  models::CollectiveKind collective = models::CollectiveKind::all_reduce;
  double collective_bytes = 0;
  Overlap overlap = Overlap::none;
  CommEngine engine = CommEngine::shared_sms;  ///< overlapped ops: what the transfer runs on
  /// The estimator of duration_ps: compute ops the compute model's estimate (an op built from
  /// several, such as ring-attention steps or a recompute with its merge pass, the least
  /// trusted of them); communication ops Provenance::collective_model.
  models::Provenance provenance = models::Provenance::roofline;
  /// FLOPs the kernel itself executes, as the compute model counts them (a causal attention
  /// kernel the score pairs it evaluates, about half of `flops`' non-causal count, its backward
  /// 2.5 x its forward with the recomputed scores; a GEMM every TP rank runs in full, the whole
  /// GEMM; an expert group, the GEMMs this rank runs): what `clustersim ops` divides by the
  /// op's time for its TFLOP/s. 0 for communication and memory-bound ops.
  double kernel_flops = 0;
  KernelClass kernel_class = KernelClass::elementwise;  ///< compute ops: whose variability applies
};

/// The ops of one transformer layer of one kind, per micro-batch.
struct LayerProgram {
  std::vector<StageOp> forward;
  std::vector<StageOp> backward;  ///< recompute included
  /// Per rank: parameters reduced over the gradient (dp x cp) group: attention, dense MLP or
  /// shared experts, norms, the router.
  double parameters = 0;
  /// Per rank: the local routed experts (MoE layers), reduced over the expert-data-parallel
  /// group (dp x cp / ep).
  double expert_parameters = 0;
  /// How `parameters` splits into the collectives ZeRO-3 runs per unit: {1} (one, the whole
  /// layer), or each parameter tensor's share (Zero3Granularity::tensor).
  std::vector<double> tensor_shares{1.0};
};

/// A parameter group whose gradients become ready together (one transformer layer, the
/// embedding, or the LM head with the final norm).
struct ParameterUnit {
  std::string name;
  double parameters = 0;  ///< on one rank (after tensor-parallel sharding)
};

/// Everything a stage runs per micro-batch, plus its per-step extras.
struct StageProgram {
  int stage = 0;
  int stages = 1;  ///< pipeline depth
  int chunks = 1;  ///< model chunks (virtual stages) on this stage: vp when interleaved, else 1
  /// Transformer layers of each chunk, and the global index of each chunk's first layer
  /// (chunk c is virtual stage c x stages + stage; models::PipelineSplit).
  std::vector<int> chunk_layers, chunk_first_layer;
  int layers(int chunk) const { return chunk_layers[static_cast<std::size_t>(chunk)]; }
  int first_layer(int chunk) const { return chunk_first_layer[static_cast<std::size_t>(chunk)]; }
  /// Stage-local index of chunk `chunk`'s first layer (the layers of the chunks before it).
  int local_offset(int chunk) const {
    int offset = 0;
    for (int c = 0; c < chunk; ++c) offset += layers(c);
    return offset;
  }
  std::vector<StageOp> embedding_forward, embedding_backward;  ///< first stage only
  LayerProgram dense;  ///< a dense layer (empty when the stage has none)
  LayerProgram moe;    ///< a mixture-of-experts layer (empty when the stage has none)
  /// Kind of each of the stage's layers, chunk by chunk (chunk c's layer l at local_offset(c) + l).
  std::vector<models::LayerKind> kinds;
  int local_layers() const { return static_cast<int>(kinds.size()); }
  /// The program of the stage's `local`-th layer.
  const LayerProgram& layer(int local) const {
    return kinds[static_cast<std::size_t>(local)] == models::LayerKind::moe ? moe : dense;
  }
  std::vector<StageOp> head_forward, head_backward;  ///< last stage only: norm, LM head, loss
  /// ZeRO-3 collective shares of the embedding and head units (as LayerProgram::tensor_shares).
  std::vector<double> embedding_tensor_shares{1.0}, head_tensor_shares{1.0};
  double embedding_parameters = 0;   ///< per rank, 0 unless first stage
  double head_parameters = 0;        ///< per rank, 0 unless last stage (LM head + final norm)
  double stage_parameters = 0;       ///< per rank, whole stage (all chunks), reduced over dp x cp
  double stage_expert_parameters = 0;  ///< per rank, the stage's local routed experts
  /// Activation send to the next stage (stage + 1, wrapping to 0 when interleaved); 0 if none.
  engine::TimePs p2p_forward_ps = 0;
  /// Gradient send to the previous stage (stage - 1, wrapping to the last when interleaved).
  engine::TimePs p2p_backward_ps = 0;
  engine::TimePs optimizer_ps = 0;     ///< Adam step over this rank's optimizer shard
  models::Provenance optimizer_provenance = models::Provenance::roofline;  ///< estimator of optimizer_ps
  double p2p_bytes = 0;                ///< per micro-batch and direction
  /// Offloading to host memory (workload.offload; costed by build_stage_programs from the
  /// platform's host link): the stage's optimizer state streamed in and out over the
  /// full-duplex link once per step before its optimizer step (0: not offloaded), and each
  /// chunk's stored activations of one micro-batch copied out after its forward and back in
  /// before its backward, one direction each (empty: not offloaded).
  engine::TimePs optimizer_offload_ps = 0;
  std::vector<engine::TimePs> activation_offload_ps;
};

/// Costs the ops of `stage`: the forward ops models::transformer_forward_ops describes for one
/// micro-batch, completed with what training adds (backward, recompute, ring attention, TP
/// overlap, fp8 casts); stage_program.cpp's header has every byte and FLOP count it adds.
/// Precondition: the workload was validated (divisibility checks done by the caller).
StageProgram build_stage_program(const TrainingWorkload& workload,
                                 const models::ComputeModel& compute,
                                 const models::CollectiveModel& collectives,
                                 const RankLayout& layout, int stage);

/// The forward ops one micro-batch of `workload` runs (the shared description, the same for
/// every stage), for build_stage_program.
models::TransformerForwardOps training_forward_ops(const TrainingWorkload& workload);
/// build_stage_program with the description already built (every stage of a step shares it).
StageProgram build_stage_program(const TrainingWorkload& workload, const models::ComputeModel& compute,
                                 const models::CollectiveModel& collectives, const RankLayout& layout, int stage,
                                 const models::TransformerForwardOps& description);

/// Sum of `flops` over ops of kinds other than recompute (model FLOPs), and over all ops
/// (hardware FLOPs).
double model_flops(const std::vector<StageOp>& ops);
double hardware_flops(const std::vector<StageOp>& ops);

/// FLOPs of one micro-batch through the whole stage (all chunks, embedding and head included):
/// model FLOPs when `model`, else hardware FLOPs (recompute included).
double per_microbatch_flops(const StageProgram& program, bool model);


/// Where one optimizer step's op time on the stage comes from, by estimator: every op of the
/// embedding, each local layer and the head x `microbatches` (per pipeline), plus the optimizer
/// step once. Op times as costed, uncontended and before compute slows beside communication;
/// overlapped communication counted in full (so the sum exceeds the stage's busy time when ops
/// overlap). Pipeline sends and the data-parallel / ZeRO collectives, which the step simulation
/// adds, are not included.
ProvenanceSeconds step_seconds_by_provenance(const StageProgram& program, std::int64_t microbatches);

/// Parameters per rank of the stage's gradient units in forward order: the embedding (first
/// stage), each layer of each chunk, the LM head with the final norm (last stage); the dense
/// part (LayerProgram::parameters) of MoE layers.
std::vector<double> parameter_units_forward(const StageProgram& program);

/// For each unit of parameter_units_forward, the shares its ZeRO-3 collectives split it into;
/// empty when every unit is one collective (the callers then run one per unit).
std::vector<std::vector<double>> parameter_unit_tensor_shares(const StageProgram& program);

}  // namespace clustersim::training
