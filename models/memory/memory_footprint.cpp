// Footprint formulas. Symbols as in Korthikanti et al., "Reducing Activation Recomputation in
// Large Transformer Models" (arXiv:2205.05198): s sequence (per CP rank), b micro-batch, h
// hidden, a heads, t tensor-parallel degree, L layers, p pipeline stages, v vocabulary.
#include "models/memory/memory_footprint.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace clustersim::models {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("memory footprint: " + message);
}

/// Activation bytes of one layer per s*b*h, split into the part tensor parallelism divides
/// (even without sequence parallelism) and the part only sequence parallelism divides, plus
/// the attention-score term 5 a s / h (per s*b*h) that only unfused attention stores.
struct LayerActivationCoefficients {
  double tp_split = 0;      ///< 24 for MHA + 4h GELU
  double sp_only = 0;       ///< 10: layer-norm inputs (4), dropout masks (2), QKV and MLP inputs (4)
  double attention_scores = 0;  ///< 5 a s / h
};

LayerActivationCoefficients coefficients(const FootprintInputs& in) {
  const auto& m = in.model;
  const double h = static_cast<double>(m.hidden_size);
  const double g = static_cast<double>(m.num_key_value_heads) / static_cast<double>(m.num_attention_heads);
  const double f = static_cast<double>(m.intermediate_size) / h;
  const double s = static_cast<double>(in.seq_len / in.cp);
  LayerActivationCoefficients c;
  // Attention: Q (2) + K and V (2 g each) for QK^T and the score x V product, the output
  // projection's input (2). MLP, GELU: the GELU input (2 f) and fc2 input (2 f); SwiGLU: the
  // gate and up outputs (4 f) and the down-projection input (2 f).
  const double attention = 2.0 + 4.0 * g + 2.0;
  const double mlp = m.hidden_act == Activation::swiglu ? 6.0 * f : 4.0 * f;
  c.tp_split = attention + mlp;
  c.sp_only = 10.0;
  // Softmax output (2), its dropout mask (1), dropout output (2) per a s^2 b.
  c.attention_scores = 5.0 * static_cast<double>(m.num_attention_heads) * s / h;
  return c;
}

double sbh(const FootprintInputs& in) {
  return static_cast<double>(in.seq_len / in.cp) * static_cast<double>(in.micro_batch) *
         static_cast<double>(in.model.hidden_size);
}

/// Bytes per element the formula's "2 bytes" assumes is scaled for fp32 activations.
double precision_scale(const FootprintInputs& in) { return in.activation_bytes_per_element / 2.0; }

double layer_bytes(const FootprintInputs& in, RecomputePolicy policy) {
  const auto c = coefficients(in);
  const double t = in.tp;
  const double base = sbh(in) * precision_scale(in);
  const double sp_only = in.sequence_parallel ? c.sp_only / t : c.sp_only;
  const double scores = in.flash_attention ? 0.0 : c.attention_scores / t;
  switch (policy) {
    case RecomputePolicy::none: return base * (sp_only + c.tp_split / t + scores);
    case RecomputePolicy::selective: return base * (sp_only + c.tp_split / t);
    case RecomputePolicy::full: return base * (in.sequence_parallel ? 2.0 / t : 2.0);
  }
  return 0;
}

int layers_per_chunk(const FootprintInputs& in, int stage) {
  if (!in.stage_layers.empty()) return in.stage_layers[static_cast<std::size_t>(stage)];
  const int chunks = in.schedule == ScheduleKind::interleaved ? in.vp : 1;
  return static_cast<int>(in.model.num_hidden_layers / (static_cast<std::int64_t>(in.pp) * chunks));
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

}  // namespace

