// Byte and FLOP conventions of one stage's ops (b = micro-batch, s = seq_len / cp, h = hidden,
// t = tp, a = heads, kv = key/value heads, d = head_dim, f = intermediate size, V = vocab):
// * Activations are stored in 2 bytes (bf16) unless the precision is fp32/tf32 (4 bytes); fp8
//   runs only the GEMMs in fp8 (Transformer Engine keeps activations and attention in bf16).
// * With sequence parallelism norms, dropout and residual adds work on b*s*h/t elements.
// * Elementwise backward moves 1.5x the bytes of its forward (reads the saved input and the
//   incoming gradient, writes the input gradient; fused kernels save part of the traffic).
// * Elementwise ops are memory bound: their vector FLOPs are neither timed nor counted.
// * Weight-gradient GEMMs accumulate into the gradient buffer (grad_bytes_per_param per
//   element: fp32 main_grad or the bf16/fp16 buffer), reading and writing it in the epilogue
//   every micro-batch, as Megatron's gradient_accumulation_fusion (and, without it, the
//   separate main_grad.add_) does; the first micro-batch accumulates into the zeroed buffer.
// * The embedding lookup's weight gradient is dense (PyTorch's embedding backward): V/t x h
//   written in the activation format and added into the gradient buffer every micro-batch.
// * fp8: forward GEMMs use fast accumulation, dgrad and wgrad precise (split) accumulation, as
//   Transformer Engine's defaults set them; on Hopper that promotes the fp8 MMA accumulator
//   to fp32 every 128 K elements (ComputeModel::gemm).
// * Cross-entropy (vocab-parallel) works on b*s*V/t fp32 logits in ~3 passes (max, sum of
//   exponentials, loss/softmax), each reading and writing 4 bytes per logit. The three small
//   all-reduces of per-token statistics are not modelled.
// * Context parallelism (cp > 1): each rank holds s = seq_len/cp queries. Megatron splits the
//   sequence into 2*cp chunks so every rank does the same causal work, seq_len^2/(2 cp) score
//   pairs, which Transformer Engine's ring attention (AttnFuncWithCPAndKVP2P) runs in cp steps:
//   step 0 a causal kernel of the local s queries over the local s keys, each of the other
//   cp - 1 steps a non-causal kernel of s queries over s/2 keys (or s/2 queries over s keys, the
//   same work); costed as those kernels' sum. The steps' partial outputs are merged with their
//   softmax statistics (out zeroed, then per step: read the step's output and the running one,
//   write the running one) after a copy of K and V into the ring buffer; the backward adds each
//   step's dQ into dQ and dK/dV into the travelling dKV (read both, write one) after copying K
//   and V into its ring buffer. Keys and values travel around the ring overlapped with the
//   attention kernels: the forward exchange is costed as an all-gather of K and V over the CP
//   group (b * seq_len * 2 * kv/t * d * 2 bytes), the backward as twice that (K, V again and their
//   gradients); it runs beside the attention kernels (Overlap), so only the part longer than
//   them is exposed.
// * TP-communication overlap (workload tp_comm_overlap, with sequence parallelism): Transformer
//   Engine's userbuffer overlap with the methods its initialize_ub defaults to:
//   - ring exchange for the all-gathers before qkv and fc1 forward and before proj and fc2
//     dgrad: tp steps, each the GEMM on one rank's M/tp rows while the next rank's chunk
//     arrives from the neighbour over the copy engines (num_sm 1, no SM margin); nothing is
//     exposed before the first step (its chunk is local). Costed as the GEMM in tp M-chunks
//     (gemm(): concurrent chunks) with the whole all-gather beside it, taking no compute share:
//     exact when a chunk's GEMM outlasts its transfer, one chunk's GEMM short otherwise.
//   - pipeline for the reduce-scatters after proj and fc2 forward: the GEMM in 4 M-splits
//     (num_splits 4), each split's reduce-scatter beside the next split's GEMM, the last one
//     exposed.
//   - bulk in the backward: the reduce-scatter of qkv's and fc1's input gradient beside their
//     wgrad GEMM, the wgrad-input all-gather beside their dgrad (below), nothing exposed.
//   Pipeline and bulk transfers run on 16 SMs that TE reserves for the GEMM's whole duration
//   (num_sm 16, set_sm_margin): that GEMM is costed on the other SMs (132 -> 116 on Hopper) and
//   the transfer does not slow it further (CommEngine::reserved_sms).
//   With fp8 the all-gathers move 1-byte elements (TE's fp8 userbuffers, fp8_buf, for every
//   all-gather overlap); reduce-scatters stay bf16. The embedding's and LM head's collectives
//   are not overlapped this way (the LM head's backward reduction is the asynchronous one below).
// * Megatron's asynchronous backward TP reduction (workload tp_async_backward): a column-parallel
//   linear's input-gradient all-reduce (reduce-scatter with SP) runs beside its wgrad GEMM.
// * Sequence-parallel backward: a column-parallel linear (qkv, fc1) keeps only its local input
//   shard and all-gathers the whole input again for its wgrad GEMM, beside its dgrad GEMM
//   (Megatron's LinearWithGradAccumulationAndAsyncCommunication launches it before the dgrad;
//   Transformer Engine's userbuffers run it as the "bulk" qkv_dgrad / fc1_dgrad overlap).
// * The forward ops themselves (shapes, bytes, model FLOPs, the order of GEMMs, attention,
//   elementwise passes and communication points) come from the shared description of a
//   transformer pass (models/llm/transformer_ops.hpp) of one micro-batch: micro_batch
//   sequences of s query tokens over seq_len keys. Everything below is what training layers on
//   top of it: backward ops, recompute, the ring-attention steps, TP overlap and fp8 casts.
#include "sim/training/stage_program.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "models/llm/pipeline_split.hpp"
#include "models/llm/zero_sharding.hpp"
#include "models/llm/transformer_ops.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::training {
namespace {

using models::CollectiveKind;
using models::Dtype;
using models::TransformerOp;
using models::TransformerOpKind;


// Where a tensor-parallel collective sits around a column/row-parallel GEMM pair.
enum class TpPoint { before_column_parallel, after_row_parallel };

// Transformer Engine's userbuffer overlap defaults: M-splits of the GEMM before a pipelined
// reduce-scatter (num_splits) and the SMs its pipelined and bulk transfers reserve (num_sm with
// set_sm_margin: the GEMM beside them gets the rest).
constexpr std::int64_t kPipelineSplits = 4;
constexpr int kUserbufferSms = 16;

// How Transformer Engine's TP overlap runs a GEMM pair: the M-chunks of its forward and dgrad
// GEMMs, and which of its GEMMs run on the SMs a reserved-SM transfer leaves.
struct GemmOverlap {
  std::int64_t forward_chunks = 1;
  std::int64_t dgrad_chunks = 1;
  bool forward_margin = false;
  bool dgrad_margin = false;
  bool wgrad_margin = false;
};

/// How a training workload runs the shared transformer description: its parallel split and
/// number formats (activations bf16 unless fp32 / tf32; fp8 / fp4 only in the layers' linears,
/// the router and LM head in bf16, attention in bf16).
models::TransformerSharding training_sharding(const TrainingWorkload& workload) {
  const auto& par = workload.parallelism;
  const Dtype precision = workload.precision;
  const bool low_precision = precision == Dtype::fp8 || precision == Dtype::fp4;
  models::TransformerSharding sharding;
  sharding.tp = par.tp;
  sharding.sequence_parallel = par.sequence_parallel;
  sharding.cp = par.cp;
  sharding.ep = par.ep;
  sharding.gemm_dtype = precision;
  sharding.unquantized_gemm_dtype = Dtype::bf16;
  sharding.activation_dtype = low_precision ? Dtype::bf16 : precision;
  sharding.attention_dtype = low_precision ? Dtype::bf16 : precision;
  sharding.fused_attention = workload.attention != AttentionKernel::unfused;
  // flash: the accelerator's family (unset); unfused: no kernel family.
  sharding.attention_kernel = explicit_family(workload.attention);
  return sharding;
}

/// One micro-batch as the shared description's batch: micro_batch sequences, each with this
/// rank's seq_len / cp query tokens over the whole sequence's keys, the loss on every token.
models::TransformerBatch training_micro_batch(const TrainingWorkload& workload) {
  models::TransformerBatch batch;
  const std::int64_t local_seq = workload.seq_len / workload.parallelism.cp;
  batch.sequences.assign(static_cast<std::size_t>(workload.micro_batch), {local_seq, workload.seq_len});
  batch.head = models::HeadOutput::loss;
  return batch;
}

/// A communication point of a transformer layer's attention or MLP block, whose collectives
/// Transformer Engine can overlap with the GEMM beside them (not the MoE block's, the
/// embedding's or the head's).
bool layer_tp_point(const TransformerOp& op, models::CommPoint point) {
  return op.kind == TransformerOpKind::communication && op.comm.point == point &&
         (op.block == models::TransformerBlock::attention || op.block == models::TransformerBlock::mlp);
}

class OpCoster {
 public:
  OpCoster(const TrainingWorkload& workload, const models::ComputeModel& compute,
           const models::CollectiveModel& collectives, std::vector<int> tp_group,
           std::vector<int> cp_group, std::vector<int> ep_group)
      : workload_(workload),
        compute_(compute),
        collectives_(collectives),
        tp_group_(std::move(tp_group)),
        cp_group_(std::move(cp_group)),
        ep_group_(std::move(ep_group)) {
    const auto& par = workload.parallelism;
    tp_ = par.tp;
    cp_ = par.cp;
    sequence_parallel_ = par.sequence_parallel && par.tp > 1;
    tp_comm_overlap_ = workload.tp_comm_overlap && sequence_parallel_;
    act_bytes_ = models::stored_element_bytes(workload.precision);
    gemm_dtype_ = workload.precision;
    const std::int64_t tokens = workload.micro_batch * (workload.seq_len / par.cp);
    hidden_bytes_ = static_cast<double>(tokens) * static_cast<double>(workload.model.hidden_size) * act_bytes_;
  }

