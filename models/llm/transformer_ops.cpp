#include "models/llm/transformer_ops.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

double ceil_div(std::int64_t a, std::int64_t b) { return static_cast<double>((a + b - 1) / b); }

void validate_pass(const TransformerSpec& model, const TransformerBatch& batch, const TransformerSharding& sharding) {
  model.validate();
  if (batch.sequences.empty()) throw ConfigError("transformer batch: no sequences (at least one is needed)");
  for (std::size_t i = 0; i < batch.sequences.size(); ++i) {
    const SequenceWork& sequence = batch.sequences[i];
    if (sequence.query_tokens < 1) {
      throw ConfigError(fmt::format("transformer batch: sequence {} has query_tokens {}; at least 1 is needed", i,
                                    sequence.query_tokens));
    }
    if (sequence.query_tokens > sequence.kv_tokens) {
      throw ConfigError(fmt::format(
          "transformer batch: sequence {} has query_tokens {} > kv_tokens {} (its keys include its new tokens)", i,
          sequence.query_tokens, sequence.kv_tokens));
    }
  }
  const auto require_degree = [](const char* what, int degree) {
    if (degree < 1) throw ConfigError(fmt::format("transformer sharding: {} must be >= 1, got {}", what, degree));
  };
  require_degree("tp", sharding.tp);
  require_degree("cp", sharding.cp);
  require_degree("ep", sharding.ep);
  if (model.num_attention_heads % sharding.tp != 0) {
    throw ConfigError(fmt::format("transformer sharding: tp {} does not divide the {} attention heads of model '{}'",
                                  sharding.tp, model.num_attention_heads, model.name));
  }
}

/// Room for the longest op list (an MLA + MoE layer has 28 ops in a serving prefill), so that building one list
/// allocates once.
constexpr std::size_t kOpsReserve = 32;

/// Builds the op lists of one pass; see the header for every shape, byte and FLOP count.
class ForwardBuilder {
 public:
  ForwardBuilder(const TransformerSpec& model, const TransformerBatch& batch, const TransformerSharding& sharding,
                 const MoeRuntime& routing)
      : model_(model), batch_(batch), sharding_(sharding), routing_(routing) {
    tp_ = sharding.tp;
    sequence_parallel_ = sharding.sequence_parallel && tp_ > 1;
    act_bytes_ = dtype_bytes(sharding.activation_dtype);
    for (const SequenceWork& sequence : batch.sequences) {
      tokens_ += sequence.query_tokens;
      kv_tokens_ += sequence.kv_tokens;
      if (sequence.phase == SequencePhase::prefill) cached_context_tokens_ += sequence.kv_tokens - sequence.query_tokens;
    }
    hidden_bytes_ = static_cast<double>(tokens_) * static_cast<double>(model.hidden_size) * act_bytes_;
    sharded_bytes_ = sequence_parallel_ ? hidden_bytes_ / tp_ : hidden_bytes_;
  }

  std::vector<TransformerOp> embedding() {
    std::vector<TransformerOp> ops;
    ops.reserve(kOpsReserve);
    block_ = TransformerBlock::embedding;
    ops.push_back(elementwise("embedding", ElementwisePass::embedding_lookup, hidden_bytes_, hidden_bytes_));
    tp_point(CommPoint::tp_after_row_parallel, ops);  // the vocab-parallel partial sums
    return ops;
  }

  std::vector<TransformerOp> dense_layer() {
    std::vector<TransformerOp> ops;
    ops.reserve(kOpsReserve);
    attention_block(ops);
    block_ = TransformerBlock::mlp;
    ops.push_back(elementwise("ln2", ElementwisePass::norm, sharded_bytes_, sharded_bytes_));
    tp_point(CommPoint::tp_before_column_parallel, ops);
    mlp("", static_cast<std::int64_t>(ceil_div(model_.intermediate_size, tp_)), ops);
    tp_point(CommPoint::tp_after_row_parallel, ops);
    ops.push_back(elementwise("dropout+residual", ElementwisePass::dropout_residual, 2 * sharded_bytes_, sharded_bytes_));
    return ops;
  }

  std::vector<TransformerOp> moe_layer() {
    std::vector<TransformerOp> ops;
    ops.reserve(kOpsReserve);
    attention_block(ops);
    moe_block(ops);
    return ops;
  }

