// Footprint formulas. Symbols as in Korthikanti et al., "Reducing Activation Recomputation in
// Large Transformer Models" (arXiv:2205.05198): s sequence (per CP rank), b micro-batch, h
// hidden, a heads, t tensor-parallel degree, L layers, p pipeline stages, v vocabulary.
#include "models/llm/memory_footprint.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "models/llm/parallel_rules.hpp"
#include "models/llm/pipeline_split.hpp"
#include "models/llm/zero_sharding.hpp"
#include "sim/config/units.hpp"

namespace clustersim::models {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("memory footprint: " + message);
}

/// A rule shared with the scenario loader (models/llm/parallel_rules.hpp), with its text.
void require_rule(const std::optional<config::RuleProblem>& problem) {
  if (problem) require(false, problem->message);
}

/// Activation bytes of one layer per s*b*h, split into the part tensor parallelism divides
/// (even without sequence parallelism), the part only sequence parallelism divides, the part
/// neither divides, plus the attention-score term 5 a s / h (per s*b*h) that only unfused
/// attention stores.
struct LayerActivationCoefficients {
  double tp_split = 0;      ///< 24 for MHA + 4h GELU
  double sp_only = 0;       ///< 10: layer-norm inputs (4), dropout masks (2), QKV and MLP inputs (4)
  double replicated = 0;    ///< on every TP rank in full: MLA latents, routed expert inputs
  double attention_scores = 0;  ///< 5 a s / h
};

/// Per s*b*h of an MLP of width `width` (its input is in the sp_only term): GELU input and fc2
/// input (4 f / h); SwiGLU gate and up outputs and the down-projection input (6 f / h). With
/// FP8 the fc2 input is saved as Transformer Engine's fp8 cast (1 B instead of 2: TE's Linear
/// saves the fp8 [transposed] input for its wgrad GEMM, and Megatron-Core's activation function,
/// outside TE, saves only its own input, the fc1 output, in bf16).
double mlp_coefficient(const TransformerSpec& m, std::int64_t width, bool fp8) {
  const double f = static_cast<double>(width) / static_cast<double>(m.hidden_size);
  const double fc2_input = fp8 ? 1.0 * f : 2.0 * f;
  return (m.hidden_act == Activation::swiglu ? 4.0 * f : 2.0 * f) + fc2_input;
}

/// Token copies the busiest EP rank's experts take per token routed on this rank, relative to
/// one copy per token: num_experts_per_tok x the busiest rank's load factor.
double expert_copies_per_token(const FootprintInputs& in) {
  const double tokens = static_cast<double>(in.seq_len / in.cp) * static_cast<double>(in.micro_batch);
  const ExpertLoad load = expert_load(in.model.moe, in.moe, tokens, in.ep);
  return static_cast<double>(in.model.moe.num_experts_per_tok) * load.busiest_rank_load_factor();
}

LayerActivationCoefficients coefficients(const FootprintInputs& in, LayerKind kind) {
  const auto& m = in.model;
  const double h = static_cast<double>(m.hidden_size);
  const double s = static_cast<double>(in.seq_len / in.cp);
  LayerActivationCoefficients c;
  if (m.attention == AttentionKind::mla) {
    // Q and K (qk_head_dim per head), V and the output projection's input (v_head_dim per head).
    const double a = static_cast<double>(m.num_attention_heads);
    const double qk = static_cast<double>(m.mla.qk_head_dim());
    const double v = static_cast<double>(m.mla.v_head_dim);
    c.tp_split = (4.0 * a * qk + 4.0 * a * v) / h;
    // FP8: the output projection saves its own fp8 copy of its input; the attention core keeps
    // its bf16 output for its backward.
    if (in.fp8) c.tp_split += a * v / h;
    // c_q and c_kv before and after their RMSNorm, and the RoPE key before rotation.
    c.replicated = (4.0 * static_cast<double>(m.mla.q_lora_rank) + 4.0 * static_cast<double>(m.mla.kv_lora_rank) +
                    2.0 * static_cast<double>(m.mla.qk_rope_head_dim)) /
                   h;
  } else {
    // Attention: Q (2) + K and V (2 g each) for QK^T and the score x V product, the output
    // projection's input (2), each q = attention width / h wide (1 unless the config states
    // another head_dim).
    const double g = static_cast<double>(m.num_key_value_heads) / static_cast<double>(m.num_attention_heads);
    const double q = static_cast<double>(m.attention_width()) / h;
    c.tp_split = (2.0 + 4.0 * g + 2.0) * q;
    // FP8: the fused attention keeps its bf16 output O for its backward and the output
    // projection (a TE Linear) saves its fp8 cast of the same tensor for the wgrad, 1 B more.
    if (in.fp8) c.tp_split += q;
  }
  // Layer-norm inputs (4), dropout masks (2, with hidden dropout), QKV and MLP inputs (2 + 2).
  // FP8: the QKV and MLP inputs are the outputs of TE's LayerNormLinear, saved as their fp8
  // casts (1 + 1).
  c.sp_only = (in.fp8 ? 6.0 : 8.0) + (in.hidden_dropout > 0 ? 2.0 : 0.0);
  if (kind == LayerKind::dense) {
    c.tp_split += mlp_coefficient(m, m.intermediate_size, in.fp8);
  } else {
    // Router logits and scores, 2 x E elements per token, on the rank's own tokens.
    c.sp_only += 2.0 * 2.0 * static_cast<double>(m.moe.num_experts) / h;
    // Routed copies on the busiest EP rank: the expert input (gathered over the expert-TP
    // group, so in full on every TP rank) and the expert MLP's intermediates (sharded over tp).
    const double copies = expert_copies_per_token(in);
    // FP8: the experts' fc1 (a TE grouped linear) saves the fp8 cast of its input.
    c.replicated += (in.fp8 ? 1.0 : 2.0) * copies;
    c.tp_split += copies * mlp_coefficient(m, m.moe.moe_intermediate_size, in.fp8);
    // Shared experts: a dense MLP of n_shared x moe_intermediate_size on the layer input.
    c.tp_split += mlp_coefficient(m, m.moe.n_shared_experts * m.moe.moe_intermediate_size, in.fp8);
  }
  // Softmax output (2), with attention dropout its mask (1) and the dropout output (2), per
  // a s^2 b.
  c.attention_scores = (in.attention_dropout > 0 ? 5.0 : 2.0) * static_cast<double>(m.num_attention_heads) * s / h;
  return c;
}