  /// Bytes of a b*s*h activation as stored between norms/residuals (divided by t with SP).
  double sharded_hidden_bytes() const {
    return sequence_parallel_ ? hidden_bytes_ / tp_ : hidden_bytes_;
  }

  /// Appends the training ops of `ops` (one block of the shared forward description, in
  /// order): each forward op to `fwd` and its backward to `bwd_rev` (built in reverse
  /// execution order), with the fp8 casts, TP overlap, ring attention and recompute around them.
  void add_ops(const std::vector<TransformerOp>& ops, std::vector<StageOp>& fwd, std::vector<StageOp>& bwd_rev,
               bool selective_recompute = false) const {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const TransformerOp& op = ops[i];
      switch (op.kind) {
        case TransformerOpKind::elementwise:
          add_elementwise(op, fwd, bwd_rev);
          break;
        case TransformerOpKind::gemm:
          add_gemm(ops, i, fwd, bwd_rev);
          break;
        case TransformerOpKind::attention: {
          // The CP exchange point right after the core runs inside its ring (attention()).
          const bool exchange = i + 1 < ops.size() && ops[i + 1].kind == TransformerOpKind::communication &&
                                ops[i + 1].comm.point == models::CommPoint::cp_kv_exchange;
          attention(op, exchange ? &ops[++i] : nullptr, fwd, bwd_rev, selective_recompute);
          break;
        }
        case TransformerOpKind::communication:
          add_communication(ops, i, fwd, bwd_rev);
          break;
      }
    }
  }

  StageOp elementwise(std::string name, double read_bytes, double written_bytes) const {
    models::ElementwiseShape shape;
    shape.bytes_read = read_bytes;
    shape.bytes_written = written_bytes;
    const auto estimate = compute_.elementwise(shape);
    StageOp op{std::move(name), OpKind::compute, engine::seconds_to_ps(estimate.time_s), 0.0};
    op.provenance = estimate.provenance;
    return op;
  }

 private:
  /// Transformer Engine's TP overlap (tp_comm_overlap) of a column-parallel linear (qkv, fc1):
  /// forward in tp chunks beside the ring exchange, dgrad beside the bulk wgrad-input gather and
  /// wgrad beside the bulk reduce-scatter, both on the SMs those leave. Nothing without it.
  GemmOverlap column_overlap() const {
    return tp_comm_overlap_ ? GemmOverlap{tp_, 1, false, true, true} : GemmOverlap{};
  }
  /// ... of a row-parallel linear (proj, fc2): forward in kPipelineSplits splits beside the
  /// pipelined reduce-scatter (on the SMs it leaves), dgrad in tp chunks beside the ring exchange.
  GemmOverlap row_overlap() const {
    return tp_comm_overlap_ ? GemmOverlap{kPipelineSplits, tp_, true, false, false} : GemmOverlap{};
  }

