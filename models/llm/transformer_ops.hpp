#pragma once
/// The forward work of a decoder-only transformer for one batch on one rank, as a pure
/// description: which GEMMs, attention kernels, elementwise passes and communication points a
/// pass runs, with their shapes, bytes and model FLOPs, and no times. Training (one
/// micro-batch) and serving (a prefill chunk, a decode batch) describe their passes with the
/// same function and cost the compute ops with the same ComputeModel (compute_estimate());
/// what only training has (backward, recompute, Transformer Engine's TP overlap, fp8 casts,
/// context parallelism's ring steps) is layered on top by sim/training/stage_program.cpp.
///
/// A batch is a list of sequences, each with the tokens computed in this pass (its query
/// tokens) and the keys they attend to (its KV length, the new tokens included). With T the
/// sum of query tokens, h the hidden size, t = tp, a the query heads, kv the key/value heads,
/// d the head width, act the activation bytes (dtype_bytes(activation_dtype)):
/// * GEMMs run over all batched tokens (m = T; the router over T / t with sequence
///   parallelism), with weights sharded as Megatron-Core shards them: Q/K/V, fc1 and the LM
///   head column-parallel, the output projection and fc2 row-parallel, MLA's down-projections
///   duplicated on every TP rank, the router whole on every rank.
/// * Attention is per sequence: sequences with the same (query, KV) lengths form one
///   AttentionShape with batch = their count, groups in order of first appearance. Several
///   query tokens are causal, aligned to the end of the keys (a prefill chunk after cached
///   context); one query token (a decode step) sees all its keys, no mask.
/// * Norms, dropout and residual adds work on T h / t elements with sequence parallelism, on
///   T h otherwise.
/// * Communication points: a TP point before a block's column-parallel GEMMs (all-gather with
///   sequence parallelism, no forward collective otherwise: Megatron's identity f, whose
///   backward all-reduces) and after its row-parallel GEMMs (reduce-scatter with sequence
///   parallelism, all-reduce otherwise), each of the T h act activation bytes; EP dispatch and
///   combine all-to-alls of the T k h act token copies; with cp > 1 the all-gather of keys and
///   values over the CP group (sum of KV lengths x 2 kv/t d act bytes) after the attention.
///   Points exist only when their group has more than one rank.
/// * Model FLOPs follow models/llm/flop_count.hpp: GEMMs 2 m n k per GEMM (duplicated GEMMs
///   1/t of that per rank; grouped expert GEMMs a balanced rank's share); attention full
///   non-causal QK^T and PV, 4 a/t q kv width per sequence (MLA: width (qk_head_dim +
///   v_head_dim) / 2); elementwise ops and communication 0.
/// Context parallelism: each sequence's query tokens are this rank's share and its KV length
/// the whole context; the attention shapes are then the per-sequence (query, KV) shapes as
/// given, which a context-parallel consumer replaces by its ring steps (training does).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_kind.hpp"
#include "models/llm/moe_runtime.hpp"
#include "models/llm/transformer_spec.hpp"

