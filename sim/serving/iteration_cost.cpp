#include "sim/serving/iteration_cost.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "models/llm/memory_footprint.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::serving {
namespace {

void merge_traffic(std::vector<GroupTraffic>& into, const GroupTraffic& part, double repeat) {
  for (GroupTraffic& t : into) {
    if (t.kind == part.kind && t.group == part.group) {
      t.bytes += part.bytes * repeat;
      t.ops += part.ops * repeat;
      t.closed_form_s += part.closed_form_s * repeat;
      return;
    }
  }
  into.push_back({part.kind, part.group, part.bytes * repeat, part.ops * repeat, part.closed_form_s * repeat});
}

void accumulate(IterationCost& into, const IterationCost& part, double repeat = 1) {
  into.time_s += part.time_s * repeat;
  into.compute_bound_s += part.compute_bound_s * repeat;
  into.memory_bound_s += part.memory_bound_s * repeat;
  into.communication_s += part.communication_s * repeat;
  into.host_s += part.host_s * repeat;
  into.gemm_s += part.gemm_s * repeat;
  into.attention_kernel_s += part.attention_kernel_s * repeat;
  into.elementwise_s += part.elementwise_s * repeat;
  into.flops += part.flops * repeat;
  into.hbm_bytes += part.hbm_bytes * repeat;
}

void add_estimate(IterationCost& into, const models::OpEstimate& e, double repeat, models::TransformerOpKind kind) {
  into.time_s += e.time_s * repeat;
  (e.compute_bound ? into.compute_bound_s : into.memory_bound_s) += e.time_s * repeat;
  (kind == models::TransformerOpKind::gemm        ? into.gemm_s
   : kind == models::TransformerOpKind::attention ? into.attention_kernel_s
                                                  : into.elementwise_s) += e.time_s * repeat;
  into.hbm_bytes += e.bytes * repeat;
}

}  // namespace

IterationCostModel::IterationCostModel(const models::ComputeModel& compute, const models::CollectiveModel& collectives,
                                       InstanceLayout layout)
    : compute_(&compute), collectives_(&collectives), layout_(std::move(layout)) {
  const auto& s = layout_.sharding;
  layout_.model.validate();
  if (s.tp < 1 || layout_.pp < 1 || s.ep < 1) {
    throw ConfigError(fmt::format("an instance needs tp, pp and ep >= 1, got {}, {}, {}", s.tp, layout_.pp, s.ep));
  }
  if (layout_.pp > layout_.model.num_hidden_layers) {
    throw ConfigError(fmt::format("pp {} exceeds the model's {} layers", layout_.pp, layout_.model.num_hidden_layers));
  }
  if (layout_.accelerators.size() != static_cast<std::size_t>(s.tp * layout_.pp)) {
    throw ConfigError(fmt::format("an instance of tp {} x pp {} needs {} accelerators, got {}", s.tp, layout_.pp,
                                  s.tp * layout_.pp, layout_.accelerators.size()));
  }
  if (s.ep > s.tp) {
    throw ConfigError(fmt::format("ep {} exceeds tp {}: an instance's experts are spread over its TP ranks", s.ep, s.tp));
  }
  tp_group_.assign(layout_.accelerators.begin(), layout_.accelerators.begin() + s.tp);
  ep_group_.assign(layout_.accelerators.begin(), layout_.accelerators.begin() + s.ep);
  launch_s_ = compute.spec().kernel_launch_s;
  // Validates the split against the model (tp dividing the heads, ep the experts).
  (void)models::transformer_forward_ops(layout_.model, {{{1, 1}}, models::HeadOutput::next_token}, s, layout_.routing);
}

std::vector<int> InstanceLayout::group(int id, int first) const {
  if (accelerators.empty() || id < 0 || id >= groups()) return {};
  const int offset = first < 0 ? 0 : first - accelerators.front();
  std::vector<int> out;
  const auto add = [&](std::size_t i) { out.push_back(accelerators[i] + offset); };
  const int tp = sharding.tp;
  if (id == 0 || id == 1) {
    for (int i = 0; i < (id == 0 ? tp : sharding.ep); ++i) add(static_cast<std::size_t>(i));
  } else {
    add(static_cast<std::size_t>((id - 2) * tp));
    add(static_cast<std::size_t>((id - 1) * tp));
  }
  return out;
}