  /// A GEMM, run as `chunks` M-chunks when a TP overlap pipeline splits it. Transformer Engine
  /// issues the chunks round-robin on three compute streams, each waiting only for its own
  /// input chunk (or, for the pipelined reduce-scatter, for nothing), so consecutive chunks run
  /// concurrently and fill each other's last waves: costed as the whole GEMM plus one kernel
  /// launch per extra chunk. `sm_margin`: the GEMM runs on the compute units that
  /// kUserbufferSms reserved ones leave (cuBLAS's SM-count target), its time scaled by their ratio.
  StageOp gemm(std::string name, std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype,
               std::int64_t batch = 1, double accumulate_bytes = 0, bool split_accumulation = false,
               std::int64_t chunks = 1, bool sm_margin = false) const {
    models::GemmShape shape;
    shape.batch = batch;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    shape.dtype = dtype;
    shape.accumulate_bytes = accumulate_bytes;
    shape.split_accumulation = split_accumulation;
    const auto estimate = compute_.gemm(shape);
    double seconds = estimate.time_s;
    if (chunks > 1) {
      name += " (" + std::to_string(chunks) + " chunks)";
      seconds += static_cast<double>(chunks - 1) * compute_.spec().kernel_launch_s;
    }
    const int units = compute_.spec().compute_units;
    if (sm_margin && units > kUserbufferSms) {
      seconds *= static_cast<double>(units) / static_cast<double>(units - kUserbufferSms);
    }
    StageOp op{std::move(name), OpKind::compute, engine::seconds_to_ps(seconds), estimate.flops};
    op.provenance = estimate.provenance;
    op.kernel_flops = estimate.flops;
    op.kernel_class = KernelClass::gemm;
    return op;
  }

  bool low_precision_gemms() const { return gemm_dtype_ == Dtype::fp8 || gemm_dtype_ == Dtype::fp4; }

  /// Forward GEMM followed by its backward pair, appended to the two lists. `quantized`: the
  /// GEMM runs in the workload's fp8/fp4 precision (Transformer Engine's linear layers);
  /// otherwise in bf16 (Megatron's LM head and router are not TE layers): the shape's dtype,
  /// as the description set it. A quantized GEMM adds Transformer Engine's cast kernels:
  /// before the forward, the bf16 input (m x k) cast
  /// to fp8 with its transposed copy for the wgrad (Hopper's fp8 GEMMs take only K-major
  /// operands): 2 bytes read, 2 written per element; before the dgrad, the same for the output
  /// gradient (m x n). Costed as memory-bound elementwise kernels; the weight casts (once per
  /// step with fp8 weight caching) and amax reductions are left out.
  /// `overlap`: how Transformer Engine's TP overlap splits and confines its GEMMs (gemm()).
  void gemm_pair(const std::string& name, const models::GemmShape& shape, bool quantized,
                 std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed,
                 GemmOverlap overlap = {}) const {
    const std::int64_t m = shape.m, n = shape.n, k = shape.k, batch = shape.batch;
    const bool cast = quantized && low_precision_gemms();
    const Dtype dtype = shape.dtype;
    const double copies = static_cast<double>(batch);
    if (cast) {
      // Before the TP all-gather that feeds the GEMM, if there is one (TE gathers fp8), so
      // that an overlapped all-gather stays next to its GEMM.
      auto at = forward.end();
      while (at != forward.begin() && std::prev(at)->kind == OpKind::tp_comm) --at;
      const double input = copies * static_cast<double>(m) * static_cast<double>(k) * 2.0;
      forward.insert(at, elementwise(name + " fp8 cast", input, input));
    }
    forward.push_back(gemm(name, m, n, k, dtype, batch, 0, false, overlap.forward_chunks, overlap.forward_margin));
    // Reversed list: appended in reverse execution order (dgrad, then wgrad when executed).
    // The output-gradient cast is placed between them rather than before the dgrad, so that
    // an all-gather overlapped with the dgrad stays next to it; the sum is the same.
    // The weight gradient accumulates into the gradient buffer across micro-batches
    // (GemmShape::accumulate_bytes): its epilogue reads and writes grad_bytes_per_param.
    // Transformer Engine runs the fp8 backward GEMMs with precise (split) accumulation
    // (_2X_ACC_DGRAD = _2X_ACC_WGRAD = True, _2X_ACC_FPROP = False): GemmShape::split_accumulation.
    const bool split = dtype == Dtype::fp8;
    backward_reversed.push_back(
        gemm(name + " wgrad", k, n, m, dtype, batch, workload_.grad_bytes_per_param, split, 1, overlap.wgrad_margin));
    if (cast) {
      const double grad = copies * static_cast<double>(m) * static_cast<double>(n) * 2.0;
      backward_reversed.push_back(elementwise(name + " grad fp8 cast", grad, grad));
    }
    backward_reversed.push_back(
        gemm(name + " dgrad", m, k, n, dtype, batch, 0, split, overlap.dgrad_chunks, overlap.dgrad_margin));
  }

  /// A GEMM of the description and its backward: TE's TP overlap for the first GEMM on a
  /// layer's gathered input (column) and the GEMM before a layer's reduction (row); duplicated
  /// and grouped GEMMs as below; with SP the wgrad-input gather of a column-parallel linear on
  /// the gathered input (Megatron's qkv and fc1; MLA's first projection re-gathers nothing here).
  void add_gemm(const std::vector<TransformerOp>& ops, std::size_t i, std::vector<StageOp>& fwd,
                std::vector<StageOp>& bwd_rev) const {
    const TransformerOp& op = ops[i];
    const models::GemmOp& g = op.gemm;
    GemmOverlap overlap;
    bool regathers_input = false;
    if (i > 0 && layer_tp_point(ops[i - 1], models::CommPoint::tp_before_column_parallel)) {
      overlap = column_overlap();
      regathers_input = !(op.block == models::TransformerBlock::attention &&
                          workload_.model.attention == models::AttentionKind::mla);
      // Without the wgrad-input gather beside it, MLA's first dgrad keeps every SM.
      if (!regathers_input) overlap.dgrad_margin = false;
    } else if (i + 1 < ops.size() && layer_tp_point(ops[i + 1], models::CommPoint::tp_after_row_parallel)) {
      overlap = row_overlap();
    }
    if (g.parallel == models::GemmParallel::duplicated) {
      duplicated_gemm_pair(op.name, g.shape, fwd, bwd_rev, overlap);
    } else if (g.grouped) {
      grouped_gemm_pair(op.name, g.shape, g.flop_share, fwd, bwd_rev);
    } else {
      gemm_pair(op.name, g.shape, g.quantized, fwd, bwd_rev, overlap);
    }
    if (regathers_input) wgrad_input_gather(ops[i - 1].comm.bytes, bwd_rev);
  }

  /// An elementwise pass and its backward: 1.5x the bytes (header), except RoPE, whose backward
  /// rotates the gradients back in the same pass.
  void add_elementwise(const TransformerOp& op, std::vector<StageOp>& fwd, std::vector<StageOp>& bwd_rev) const {
    const double read = op.elementwise.bytes_read, written = op.elementwise.bytes_written;
    fwd.push_back(elementwise(op.name, read, written));
    const double scale = op.elementwise.pass == models::ElementwisePass::rotary ? 1.0 : 1.5;
    bwd_rev.push_back(elementwise(op.name + " bwd", scale * read, scale * written));
  }

