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
#include "sim/training/stage_program.hpp"

#include <algorithm>

#include "models/llm/pipeline_split.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::training {
namespace {

using models::CollectiveKind;
using models::Dtype;

double ceil_div(std::int64_t a, std::int64_t b) { return static_cast<double>((a + b - 1) / b); }

// Bytes per activation element.
double activation_bytes(Dtype precision) {
  return (precision == Dtype::fp32 || precision == Dtype::tf32) ? 4.0 : 2.0;
}

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
    act_bytes_ = activation_bytes(workload.precision);
    gemm_dtype_ = workload.precision;
    attention_dtype_ = (workload.precision == Dtype::fp8 || workload.precision == Dtype::fp4)
                           ? Dtype::bf16
                           : workload.precision;
    local_seq_ = workload.seq_len / par.cp;
    tokens_ = workload.micro_batch * local_seq_;
    hidden_bytes_ = static_cast<double>(tokens_) * static_cast<double>(workload.model.hidden_size) *
                    act_bytes_;
  }

  double hidden_bytes() const { return hidden_bytes_; }
  /// Bytes of a b*s*h activation as stored between norms/residuals (divided by t with SP).
  double sharded_hidden_bytes() const {
    return sequence_parallel_ ? hidden_bytes_ / tp_ : hidden_bytes_;
  }
  bool sequence_parallel() const { return sequence_parallel_; }
  std::int64_t tokens() const { return tokens_; }

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
    return {std::move(name), OpKind::compute, engine::seconds_to_ps(seconds), estimate.flops};
  }

  bool low_precision_gemms() const { return gemm_dtype_ == Dtype::fp8 || gemm_dtype_ == Dtype::fp4; }

  /// Forward GEMM followed by its backward pair, appended to the two lists. `quantized`: the
  /// GEMM runs in the workload's fp8/fp4 precision (Transformer Engine's linear layers);
  /// otherwise in bf16 (Megatron's LM head and router are not TE layers). A quantized GEMM
  /// adds Transformer Engine's cast kernels: before the forward, the bf16 input (m x k) cast
  /// to fp8 with its transposed copy for the wgrad (Hopper's fp8 GEMMs take only K-major
  /// operands): 2 bytes read, 2 written per element; before the dgrad, the same for the output
  /// gradient (m x n). Costed as memory-bound elementwise kernels; the weight casts (once per
  /// step with fp8 weight caching) and amax reductions are left out.
  /// `overlap`: how Transformer Engine's TP overlap splits and confines its GEMMs (gemm()).
  void gemm_pair(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed,
                 bool quantized = true, std::int64_t batch = 1, GemmOverlap overlap = {}) const {
    const bool cast = quantized && low_precision_gemms();
    const Dtype dtype = quantized ? gemm_dtype_ : Dtype::bf16;
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

  StageOp elementwise(std::string name, double read_bytes, double written_bytes) const {
    models::ElementwiseShape shape;
    shape.bytes_read = read_bytes;
    shape.bytes_written = written_bytes;
    const auto estimate = compute_.elementwise(shape);
    return {std::move(name), OpKind::compute, engine::seconds_to_ps(estimate.time_s), 0.0};
  }

  /// Forward elementwise op and its backward (1.5x the bytes).
  void elementwise_pair(const std::string& name, double read_bytes, double written_bytes,
                        std::vector<StageOp>& forward,
                        std::vector<StageOp>& backward_reversed) const {
    forward.push_back(elementwise(name, read_bytes, written_bytes));
    backward_reversed.push_back(elementwise(name + " bwd", 1.5 * read_bytes, 1.5 * written_bytes));
  }

  StageOp tp_collective(CollectiveKind kind, double bytes, std::string suffix = "",
                        Overlap overlap = Overlap::none, CommEngine engine = CommEngine::shared_sms) const {
    const double seconds = collectives_.time_s(kind, tp_group_, bytes);
    StageOp op{"tp " + std::string(models::collective_name(kind)) + suffix, OpKind::tp_comm,
               engine::seconds_to_ps(seconds), 0.0, kind, bytes};
    op.overlap = overlap;
    op.engine = engine;
    return op;
  }

  /// Bytes of a TP all-gather of the b*s*h activation: fp8 elements when Transformer Engine's
  /// userbuffers gather fp8 (tp_comm_overlap with an fp8 recipe), the activation format otherwise.
  double gathered_bytes() const {
    return tp_comm_overlap_ && gemm_dtype_ == Dtype::fp8 ? hidden_bytes_ / act_bytes_ : hidden_bytes_;
  }

  /// Appends the TP collective `kind` at a GEMM: before it (`before_gemm`, the all-gather that
  /// feeds a column-parallel GEMM forward or a row-parallel dgrad) or after it (the
  /// reduce-scatter of a row-parallel GEMM forward or of a column-parallel wgrad/dgrad). With
  /// TP-communication overlap (sequence parallelism, layers only) it runs as Transformer
  /// Engine's userbuffers do (header): an all-gather as a ring exchange beside the GEMM it
  /// feeds (which the caller chunks by ring_chunks()), a forward reduce-scatter pipelined with
  /// the GEMM before it (chunked by pipeline_chunks(); the last split exposed), a backward one
  /// in bulk beside the wgrad GEMM.
  /// `reversed`: the list is built in reverse execution order (backward lists).
  /// `beside_previous`: without Transformer Engine's overlap, the collective runs beside the op
  /// before it (Megatron's asynchronous input-gradient reduction beside the wgrad GEMM).
  void tp_at_gemm(CollectiveKind kind, bool before_gemm, bool overlappable, bool reversed,
                  std::vector<StageOp>& ops, bool beside_previous = false) const {
    if (tp_ <= 1) return;
    if (!(overlappable && tp_comm_overlap_)) {
      ops.push_back(tp_collective(kind, hidden_bytes_, "", beside_previous ? Overlap::with_previous : Overlap::none));
      return;
    }
    if (before_gemm) {
      ops.push_back(tp_collective(kind, gathered_bytes(), " (ring exchange)", Overlap::with_next,
                                  CommEngine::copy_engine));
      return;
    }
    if (reversed) {
      ops.push_back(
          tp_collective(kind, hidden_bytes_, " (bulk)", Overlap::with_previous, CommEngine::reserved_sms));
      return;
    }
    const double last_split = hidden_bytes_ / static_cast<double>(kPipelineSplits);
    ops.push_back(tp_collective(kind, hidden_bytes_ - last_split, " (pipelined)", Overlap::with_previous,
                                CommEngine::reserved_sms));
    ops.push_back(tp_collective(kind, last_split, " (last split)"));
  }

  /// The collective at `point` in the forward pass and its mirror in the backward pass:
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
  void tp_pair(TpPoint point, std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed,
               bool overlappable = false, bool column_linear = false) const {
    if (tp_ <= 1) return;
    const bool column = point == TpPoint::before_column_parallel;
    const bool async_backward = column && column_linear && workload_.tp_async_backward;
    if (sequence_parallel_) {
      tp_at_gemm(column ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter, column, overlappable, false,
                 forward);
      tp_at_gemm(column ? CollectiveKind::reduce_scatter : CollectiveKind::all_gather, !column, overlappable, true,
                 backward_reversed, async_backward);
    } else if (column) {
      backward_reversed.push_back(tp_collective(CollectiveKind::all_reduce, hidden_bytes_, "",
                                                async_backward ? Overlap::with_previous : Overlap::none));
    } else {
      forward.push_back(tp_collective(CollectiveKind::all_reduce, hidden_bytes_));
    }
  }

  /// Sequence parallelism: the all-gather of a column-parallel linear's input for its wgrad GEMM,
  /// beside its dgrad GEMM. Called right after that linear's gemm_pair, so in the reversed list
  /// it lands just before the dgrad in execution order.
  void wgrad_input_gather(std::vector<StageOp>& backward_reversed) const {
    if (tp_ <= 1 || !sequence_parallel_) return;
    backward_reversed.push_back(tp_collective(CollectiveKind::all_gather, gathered_bytes(), " (wgrad input)",
                                              Overlap::with_next,
                                              tp_comm_overlap_ ? CommEngine::reserved_sms : CommEngine::shared_sms));
  }

  /// Attention core forward and backward (with exposed CP exchange), plus the selective
  /// recompute of the forward kernel just before the backward.
  void attention(std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed,
                 bool selective_recompute) const {
    const auto& model = workload_.model;
    models::AttentionShape shape;
    shape.batch = workload_.micro_batch;
    shape.q_heads = model.num_attention_heads / tp_;
    shape.seq_q = local_seq_;
    shape.seq_kv = local_seq_;
    shape.causal = true;  // with cp > 1: ring step 0; the other steps below
    if (model.attention == models::AttentionKind::mla) {
      // MLA after the up-projections is MHA with qk_head_dim-wide scores and v_head_dim-wide
      // values: costed with their mean width, which keeps QK^T + PV FLOPs exact.
      shape.kv_heads = shape.q_heads;
      shape.head_dim = (model.mla.qk_head_dim() + model.mla.v_head_dim) / 2;
    } else {
      shape.kv_heads = std::max<std::int64_t>(1, model.num_key_value_heads / tp_);
      shape.head_dim = model.head_dim();
    }
    shape.fused = workload_.attention != AttentionKernel::unfused;
    switch (workload_.attention) {  // flash: the accelerator's family; unfused: no kernel family
      case AttentionKernel::fa2: shape.kernel = models::AttentionKernelFamily::fa2; break;
      case AttentionKernel::fa3: shape.kernel = models::AttentionKernelFamily::fa3; break;
      case AttentionKernel::cudnn: shape.kernel = models::AttentionKernelFamily::cudnn; break;
      case AttentionKernel::flash:
      case AttentionKernel::unfused: break;
    }
    shape.dtype = attention_dtype_;
    // Ring steps 1..cp-1 (cp > 1): s queries over s/2 keys, no mask.
    models::AttentionShape ring_step = shape;
    ring_step.causal = false;
    ring_step.seq_kv = std::max<std::int64_t>(1, local_seq_ / 2);
    const auto pass_s = [&](bool backward) {
      models::AttentionShape first = shape;
      first.backward = backward;
      double seconds = compute_.attention(first).time_s;
      if (cp_ > 1) {
        models::AttentionShape other = ring_step;
        other.backward = backward;
        seconds += static_cast<double>(cp_ - 1) * compute_.attention(other).time_s;
      }
      return seconds;
    };
    const double fwd_s = pass_s(false);
    const double bwd_s = pass_s(true);
    // Model-FLOP convention: full non-causal QK^T and PV over the whole sequence.
    const double convention_flops = 4.0 * static_cast<double>(shape.batch) *
                                     static_cast<double>(shape.q_heads) *
                                     static_cast<double>(local_seq_) *
                                     static_cast<double>(workload_.seq_len) *
                                     static_cast<double>(shape.head_dim);
    const auto fwd_ps = engine::seconds_to_ps(fwd_s);
    const auto bwd_ps = engine::seconds_to_ps(bwd_s);
    forward.push_back({"attn", OpKind::compute, fwd_ps, convention_flops});
    double kv_bytes = 0;
    engine::TimePs merge_ps = 0;  // ring attention's output merge, recomputed with the kernels
    if (cp_ > 1) {
      // Ring attention's merge passes, see the header: bytes of the local output (the shape of
      // Q) and of the local K and V.
      const double local_q_bytes = static_cast<double>(workload_.micro_batch * local_seq_ * shape.q_heads) *
                                   static_cast<double>(shape.head_dim) * act_bytes_;
      const double local_kv_bytes = static_cast<double>(workload_.micro_batch * local_seq_) * 2.0 *
                                    static_cast<double>(shape.kv_heads * shape.head_dim) * act_bytes_;
      const double steps = static_cast<double>(cp_);
      const StageOp merge = elementwise("cp out correction", steps * 2.0 * local_q_bytes + local_kv_bytes,
                                        (steps + 1.0) * local_q_bytes + local_kv_bytes);
      merge_ps = merge.duration_ps;
      kv_bytes = static_cast<double>(workload_.micro_batch * workload_.seq_len) * 2.0 *
                 static_cast<double>(shape.kv_heads * shape.head_dim) * act_bytes_;
      StageOp exchange{"cp kv exchange", OpKind::cp_comm,
                       engine::seconds_to_ps(collectives_.time_s(CollectiveKind::all_gather, cp_group_, kv_bytes)),
                       0.0, CollectiveKind::all_gather, kv_bytes};
      exchange.overlap = Overlap::with_previous;
      forward.push_back(exchange);
      forward.push_back(merge);
      backward_reversed.push_back(elementwise("cp grad accumulation",
                                              steps * 2.0 * (local_q_bytes + local_kv_bytes) + local_kv_bytes,
                                              steps * (local_q_bytes + local_kv_bytes) + local_kv_bytes));
    }
    // Reversed order: attention backward, then (executed before it) CP exchange, recompute.
    backward_reversed.push_back({"attn bwd", OpKind::compute, bwd_ps, 2.0 * convention_flops});
    if (cp_ > 1) {
      StageOp exchange{"cp kv exchange bwd", OpKind::cp_comm,
                       engine::seconds_to_ps(collectives_.time_s(CollectiveKind::all_gather, cp_group_, 2.0 * kv_bytes)),
                       0.0, CollectiveKind::all_gather, 2.0 * kv_bytes};
      exchange.overlap = Overlap::with_next;
      backward_reversed.push_back(exchange);
    }
    if (selective_recompute) {
      // Megatron recomputes the whole core attention, ring steps and merge included.
      backward_reversed.push_back({"attn recompute", OpKind::recompute, fwd_ps + merge_ps, convention_flops});
    }
  }

  /// Rotary position embedding of `qk_bytes` of queries and keys: Megatron-Core / Transformer
  /// Engine's fused RoPE reads them and writes them rotated; the backward rotates their
  /// gradients back (the same pass). Nothing when the model has no RoPE.
  void rotary_embedding(double qk_bytes, std::vector<StageOp>& fwd, std::vector<StageOp>& bwd_rev) const {
    if (!(workload_.model.rope_theta > 0)) return;
    fwd.push_back(elementwise("rope", qk_bytes, qk_bytes));
    bwd_rev.push_back(elementwise("rope bwd", qk_bytes, qk_bytes));
  }

  /// The attention half of a layer: norm, TP gather, Q/K/V projections (MHA/GQA, or MLA's
  /// down- and up-projections), RoPE, attention core, output projection, TP reduction, residual.
  void attention_block(std::vector<StageOp>& fwd, std::vector<StageOp>& bwd_rev, bool selective_recompute) const {
    const auto& model = workload_.model;
    const std::int64_t h = model.hidden_size;
    const std::int64_t heads_local = model.num_attention_heads / tp_;
    const double act = sharded_hidden_bytes();
    elementwise_pair("ln1", act, act, fwd, bwd_rev);
    tp_pair(TpPoint::before_column_parallel, fwd, bwd_rev, true, /*column_linear=*/true);
    std::int64_t out_proj_k = 0;
    if (model.attention == models::AttentionKind::mla) {
      // Megatron-Core MLA: the down-projections are duplicated on every TP rank, the
      // up-projections column-parallel, the output projection row-parallel.
      const auto& mla = model.mla;
      const std::int64_t rope = mla.qk_rope_head_dim;
      // The first GEMM on the gathered input runs beside the ring exchange; the wgrad beside the
      // bulk reduce-scatter is the last in execution order, so it takes the SM margin.
      GemmOverlap mla_first = column_overlap();
      mla_first.dgrad_margin = false;  // no wgrad-input gather beside it (MLA re-gathers nothing)
      if (mla.q_lora_rank > 0) {
        duplicated_gemm_pair("q down", tokens_, mla.q_lora_rank, h, fwd, bwd_rev, mla_first);
        gemm_pair("q up", tokens_, heads_local * mla.qk_head_dim(), mla.q_lora_rank, fwd, bwd_rev);
      } else {
        gemm_pair("q proj", tokens_, heads_local * mla.qk_head_dim(), h, fwd, bwd_rev, true, 1, mla_first);
      }
      duplicated_gemm_pair("kv down", tokens_, mla.kv_lora_rank + rope, h, fwd, bwd_rev);
      gemm_pair("kv up", tokens_, heads_local * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank, fwd, bwd_rev);
      out_proj_k = heads_local * mla.v_head_dim;
      // RoPE on the rotary slices only: each head's query part and the one shared key.
      rotary_embedding(static_cast<double>(tokens_ * (heads_local + 1) * rope) * act_bytes_, fwd, bwd_rev);
    } else {
      const std::int64_t d = model.head_dim();
      const auto kv_local = std::max<std::int64_t>(1, model.num_key_value_heads / tp_);
      gemm_pair("qkv", tokens_, (heads_local + 2 * kv_local) * d, h, fwd, bwd_rev, true, 1, column_overlap());
      wgrad_input_gather(bwd_rev);
      out_proj_k = heads_local * d;
      rotary_embedding(static_cast<double>(tokens_ * (heads_local + kv_local) * d) * act_bytes_, fwd, bwd_rev);
    }
    attention(fwd, bwd_rev, selective_recompute);
    gemm_pair("proj", tokens_, h, out_proj_k, fwd, bwd_rev, true, 1, row_overlap());
    tp_pair(TpPoint::after_row_parallel, fwd, bwd_rev, true);
    elementwise_pair("dropout+residual", 2 * act, act, fwd, bwd_rev);
  }

  /// A dense MLP of width `ffn` (whole model; split over TP) on `tokens`; `prefix` names it.
  /// `layer_block`: the MLP is the layer's TP block: fc1 is the column-parallel linear on the
  /// gathered sequence-parallel input (wgrad_input_gather) and fc1/fc2 sit at the layer's
  /// overlappable TP collectives (their GEMMs chunked under Transformer Engine's overlap).
  void mlp(const std::string& prefix, std::int64_t tokens, std::int64_t ffn_local, std::vector<StageOp>& fwd,
           std::vector<StageOp>& bwd_rev, bool layer_block = false) const {
    const auto& model = workload_.model;
    const std::int64_t h = model.hidden_size;
    const double ffn_bytes = static_cast<double>(tokens * ffn_local) * act_bytes_;
    const GemmOverlap fc1_overlap = layer_block ? column_overlap() : GemmOverlap{};
    const GemmOverlap fc2_overlap = layer_block ? row_overlap() : GemmOverlap{};
    if (model.hidden_act == models::Activation::swiglu) {
      gemm_pair(prefix + "fc1 gate+up", tokens, 2 * ffn_local, h, fwd, bwd_rev, true, 1, fc1_overlap);
      if (layer_block) wgrad_input_gather(bwd_rev);
      elementwise_pair(prefix + "swiglu", 2 * ffn_bytes, ffn_bytes, fwd, bwd_rev);
    } else {
      gemm_pair(prefix + "fc1", tokens, ffn_local, h, fwd, bwd_rev, true, 1, fc1_overlap);
      if (layer_block) wgrad_input_gather(bwd_rev);
      // gelu and relu2 (squared ReLU): one elementwise pass over the up-projection output.
      elementwise_pair(prefix + std::string(models::activation_name(model.hidden_act)), ffn_bytes, ffn_bytes, fwd,
                       bwd_rev);
    }
    gemm_pair(prefix + "fc2", tokens, h, ffn_local, fwd, bwd_rev, true, 1, fc2_overlap);
  }

  /// The MLP half of a dense layer.
  void dense_mlp_block(std::vector<StageOp>& fwd, std::vector<StageOp>& bwd_rev) const {
    const auto& model = workload_.model;
    const double act = sharded_hidden_bytes();
    elementwise_pair("ln2", act, act, fwd, bwd_rev);
    tp_pair(TpPoint::before_column_parallel, fwd, bwd_rev, true, /*column_linear=*/true);
    mlp("", tokens_, static_cast<std::int64_t>(ceil_div(model.intermediate_size, tp_)), fwd, bwd_rev,
        /*layer_block=*/true);
    tp_pair(TpPoint::after_row_parallel, fwd, bwd_rev, true);
    elementwise_pair("dropout+residual", 2 * act, act, fwd, bwd_rev);
  }

  /// The MoE half of a layer, as Megatron-Core's all-to-all token dispatcher runs it with
  /// expert tensor parallelism = tp: router on the sequence-parallel tokens; TP all-gather of the
  /// hidden states; permutation; all-to-all dispatch over the EP group (each rank sends its
  /// tokens x top-k copies); the local experts as one grouped GEMM sized by the busiest EP rank
  /// (models::expert_load: imbalance and capacity); all-to-all combine; un-permutation; the
  /// shared experts as a dense MLP on the same tokens; TP reduce-scatter. Expert GEMMs carry
  /// the FLOPs of a balanced rank (model FLOPs), their time the busiest rank's.
  void moe_mlp_block(std::vector<StageOp>& fwd, std::vector<StageOp>& bwd_rev) const {
    const auto& model = workload_.model;
    const auto& moe = model.moe;
    const std::int64_t h = model.hidden_size;
    const int ep = workload_.parallelism.ep;
    const double act = sharded_hidden_bytes();
    elementwise_pair("ln2", act, act, fwd, bwd_rev);
    const std::int64_t routed_tokens = sequence_parallel_ ? tokens_ / tp_ : tokens_;
    gemm_pair("router", routed_tokens, moe.num_experts, h, fwd, bwd_rev, /*quantized=*/false);
    elementwise_pair("router softmax+top-k",
                     static_cast<double>(routed_tokens * moe.num_experts) * 4.0,
                     static_cast<double>(routed_tokens * moe.num_experts_per_tok) * 8.0, fwd, bwd_rev);
    tp_pair(TpPoint::before_column_parallel, fwd, bwd_rev, false);
    const double copies_bytes = static_cast<double>(tokens_ * moe.num_experts_per_tok * h) * act_bytes_;
    elementwise_pair("permute", copies_bytes, copies_bytes, fwd, bwd_rev);
    const models::ExpertLoad load = models::expert_load(moe, workload_.moe, static_cast<double>(tokens_), ep);
    if (ep > 1) ep_pair("dispatch", copies_bytes, fwd, bwd_rev);
    const auto expert_ffn = static_cast<std::int64_t>(ceil_div(moe.moe_intermediate_size, tp_));
    const std::int64_t local = load.local_experts;
    const auto busiest = static_cast<std::int64_t>(std::ceil(load.busiest_rank_tokens / static_cast<double>(local)));
    // Model FLOPs are the architecture's (docs/models.md): a balanced rank's copies, dropped
    // tokens included; the time is the busiest rank's work after dropping.
    const double balanced_share =
        load.busiest_rank_tokens > 0 ? load.mean_rank_tokens / load.busiest_rank_tokens : 0.0;
    const bool gated = model.hidden_act == models::Activation::swiglu;
    const auto expert_gemms = [&](const std::string& name, std::int64_t n, std::int64_t k) {
      grouped_gemm_pair(name, std::max<std::int64_t>(1, busiest), n, k, local, balanced_share, fwd, bwd_rev);
    };
    expert_gemms(gated ? "experts fc1 gate+up" : "experts fc1", (gated ? 2 : 1) * expert_ffn, h);
    const double expert_bytes = load.busiest_rank_tokens * static_cast<double>(expert_ffn) * act_bytes_;
    elementwise_pair(gated ? "experts swiglu" : "experts gelu", 2 * expert_bytes, expert_bytes, fwd, bwd_rev);
    expert_gemms("experts fc2", h, expert_ffn);
    if (ep > 1) ep_pair("combine", copies_bytes, fwd, bwd_rev);
    elementwise_pair("unpermute", copies_bytes, copies_bytes / static_cast<double>(moe.num_experts_per_tok), fwd, bwd_rev);
    if (moe.n_shared_experts > 0) {
      mlp("shared ", tokens_,
          static_cast<std::int64_t>(ceil_div(moe.n_shared_experts * moe.moe_intermediate_size, tp_)), fwd, bwd_rev);
    }
    tp_pair(TpPoint::after_row_parallel, fwd, bwd_rev, false);
    elementwise_pair("dropout+residual", 2 * act, act, fwd, bwd_rev);
  }

 private:
  /// A GEMM every TP rank computes in full (duplicated weights): its time is the whole GEMM's,
  /// its per-rank model FLOPs 1/t of it.
  void duplicated_gemm_pair(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                            std::vector<StageOp>& forward, std::vector<StageOp>& backward_reversed,
                            GemmOverlap overlap = {}) const {
    const std::size_t f = forward.size(), b = backward_reversed.size();
    gemm_pair(name, m, n, k, forward, backward_reversed, true, 1, overlap);
    for (std::size_t i = f; i < forward.size(); ++i) forward[i].flops /= tp_;
    for (std::size_t i = b; i < backward_reversed.size(); ++i) backward_reversed[i].flops /= tp_;
  }

  /// `batch` equal GEMMs (an expert group) and their backward (with fp8 casts as gemm_pair);
  /// FLOPs scaled by `flop_share`.
  void grouped_gemm_pair(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                         double flop_share, std::vector<StageOp>& forward,
                         std::vector<StageOp>& backward_reversed) const {
    const std::size_t f = forward.size(), b = backward_reversed.size();
    gemm_pair(name, m, n, k, forward, backward_reversed, true, batch);
    for (std::size_t i = f; i < forward.size(); ++i) forward[i].flops *= flop_share;
    for (std::size_t i = b; i < backward_reversed.size(); ++i) backward_reversed[i].flops *= flop_share;
  }

  /// An expert-parallel all-to-all of `bytes` per rank in the forward pass and its mirror in
  /// the backward pass.
  void ep_pair(const std::string& name, double bytes, std::vector<StageOp>& forward,
               std::vector<StageOp>& backward_reversed) const {
    const auto op = [&](std::string op_name) {
      return StageOp{std::move(op_name), OpKind::ep_comm,
                     engine::seconds_to_ps(collectives_.time_s(CollectiveKind::all_to_all, ep_group_, bytes)), 0.0,
                     CollectiveKind::all_to_all, bytes};
    };
    forward.push_back(op("ep " + name));
    backward_reversed.push_back(op("ep " + name + " bwd"));
  }

  const TrainingWorkload& workload_;
  const models::ComputeModel& compute_;
  const models::CollectiveModel& collectives_;
  std::vector<int> tp_group_, cp_group_, ep_group_;
  int tp_ = 1, cp_ = 1;
  bool sequence_parallel_ = false;
  bool tp_comm_overlap_ = false;
  double act_bytes_ = 2;
  Dtype gemm_dtype_ = Dtype::bf16, attention_dtype_ = Dtype::bf16;
  std::int64_t local_seq_ = 0, tokens_ = 0;
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

StageProgram build_stage_program(const TrainingWorkload& workload,
                                 const models::ComputeModel& compute,
                                 const models::CollectiveModel& collectives,
                                 const RankLayout& layout, int stage) {
  const auto& par = workload.parallelism;
  const auto& model = workload.model;
  const OpCoster cost(workload, compute, collectives, layout.tp_group(stage), layout.cp_group(stage),
                      layout.expert_group(stage));
  const std::int64_t tokens = cost.tokens();
  const std::int64_t h = model.hidden_size;
  const auto vocab_local = static_cast<std::int64_t>(ceil_div(model.vocab_size, par.tp));
  const double act = cost.sharded_hidden_bytes();
  const bool first = stage == 0;
  const bool last = stage == par.pp - 1;

  StageProgram program;
  program.stage = stage;
  program.stages = par.pp;
  program.chunks = par.schedule == PipelineSchedule::interleaved ? par.vp : 1;
  const models::PipelineSplit split(model.num_hidden_layers, par.pp, program.chunks, par.stage_layers);
  for (int c = 0; c < program.chunks; ++c) {
    program.chunk_layers.push_back(split.layers(stage, c));
    program.chunk_first_layer.push_back(split.first_layer(stage, c));
    for (int l = 0; l < program.layers(c); ++l) program.kinds.push_back(model.layer_kind(program.first_layer(c) + l));
  }

  // One layer of each kind the stage holds. Backward ops are collected in reverse and flipped.
  const bool selective = workload.recompute == Recompute::selective;
  const auto finish = [&](LayerProgram& layer, std::vector<StageOp> fwd, std::vector<StageOp> bwd_rev) {
    layer.forward = fwd;
    layer.backward = reversed(std::move(bwd_rev));
    if (workload.recompute == Recompute::full) {
      std::vector<StageOp> recompute;
      for (const auto& op : fwd) {
        StageOp copy = op;
        copy.name = "recompute " + op.name;
        if (copy.kind == OpKind::compute) copy.kind = OpKind::recompute;
        recompute.push_back(std::move(copy));
      }
      layer.backward.insert(layer.backward.begin(), recompute.begin(), recompute.end());
    }
  };
  const auto holds = [&](models::LayerKind kind) {
    return std::find(program.kinds.begin(), program.kinds.end(), kind) != program.kinds.end();
  };
  if (holds(models::LayerKind::dense)) {
    std::vector<StageOp> fwd, bwd_rev;
    cost.attention_block(fwd, bwd_rev, selective);
    cost.dense_mlp_block(fwd, bwd_rev);
    finish(program.dense, std::move(fwd), std::move(bwd_rev));
    program.dense.parameters = model.dense_layer_parameters() / par.tp;
    if (par.zero3_granularity == Zero3Granularity::tensor) {
      program.dense.tensor_shares = shares_of(dense_layer_tensors(model, par.tp));
    }
  }
  if (holds(models::LayerKind::moe)) {
    std::vector<StageOp> fwd, bwd_rev;
    cost.attention_block(fwd, bwd_rev, selective);
    cost.moe_mlp_block(fwd, bwd_rev);
    finish(program.moe, std::move(fwd), std::move(bwd_rev));
    // Helper's convention (models/memory): the router whole on every TP rank, the rest of the
    // dense part split over tp, the routed experts over ep x tp.
    const double routed = model.routed_expert_parameters();
    const double router = model.router_parameters();
    program.moe.parameters = (model.moe_layer_parameters() - routed - router) / par.tp + router;
    program.moe.expert_parameters = routed / (static_cast<double>(par.ep) * par.tp);
  }

  // Embedding lookup (vocab-parallel: partial sums all-reduced, or reduce-scattered with SP).
  const double full_hidden = cost.hidden_bytes();
  if (first) {
    std::vector<StageOp> efwd, ebwd_rev;
    // The lookup's weight gradient is dense (torch.nn.functional.embedding, as Megatron's
    // VocabParallelEmbedding calls it): the backward writes a zeroed [V/t, h] gradient in the
    // activation format, scatters the token rows into it, and the gradient hook adds it into the
    // gradient buffer (main_grad.add_: reads both, writes the buffer). Runs last in the backward
    // (built reversed here).
    const double table_bytes = static_cast<double>(model.vocab_size * h) / par.tp *
                               (activation_bytes(workload.precision) + workload.grad_bytes_per_param);
    ebwd_rev.push_back(cost.elementwise("embedding wgrad (dense)", table_bytes, table_bytes));
    cost.elementwise_pair("embedding", full_hidden, full_hidden, efwd, ebwd_rev);
    // The vocab-parallel reduction sits where a row-parallel GEMM's would.
    cost.tp_pair(TpPoint::after_row_parallel, efwd, ebwd_rev);
    program.embedding_forward = std::move(efwd);
    program.embedding_backward = reversed(std::move(ebwd_rev));
    program.embedding_parameters = static_cast<double>(model.vocab_size * h) / par.tp;
  }
  if (last) {
    std::vector<StageOp> hfwd, hbwd_rev;
    cost.elementwise_pair("final ln", act, act, hfwd, hbwd_rev);
    // The LM head is Megatron's ColumnParallelLinear (not a Transformer Engine layer).
    cost.tp_pair(TpPoint::before_column_parallel, hfwd, hbwd_rev, false, /*column_linear=*/true);
    cost.gemm_pair("lm head", tokens, vocab_local, h, hfwd, hbwd_rev, /*quantized=*/false);
    const double logit_bytes = static_cast<double>(tokens * vocab_local) * 4.0;
    cost.elementwise_pair("cross-entropy", 3 * logit_bytes, 3 * logit_bytes, hfwd, hbwd_rev);
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
  program.stage_parameters = program.embedding_parameters + program.head_parameters;
  for (int l = 0; l < program.local_layers(); ++l) {
    program.stage_parameters += program.layer(l).parameters;
    program.stage_expert_parameters += program.layer(l).expert_parameters;
  }

  program.p2p_bytes = act;  // Megatron scatter-gather: 1/t of the activation with SP
  const bool wraps = program.chunks > 1;
  if (par.pp > 1 && (!last || wraps)) {
    program.p2p_forward_ps = engine::seconds_to_ps(collectives.send_recv_time_s(
        layout.representative(stage), layout.representative((stage + 1) % par.pp), program.p2p_bytes));
  }
  if (par.pp > 1 && (!first || wraps)) {
    program.p2p_backward_ps = engine::seconds_to_ps(collectives.send_recv_time_s(
        layout.representative(stage), layout.representative((stage + par.pp - 1) % par.pp),
        program.p2p_bytes));
  }

  // The optimizer step over this rank's shard, as Megatron's mixed-precision optimizers run it
  // (Float16OptimizerWithFloat16Params, DistributedOptimizer; apex / TE FusedAdam), per
  // parameter: gradients narrower than fp32 copied into the fp32 main gradients (read g,
  // write 4); with fp16 the loss-scale unscale and inf check (read 4, write 4); the gradient
  // norm (read 4); Adam (read parameter, gradient, m, v: 16; write parameter, m, v: 12); and,
  // when the model's parameters are narrower than the fp32 main ones, their copy back (read 4,
  // write the model format). fp32 training skips the copies.
  const double shard = par.zero >= 1 ? static_cast<double>(par.dp * par.cp) : 1.0;
  const double expert_shard = par.zero >= 1 ? static_cast<double>(par.dp * par.cp) / par.ep : 1.0;
  const double optimizer_parameters = program.stage_parameters / shard + program.stage_expert_parameters / expert_shard;
  const double grad_bytes = workload.grad_bytes_per_param;
  const double model_param_bytes = activation_bytes(workload.precision);
  const bool narrow_grads = grad_bytes < 4.0;
  const bool loss_scaling = workload.precision == Dtype::fp16;
  const bool narrow_params = model_param_bytes < 4.0;
  models::ElementwiseShape adam;
  adam.bytes_read = optimizer_parameters * ((narrow_grads ? grad_bytes : 0.0) + (loss_scaling ? 4.0 : 0.0) + 4.0 +
                                            16.0 + (narrow_params ? 4.0 : 0.0));
  adam.bytes_written = optimizer_parameters * ((narrow_grads ? 4.0 : 0.0) + (loss_scaling ? 4.0 : 0.0) + 12.0 +
                                               (narrow_params ? model_param_bytes : 0.0));
  program.optimizer_ps = engine::seconds_to_ps(compute.elementwise(adam).time_s);
  return program;
}

double per_microbatch_flops(const StageProgram& program, bool model) {
  auto sum = [model](const std::vector<StageOp>& ops) { return model ? model_flops(ops) : hardware_flops(ops); };
  double total = sum(program.embedding_forward) + sum(program.embedding_backward) + sum(program.head_forward) +
                 sum(program.head_backward);
  for (int l = 0; l < program.local_layers(); ++l) total += sum(program.layer(l).forward) + sum(program.layer(l).backward);
  return total;
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