/// torchtitan's per-op selective checkpointing, per s*b*h: the block input (2 B, / t with SP),
/// the attention kernel's output (2 B, / t) and the outputs of every other matmul in forward
/// order with separate Q, K, V (and gate, up) projections: Q, V, gate (or fc1) and down (SwiGLU:
/// wq, wv, w1, w2 of wq wk wv wo w1 w3 w2; GELU: wq, wv, w1 of wq wk wv wo w1 w2). Column-
/// parallel outputs are / t; a row-parallel output is its full-width partial sum, plus, with TP,
/// the reduce-scatter's output that the policy saves too. Dense MHA/GQA layers only (validate()).
double op_checkpoint_coefficient(const FootprintInputs& in) {
  const auto& m = in.model;
  const double t = in.tp;
  const double h = static_cast<double>(m.hidden_size);
  const double kv = static_cast<double>(m.num_key_value_heads * m.head_dim()) / h;
  const double q = static_cast<double>(m.attention_width()) / h;
  const double f = static_cast<double>(m.intermediate_size) / h;
  const double sp = in.sequence_parallel ? t : 1.0;
  double elements = 1.0 / sp + q / t + (q + kv + f) / t;  // input, attention output, q, v, gate/fc1
  if (m.hidden_act == Activation::swiglu) elements += 1.0 + (t > 1 ? 1.0 / t : 0.0);  // w2 and its reduce-scatter
  return 2.0 * elements;
}

}  // namespace

std::optional<config::RuleProblem> recompute_policy_problem(const TransformerSpec& model, RecomputePolicy policy) {
  if (policy != RecomputePolicy::op || (!model.is_moe() && model.attention != AttentionKind::mla)) return std::nullopt;
  return config::RuleProblem{"recompute", "recompute op (torchtitan's per-op checkpointing) is modelled for dense "
                                          "MHA/GQA models only; model '" + model.name + "' has " +
                                              (model.is_moe() ? "experts" : "multi-head latent attention")};
}

double loss_saved_bytes(LossKernel loss) {
  switch (loss) {
    // Megatron (megatron/core/tensor_parallel/cross_entropy.py) casts the logits to fp32 and
    // saves exp_logits / sum, the fp32 softmax; PyTorch's log_softmax saves its fp32 output.
    case LossKernel::fused:
    case LossKernel::eager: return 4.0;
    // Inductor fuses the cast, log-softmax and gather: the backward recomputes the softmax from
    // the bf16 logits (saved) and the per-row log-sum-exp (s b values, neglected).
    case LossKernel::compiled: return 2.0;
  }
  return 0;
}

double loss_transient_bytes(LossKernel loss) {
  switch (loss) {
    // The bf16 logits beside their fp32 copy in the forward; in the backward the bf16 logit
    // gradient beside the fp32 one computed in place in the saved softmax.
    case LossKernel::fused: return 2.0;
    // The backward's peak: nll_loss_backward writes a dense fp32 gradient of the log-softmax
    // (4), and log_softmax_backward a new fp32 gradient of its input (4), beside the saved
    // output: 12 in all (the forward's peak is 10: bf16 logits, fp32 copy, log-softmax).
    case LossKernel::eager: return 8.0;
    // The bf16 logit gradient, written by the fused backward kernel.
    case LossKernel::compiled: return 2.0;
  }
  return 0;
}