  /// A TP or EP point of the description and its backward mirror.
  void add_communication(const std::vector<TransformerOp>& ops, std::size_t i, std::vector<StageOp>& fwd,
                         std::vector<StageOp>& bwd_rev) const {
    const TransformerOp& op = ops[i];
    const bool layer_block =
        op.block == models::TransformerBlock::attention || op.block == models::TransformerBlock::mlp;
    switch (op.comm.point) {
      case models::CommPoint::tp_before_column_parallel: {
        const bool column_linear = i + 1 < ops.size() && ops[i + 1].kind == TransformerOpKind::gemm;
        tp_pair(TpPoint::before_column_parallel, op.comm.bytes, fwd, bwd_rev, layer_block, column_linear);
        return;
      }
      case models::CommPoint::tp_after_row_parallel:
        tp_pair(TpPoint::after_row_parallel, op.comm.bytes, fwd, bwd_rev, layer_block);
        return;
      case models::CommPoint::ep_dispatch:
      case models::CommPoint::ep_combine:
        ep_pair(op.name, op.comm.bytes, fwd, bwd_rev);
        return;
      case models::CommPoint::cp_kv_exchange:
      case models::CommPoint::tp_after_column_parallel:
        break;
    }
    throw SimulationError("training step: communication point '" + op.name +
                          "' has no training counterpart (a CP exchange belongs right after the attention; "
                          "training's head computes the loss, not gathered next-token logits)");
  }

  /// A communication op: `collective` of `bytes` over `group`, timed by the collective model.
  StageOp collective_op(std::string name, OpKind kind, CollectiveKind collective, const std::vector<int>& group,
                        double bytes) const {
    StageOp op{std::move(name), kind, engine::seconds_to_ps(collectives_.time_s(collective, group, bytes)), 0.0,
               collective, bytes};
    op.provenance = models::Provenance::collective_model;
    return op;
  }

  StageOp tp_collective(CollectiveKind kind, double bytes, std::string suffix = "",
                        Overlap overlap = Overlap::none, CommEngine engine = CommEngine::shared_sms) const {
    StageOp op = collective_op("tp " + std::string(models::collective_name(kind)) + suffix, OpKind::tp_comm,
                               kind, tp_group_, bytes);
    op.overlap = overlap;
    op.engine = engine;
    return op;
  }

  /// Bytes of a TP all-gather of the b*s*h activation of `bytes`: fp8 elements when Transformer
  /// Engine's userbuffers gather fp8 (tp_comm_overlap with an fp8 recipe), the activation format
  /// otherwise.
  double gathered_bytes(double bytes) const {
    return tp_comm_overlap_ && gemm_dtype_ == Dtype::fp8 ? bytes / act_bytes_ : bytes;
  }

  /// Appends the TP collective `kind` of `bytes` at a GEMM: before it (`before_gemm`, the
  /// all-gather that feeds a column-parallel GEMM forward or a row-parallel dgrad) or after it (the
  /// reduce-scatter of a row-parallel GEMM forward or of a column-parallel wgrad/dgrad). With
  /// TP-communication overlap (sequence parallelism, layers only) it runs as Transformer
  /// Engine's userbuffers do (header): an all-gather as a ring exchange beside the GEMM it
  /// feeds (which the caller chunks by GemmOverlap::forward_chunks / dgrad_chunks), a forward
  /// reduce-scatter pipelined with the GEMM before it (kPipelineSplits chunks; the last split
  /// exposed), a backward one
  /// in bulk beside the wgrad GEMM.
  /// `reversed`: the list is built in reverse execution order (backward lists).
  /// `beside_previous`: without Transformer Engine's overlap, the collective runs beside the op
  /// before it (Megatron's asynchronous input-gradient reduction beside the wgrad GEMM).
  void tp_at_gemm(CollectiveKind kind, double bytes, bool before_gemm, bool overlappable, bool reversed,
                  std::vector<StageOp>& ops, bool beside_previous = false) const {
    if (tp_ <= 1) return;
    if (!(overlappable && tp_comm_overlap_)) {
      ops.push_back(tp_collective(kind, bytes, "", beside_previous ? Overlap::with_previous : Overlap::none));
      return;
    }
    if (before_gemm) {
      ops.push_back(tp_collective(kind, gathered_bytes(bytes), " (ring exchange)", Overlap::with_next,
                                  CommEngine::copy_engine));
      return;
    }
    if (reversed) {
      ops.push_back(tp_collective(kind, bytes, " (bulk)", Overlap::with_previous, CommEngine::reserved_sms));
      return;
    }
    const double last_split = bytes / static_cast<double>(kPipelineSplits);
    ops.push_back(tp_collective(kind, bytes - last_split, " (pipelined)", Overlap::with_previous,
                                CommEngine::reserved_sms));
    ops.push_back(tp_collective(kind, last_split, " (last split)"));
  }

  /// The collective at `point` (of `bytes`) in the forward pass and its mirror in the backward pass:
  /// with SP an all-gather before a column-parallel GEMM (reduce-scatter in backward) and a
  /// reduce-scatter after a row-parallel GEMM (all-gather in backward); without SP the
  /// identity/all-reduce pair (f, g) of Megatron: nothing before the column-parallel GEMM
  /// (all-reduce in backward) and an all-reduce after the row-parallel GEMM (nothing in backward).
  /// Backward execution order around the GEMM pair is dgrad then wgrad: the mirror of a
  /// column-parallel all-gather comes after them (reduce-scatter of the dgrad output,
  /// overlapped with wgrad); the mirror of a row-parallel reduce-scatter comes before them
  /// (all-gather of the output gradient, overlapped with dgrad).
  /// `column_linear`: the collective feeds a column-parallel linear whose backward runs dgrad
  /// then wgrad right after it in execution order (built before gemm_pair); with
  /// workload.tp_async_backward its backward reduction (all-reduce, or reduce-scatter with SP)
  /// then runs beside that wgrad, as Megatron's LinearWithGradAccumulationAndAsyncCommunication
  /// launches it after the dgrad. Collectives Transformer Engine overlaps are unaffected.
  void tp_pair(TpPoint point, double bytes, std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed,
               bool overlappable = false, bool column_linear = false) const {
    if (tp_ <= 1) return;
    const bool column = point == TpPoint::before_column_parallel;
    const bool async_backward = column && column_linear && workload_.tp_async_backward;
    if (sequence_parallel_) {
      tp_at_gemm(column ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter, bytes, column, overlappable,
                 false, forward);
      tp_at_gemm(column ? CollectiveKind::reduce_scatter : CollectiveKind::all_gather, bytes, !column, overlappable,
                 true, backward_reversed, async_backward);
    } else if (column) {
      backward_reversed.push_back(tp_collective(CollectiveKind::all_reduce, bytes, "",
                                                async_backward ? Overlap::with_previous : Overlap::none));
    } else {
      forward.push_back(tp_collective(CollectiveKind::all_reduce, bytes));
    }
  }