double IterationCostModel::kv_bytes_per_token(double kv_element_bytes) const {
  return models::kv_cache_bytes(layout_.model, 1.0, kv_element_bytes, layout_.sharding.tp) / layout_.pp;
}

void IterationCostModel::add_ops(const std::vector<models::TransformerOp>& ops, double repeat, bool skip_attention,
                                 IterationCost& into, std::vector<GroupTraffic>* traffic) const {
  for (const models::TransformerOp& op : ops) {
    if (op.kind == models::TransformerOpKind::attention && skip_attention) continue;
    into.flops += op.flops * repeat;
    if (op.kind != models::TransformerOpKind::communication) {
      add_estimate(into, models::compute_estimate(*compute_, op), repeat, op.kind);
      continue;
    }
    if (!op.comm.collective) continue;  // Megatron's f: nothing in the forward pass
    const bool ep = op.comm.point == models::CommPoint::ep_dispatch || op.comm.point == models::CommPoint::ep_combine;
    const std::vector<int>& group = ep ? ep_group_ : tp_group_;
    if (group.size() < 2) continue;
    const double t = collectives_->time_s(*op.comm.collective, group, op.comm.bytes) * repeat;
    into.time_s += t;
    into.communication_s += t;
    if (traffic != nullptr) merge_traffic(*traffic, {*op.comm.collective, ep ? 1 : 0, op.comm.bytes * repeat, repeat, t}, 1);
  }
}

void IterationCostModel::add_pipeline_transfers(std::int64_t tokens, IterationCost& into,
                                                std::vector<GroupTraffic>* traffic) const {
  if (layout_.pp <= 1) return;
  const int tp = layout_.sharding.tp;
  const double bytes = static_cast<double>(tokens) * static_cast<double>(layout_.model.hidden_size) *
                       models::dtype_bytes(layout_.sharding.activation_dtype);
  double total = 0;  // summed first, then added: the same rounding as before traffic was listed
  for (int stage = 0; stage + 1 < layout_.pp; ++stage) {
    const int group[] = {layout_.accelerators[static_cast<std::size_t>(stage * tp)],
                         layout_.accelerators[static_cast<std::size_t>((stage + 1) * tp)]};
    const double t = collectives_->time_s(models::CollectiveKind::send_recv, group, bytes);
    total += t;
    if (traffic != nullptr) merge_traffic(*traffic, {models::CollectiveKind::send_recv, 2 + stage, bytes, 1, t}, 1);
  }
  into.time_s += total;
  into.communication_s += total;
}

const IterationCostModel::Part& IterationCostModel::tokens_part(std::int64_t tokens) {
  if (const auto it = tokens_memo_.find(tokens); it != tokens_memo_.end()) return it->second;
  const models::TransformerForwardOps ops = models::transformer_forward_ops(
      layout_.model, {{{tokens, tokens}}, models::HeadOutput::next_token}, layout_.sharding, layout_.routing);
  Part part;
  std::vector<GroupTraffic>* traffic = layout_.record_traffic ? &part.traffic : nullptr;
  add_ops(ops.embedding, 1, true, part.cost, traffic);
  add_ops(ops.dense_layer, static_cast<double>(layout_.model.dense_layer_count()), true, part.cost, traffic);
  add_ops(ops.moe_layer, static_cast<double>(layout_.model.moe_layer_count()), true, part.cost, traffic);
  add_pipeline_transfers(tokens, part.cost, traffic);
  return tokens_memo_.emplace(tokens, std::move(part)).first->second;
}