namespace {

double sbh(const FootprintInputs& in) {
  return static_cast<double>(in.seq_len / in.cp) * static_cast<double>(in.micro_batch) *
         static_cast<double>(in.model.hidden_size);
}

/// Bytes per element the formula's "2 bytes" assumes is scaled for fp32 activations.
double precision_scale(const FootprintInputs& in) { return in.activation_bytes_per_element / 2.0; }

double layer_bytes(const FootprintInputs& in, RecomputePolicy policy, LayerKind kind) {
  const auto c = coefficients(in, kind);
  const double t = in.tp;
  const double base = sbh(in) * precision_scale(in);
  const double sp_only = in.sequence_parallel ? c.sp_only / t : c.sp_only;
  const double scores = in.flash_attention ? 0.0 : c.attention_scores / t;
  switch (policy) {
    case RecomputePolicy::none: return base * (sp_only + c.tp_split / t + scores + c.replicated);
    case RecomputePolicy::selective: return base * (sp_only + c.tp_split / t + c.replicated);
    case RecomputePolicy::full: return base * (in.sequence_parallel ? 2.0 / t : 2.0);
    case RecomputePolicy::op: return base * op_checkpoint_coefficient(in);
  }
  return 0;
}

/// Dense and MoE layers of a stage.
struct LayerCounts {
  std::int64_t dense = 0;
  std::int64_t moe = 0;
};

LayerCounts count_layers(const FootprintInputs& in, const std::vector<std::int64_t>& layers) {
  LayerCounts counts;
  for (const std::int64_t layer : layers) {
    if (in.model.layer_kind(layer) == LayerKind::moe) {
      ++counts.moe;
    } else {
      ++counts.dense;
    }
  }
  return counts;
}

/// Mean activation bytes per layer over `counts` under `policy`.
double mean_layer_bytes(const FootprintInputs& in, RecomputePolicy policy, const LayerCounts& counts) {
  const double dense = counts.dense > 0 ? layer_bytes(in, policy, LayerKind::dense) : 0.0;
  const double moe = counts.moe > 0 ? layer_bytes(in, policy, LayerKind::moe) : 0.0;
  return (static_cast<double>(counts.dense) * dense + static_cast<double>(counts.moe) * moe) /
         static_cast<double>(counts.dense + counts.moe);
}

/// Parameters on one device of a stage of an MoE model, before ZeRO: the dense part (sharded
/// over tp, replicated over dp x cp) and the routed experts (sharded over ep x tp, replicated
/// over the expert-data-parallel group).
struct StageParameters {
  double dense = 0;
  double experts = 0;
};

/// Parameters of the last stage's head on one device: final norm and (untied, or pp > 1) the
/// LM head's vocabulary shard.
double parameters_head(const models::TransformerSpec& model, int pp, double t) {
  const double h = static_cast<double>(model.hidden_size);
  const bool shared = model.tie_word_embeddings && pp == 1;
  return h + (shared ? 0.0 : static_cast<double>(model.vocab_size) * h / t);
}

StageParameters moe_stage_layer_parameters(const FootprintInputs& in, const LayerCounts& counts) {
  const auto& m = in.model;
  const double t = in.tp;
  StageParameters p;
  const double router = m.router_parameters();
  const double routed = m.routed_expert_parameters();
  const double moe_dense_part = m.moe_layer_parameters() - routed - router;
  p.dense = static_cast<double>(counts.dense) * m.dense_layer_parameters() / t +
            static_cast<double>(counts.moe) * (moe_dense_part / t + router);
  p.experts = static_cast<double>(counts.moe) * routed / (static_cast<double>(in.ep) * t);
  return p;
}

/// How the inputs lay the layers over the (virtual) stages; throws when they cannot.
PipelineSplit split_of(const FootprintInputs& in) {
  return PipelineSplit(in.model.num_hidden_layers, in.pp, in.schedule == ScheduleKind::interleaved ? in.vp : 1,
                       in.stage_layers);
}

/// Most micro-batches one stage holds under its schedule: in all, and of each virtual chunk.
struct ScheduleHold {
  std::int64_t total = 0;
  std::vector<std::int64_t> per_chunk;
  /// Peak over the schedule of the layer activation sets held: sum over chunks of the chunk's
  /// micro-batches in flight x its layers (total x layers when the chunks are equal).
  std::int64_t layer_sets = 0;
};

ScheduleHold schedule_hold(const FootprintInputs& in, const PipelineSplit& split, int stage) {
  const std::int64_t m = in.microbatches;
  const std::int64_t p = in.pp;
  ScheduleHold hold;
  if (in.schedule == ScheduleKind::gpipe) {  // every forward before the first backward
    hold.total = m;
    hold.per_chunk = {m};
    hold.layer_sets = m * split.layers(stage, 0);
    return hold;
  }
  if (in.schedule == ScheduleKind::one_f_one_b) {  // warm-up of pp - stage - 1 forwards, then 1F1B
    hold.total = std::min<std::int64_t>(m, p - stage);
    hold.per_chunk = {hold.total};
    hold.layer_sets = hold.total * split.layers(stage, 0);
    return hold;
  }
  // Megatron-Core's interleaved 1F1B (forward_backward_pipelining_with_interleaving): a warm-up
  // of 2 (pp - stage - 1) + (vp - 1) pp forwards (microbatch_group_size_per_vp_stage = pp, its
  // default; all of them when that reaches m vp), then one forward and one backward at a time, then
  // the remaining backwards. Forward k runs chunk (k mod pp vp) / pp, backward k chunk
  // vp - 1 - (k mod pp vp) / pp. Past the warm-up the per-chunk counts repeat with period
  // pp vp (both indices advance by one per step), so one period after the warm-up shows every
  // peak.
  const std::int64_t v = in.vp;
  const std::int64_t all = m * v;
  const std::int64_t group = p * v;
  const std::int64_t warmup = std::min(all, 2 * (p - stage - 1) + (v - 1) * p);
  std::vector<std::int64_t> held(static_cast<std::size_t>(v), 0);
  hold.per_chunk.assign(static_cast<std::size_t>(v), 0);
  std::int64_t held_total = 0;
  std::int64_t held_layers = 0;
  std::int64_t forwards = 0;
  std::int64_t backwards = 0;
  auto forward = [&] {
    const auto chunk = static_cast<std::size_t>((forwards++ % group) / p);
    ++held_total;
    held_layers += split.layers(stage, static_cast<int>(chunk));
    hold.per_chunk[chunk] = std::max(hold.per_chunk[chunk], ++held[chunk]);
    hold.total = std::max(hold.total, held_total);
    hold.layer_sets = std::max(hold.layer_sets, held_layers);
  };
  auto backward = [&] {
    const auto chunk = static_cast<std::size_t>(v - 1 - (backwards++ % group) / p);
    --held_total;
    held_layers -= split.layers(stage, static_cast<int>(chunk));
    --held[chunk];
  };
  while (forwards < warmup) forward();
  const std::int64_t steady_end = std::min(all, warmup + group);
  while (forwards < steady_end) {
    forward();
    backward();
  }
  return hold;
}

/// Parameters of the largest single module on one device of a stage (DeepSpeed ZeRO-3 gathers
/// a module's parameters together and must hold the module being computed whole): Megatron's
/// fused QKV projection, the output projection, fc1 (gate and up fused for SwiGLU), fc2, an
/// expert's or the shared experts' fc1 / fc2, the router (not tensor-parallel), the embedding,
/// the LM head; tensor-parallel shards (/ tp). MLA: its projections taken as one module (an
/// upper bound).
double largest_module_parameters(const FootprintInputs& in, const LayerCounts& counts, bool first, bool last) {
  const auto& m = in.model;
  const double h = static_cast<double>(m.hidden_size);
  const double t = in.tp;
  double largest = 0;
  if (m.attention == AttentionKind::mla) {
    largest = m.attention_matmul_parameters() / t;
  } else {
    const double q_width = static_cast<double>(m.num_attention_heads * m.head_dim());
    const double kv_width = static_cast<double>(m.num_key_value_heads * m.head_dim());
    largest = std::max(h * (q_width + 2.0 * kv_width), q_width * h) / t;
  }
  const auto fc1 = [&](std::int64_t width) {
    return (m.hidden_act == Activation::swiglu ? 2.0 : 1.0) * h * static_cast<double>(width) / t;
  };
  if (counts.dense > 0) largest = std::max(largest, fc1(m.intermediate_size));
  if (counts.moe > 0) {
    largest = std::max({largest, fc1(m.moe.moe_intermediate_size), m.router_parameters(),
                        fc1(m.moe.n_shared_experts * m.moe.moe_intermediate_size)});
  }
  const double vh = static_cast<double>(m.vocab_size) * h / t;
  if (first || last) largest = std::max(largest, vh);
  return largest;
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / config::kGiB); }

}  // namespace