  /// Sequence parallelism: the all-gather of a column-parallel linear's input (`bytes`, as its
  /// TP point gathered it) for its wgrad GEMM, beside its dgrad GEMM. Called right after that
  /// linear's gemm_pair, so in the reversed list it lands just before the dgrad in execution order.
  void wgrad_input_gather(double bytes, std::vector<StageOp>& backward_reversed) const {
    if (tp_ <= 1 || !sequence_parallel_) return;
    backward_reversed.push_back(tp_collective(CollectiveKind::all_gather, gathered_bytes(bytes),
                                              " (wgrad input)", Overlap::with_next,
                                              tp_comm_overlap_ ? CommEngine::reserved_sms : CommEngine::shared_sms));
  }

  /// Attention core forward and backward over the description's groups, with context
  /// parallelism's ring (header; `exchange`: the description's CP point, set when cp > 1), plus
  /// the selective recompute of the forward kernel just before the backward. A training sequence
  /// is causal over itself: ring step 0 is the causal kernel of its local queries over as many
  /// local keys (all of them with cp 1).
  void attention(const TransformerOp& core, const TransformerOp* exchange, std::vector<StageOp>& forward,
                 std::vector<StageOp>& backward_reversed, bool selective_recompute) const {
    if (cp_ > 1 && exchange == nullptr) {
      throw SimulationError("training step: context parallelism without the description's CP exchange point");
    }
    double fwd_s = 0, bwd_s = 0;
    double fwd_kernel_flops = 0, bwd_kernel_flops = 0;  // what the kernels evaluate (causal: about half)
    double local_q_bytes = 0, local_kv_bytes = 0;  // ring attention's merge passes (cp > 1)
    // Each kernel sequence is as trusted as its least trusted estimate.
    models::Provenance fwd_provenance = models::Provenance::measured_table;
    models::Provenance bwd_provenance = models::Provenance::measured_table;
    for (const models::AttentionShape& group : core.attention.groups) {
      models::AttentionShape step0 = group;
      step0.causal = true;
      if (cp_ > 1) step0.seq_kv = group.seq_q;
      // Ring steps 1..cp-1 (cp > 1): s queries over s/2 keys, no mask.
      models::AttentionShape ring_step = step0;
      ring_step.causal = false;
      ring_step.seq_kv = std::max<std::int64_t>(1, group.seq_q / 2);
      const auto pass_s = [&](bool backward, models::Provenance& provenance, double& kernel_flops) {
        models::AttentionShape first = step0;
        first.backward = backward;
        const auto estimate = compute_.attention(first);
        provenance = models::least_trusted(provenance, estimate.provenance);
        double seconds = estimate.time_s;
        kernel_flops += estimate.flops;
        if (cp_ > 1) {
          models::AttentionShape other = ring_step;
          other.backward = backward;
          const auto step = compute_.attention(other);
          provenance = models::least_trusted(provenance, step.provenance);
          seconds += static_cast<double>(cp_ - 1) * step.time_s;
          kernel_flops += static_cast<double>(cp_ - 1) * step.flops;
        }
        return seconds;
      };
      fwd_s += pass_s(false, fwd_provenance, fwd_kernel_flops);
      bwd_s += pass_s(true, bwd_provenance, bwd_kernel_flops);
      // Bytes of the local output (the shape of Q) and of the local K and V.
      local_q_bytes += static_cast<double>(group.batch * group.seq_q * group.q_heads) *
                       static_cast<double>(group.head_dim) * act_bytes_;
      local_kv_bytes += static_cast<double>(group.batch * group.seq_q) * 2.0 *
                        static_cast<double>(group.kv_heads * group.head_dim) * act_bytes_;
    }
    const double convention_flops = core.flops;  // full non-causal QK^T and PV over the whole sequence
    const auto fwd_ps = engine::seconds_to_ps(fwd_s);
    const auto bwd_ps = engine::seconds_to_ps(bwd_s);
    const auto kernel_op = [](std::string name, OpKind kind, engine::TimePs ps, double flops, double kernel_flops,
                              models::Provenance provenance) {
      StageOp op{std::move(name), kind, ps, flops};
      op.provenance = provenance;
      op.kernel_flops = kernel_flops;
      op.kernel_class = KernelClass::attention;
      return op;
    };
    forward.push_back(
        kernel_op(core.name, OpKind::compute, fwd_ps, convention_flops, fwd_kernel_flops, fwd_provenance));
    engine::TimePs merge_ps = 0;  // ring attention's output merge, recomputed with the kernels
    models::Provenance recompute_provenance = fwd_provenance;
    if (cp_ > 1) {
      const double steps = static_cast<double>(cp_);
      const StageOp merge = elementwise("cp out correction", steps * 2.0 * local_q_bytes + local_kv_bytes,
                                        (steps + 1.0) * local_q_bytes + local_kv_bytes);
      merge_ps = merge.duration_ps;
      recompute_provenance = models::least_trusted(fwd_provenance, merge.provenance);
      StageOp ring = collective_op(exchange->name, OpKind::cp_comm, CollectiveKind::all_gather, cp_group_,
                                   exchange->comm.bytes);
      ring.overlap = Overlap::with_previous;
      forward.push_back(ring);
      forward.push_back(merge);
      backward_reversed.push_back(elementwise("cp grad accumulation",
                                              steps * 2.0 * (local_q_bytes + local_kv_bytes) + local_kv_bytes,
                                              steps * (local_q_bytes + local_kv_bytes) + local_kv_bytes));
    }
    // Reversed order: attention backward, then (executed before it) CP exchange, recompute.
    backward_reversed.push_back(
        kernel_op(core.name + " bwd", OpKind::compute, bwd_ps, 2.0 * convention_flops, bwd_kernel_flops,
                  bwd_provenance));
    if (cp_ > 1) {
      StageOp ring = collective_op(exchange->name + " bwd", OpKind::cp_comm, CollectiveKind::all_gather,
                                   cp_group_, 2.0 * exchange->comm.bytes);
      ring.overlap = Overlap::with_next;
      backward_reversed.push_back(ring);
    }
    if (selective_recompute) {
      // Megatron recomputes the whole core attention, ring steps and merge included.
      backward_reversed.push_back(kernel_op(core.name + " recompute", OpKind::recompute, fwd_ps + merge_ps,
                                            convention_flops, fwd_kernel_flops, recompute_provenance));
    }
  }