const IterationCostModel::Part& IterationCostModel::head_part(std::int64_t sequences) {
  if (const auto it = head_memo_.find(sequences); it != head_memo_.end()) return it->second;
  const models::TransformerBatch batch{std::vector<models::SequenceWork>(static_cast<std::size_t>(sequences), {1, 1}),
                                       models::HeadOutput::next_token};
  Part part;
  // The head alone: built for S one-token sequences (its final norm then covers S tokens, not
  // T: a few microseconds at most, inside the 1 % exact() holds cost() to).
  add_ops(models::transformer_forward_ops(layout_.model, batch, layout_.sharding, layout_.routing).head, 1, true,
          part.cost, layout_.record_traffic ? &part.traffic : nullptr);
  return head_memo_.emplace(sequences, std::move(part)).first->second;
}

models::SequencePhase IterationCostModel::phase_of(bool decode) const {
  if (layout_.model.attention != models::AttentionKind::mla) return models::SequencePhase::training;
  return decode ? models::SequencePhase::decode : models::SequencePhase::prefill;
}

const IterationCost& IterationCostModel::context_part(std::int64_t tokens) {
  if (const auto it = context_memo_.find(tokens); it != context_memo_.end()) return it->second;
  const models::TransformerBatch batch{{{1, 1 + tokens, models::SequencePhase::prefill}}, models::HeadOutput::next_token};
  const models::TransformerForwardOps ops =
      models::transformer_forward_ops(layout_.model, batch, layout_.sharding, layout_.routing);
  IterationCost part;
  for (const models::TransformerOp& op : ops.dense_layer.empty() ? ops.moe_layer : ops.dense_layer) {
    if (op.name != "kv up context") continue;
    part.flops += op.flops;
    add_estimate(part, models::compute_estimate(*compute_, op), 1, op.kind);
  }
  return context_memo_.emplace(tokens, part).first->second;
}

double IterationCostModel::attention_s(std::int64_t q, std::int64_t kv, std::int64_t sequences,
                                       models::SequencePhase phase, double& flops, double& bytes, bool& compute_bound) {
  const std::uint64_t key = (static_cast<std::uint64_t>(q) << 44) ^ (static_cast<std::uint64_t>(kv) << 16) ^
                            static_cast<std::uint64_t>(sequences) ^ (static_cast<std::uint64_t>(phase) << 62);
  auto it = attention_memo_.find(key);
  if (it == attention_memo_.end()) {
    const models::TransformerBatch batch{
        std::vector<models::SequenceWork>(static_cast<std::size_t>(sequences), {q, kv, phase}),
        models::HeadOutput::next_token};
    const models::TransformerForwardOps ops =
        models::transformer_forward_ops(layout_.model, batch, layout_.sharding, layout_.routing);
    const auto& layer = ops.dense_layer.empty() ? ops.moe_layer : ops.dense_layer;
    IterationCost part;
    for (const models::TransformerOp& op : layer) {
      if (op.kind != models::TransformerOpKind::attention) continue;
      part.flops += op.flops;
      add_estimate(part, models::compute_estimate(*compute_, op), 1, op.kind);
    }
    it = attention_memo_.emplace(key, part).first;
  }
  flops += it->second.flops;
  bytes += it->second.hbm_bytes;
  compute_bound = it->second.compute_bound_s > it->second.memory_bound_s;
  return it->second.time_s;
}