void FootprintInputs::validate() const {
  model.validate();
  require(seq_len > 0, "seq_len must be positive");
  require(micro_batch > 0, "micro_batch must be positive");
  require(microbatches > 0, "micro-batches per pipeline must be positive");
  require(tp >= 1 && pp >= 1 && dp >= 1 && cp >= 1 && vp >= 1, "parallel degrees tp, pp, dp, cp, vp must be >= 1");
  require(zero >= 0 && zero <= 3, fmt::format("ZeRO stage {} is not one of 0, 1, 2, 3", zero));
  require_rule(context_parallel_problem(seq_len, cp));
  (void)split_of(*this);  // throws when the layers do not split over the (virtual) stages as given
  require(activation_bytes_per_element > 0, "activation bytes per element must be positive");
  require(weight_bytes_per_param >= 0 && gradient_bytes_per_param >= 0 && optimizer_bytes_per_param >= 0,
          "bytes per parameter must not be negative");
  require(workspace_bytes >= 0, "workspace must not be negative");
  require(fragmentation >= 1.0, fmt::format("fragmentation factor {} must be >= 1 (reserved / allocated)", fragmentation));
  require(zero3_max_live_parameters >= 0 && zero3_prefetch_bucket_parameters >= 0 &&
              zero3_reduce_bucket_parameters >= 0,
          "ZeRO-3 live-parameter, prefetch and reduce bucket sizes must not be negative");
  require(ep >= 1, fmt::format("expert-parallel degree ep {} must be >= 1", ep));
  require_rule(recompute_policy_problem(model, recompute));
  require_rule(expert_parallel_problem(model, ep, dp, cp));
  moe.validate(model.moe);
}