  /// A GEMM every TP rank computes in full (duplicated weights): its time and kernel FLOPs are
  /// the whole GEMM's, its per-rank model FLOPs 1/t of it.
  void duplicated_gemm_pair(const std::string& name, const models::GemmShape& shape, std::vector<StageOp>& forward,
                            std::vector<StageOp>& backward_reversed, GemmOverlap overlap = {}) const {
    const std::size_t f = forward.size(), b = backward_reversed.size();
    gemm_pair(name, shape, true, forward, backward_reversed, overlap);
    for (std::size_t i = f; i < forward.size(); ++i) forward[i].flops /= tp_;
    for (std::size_t i = b; i < backward_reversed.size(); ++i) backward_reversed[i].flops /= tp_;
  }

  /// `shape.batch` equal GEMMs (an expert group) and their backward (with fp8 casts as
  /// gemm_pair); model FLOPs scaled by `flop_share`, kernel FLOPs those of the GEMMs run.
  void grouped_gemm_pair(const std::string& name, const models::GemmShape& shape, double flop_share,
                         std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed) const {
    const std::size_t f = forward.size(), b = backward_reversed.size();
    gemm_pair(name, shape, true, forward, backward_reversed);
    for (std::size_t i = f; i < forward.size(); ++i) forward[i].flops *= flop_share;
    for (std::size_t i = b; i < backward_reversed.size(); ++i) backward_reversed[i].flops *= flop_share;
  }

  /// An expert-parallel all-to-all of `bytes` per rank in the forward pass and its mirror in
  /// the backward pass.
  void ep_pair(const std::string& name, double bytes, std::vector<StageOp>& forward,
               std::vector<StageOp>& backward_reversed) const {
    forward.push_back(collective_op(name, OpKind::ep_comm, CollectiveKind::all_to_all, ep_group_, bytes));
    backward_reversed.push_back(
        collective_op(name + " bwd", OpKind::ep_comm, CollectiveKind::all_to_all, ep_group_, bytes));
  }

  const TrainingWorkload& workload_;
  const models::ComputeModel& compute_;
  const models::CollectiveModel& collectives_;
  std::vector<int> tp_group_, cp_group_, ep_group_;
  int tp_ = 1, cp_ = 1;
  bool sequence_parallel_ = false;
  bool tp_comm_overlap_ = false;
  double act_bytes_ = 2;
  Dtype gemm_dtype_ = Dtype::bf16;
  double hidden_bytes_ = 0;
};

/// Each size's share of their sum.
std::vector<double> shares_of(const std::vector<double>& sizes) {
  double total = 0;
  for (const double size : sizes) total += size;
  std::vector<double> shares;
  for (const double size : sizes) shares.push_back(size / total);
  return shares;
}

/// Parameter tensors of one dense MHA/GQA layer on one TP rank, in forward order: the input
/// norm, QKV, the output projection, the second norm, fc1 (gate and up fused), fc2, each
/// followed by its bias when the model has them (Megatron's tensors).
std::vector<double> dense_layer_tensors(const models::TransformerSpec& m, int tp) {
  const double h = static_cast<double>(m.hidden_size);
  const double t = tp;
  const double d = static_cast<double>(m.head_dim());
  const double qkv = static_cast<double>(m.num_attention_heads + 2 * m.num_key_value_heads) * d;
  const double heads = static_cast<double>(m.num_attention_heads) * d;
  const double ffn = static_cast<double>(m.intermediate_size) * (m.hidden_act == models::Activation::swiglu ? 2.0 : 1.0);
  std::vector<double> tensors;
  const auto add = [&](double weight, double bias) {
    tensors.push_back(weight);
    if (m.linear_bias) tensors.push_back(bias);
  };
  add(h, h);                          // input norm
  add(qkv * h / t, qkv / t);          // QKV (column-parallel)
  add(heads * h / t, h);              // output projection (row-parallel: bias whole)
  add(h, h);                          // pre-MLP norm
  add(ffn * h / t, ffn / t);          // fc1 (column-parallel)
  add(static_cast<double>(m.intermediate_size) * h / t, h);  // fc2 (row-parallel)
  return tensors;
}

std::vector<StageOp> reversed(std::vector<StageOp> ops) {
  std::reverse(ops.begin(), ops.end());
  return ops;
}

/// The stage's place in the pipeline: its chunks, their layers and each layer's kind.
void place_layers(const TrainingWorkload& workload, int stage, StageProgram& program) {
  const auto& par = workload.parallelism;
  program.stage = stage;
  program.stages = par.pp;
  program.chunks = par.schedule == PipelineSchedule::interleaved ? par.vp : 1;
  const models::PipelineSplit split(workload.model.num_hidden_layers, par.pp, program.chunks, par.stage_layers);
  for (int c = 0; c < program.chunks; ++c) {
    program.chunk_layers.push_back(split.layers(stage, c));
    program.chunk_first_layer.push_back(split.first_layer(stage, c));
    for (int l = 0; l < program.layers(c); ++l) {
      program.kinds.push_back(workload.model.layer_kind(program.first_layer(c) + l));
    }
  }
}

/// torchtitan's per-op checkpointing (Recompute::op) replays before a layer's backward every
/// forward compute op but the attention kernel and the saved matmuls: with separate Q, K, V
/// (gate, up) projections the policy saves the 1st, 3rd, ... matmul outputs, so the K part of
/// the fused QKV GEMM, the output projection and one h x f matmul (SwiGLU's up half of fc1,
/// GELU's fc2) run again, each costed as its share of the fused GEMM's time. Collectives are
/// not replayed (the policy saves the reduce-scatter outputs; the all-gathers' replay is left
/// out).
std::vector<StageOp> op_checkpoint_recompute(const models::TransformerSpec& model, const std::vector<StageOp>& fwd) {
  const double q = static_cast<double>(model.hidden_size);
  const double kv = static_cast<double>(model.num_key_value_heads * model.head_dim());
  const bool gated = model.hidden_act == models::Activation::swiglu;
  std::vector<StageOp> recompute;
  for (const StageOp& op : fwd) {
    if (op.kind != OpKind::compute) continue;
    const auto starts = [&](const char* prefix) { return op.name.rfind(prefix, 0) == 0; };
    double share = 1.0;
    if (starts("attn") && op.name.find("fp8 cast") == std::string::npos) {
      share = 0.0;
    } else if (op.flops > 0) {
      if (starts("qkv")) share = kv / (q + 2.0 * kv);
      else if (starts("fc1")) share = gated ? 0.5 : 0.0;
      else if (starts("fc2")) share = gated ? 0.0 : 1.0;
    }
    if (share <= 0) continue;
    StageOp copy = op;
    copy.name = "recompute " + op.name;
    copy.kind = OpKind::recompute;
    copy.duration_ps = static_cast<engine::TimePs>(std::llround(static_cast<double>(op.duration_ps) * share));
    copy.flops *= share;
    copy.kernel_flops *= share;
    recompute.push_back(std::move(copy));
  }
  return recompute;
}