IterationCost IterationCostModel::cost(std::span<const BatchEntry> batch, std::vector<GroupTraffic>* traffic) {
  if (batch.empty()) throw ConfigError("an iteration needs at least one sequence");
  std::int64_t tokens = 0, decodes = 0, decode_kv = 0, decode_q = 1;
  for (const BatchEntry& e : batch) tokens += e.query_tokens;
  const Part& tokens_cost = tokens_part(tokens);
  const Part& head_cost = head_part(static_cast<std::int64_t>(batch.size()));
  IterationCost total = tokens_cost.cost;
  accumulate(total, head_cost.cost);
  if (traffic != nullptr) {
    *traffic = tokens_cost.traffic;
    for (const GroupTraffic& t : head_cost.traffic) merge_traffic(*traffic, t, 1);
  }
  // Attention: one varlen kernel per layer; its work is the sum over the sequences (decode
  // steps folded into their mean KV length), one launch.
  double attention = 0, flops = 0, bytes = 0, compute_bound_s = 0;
  int groups = 0;
  std::int64_t context = 0;  // MLA prefill: cached latents up-projected again
  for (const BatchEntry& e : batch) {
    if (e.decode) {  // decode (and speculative verification) steps: one shape
      decode_q = std::max(decode_q, e.query_tokens);
      ++decodes;
      decode_kv += e.kv_tokens;
      continue;
    }
    const models::SequencePhase phase = phase_of(false);
    if (phase == models::SequencePhase::prefill) context += e.kv_tokens - e.query_tokens;
    bool cb = false;
    const double t = attention_s(e.query_tokens, e.kv_tokens, 1, phase, flops, bytes, cb);
    attention += t;
    if (cb) compute_bound_s += t;
    ++groups;
  }
  if (decodes > 0) {
    const auto mean_kv = std::max<std::int64_t>(decode_q, (decode_kv + decodes / 2) / decodes);
    bool cb = false;
    const double t = attention_s(decode_q, mean_kv, decodes, phase_of(true), flops, bytes, cb);
    attention += t;
    if (cb) compute_bound_s += t;
    ++groups;
  }
  attention -= launch_s_ * (groups - 1);
  const double layers = static_cast<double>(layout_.model.num_hidden_layers);
  if (context > 0) accumulate(total, context_part(context), layers);
  total.time_s += attention * layers;
  total.compute_bound_s += compute_bound_s * layers;
  total.memory_bound_s += (attention - compute_bound_s) * layers;
  total.attention_kernel_s += attention * layers;
  total.flops += flops * layers;
  total.hbm_bytes = (total.hbm_bytes + bytes * layers) / layout_.pp;
  total.time_s += layout_.host_overhead_s;
  total.host_s += layout_.host_overhead_s;
  return total;
}

IterationCost IterationCostModel::exact(std::span<const BatchEntry> batch, std::vector<GroupTraffic>* traffic) const {
  if (batch.empty()) throw ConfigError("an iteration needs at least one sequence");
  models::TransformerBatch tb;
  tb.head = models::HeadOutput::next_token;
  std::int64_t tokens = 0;
  for (const BatchEntry& e : batch) {
    tb.sequences.push_back({e.query_tokens, e.kv_tokens, phase_of(e.decode)});
    tokens += e.query_tokens;
  }
  const models::TransformerForwardOps ops =
      models::transformer_forward_ops(layout_.model, tb, layout_.sharding, layout_.routing);
  IterationCost total;
  if (traffic != nullptr) traffic->clear();
  std::vector<GroupTraffic>* listed = layout_.record_traffic ? traffic : nullptr;
  add_ops(ops.embedding, 1, false, total, listed);
  add_ops(ops.dense_layer, static_cast<double>(layout_.model.dense_layer_count()), false, total, listed);
  add_ops(ops.moe_layer, static_cast<double>(layout_.model.moe_layer_count()), false, total, listed);
  add_ops(ops.head, 1, false, total, listed);
  // One varlen attention kernel per layer, not one per (q, kv) group: take back the extra launches.
  const auto& layer = ops.dense_layer.empty() ? ops.moe_layer : ops.dense_layer;
  for (const models::TransformerOp& op : layer) {
    if (op.kind != models::TransformerOpKind::attention || op.attention.groups.size() < 2) continue;
    const double extra = launch_s_ * static_cast<double>(op.attention.groups.size() - 1) *
                         static_cast<double>(layout_.model.num_hidden_layers);
    total.time_s -= extra;
    total.memory_bound_s -= extra;
    total.attention_kernel_s -= extra;
  }
  add_pipeline_transfers(tokens, total, listed);
  total.time_s += layout_.host_overhead_s;
  total.hbm_bytes /= layout_.pp;
  total.host_s += layout_.host_overhead_s;
  return total;
}

}  // namespace clustersim::serving