void FootprintInputs::validate() const {
  model.validate();
  require(seq_len > 0, "seq_len must be positive");
  require(micro_batch > 0, "micro_batch must be positive");
  require(microbatches > 0, "micro-batches per pipeline must be positive");
  require(tp >= 1 && pp >= 1 && dp >= 1 && cp >= 1 && vp >= 1, "parallel degrees tp, pp, dp, cp, vp must be >= 1");
  require(zero >= 0 && zero <= 3, fmt::format("ZeRO stage {} is not one of 0, 1, 2, 3", zero));
  require(seq_len % cp == 0, fmt::format("seq_len {} is not divisible by cp {}", seq_len, cp));
  const int chunks = schedule == ScheduleKind::interleaved ? vp : 1;
  if (stage_layers.empty()) {
    require(model.num_hidden_layers % (static_cast<std::int64_t>(pp) * chunks) == 0,
            fmt::format("{} layers are not divisible by pp x vp = {}", model.num_hidden_layers, pp * chunks));
  } else {
    require(chunks == 1, "per-stage layer counts need a schedule without virtual stages");
    require(stage_layers.size() == static_cast<std::size_t>(pp),
            fmt::format("{} per-stage layer counts for {} pipeline stages", stage_layers.size(), pp));
    std::int64_t sum = 0;
    for (const int layers : stage_layers) {
      require(layers >= 1, fmt::format("a pipeline stage needs >= 1 layer, got {}", layers));
      sum += layers;
    }
    require(sum == model.num_hidden_layers,
            fmt::format("per-stage layer counts sum to {}, the model has {} layers", sum, model.num_hidden_layers));
  }
  require(activation_bytes_per_element > 0, "activation bytes per element must be positive");
  require(weight_bytes_per_param >= 0 && gradient_bytes_per_param >= 0 && optimizer_bytes_per_param >= 0,
          "bytes per parameter must not be negative");
  require(workspace_bytes >= 0, "workspace must not be negative");
  require(fragmentation >= 1.0, fmt::format("fragmentation factor {} must be >= 1 (reserved / allocated)", fragmentation));
}

double layer_activation_bytes(const FootprintInputs& inputs) {
  inputs.validate();
  return layer_bytes(inputs, inputs.recompute);
}

double layer_full_activation_bytes(const FootprintInputs& inputs) {
  inputs.validate();
  return layer_bytes(inputs, RecomputePolicy::none);
}

int inflight_microbatches(const FootprintInputs& in, int stage) {
  require(stage >= 0 && stage < in.pp, fmt::format("stage {} is outside [0, {})", stage, in.pp));
  const auto m = in.microbatches;
  switch (in.schedule) {
    case ScheduleKind::gpipe: return static_cast<int>(m);
    case ScheduleKind::one_f_one_b: return static_cast<int>(std::min<std::int64_t>(m, in.pp - stage));
    case ScheduleKind::interleaved: {
      const std::int64_t warmup = 2LL * (in.pp - stage - 1) + static_cast<std::int64_t>(in.vp - 1) * in.pp + 1;
      return static_cast<int>(std::min<std::int64_t>(m * in.vp, warmup));
    }
  }
  return 1;
}