int expert_data_parallel_size(const FootprintInputs& inputs) {
  inputs.validate();
  return inputs.dp * inputs.cp / inputs.ep;
}

std::vector<std::int64_t> stage_layer_indices(const FootprintInputs& in, int stage) {
  in.validate();
  require(stage >= 0 && stage < in.pp, fmt::format("stage {} is outside [0, {})", stage, in.pp));
  return split_of(in).layer_indices(stage);
}

namespace {

/// Mean over all the model's layers (an MoE model's layers differ).
double model_mean_layer_bytes(const FootprintInputs& in, RecomputePolicy policy) {
  if (!in.model.is_moe()) return layer_bytes(in, policy, LayerKind::dense);
  const LayerCounts counts{in.model.dense_layer_count(), in.model.moe_layer_count()};
  return mean_layer_bytes(in, policy, counts);
}

void require_layer_kind(const FootprintInputs& in, LayerKind kind) {
  require(kind == LayerKind::dense || in.model.is_moe(),
          fmt::format("model '{}' has no MoE layers (num_experts 0)", in.model.name));
}

}  // namespace

double layer_activation_bytes(const FootprintInputs& inputs) {
  inputs.validate();
  return model_mean_layer_bytes(inputs, inputs.recompute);
}

double layer_activation_bytes(const FootprintInputs& inputs, LayerKind kind) {
  inputs.validate();
  require_layer_kind(inputs, kind);
  return layer_bytes(inputs, inputs.recompute, kind);
}

double layer_full_activation_bytes(const FootprintInputs& inputs) {
  inputs.validate();
  return model_mean_layer_bytes(inputs, RecomputePolicy::none);
}

double layer_full_activation_bytes(const FootprintInputs& inputs, LayerKind kind) {
  inputs.validate();
  require_layer_kind(inputs, kind);
  return layer_bytes(inputs, RecomputePolicy::none, kind);
}

int inflight_microbatches(const FootprintInputs& in, int stage) {
  require(stage >= 0 && stage < in.pp, fmt::format("stage {} is outside [0, {})", stage, in.pp));
  return static_cast<int>(schedule_hold(in, split_of(in), stage).total);
}

int inflight_microbatches_of_chunk(const FootprintInputs& in, int stage, int chunk) {
  require(stage >= 0 && stage < in.pp, fmt::format("stage {} is outside [0, {})", stage, in.pp));
  const int chunks = in.schedule == ScheduleKind::interleaved ? in.vp : 1;
  require(chunk >= 0 && chunk < chunks, fmt::format("virtual chunk {} is outside [0, {})", chunk, chunks));
  return static_cast<int>(schedule_hold(in, split_of(in), stage).per_chunk.at(static_cast<std::size_t>(chunk)));
}