/// One layer of each kind the stage holds, from the description's layer ops, with its
/// recompute and parameters. Backward ops are collected in reverse and flipped.
void build_layers(const TrainingWorkload& workload, const OpCoster& cost,
                  const models::TransformerForwardOps& description, StageProgram& program) {
  const auto& par = workload.parallelism;
  const auto& model = workload.model;
  const bool selective = workload.recompute == Recompute::selective;
  const auto build = [&](LayerProgram& layer, const std::vector<TransformerOp>& ops) {
    std::vector<StageOp> fwd, bwd_rev;
    cost.add_ops(ops, fwd, bwd_rev, selective);
    layer.backward = reversed(std::move(bwd_rev));
    if (workload.recompute == Recompute::full) {
      std::vector<StageOp> recompute;
      recompute.reserve(fwd.size() + layer.backward.size());
      for (const auto& op : fwd) {
        StageOp copy = op;
        copy.name = "recompute " + op.name;
        if (copy.kind == OpKind::compute) copy.kind = OpKind::recompute;
        recompute.push_back(std::move(copy));
      }
      std::move(layer.backward.begin(), layer.backward.end(), std::back_inserter(recompute));
      layer.backward = std::move(recompute);
    } else if (workload.recompute == Recompute::op) {
      std::vector<StageOp> recompute = op_checkpoint_recompute(model, fwd);
      std::move(layer.backward.begin(), layer.backward.end(), std::back_inserter(recompute));
      layer.backward = std::move(recompute);
    }
    layer.forward = std::move(fwd);
  };
  const auto holds = [&](models::LayerKind kind) {
    return std::find(program.kinds.begin(), program.kinds.end(), kind) != program.kinds.end();
  };
  if (holds(models::LayerKind::dense)) {
    build(program.dense, description.dense_layer);
    program.dense.parameters = model.dense_layer_parameters() / par.tp;
    if (par.zero3_granularity == Zero3Granularity::tensor) {
      program.dense.tensor_shares = shares_of(dense_layer_tensors(model, par.tp));
    }
  }
  if (holds(models::LayerKind::moe)) {
    build(program.moe, description.moe_layer);
    // Helper's convention (models/memory): the router whole on every TP rank, the rest of the
    // dense part split over tp, the routed experts over ep x tp.
    const double routed = model.routed_expert_parameters();
    const double router = model.router_parameters();
    program.moe.parameters = (model.moe_layer_parameters() - routed - router) / par.tp + router;
    program.moe.expert_parameters = routed / (static_cast<double>(par.ep) * par.tp);
  }
}

/// The embedding (first stage): the description's lookup and vocab-parallel reduction, and the
/// dense weight gradient of the lookup.
void build_embedding(const TrainingWorkload& workload, const OpCoster& cost,
                     const models::TransformerForwardOps& description, StageProgram& program) {
  const auto& model = workload.model;
  const int tp = workload.parallelism.tp;
  std::vector<StageOp> efwd, ebwd_rev;
  // The lookup's weight gradient is dense (torch.nn.functional.embedding, as Megatron's
  // VocabParallelEmbedding calls it): the backward writes a zeroed [V/t, h] gradient in the
  // activation format, scatters the token rows into it, and the gradient hook adds it into the
  // gradient buffer (main_grad.add_: reads both, writes the buffer). Runs last in the backward
  // (built reversed here).
  const double table_bytes = static_cast<double>(model.vocab_size * model.hidden_size) / tp *
                             (models::stored_element_bytes(workload.precision) + workload.grad_bytes_per_param);
  ebwd_rev.push_back(cost.elementwise("embedding wgrad (dense)", table_bytes, table_bytes));
  cost.add_ops(description.embedding, efwd, ebwd_rev);
  program.embedding_forward = std::move(efwd);
  program.embedding_backward = reversed(std::move(ebwd_rev));
  program.embedding_parameters = static_cast<double>(model.vocab_size * model.hidden_size) / tp;
}

/// The head (last stage): final norm, LM head (Megatron's ColumnParallelLinear, not a
/// Transformer Engine layer) and cross-entropy, and their parameters.
void build_head(const TrainingWorkload& workload, const OpCoster& cost, const models::TransformerForwardOps& description,
                StageProgram& program) {
  const auto& par = workload.parallelism;
  const auto& model = workload.model;
  const std::int64_t h = model.hidden_size;
  std::vector<StageOp> hfwd, hbwd_rev;
  cost.add_ops(description.head, hfwd, hbwd_rev);
  program.head_forward = std::move(hfwd);
  program.head_backward = reversed(std::move(hbwd_rev));
  const bool shares_embedding = model.tie_word_embeddings && par.pp == 1;
  program.head_parameters =
      static_cast<double>(h) + (shares_embedding ? 0.0 : static_cast<double>(model.vocab_size * h) / par.tp);
  if (par.zero3_granularity == Zero3Granularity::tensor) {
    std::vector<double> tensors{static_cast<double>(h)};  // final norm
    if (model.linear_bias) tensors.push_back(static_cast<double>(h));
    if (!shares_embedding) tensors.push_back(static_cast<double>(model.vocab_size * h) / par.tp);
    program.head_tensor_shares = shares_of(tensors);
  }
}

/// The activation sends to the next and previous stage (Megatron's scatter-gather: 1/t of the
/// activation with SP), wrapping around when interleaved.
void build_p2p(const TrainingWorkload& workload, const models::CollectiveModel& collectives, const RankLayout& layout,
               double activation_bytes_per_microbatch, StageProgram& program) {
  const int pp = workload.parallelism.pp;
  const int stage = program.stage;
  program.p2p_bytes = activation_bytes_per_microbatch;
  const bool wraps = program.chunks > 1;
  if (pp > 1 && (stage != pp - 1 || wraps)) {
    program.p2p_forward_ps = engine::seconds_to_ps(collectives.send_recv_time_s(
        layout.representative(stage), layout.representative((stage + 1) % pp), program.p2p_bytes));
  }
  if (pp > 1 && (stage != 0 || wraps)) {
    program.p2p_backward_ps = engine::seconds_to_ps(collectives.send_recv_time_s(
        layout.representative(stage), layout.representative((stage + pp - 1) % pp), program.p2p_bytes));
  }
}