  std::vector<TransformerOp> head() {
    std::vector<TransformerOp> ops;
    ops.reserve(kOpsReserve);
    block_ = TransformerBlock::head;
    const std::int64_t vocab_local = static_cast<std::int64_t>(ceil_div(model_.vocab_size, tp_));
    ops.push_back(elementwise("final ln", ElementwisePass::norm, sharded_bytes_, sharded_bytes_));
    tp_point(CommPoint::tp_before_column_parallel, ops);
    if (batch_.head == HeadOutput::loss) {
      ops.push_back(gemm("lm head", tokens_, vocab_local, model_.hidden_size, GemmParallel::column, false));
      const double logit_bytes = static_cast<double>(tokens_ * vocab_local) * 4.0;  // fp32 logits, 3 passes
      ops.push_back(elementwise("cross-entropy", ElementwisePass::loss, 3 * logit_bytes, 3 * logit_bytes));
      return ops;
    }
    const auto sequences = static_cast<std::int64_t>(batch_.sequences.size());
    ops.push_back(gemm("lm head", sequences, vocab_local, model_.hidden_size, GemmParallel::column, false));
    if (tp_ > 1) {
      ops.push_back(comm("tp all-gather (logits)", CommPoint::tp_after_column_parallel, CollectiveKind::all_gather,
                         static_cast<double>(sequences * vocab_local * tp_) * act_bytes_));
    }
    return ops;
  }

 private:
  TransformerOp op(std::string name, TransformerOpKind kind) const {
    TransformerOp result;
    result.name = std::move(name);
    result.kind = kind;
    result.block = block_;
    return result;
  }

  TransformerOp elementwise(std::string name, ElementwisePass pass, double read_bytes, double written_bytes) const {
    TransformerOp result = op(std::move(name), TransformerOpKind::elementwise);
    result.elementwise = {pass, read_bytes, written_bytes};
    return result;
  }

  /// A GEMM in the layers' format, or the unquantized one; with `grouped`, `batch` equal
  /// products (the local experts, even one) whose model FLOPs are `flop_share` of the shape's.
  TransformerOp gemm(std::string name, std::int64_t m, std::int64_t n, std::int64_t k, GemmParallel parallel,
                     bool quantized = true, bool grouped = false, std::int64_t batch = 1, double flop_share = 1) const {
    TransformerOp result = op(std::move(name), TransformerOpKind::gemm);
    result.gemm.shape.m = m;
    result.gemm.shape.n = n;
    result.gemm.shape.k = k;
    result.gemm.shape.batch = batch;
    result.gemm.shape.dtype = quantized ? sharding_.gemm_dtype : sharding_.unquantized_gemm_dtype;
    if (quantized) result.gemm.shape.weight_bytes = sharding_.weight_bytes;
    result.gemm.quantized = quantized;
    result.gemm.parallel = parallel;
    result.gemm.grouped = grouped;
    result.gemm.flop_share = flop_share;
    result.flops = gemm_flops(result.gemm.shape);
    if (result.gemm.grouped) result.flops *= flop_share;
    if (parallel == GemmParallel::duplicated) result.flops /= tp_;
    return result;
  }

  TransformerOp comm(std::string name, CommPoint point, std::optional<CollectiveKind> collective, double bytes) const {
    TransformerOp result = op(std::move(name), TransformerOpKind::communication);
    result.comm = {point, collective, bytes};
    return result;
  }

  /// The TP point (nothing with tp 1): the collective sequence parallelism or Megatron's f / g
  /// pair runs there, over the block's whole activation.
  void tp_point(CommPoint point, std::vector<TransformerOp>& ops) const {
    if (tp_ <= 1) return;
    std::optional<CollectiveKind> collective;
    if (point == CommPoint::tp_before_column_parallel) {
      if (sequence_parallel_) collective = CollectiveKind::all_gather;
    } else {
      collective = sequence_parallel_ ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    }
    const std::string name = collective ? "tp " + std::string(collective_name(*collective)) : "tp identity";
    ops.push_back(comm(name, point, collective, hidden_bytes_));
  }