StageFootprint stage_footprint(const FootprintInputs& in, int stage) {
  in.validate();
  require(stage >= 0 && stage < in.pp, fmt::format("stage {} is outside [0, {})", stage, in.pp));
  const PipelineSplit split = split_of(in);
  const ScheduleHold hold = schedule_hold(in, split, stage);  // one walk of the schedule
  const auto inflight = static_cast<int>(hold.total);
  const auto& model = in.model;
  const double t = in.tp;
  const double h = static_cast<double>(model.hidden_size);
  const double v = static_cast<double>(model.vocab_size);
  const bool first = stage == 0;
  const bool last = stage == in.pp - 1;
  const int chunks = in.schedule == ScheduleKind::interleaved ? in.vp : 1;
  const int stage_layers = split.stage_layers(stage);
  const bool moe = model.is_moe();
  const LayerCounts counts = moe ? count_layers(in, split.layer_indices(stage)) : LayerCounts{stage_layers, 0};

  // Parameters on one device of this stage (tensor-parallel shard; MoE: dense part and experts).
  StageParameters moe_parameters;
  if (moe) moe_parameters = moe_stage_layer_parameters(in, counts);
  double parameters = moe ? moe_parameters.dense : stage_layers * model.layer_parameters() / t;
  if (first) parameters += v * h / t;  // input embedding
  if (last) {
    parameters += h;  // final norm
    const bool shared = model.tie_word_embeddings && in.pp == 1;
    if (!shared) parameters += v * h / t;
  }
  const ZeroSharding dense = dense_sharding(in.zero, in.dp, in.cp);
  StageFootprint fp;
  fp.stage = stage;
  fp.inflight_microbatches = inflight;
  // Parameters of the stage's transformer layers on this device (experts included).
  const double device_layer_parameters = parameters - (first ? v * h / t : 0.0) -
                                         (last ? parameters_head(model, in.pp, t) : 0.0) +
                                         (moe ? moe_parameters.experts : 0.0);
  // FP8 primary weights: the layers' weights in 1 B, the embedding and head in the working
  // precision.
  const double layer_weight_bytes = in.fp8_params ? 1.0 : in.weight_bytes_per_param;
  const double dense_layer_parameters = device_layer_parameters - (moe ? moe_parameters.experts : 0.0);
  fp.weights_bytes = ((parameters - dense_layer_parameters) * in.weight_bytes_per_param +
                      dense_layer_parameters * layer_weight_bytes) /
                     dense.weight_divisor();
  fp.gradients_bytes = parameters * in.gradient_bytes_per_param / dense.gradient_divisor();
  fp.optimizer_bytes = in.offload_optimizer ? 0.0 : parameters * in.optimizer_bytes_per_param / dense.optimizer_divisor();
  if (moe) {
    const double experts = moe_parameters.experts;
    const ZeroSharding sharded = expert_sharding(in.zero, in.dp, in.cp, in.ep);
    fp.weights_bytes += experts * layer_weight_bytes / sharded.weight_divisor();
    fp.gradients_bytes += experts * in.gradient_bytes_per_param / sharded.gradient_divisor();
    if (!in.offload_optimizer) fp.optimizer_bytes += experts * in.optimizer_bytes_per_param / sharded.optimizer_divisor();
  }
  // Layer parameters whose whole (gathered) weights sit on the device at once: all of them,
  // or under ZeRO-3 only the live gathered ones.
  double whole_layer_parameters = device_layer_parameters;
  if (dense.gathers_every_pass()) {
    // DeepSpeed ZeRO-3 (deepspeed/runtime/zero/partitioned_param_coordinator.py, defaults in
    // the DeepSpeed config docs): the module computed is gathered whole; ahead of it the
    // coordinator prefetches at most min(stage3_max_live_parameters - parameters already
    // live, stage3_prefetch_bucket_size) parameters, so the whole parameters live at once are
    // max(module, min(max_live, module + prefetch bucket)), and never more than the device's
    // own parameters. Gradients: the module's whole gradient as the backward produces it, and
    // the contiguous reduce bucket (reduce_bucket_size elements) it is copied into before
    // the reduce-scatter. All in the working precision.
    const double module = largest_module_parameters(in, counts, first, last);
    const double device_parameters = parameters + (moe ? moe_parameters.experts : 0.0);
    const double live =
        std::min(device_parameters, std::max(module, std::min(in.zero3_max_live_parameters,
                                                              module + in.zero3_prefetch_bucket_parameters)));
    fp.zero3_gathered_bytes = (live + module + in.zero3_reduce_bucket_parameters) * in.weight_bytes_per_param;
    whole_layer_parameters = std::min(device_layer_parameters, live);
  }
  if (in.fp8 && in.fp8_weight_cache) {
    // Transformer Engine keeps each linear's fp8 weight and fp8 transposed weight between
    // micro-batches (Megatron-Core passes is_first_microbatch to the TE modules unless
    // disable_parameter_transpose_cache): 2 B per layer parameter on the device (norm weights,
    // a negligible part, included). The embedding and LM head are not TE modules. FP8 primary
    // weights are the fp8 weights themselves, so only the transposes are cached (1 B). Under
    // ZeRO-3 the cast is of the gathered weight, freed with it: only the live gathered layers
    // have fp8 copies (torchtitan's FSDP2 + torchao measurements, docs/validation.md "Memory").
    fp.fp8_weight_cache_bytes = (in.fp8_params ? 1.0 : 2.0) * whole_layer_parameters;
  }

  // Activation sets held: each in-flight micro-batch (chunk) holds its layers.
  // (at the schedule's peak; chunk c's sets are its in-flight micro-batches x its layers).
  fp.stored_layer_activations = static_cast<double>(hold.layer_sets);
  int largest_chunk = 0;
  for (int c = 0; c < chunks; ++c) largest_chunk = std::max(largest_chunk, split.layers(stage, c));
  const double per_layer = moe ? mean_layer_bytes(in, in.recompute, counts) : layer_bytes(in, in.recompute, LayerKind::dense);
  // Offloaded activations: only the micro-batch being computed and the one being transferred
  // stay on the device (double buffering).
  const double held_sets = in.offload_activations
                               ? std::min(fp.stored_layer_activations, 2.0 * largest_chunk)
                               : fp.stored_layer_activations;
  fp.activations_bytes = held_sets * per_layer;

  const double act_scale = precision_scale(in);
  const double token_share = static_cast<double>(in.seq_len / in.cp) * static_cast<double>(in.micro_batch);
  const double sp_div = in.sequence_parallel ? t : 1.0;
  // Embedding dropout mask (1 B, with hidden dropout), for the micro-batches in flight in the
  // first chunk.
  if (first && in.hidden_dropout > 0) fp.embedding_head_bytes += static_cast<double>(hold.per_chunk.front()) * token_share * h / sp_div;
  if (last) {
    // For each micro-batch in flight in the last chunk (whose backward has not yet run): the
    // final norm input (2 s b h), the LM-head input (2 s b h) and what the loss saves for its
    // backward (loss_saved_bytes per logit, s b v / t). Under 1F1B and interleaved 1F1B that
    // is one micro-batch: the last chunk of the last stage runs each backward right after its
    // forward. Plus, once, what is live beside it while one micro-batch's loss runs
    // (loss_transient_bytes).
    const auto last_inflight = static_cast<double>(hold.per_chunk.back());  // this stage is the last
    const double head_input_div = in.gathered_head_input ? 1.0 : sp_div;
    fp.embedding_head_bytes +=
        last_inflight * (2.0 * token_share * h * act_scale * (1.0 / sp_div + 1.0 / head_input_div) +
                         loss_saved_bytes(in.loss) * token_share * v / t) +
        loss_transient_bytes(in.loss) * token_share * v / t;
  }
  if (in.recompute != RecomputePolicy::none) {
    // The backward of one layer rematerializes what the policy dropped.
    if (!moe) {
      fp.recompute_buffer_bytes = layer_bytes(in, RecomputePolicy::none, LayerKind::dense) - per_layer;
    } else {
      for (const auto& [kind, present] : {std::pair{LayerKind::dense, counts.dense > 0}, std::pair{LayerKind::moe, counts.moe > 0}}) {
        if (!present) continue;
        fp.recompute_buffer_bytes = std::max(fp.recompute_buffer_bytes, layer_bytes(in, RecomputePolicy::none, kind) -
                                                                            layer_bytes(in, in.recompute, kind));
      }
    }
  }
  if (counts.moe > 0) {
    // Token copies before the dispatch all-to-all (the rank's own tokens, / tp with SP) and
    // after it (the busiest rank's received copies, gathered over the expert-TP group), 2 B x h
    // each: one layer's worth, while it runs.
    const double k = static_cast<double>(model.moe.num_experts_per_tok);
    fp.moe_dispatch_bytes = 2.0 * act_scale * token_share * h * (k / sp_div + expert_copies_per_token(in));
  }
  const double allocated = fp.weights_bytes + fp.gradients_bytes + fp.optimizer_bytes + fp.activations_bytes +
                           fp.embedding_head_bytes + fp.recompute_buffer_bytes + fp.moe_dispatch_bytes +
                           fp.zero3_gathered_bytes + fp.fp8_weight_cache_bytes;
  const double persistent = fp.weights_bytes + fp.gradients_bytes + fp.optimizer_bytes + fp.fp8_weight_cache_bytes;
  fp.fragmentation_bytes =
      (in.persistent_state_unfragmented ? allocated - persistent : allocated) * (in.fragmentation - 1.0);
  fp.workspace_bytes = in.workspace_bytes;
  fp.total_bytes = allocated + fp.fragmentation_bytes + fp.workspace_bytes;
  return fp;
}