/// The optimizer step over this rank's shard, as Megatron's mixed-precision optimizers run it
/// (Float16OptimizerWithFloat16Params, DistributedOptimizer; apex / TE FusedAdam), per
/// parameter: gradients narrower than fp32 copied into the fp32 main gradients (read g,
/// write 4); with fp16 the loss-scale unscale and inf check (read 4, write 4); the gradient
/// norm (read 4); Adam (read the master weights, the gradient (4), m and v; write the master
/// weights, m and v: 16 and 12 with an fp32 master and fp32 moments); and, when the model's
/// parameters are narrower than a separate fp32 master copy, their copy back (read 4, write the
/// model format). Master weights kept as 16-bit remainders are read and written with the
/// parameter they complete (2 + the parameter's bytes, no copy back); without master weights
/// the parameter itself is updated (workload.optimizer). fp32 training skips the copies.
void build_optimizer(const TrainingWorkload& workload, const models::ComputeModel& compute, StageProgram& program) {
  const auto& par = workload.parallelism;
  const double shard = models::dense_sharding(par.zero, par.dp, par.cp).optimizer_divisor();
  const double expert_shard = models::expert_sharding(par.zero, par.dp, par.cp, par.ep).optimizer_divisor();
  const double optimizer_parameters = program.stage_parameters / shard + program.stage_expert_parameters / expert_shard;
  const double grad_bytes = workload.grad_bytes_per_param;
  const double model_param_bytes = models::stored_element_bytes(workload.precision);
  const bool narrow_grads = grad_bytes < 4.0;
  const bool loss_scaling = workload.precision == Dtype::fp16;
  const OptimizerState& state = workload.optimizer;
  const bool separate_master = state.master_bytes >= 4.0;
  const bool copy_back = separate_master && model_param_bytes < 4.0;
  const double master_bytes = separate_master ? 4.0 : state.master_bytes + model_param_bytes;
  const double adam_state_bytes = master_bytes + 2.0 * state.moment_bytes;
  models::ElementwiseShape adam;
  adam.bytes_read = optimizer_parameters * ((narrow_grads ? grad_bytes : 0.0) + (loss_scaling ? 4.0 : 0.0) + 4.0 +
                                            adam_state_bytes + 4.0 + (copy_back ? 4.0 : 0.0));
  adam.bytes_written = optimizer_parameters * ((narrow_grads ? 4.0 : 0.0) + (loss_scaling ? 4.0 : 0.0) +
                                               adam_state_bytes + (copy_back ? model_param_bytes : 0.0));
  const models::OpEstimate estimate = compute.elementwise(adam);
  program.optimizer_ps = engine::seconds_to_ps(estimate.time_s);
  program.optimizer_provenance = estimate.provenance;
}

}  // namespace

double model_flops(const std::vector<StageOp>& ops) {
  double total = 0;
  for (const auto& op : ops) {
    if (op.kind != OpKind::recompute) total += op.flops;
  }
  return total;
}

double hardware_flops(const std::vector<StageOp>& ops) {
  double total = 0;
  for (const auto& op : ops) total += op.flops;
  return total;
}

models::TransformerForwardOps training_forward_ops(const TrainingWorkload& workload) {
  return models::transformer_forward_ops(workload.model, training_micro_batch(workload), training_sharding(workload),
                                         workload.moe);
}

StageProgram build_stage_program(const TrainingWorkload& workload,
                                 const models::ComputeModel& compute,
                                 const models::CollectiveModel& collectives,
                                 const RankLayout& layout, int stage) {
  return build_stage_program(workload, compute, collectives, layout, stage, training_forward_ops(workload));
}

StageProgram build_stage_program(const TrainingWorkload& workload, const models::ComputeModel& compute,
                                 const models::CollectiveModel& collectives, const RankLayout& layout, int stage,
                                 const models::TransformerForwardOps& description) {
  const auto& par = workload.parallelism;
  const OpCoster cost(workload, compute, collectives, layout.tp_group(stage), layout.cp_group(stage),
                      layout.expert_group(stage));

  StageProgram program;
  place_layers(workload, stage, program);
  build_layers(workload, cost, description, program);
  if (stage == 0) build_embedding(workload, cost, description, program);
  if (stage == par.pp - 1) build_head(workload, cost, description, program);
  program.stage_parameters = program.embedding_parameters + program.head_parameters;
  for (int l = 0; l < program.local_layers(); ++l) {
    program.stage_parameters += program.layer(l).parameters;
    program.stage_expert_parameters += program.layer(l).expert_parameters;
  }
  build_p2p(workload, collectives, layout, cost.sharded_hidden_bytes(), program);
  build_optimizer(workload, compute, program);
  return program;
}

double per_microbatch_flops(const StageProgram& program, bool model) {
  auto sum = [model](const std::vector<StageOp>& ops) { return model ? model_flops(ops) : hardware_flops(ops); };
  double total = sum(program.embedding_forward) + sum(program.embedding_backward) + sum(program.head_forward) +
                 sum(program.head_backward);
  for (int l = 0; l < program.local_layers(); ++l) total += sum(program.layer(l).forward) + sum(program.layer(l).backward);
  return total;
}

ProvenanceSeconds step_seconds_by_provenance(const StageProgram& program, std::int64_t microbatches) {
  ProvenanceSeconds seconds;
  const auto add = [&](const std::vector<StageOp>& ops, double repeats) {
    for (const auto& op : ops) seconds[op.provenance] += engine::ps_to_seconds(op.duration_ps) * repeats;
  };
  const auto per_step = static_cast<double>(microbatches);
  for (const auto* ops : {&program.embedding_forward, &program.embedding_backward, &program.head_forward,
                          &program.head_backward}) {
    add(*ops, per_step);
  }
  for (int l = 0; l < program.local_layers(); ++l) {
    add(program.layer(l).forward, per_step);
    add(program.layer(l).backward, per_step);
  }
  seconds[program.optimizer_provenance] += engine::ps_to_seconds(program.optimizer_ps);
  return seconds;
}

std::vector<std::vector<double>> parameter_unit_tensor_shares(const StageProgram& program) {
  const auto split = [](const std::vector<double>& shares) { return shares.size() > 1; };
  if (!split(program.embedding_tensor_shares) && !split(program.dense.tensor_shares) &&
      !split(program.moe.tensor_shares) && !split(program.head_tensor_shares)) {
    return {};  // one collective per unit: the callers' default, no per-unit copies
  }
  std::vector<std::vector<double>> units;
  if (!program.embedding_forward.empty()) units.push_back(program.embedding_tensor_shares);
  for (int l = 0; l < program.local_layers(); ++l) units.push_back(program.layer(l).tensor_shares);
  if (!program.head_forward.empty()) units.push_back(program.head_tensor_shares);
  return units;
}

std::vector<double> parameter_units_forward(const StageProgram& program) {
  std::vector<double> units;
  if (!program.embedding_forward.empty()) units.push_back(program.embedding_parameters);
  for (int l = 0; l < program.local_layers(); ++l) units.push_back(program.layer(l).parameters);
  if (!program.head_forward.empty()) units.push_back(program.head_parameters);
  return units;
}

}  // namespace clustersim::training