  /// Norm, TP point, Q/K/V projections (MHA/GQA, or MLA's down- and up-projections), RoPE,
  /// attention core (and the CP exchange), output projection, TP point, residual.
  void attention_block(std::vector<TransformerOp>& ops) {
    block_ = TransformerBlock::attention;
    const std::int64_t h = model_.hidden_size;
    const std::int64_t heads_local = model_.num_attention_heads / tp_;
    ops.push_back(elementwise("ln1", ElementwisePass::norm, sharded_bytes_, sharded_bytes_));
    tp_point(CommPoint::tp_before_column_parallel, ops);
    std::int64_t out_proj_k = 0;
    double rotary_bytes = 0;
    if (model_.attention == AttentionKind::mla) {
      // Megatron-Core MLA: the down-projections duplicated on every TP rank, the
      // up-projections column-parallel, the output projection row-parallel.
      const MlaSpec& mla = model_.mla;
      if (mla.q_lora_rank > 0) {
        ops.push_back(gemm("q down", tokens_, mla.q_lora_rank, h, GemmParallel::duplicated));
        ops.push_back(gemm("q up", tokens_, heads_local * mla.qk_head_dim(), mla.q_lora_rank, GemmParallel::column));
      } else {
        ops.push_back(gemm("q proj", tokens_, heads_local * mla.qk_head_dim(), h, GemmParallel::column));
      }
      ops.push_back(gemm("kv down", tokens_, mla.kv_lora_rank + mla.qk_rope_head_dim, h, GemmParallel::duplicated));
      // Decode steps run absorbed (W_UK into the query, W_UV after the attention): the same
      // FLOPs and weight reads as this up-projection of their new token, costed as it.
      ops.push_back(gemm("kv up", tokens_, heads_local * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank,
                         GemmParallel::column));
      if (cached_context_tokens_ > 0) {
        // Serving prefill: the cached latents of the chunk's context up-projected again.
        ops.push_back(gemm("kv up context", cached_context_tokens_, heads_local * (mla.qk_nope_head_dim + mla.v_head_dim),
                           mla.kv_lora_rank, GemmParallel::column));
      }
      out_proj_k = heads_local * mla.v_head_dim;
      // RoPE on the rotary slices only: each head's query part and the one shared key.
      rotary_bytes = static_cast<double>(tokens_ * (heads_local + 1) * mla.qk_rope_head_dim) * act_bytes_;
    } else {
      const std::int64_t d = model_.head_dim();
      const auto kv_local = std::max<std::int64_t>(1, model_.num_key_value_heads / tp_);
      ops.push_back(gemm("qkv", tokens_, (heads_local + 2 * kv_local) * d, h, GemmParallel::column));
      out_proj_k = heads_local * d;
      rotary_bytes = static_cast<double>(tokens_ * (heads_local + kv_local) * d) * act_bytes_;
    }
    if (model_.rope_theta > 0) ops.push_back(elementwise("rope", ElementwisePass::rotary, rotary_bytes, rotary_bytes));
    attention_core(ops);
    ops.push_back(gemm("proj", tokens_, h, out_proj_k, GemmParallel::row));
    tp_point(CommPoint::tp_after_row_parallel, ops);
    ops.push_back(elementwise("dropout+residual", ElementwisePass::dropout_residual, 2 * sharded_bytes_, sharded_bytes_));
  }

  /// One AttentionShape per distinct (query, KV) length, and the CP exchange of K and V.
  void attention_core(std::vector<TransformerOp>& ops) const {
    AttentionShape shape;
    shape.q_heads = model_.num_attention_heads / tp_;
    if (model_.attention == AttentionKind::mla) {
      // MLA after the up-projections is MHA with qk_head_dim-wide scores and v_head_dim-wide
      // values: costed with their mean width, which keeps QK^T + PV FLOPs exact.
      shape.kv_heads = shape.q_heads;
      shape.head_dim = (model_.mla.qk_head_dim() + model_.mla.v_head_dim) / 2;
    } else {
      shape.kv_heads = std::max<std::int64_t>(1, model_.num_key_value_heads / tp_);
      shape.head_dim = model_.head_dim();
    }
    shape.fused = sharding_.fused_attention;
    shape.kernel = sharding_.attention_kernel;
    shape.dtype = sharding_.attention_dtype;
    TransformerOp core = op("attn", TransformerOpKind::attention);
    for (const SequenceWork& sequence : batch_.sequences) {
      // Few distinct lengths in practice (one in training): a linear search finds the group.
      auto& groups = core.attention.groups;
      const bool latent = model_.attention == AttentionKind::mla && sequence.phase == SequencePhase::decode;
      const auto same = std::find_if(groups.begin(), groups.end(), [&](const AttentionShape& group) {
        return group.seq_q == sequence.query_tokens && group.seq_kv == sequence.kv_tokens &&
               (group.latent_value_dim > 0) == latent;
      });
      if (same != groups.end()) {
        ++same->batch;
        continue;
      }
      AttentionShape group = shape;
      group.batch = 1;
      group.seq_q = sequence.query_tokens;
      group.seq_kv = sequence.kv_tokens;
      group.causal = sequence.query_tokens > 1;  // one query token sees every key
      if (sharding_.decode_kv_per_query_head && sequence.query_tokens == 1) group.kv_heads = group.q_heads;
      if (latent) {
        // Absorbed: every head's query against the one cached latent and RoPE key; values are
        // the latent's first kv_lora_rank elements.
        group.kv_heads = 1;
        group.head_dim = model_.mla.kv_lora_rank + model_.mla.qk_rope_head_dim;
        group.latent_value_dim = model_.mla.kv_lora_rank;
      }
      core.attention.groups.push_back(group);
    }
    for (const AttentionShape& group : core.attention.groups) {
      // Model-FLOP convention: full non-causal QK^T and PV.
      const double width = group.latent_value_dim > 0 ? 0.5 * static_cast<double>(group.head_dim + group.latent_value_dim)
                                                      : static_cast<double>(group.head_dim);
      core.flops += 4.0 * static_cast<double>(group.batch) * static_cast<double>(group.q_heads) *
                    static_cast<double>(group.seq_q) * static_cast<double>(group.seq_kv) * width;
    }
    ops.push_back(std::move(core));
    if (sharding_.cp > 1) {
      const double kv_bytes = static_cast<double>(kv_tokens_) * 2.0 *
                              static_cast<double>(shape.kv_heads * shape.head_dim) * act_bytes_;
      ops.push_back(comm("cp kv exchange", CommPoint::cp_kv_exchange, CollectiveKind::all_gather, kv_bytes));
    }
  }