std::vector<FootprintTerm> StageFootprint::terms_largest_first() const {
  std::vector<FootprintTerm> terms{{"weights", weights_bytes},
                                   {"gradients", gradients_bytes},
                                   {"optimizer", optimizer_bytes},
                                   {"activations", activations_bytes},
                                   {"embedding/logits", embedding_head_bytes},
                                   {"recompute buffer", recompute_buffer_bytes},
                                   {"MoE dispatch buffers", moe_dispatch_bytes},
                                   {"ZeRO-3 gathered units", zero3_gathered_bytes},
                                   {"FP8 weight cache", fp8_weight_cache_bytes},
                                   {"workspace", workspace_bytes},
                                   {"fragmentation", fragmentation_bytes}};
  std::stable_sort(terms.begin(), terms.end(),
                   [](const FootprintTerm& a, const FootprintTerm& b) { return a.bytes > b.bytes; });
  return terms;
}

TrainingFootprint training_footprint(const FootprintInputs& inputs) {
  TrainingFootprint result;
  for (int p = 0; p < inputs.pp; ++p) {
    result.stages.push_back(stage_footprint(inputs, p));
    if (result.stages.back().total_bytes > result.peak().total_bytes) result.peak_stage = p;
  }
  return result;
}

void check_fits(const TrainingFootprint& footprint, double capacity_bytes) {
  require(capacity_bytes > 0, "device memory capacity must be positive");
  const StageFootprint& peak = footprint.peak();
  if (peak.total_bytes <= capacity_bytes) return;
  std::string largest;
  const auto terms = peak.terms_largest_first();
  for (std::size_t i = 0; i < std::min<std::size_t>(4, terms.size()); ++i) {
    if (terms[i].bytes <= 0) break;
    largest += fmt::format("{}{} {}", i == 0 ? "" : ", ", terms[i].name, gib(terms[i].bytes));
  }
  throw DoesNotFitError(fmt::format("does not fit: needs {} of {} on pipeline stage {} ({})", gib(peak.total_bytes),
                                    gib(capacity_bytes), peak.stage, largest));
}