namespace clustersim::models {

/// What a pass does with a sequence. Only MLA models cost the serving phases differently:
/// a decode step attends absorbed over the cached latents (ComputeModel::latent_attention,
/// FlashMLA), a prefill chunk up-projects the cached latents of its context again ("kv up
/// context": vLLM's and SGLang's MLA prefill) and attends as MHA.
enum class SequencePhase {
  training,  ///< every key computed in this pass (context parallelism: the keys of the whole sequence)
  prefill,   ///< serving: a prompt chunk; keys before it come from the KV cache
  decode,    ///< serving: a decode (or speculative verification) step over the KV cache
};

/// One sequence of a batch in one forward pass.
struct SequenceWork {
  std::int64_t query_tokens = 0;  ///< tokens computed in this pass (1 for a decode step), >= 1
  std::int64_t kv_tokens = 0;     ///< keys they attend to, the new tokens included, >= query_tokens
  SequencePhase phase = SequencePhase::training;
};

/// What the head computes after the last layer.
enum class HeadOutput {
  loss,         ///< logits of every query token and the vocab-parallel cross-entropy (training)
  next_token,   ///< logits of each sequence's last query token only, gathered over TP (sampling)
};

/// The sequences of one forward pass.
struct TransformerBatch {
  std::vector<SequenceWork> sequences;
  HeadOutput head = HeadOutput::loss;
};

/// How the model is split over ranks and which number formats its ops use.
struct TransformerSharding {
  int tp = 1;                      ///< tensor-parallel ranks; divides the attention heads
  bool sequence_parallel = false;  ///< Megatron sequence parallelism (takes effect with tp > 1)
  int cp = 1;                      ///< context-parallel ranks (query tokens are this rank's share)
  int ep = 1;                      ///< expert-parallel ranks; divides the routed experts
  Dtype gemm_dtype = Dtype::bf16;              ///< the layers' linear GEMMs (quantized when fp8 / fp4)
  Dtype unquantized_gemm_dtype = Dtype::bf16;  ///< the router and the LM head (not quantized layers)
  Dtype activation_dtype = Dtype::bf16;        ///< stored activations: act = dtype_bytes() bytes each
  /// Bytes per stored weight element of the quantized layers' GEMMs (GemmShape::weight_bytes):
  /// 0: gemm_dtype's; 0.5 or 1 for weight-only int4 / int8 (serving) with gemm_dtype the math.
  double weight_bytes = 0;
  Dtype attention_dtype = Dtype::bf16;
  bool fused_attention = true;                 ///< FlashAttention-style kernel (AttentionShape::fused)
  std::optional<AttentionKernelFamily> attention_kernel{};  ///< unset: the accelerator's default
  /// Decode steps (one query token) run a kernel that loads K and V once per query head: one
  /// thread block per query head, as TensorRT-LLM's masked multi-head attention before its XQA
  /// kernel (docs/serving-frameworks.md, T7). A GQA group of q / kv query heads then reads its
  /// K and V q / kv times: the decode shapes carry kv_heads = q_heads (same FLOPs, MHA's bytes).
  /// Serving only; false: K and V are read once per KV head (FlashAttention, FlashInfer, XQA).
  bool decode_kv_per_query_head = false;
};

/// What an op is.
enum class TransformerOpKind { gemm, attention, elementwise, communication };

/// The part of the model an op belongs to.
enum class TransformerBlock { embedding, attention, mlp, moe, head };

/// How a GEMM's weight is split over the TP group.
enum class GemmParallel {
  column,      ///< split over its output columns (n is this rank's share)
  row,         ///< split over its input rows (k is this rank's share); the output is a partial sum
  duplicated,  ///< whole on every TP rank, which all compute the same product: per-rank FLOPs / t
  replicated,  ///< whole on every rank, applied to the tokens the rank holds (the router)
};

/// A GEMM (or a group of equal ones).
struct GemmOp {
  GemmShape shape;  ///< m = tokens; dtype gemm_dtype when quantized, else unquantized_gemm_dtype
  bool quantized = true;  ///< one of the layers' linears (fp8 / fp4 with a low-precision gemm_dtype)
  GemmParallel parallel = GemmParallel::column;
  bool grouped = false;   ///< shape.batch equal GEMMs, one per local routed expert (even one), m = the busiest's tokens
  /// Model FLOPs / the shape's 2 m n k batch before the duplicated 1/t: for grouped expert
  /// GEMMs a balanced rank's token copies over the busiest rank's (the time is the busiest
  /// rank's, the FLOPs the architecture's); 1 otherwise.
  double flop_share = 1;
};

/// The attention core over every sequence of the batch.
struct AttentionOp {
  std::vector<AttentionShape> groups;  ///< one per distinct (query, KV) length, batch = count
};

/// Which elementwise pass an op is.
enum class ElementwisePass {
  norm,              ///< layer norm / RMSNorm
  rotary,            ///< RoPE of queries and keys
  activation,        ///< gelu, swiglu, relu2
  dropout_residual,  ///< dropout and the residual add
  routing,           ///< the router's softmax and top-k
  permutation,       ///< MoE token permutation or un-permutation
  embedding_lookup,  ///< token embedding gather
  loss,              ///< vocab-parallel cross-entropy
};

/// A memory-bound pass.
struct ElementwiseOp {
  ElementwisePass pass = ElementwisePass::norm;
  double bytes_read = 0;
  double bytes_written = 0;
};

/// Where a communication point sits (see the top of this file).
enum class CommPoint {
  tp_before_column_parallel,  ///< all-gather with sequence parallelism, else no forward collective
  tp_after_row_parallel,      ///< reduce-scatter with sequence parallelism, else all-reduce
  tp_after_column_parallel,   ///< all-gather of a column-parallel output (next-token logits)
  ep_dispatch,                ///< all-to-all of token copies to their experts
  ep_combine,                 ///< all-to-all of expert outputs back to their tokens
  cp_kv_exchange,             ///< all-gather of keys and values over the CP group
};

/// A communication point: where a collective of the forward pass sits and the bytes there.
struct CommOp {
  CommPoint point = CommPoint::tp_before_column_parallel;
  /// The forward pass's collective; unset: none in the forward pass (tp_before_column_parallel
  /// without sequence parallelism, whose backward all-reduces `bytes`).
  std::optional<CollectiveKind> collective;
  double bytes = 0;  ///< nccl-tests convention (CollectiveKind): the tensor at the point
};

/// One op of a forward pass. Only the member of its kind is meaningful.
struct TransformerOp {
  std::string name;  ///< e.g. "qkv", "attn", "tp all-gather"; unique within a layer's block
  TransformerOpKind kind = TransformerOpKind::elementwise;
  TransformerBlock block = TransformerBlock::attention;
  GemmOp gemm;
  AttentionOp attention;
  ElementwiseOp elementwise;
  CommOp comm;
  double flops = 0;  ///< model-FLOP convention (top of this file); 0 for elementwise and communication
};

/// The forward ops of a pass, in execution order, by part of the model.
struct TransformerForwardOps {
  std::vector<TransformerOp> embedding;    ///< lookup and its TP reduction (vocab-parallel)
  std::vector<TransformerOp> dense_layer;  ///< one dense layer; empty when the model has none
  std::vector<TransformerOp> moe_layer;    ///< one mixture-of-experts layer; empty for a dense model
  std::vector<TransformerOp> head;         ///< final norm, LM head and the loss or next-token logits
};

/// The forward ops of one pass of `batch` through `model` split as `sharding` says; `routing`
/// sets the MoE load (models::expert_load over the batch's tokens; ignored for dense models).
/// Throws ConfigError naming the value for an invalid model, an empty batch, a sequence with
/// fewer than 1 query token or more query than KV tokens, tp / cp / ep below 1, tp not dividing
/// the attention heads, or an invalid MoE split (ep not dividing the routed experts).
TransformerForwardOps transformer_forward_ops(const TransformerSpec& model, const TransformerBatch& batch,
                                              const TransformerSharding& sharding, const MoeRuntime& routing = {});

/// 2 m n k batch of a GEMM shape, FLOPs (what ComputeModel::gemm counts).
double gemm_flops(const GemmShape& shape);

/// The compute model's estimate of a compute op: a GEMM's ComputeModel::gemm, the sum of the
/// attention groups' ComputeModel::attention (time, FLOPs, bytes; the least trusted
/// provenance), an elementwise op's ComputeModel::elementwise. The estimate's FLOPs are the
/// kernels' (causal attention counts the evaluated half), not the op's model FLOPs. Throws
/// ConfigError for a communication op (CollectiveModel times those) or an invalid shape.
OpEstimate compute_estimate(const ComputeModel& compute, const TransformerOp& op);

}  // namespace clustersim::models