  /// A dense MLP of `ffn_local` columns per rank on every token; `prefix` names it.
  void mlp(const std::string& prefix, std::int64_t ffn_local, std::vector<TransformerOp>& ops) const {
    const std::int64_t h = model_.hidden_size;
    const double ffn_bytes = static_cast<double>(tokens_ * ffn_local) * act_bytes_;
    if (model_.hidden_act == Activation::swiglu) {
      ops.push_back(gemm(prefix + "fc1 gate+up", tokens_, 2 * ffn_local, h, GemmParallel::column));
      ops.push_back(elementwise(prefix + "swiglu", ElementwisePass::activation, 2 * ffn_bytes, ffn_bytes));
    } else {
      ops.push_back(gemm(prefix + "fc1", tokens_, ffn_local, h, GemmParallel::column));
      // gelu and relu2 (squared ReLU): one elementwise pass over the up-projection output.
      ops.push_back(elementwise(prefix + std::string(activation_name(model_.hidden_act)), ElementwisePass::activation,
                                ffn_bytes, ffn_bytes));
    }
    ops.push_back(gemm(prefix + "fc2", tokens_, h, ffn_local, GemmParallel::row));
  }

  /// Megatron-Core's all-to-all token dispatcher with expert tensor parallelism = tp: router on
  /// the rank's tokens, TP point, permutation, dispatch, the local experts as one grouped GEMM
  /// sized by the busiest EP rank (models::expert_load), combine, un-permutation, the shared
  /// experts as a dense MLP, TP point, residual.
  void moe_block(std::vector<TransformerOp>& ops) {
    block_ = TransformerBlock::moe;
    const MoeSpec& moe = model_.moe;
    const std::int64_t h = model_.hidden_size;
    ops.push_back(elementwise("ln2", ElementwisePass::norm, sharded_bytes_, sharded_bytes_));
    const std::int64_t routed_tokens = sequence_parallel_ ? tokens_ / tp_ : tokens_;
    ops.push_back(gemm("router", routed_tokens, moe.num_experts, h, GemmParallel::replicated, false));
    ops.push_back(elementwise("router softmax+top-k", ElementwisePass::routing,
                              static_cast<double>(routed_tokens * moe.num_experts) * 4.0,
                              static_cast<double>(routed_tokens * moe.num_experts_per_tok) * 8.0));
    tp_point(CommPoint::tp_before_column_parallel, ops);
    const double copies_bytes = static_cast<double>(tokens_ * moe.num_experts_per_tok * h) * act_bytes_;
    ops.push_back(elementwise("permute", ElementwisePass::permutation, copies_bytes, copies_bytes));
    const int ep = sharding_.ep;
    const ExpertLoad load = expert_load(moe, routing_, static_cast<double>(tokens_), ep);
    if (ep > 1) ops.push_back(comm("ep dispatch", CommPoint::ep_dispatch, CollectiveKind::all_to_all, copies_bytes));
    const auto expert_ffn = static_cast<std::int64_t>(ceil_div(moe.moe_intermediate_size, tp_));
    // The grouped GEMM runs the experts that receive a token copy: with few copies (a decode
    // batch) most of a large expert set stays idle and its weights unread (grouped_expert_gemm).
    const GroupedExpertGemm grouped = grouped_expert_gemm(load);
    const std::int64_t local = grouped.experts;
    // Model FLOPs are the architecture's (docs/models.md): a balanced rank's copies, dropped
    // tokens included; the time is the busiest rank's work after dropping.
    const double balanced_share =
        load.busiest_rank_tokens > 0 ? load.mean_rank_tokens / load.busiest_rank_tokens : 0.0;
    const bool gated = model_.hidden_act == Activation::swiglu;
    const std::int64_t expert_m = grouped.tokens;
    ops.push_back(gemm(gated ? "experts fc1 gate+up" : "experts fc1", expert_m, (gated ? 2 : 1) * expert_ffn, h,
                       GemmParallel::column, true, true, local, balanced_share));
    const double expert_bytes = load.busiest_rank_tokens * static_cast<double>(expert_ffn) * act_bytes_;
    ops.push_back(elementwise(gated ? "experts swiglu" : "experts gelu", ElementwisePass::activation, 2 * expert_bytes,
                              expert_bytes));
    ops.push_back(gemm("experts fc2", expert_m, h, expert_ffn, GemmParallel::row, true, true, local, balanced_share));
    if (ep > 1) ops.push_back(comm("ep combine", CommPoint::ep_combine, CollectiveKind::all_to_all, copies_bytes));
    ops.push_back(elementwise("unpermute", ElementwisePass::permutation, copies_bytes,
                              copies_bytes / static_cast<double>(moe.num_experts_per_tok)));
    if (moe.n_shared_experts > 0) {
      mlp("shared ", static_cast<std::int64_t>(ceil_div(moe.n_shared_experts * moe.moe_intermediate_size, tp_)), ops);
    }
    tp_point(CommPoint::tp_after_row_parallel, ops);
    ops.push_back(elementwise("dropout+residual", ElementwisePass::dropout_residual, 2 * sharded_bytes_, sharded_bytes_));
  }