double kv_cache_bytes(const TransformerSpec& model, double tokens, double bytes_per_element, int tp) {
  model.validate();
  require(tokens >= 0, "KV-cache tokens must not be negative");
  require(bytes_per_element > 0, "KV-cache bytes per element must be positive");
  require(tp >= 1, "tensor-parallel degree must be >= 1");
  if (model.attention == AttentionKind::mla) {
    // The compressed latent and the shared RoPE key, replicated on every TP rank.
    return static_cast<double>(model.num_hidden_layers) *
           static_cast<double>(model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * tokens * bytes_per_element;
  }
  const double kv_split = static_cast<double>(std::min<std::int64_t>(tp, model.num_key_value_heads));
  return 2.0 * static_cast<double>(model.num_hidden_layers) * static_cast<double>(model.num_key_value_heads) *
         static_cast<double>(model.head_dim()) * tokens * bytes_per_element / kv_split;
}

double estimated_step_hbm_bytes(const FootprintInputs& in, int stage) {
  in.validate();
  require(stage >= 0 && stage < in.pp, fmt::format("stage {} is outside [0, {})", stage, in.pp));
  const double mbs = static_cast<double>(in.microbatches);
  const double weight_reads = in.recompute == RecomputePolicy::full ? 4.0 : 3.0;
  const double layers = static_cast<double>(split_of(in).stage_layers(stage));
  if (in.model.is_moe()) {
    // Device parameters before ZeRO: the dense part (with the embedding / head of the end
    // stages) and the local experts.
    const LayerCounts counts = count_layers(in, stage_layer_indices(in, stage));
    const StageParameters p = moe_stage_layer_parameters(in, counts);
    const double t = in.tp;
    const double vh = static_cast<double>(in.model.vocab_size) * static_cast<double>(in.model.hidden_size);
    double dense = p.dense;
    if (stage == 0) dense += vh / t;
    if (stage == in.pp - 1) {
      dense += static_cast<double>(in.model.hidden_size);
      if (!(in.model.tie_word_embeddings && in.pp == 1)) dense += vh / t;
    }
    const double parameters = dense + p.experts;
    const double per_microbatch = weight_reads * parameters * 2.0 +
                                  4.0 * layers * mean_layer_bytes(in, RecomputePolicy::none, counts) + 8.0 * parameters;
    const double dense_shard = dense_sharding(in.zero, in.dp, in.cp).optimizer_divisor();
    const double expert_shard = expert_sharding(in.zero, in.dp, in.cp, in.ep).optimizer_divisor();
    const double optimizer = (dense / dense_shard + p.experts / expert_shard) * (12.0 + 12.0 + 4.0 + 2.0);
    return mbs * per_microbatch + optimizer;
  }
  const ZeroSharding sharding = dense_sharding(in.zero, in.dp, in.cp);
  const double vh = static_cast<double>(in.model.vocab_size) * static_cast<double>(in.model.hidden_size);
  double parameters = layers * in.model.layer_parameters() / in.tp;
  if (stage == 0) parameters += vh / in.tp;
  if (stage == in.pp - 1) {
    parameters += static_cast<double>(in.model.hidden_size);
    if (!(in.model.tie_word_embeddings && in.pp == 1)) parameters += vh / in.tp;
  }
  const double per_microbatch = weight_reads * parameters * 2.0 +
                                4.0 * layers * layer_bytes(in, RecomputePolicy::none, LayerKind::dense) +
                                8.0 * parameters;
  const double optimizer = parameters / sharding.optimizer_divisor() * (12.0 + 12.0 + 4.0 + 2.0);
  return mbs * per_microbatch + optimizer;
}

}  // namespace clustersim::models