StageFootprint stage_footprint(const FootprintInputs& in, int stage) {
  in.validate();
  const int inflight = inflight_microbatches(in, stage);
  const auto& model = in.model;
  const double t = in.tp;
  const double h = static_cast<double>(model.hidden_size);
  const double v = static_cast<double>(model.vocab_size);
  const bool first = stage == 0;
  const bool last = stage == in.pp - 1;
  const int chunks = in.schedule == ScheduleKind::interleaved ? in.vp : 1;
  const int stage_layers = layers_per_chunk(in, stage) * chunks;

  // Parameters on one device of this stage (tensor-parallel shard).
  double parameters = stage_layers * model.layer_parameters() / t;
  if (first) parameters += v * h / t;  // input embedding
  if (last) {
    parameters += h;  // final norm
    const bool shared = model.tie_word_embeddings && in.pp == 1;
    if (!shared) parameters += v * h / t;
  }
  const double shard = static_cast<double>(in.dp) * in.cp;
  StageFootprint fp;
  fp.stage = stage;
  fp.inflight_microbatches = inflight;
  fp.weights_bytes = parameters * in.weight_bytes_per_param / (in.zero >= 3 ? shard : 1.0);
  fp.gradients_bytes = parameters * in.gradient_bytes_per_param / (in.zero >= 2 ? shard : 1.0);
  fp.optimizer_bytes = in.offload_optimizer ? 0.0 : parameters * in.optimizer_bytes_per_param / (in.zero >= 1 ? shard : 1.0);

  // Activation sets held: each in-flight micro-batch (chunk) holds its layers.
  fp.stored_layer_activations = static_cast<double>(inflight) * layers_per_chunk(in, stage);
  const double per_layer = layer_bytes(in, in.recompute);
  // Offloaded activations: only the micro-batch being computed and the one being transferred
  // stay on the device (double buffering).
  const double held_sets = in.offload_activations
                               ? std::min(fp.stored_layer_activations, 2.0 * layers_per_chunk(in, stage))
                               : fp.stored_layer_activations;
  fp.activations_bytes = held_sets * per_layer;

  const double act_scale = precision_scale(in);
  const double token_share = static_cast<double>(in.seq_len / in.cp) * static_cast<double>(in.micro_batch);
  const double sp_div = in.sequence_parallel ? t : 1.0;
  if (first) fp.embedding_head_bytes += inflight * token_share * h / sp_div;  // embedding dropout mask (1 B)
  if (last) {
    // Final norm input (2 s b h), LM-head input (2 s b h), fp32 logits (4 s b v / t) for the
    // cross-entropy backward, for the micro-batches in flight on the last stage.
    const int last_inflight = inflight_microbatches(in, in.pp - 1);
    fp.embedding_head_bytes += last_inflight * (4.0 * token_share * h * act_scale / sp_div + 4.0 * token_share * v / t);
  }
  if (in.recompute != RecomputePolicy::none) {
    // The backward of one layer rematerializes what the policy dropped.
    fp.recompute_buffer_bytes = layer_bytes(in, RecomputePolicy::none) - per_layer;
  }
  const double allocated = fp.weights_bytes + fp.gradients_bytes + fp.optimizer_bytes + fp.activations_bytes +
                           fp.embedding_head_bytes + fp.recompute_buffer_bytes;
  fp.fragmentation_bytes = allocated * (in.fragmentation - 1.0);
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
  const double kv_split = static_cast<double>(std::min<std::int64_t>(tp, model.num_key_value_heads));
  return 2.0 * static_cast<double>(model.num_hidden_layers) * static_cast<double>(model.num_key_value_heads) *
         static_cast<double>(model.head_dim()) * tokens * bytes_per_element / kv_split;
}

double estimated_step_hbm_bytes(const FootprintInputs& in, int stage) {
  const StageFootprint fp = stage_footprint(in, stage);
  const double mbs = static_cast<double>(in.microbatches);
  const double parameters = in.weight_bytes_per_param > 0 ? fp.weights_bytes / in.weight_bytes_per_param *
                                                                (in.zero >= 3 ? static_cast<double>(in.dp) * in.cp : 1.0)
                                                          : 0.0;
  const double weight_reads = in.recompute == RecomputePolicy::full ? 4.0 : 3.0;
  const int chunks = in.schedule == ScheduleKind::interleaved ? in.vp : 1;
  const double layers = static_cast<double>(layers_per_chunk(in, stage) * chunks);
  const double per_microbatch = weight_reads * parameters * 2.0 + 4.0 * layers * layer_bytes(in, RecomputePolicy::none) +
                                8.0 * parameters;
  const double shard = in.zero >= 1 ? static_cast<double>(in.dp) * in.cp : 1.0;
  const double optimizer = parameters / shard * (12.0 + 12.0 + 4.0 + 2.0);
  return mbs * per_microbatch + optimizer;
}

}  // namespace clustersim::models