  const TransformerSpec& model_;
  const TransformerBatch& batch_;
  const TransformerSharding& sharding_;
  const MoeRuntime& routing_;
  TransformerBlock block_ = TransformerBlock::embedding;
  int tp_ = 1;
  bool sequence_parallel_ = false;
  double act_bytes_ = 2;
  std::int64_t tokens_ = 0, kv_tokens_ = 0;
  std::int64_t cached_context_tokens_ = 0;  ///< prefill sequences' keys from the KV cache
  double hidden_bytes_ = 0, sharded_bytes_ = 0;
};

}  // namespace

TransformerForwardOps transformer_forward_ops(const TransformerSpec& model, const TransformerBatch& batch,
                                              const TransformerSharding& sharding, const MoeRuntime& routing) {
  validate_pass(model, batch, sharding);
  ForwardBuilder builder(model, batch, sharding, routing);
  TransformerForwardOps ops;
  ops.embedding = builder.embedding();
  if (model.dense_layer_count() > 0) ops.dense_layer = builder.dense_layer();
  if (model.is_moe()) ops.moe_layer = builder.moe_layer();
  ops.head = builder.head();
  return ops;
}

double gemm_flops(const GemmShape& shape) {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k) *
         static_cast<double>(shape.batch);
}

OpEstimate compute_estimate(const ComputeModel& compute, const TransformerOp& op) {
  switch (op.kind) {
    case TransformerOpKind::gemm:
      return compute.gemm(op.gemm.shape);
    case TransformerOpKind::elementwise: {
      ElementwiseShape shape;
      shape.bytes_read = op.elementwise.bytes_read;
      shape.bytes_written = op.elementwise.bytes_written;
      return compute.elementwise(shape);
    }
    case TransformerOpKind::attention: {
      OpEstimate total;
      total.provenance = Provenance::measured_table;  // raised to each group's below
      double compute_bound_s = 0;
      for (const AttentionShape& group : op.attention.groups) {
        const OpEstimate part = compute.attention(group);
        total.time_s += part.time_s;
        total.flops += part.flops;
        total.bytes += part.bytes;
        if (part.compute_bound) compute_bound_s += part.time_s;
        total.provenance = least_trusted(total.provenance, part.provenance);
      }
      total.compute_bound = compute_bound_s >= total.time_s - compute_bound_s;  // as ComputeModel's kernel sequences
      return total;
    }
    case TransformerOpKind::communication:
      break;
  }
  throw ConfigError(fmt::format("op '{}' is a communication point: the collective model times it, not the compute model",
                                op.name));
}

}  // namespace clustersim::models
