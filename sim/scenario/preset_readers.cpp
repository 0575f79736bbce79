#include "sim/scenario/preset_readers.hpp"

#include <algorithm>

#include "models/accelerator/attention_kernel_family.hpp"
#include "sim/scenario/scenario_schema.hpp"

namespace clustersim::scenario {

using config::ConfigNode;
using config::Position;
using config::Problems;
using config::SchemaReader;
using config::choices_hint;
using config::closest_match;
namespace {

/// Position of `key`'s value in a model entry, or of the entry when the key is absent.
Position entry_position(const ConfigNode& entry, const char* key) {
  const ConfigNode* value = entry.find(key);
  return value != nullptr ? value->position : entry.position;
}

/// The mixture-of-experts keys of a model entry (already validated one by one), with the
/// checks between them.
void read_moe(const ConfigNode& entry, const SchemaReader& reader, const std::string& path,
              models::TransformerSpec& spec, Problems& problems) {
  auto i = [&](const char* key) { return reader.integer(key).value_or(0); };
  auto report = [&](const char* key, const std::string& message) {
    const std::string key_path = path + "." + key;
    if (!problems.bad(key_path)) problems.add(entry_position(entry, key), key_path, message);
  };
  const bool mixtral_key = reader.has("num_local_experts");
  const bool deepseek_key = reader.has("n_routed_experts");
  const char* experts_key = deepseek_key ? "n_routed_experts" : "num_local_experts";
  if (mixtral_key && deepseek_key) {
    report("n_routed_experts",
           "set num_local_experts (Mixtral's key) or n_routed_experts (DeepSeek's), not both");
    return;
  }
  if (!mixtral_key && !deepseek_key) {
    for (const char* key : {"num_experts_per_tok", "n_shared_experts", "moe_intermediate_size",
                            "first_k_dense_replace", "moe_layer_freq"}) {
      if (reader.has(key)) {
        report(key, std::string(key) + " needs num_local_experts or n_routed_experts (model '" + spec.name +
                        "' has no experts)");
      }
    }
    return;
  }
  models::MoeSpec& moe = spec.moe;
  moe.num_experts = i(experts_key);
  moe.n_shared_experts = i("n_shared_experts");
  moe.first_k_dense_replace = i("first_k_dense_replace");
  moe.moe_layer_freq = reader.integer("moe_layer_freq").value_or(1);
  // Mixtral's experts are intermediate_size wide (its config has no moe_intermediate_size).
  moe.moe_intermediate_size = reader.has("moe_intermediate_size") ? i("moe_intermediate_size") : spec.intermediate_size;
  if (!reader.has("num_experts_per_tok")) {
    report(experts_key, std::string(experts_key) + " needs num_experts_per_tok (routed experts per token, top-k)");
  } else {
    moe.num_experts_per_tok = i("num_experts_per_tok");
    if (moe.num_experts > 0 && moe.num_experts_per_tok > moe.num_experts) {
      report("num_experts_per_tok", "num_experts_per_tok " + std::to_string(moe.num_experts_per_tok) +
                                        " exceeds the " + std::to_string(moe.num_experts) + " experts (" +
                                        experts_key + ")");
    }
  }
  if (moe.num_experts > 0 && spec.num_hidden_layers > 0 && moe.moe_layer_freq > 0 && spec.moe_layer_count() == 0) {
    const char* key = reader.has("first_k_dense_replace") ? "first_k_dense_replace" : "moe_layer_freq";
    report(key, "first_k_dense_replace " + std::to_string(moe.first_k_dense_replace) + " and moe_layer_freq " +
                    std::to_string(moe.moe_layer_freq) + " leave no MoE layer among the " +
                    std::to_string(spec.num_hidden_layers) + " layers");
  }
}

/// The multi-head latent attention keys of a model entry: any of them makes the attention MLA,
/// which then needs all but q_lora_rank.
void read_mla(const ConfigNode& entry, const SchemaReader& reader, const std::string& path,
              models::TransformerSpec& spec, Problems& problems) {
  constexpr std::array<const char*, 5> kKeys{"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                             "v_head_dim"};
  const bool any = std::any_of(kKeys.begin(), kKeys.end(), [&](const char* key) { return reader.has(key); });
  if (!any) return;
  spec.attention = models::AttentionKind::mla;
  auto i = [&](const char* key) { return reader.integer(key).value_or(0); };
  spec.mla.q_lora_rank = i("q_lora_rank");
  spec.mla.kv_lora_rank = i("kv_lora_rank");
  spec.mla.qk_nope_head_dim = i("qk_nope_head_dim");
  spec.mla.qk_rope_head_dim = i("qk_rope_head_dim");
  spec.mla.v_head_dim = i("v_head_dim");
  for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
    const std::string key_path = path + "." + key;
    if (!reader.has(key) && !problems.bad(key_path)) {
      problems.add(entry.position, key_path,
                   std::string("multi-head latent attention needs ") + key +
                       " (an MLA model sets kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim; "
                       "q_lora_rank is optional)");
    }
  }
  if (reader.has("qk_nope_head_dim") && reader.has("qk_rope_head_dim") && spec.mla.qk_head_dim() == 0) {
    const std::string key_path = path + ".qk_nope_head_dim";
    if (!problems.bad(key_path)) {
      problems.add(entry_position(entry, "qk_nope_head_dim"), key_path,
                   "qk_nope_head_dim + qk_rope_head_dim must be positive (the query/key width per head)");
    }
  }
}

}  // namespace

/// Reads one accelerator entry (already validated). Names may contain dots ("llama-3.1-405b"),
/// so entries are read through their own node rather than by dotted path from the root.
models::AcceleratorSpec read_accelerator(const ConfigNode& entry, const std::string& name) {
  const auto fields = accelerator_preset_fields();
  const SchemaReader reader(entry, fields);
  const std::string base;
  auto q = [&](const std::string& key) { return reader.quantity(base + key).value_or(0.0); };
  models::AcceleratorSpec spec;
  spec.name = name;
  spec.display_name = reader.string(base + "display_name").value_or(name);
  spec.vendor = reader.string(base + "vendor").value_or("");
  spec.source = reader.string(base + "source").value_or("");
  for (const auto& [format, dtype] : kPeakFormats) {
    if (reader.has(base + "peak." + format)) spec.peak_flops_per_s[dtype] = q(std::string("peak.") + format);
  }
  spec.vector_flops_per_s = q("vector_fp32");
  spec.hbm_capacity_bytes = q("memory.hbm_capacity");
  spec.hbm_bytes_per_s = q("memory.hbm_bandwidth");
  spec.l2_bytes = q("memory.l2");
  spec.compute_units = static_cast<int>(reader.integer(base + "compute_units").value_or(0));
  spec.tdp_w = q("power.tdp");
  spec.idle_w = q("power.idle");
  spec.matmul_efficiency = reader.number(base + "efficiency.matmul").value_or(0.8);
  for (const auto& [format, dtype] : kPeakFormats) {
    const std::string key = std::string("efficiency.matmul_") + format;
    if (reader.has(base + key)) spec.matmul_efficiency_by_dtype[dtype] = *reader.number(base + key);
  }
  if (reader.has(base + "memory.l2_bandwidth")) spec.l2_bytes_per_s = q("memory.l2_bandwidth");
  spec.memory_efficiency = reader.number(base + "efficiency.memory").value_or(0.85);
  spec.kernel_launch_s = q("kernel_launch");
  spec.fp8_promotion_interval = static_cast<int>(reader.integer(base + "fp8_promotion_interval").value_or(0));
  // The schema reports an invalid name; reading goes on with the default (fa2) to collect every
  // problem.
  if (const auto kernel = reader.string(base + "attention.kernel")) {
    try {
      spec.attention_kernel = models::parse_attention_kernel_family(*kernel);
    } catch (const ConfigError&) {
    }
  }
  spec.warp_mma_fraction = reader.number(base + "attention.warp_mma_fraction").value_or(1.0);
  spec.attention_softmax_overlap = reader.number(base + "attention.softmax_overlap").value_or(1.0);
  spec.special_function_ops_per_s = q("attention.special_function");
  spec.gemm_tile_m = static_cast<int>(reader.integer(base + "gemm_tile.m").value_or(128));
  spec.gemm_tile_n = static_cast<int>(reader.integer(base + "gemm_tile.n").value_or(256));
  spec.scale_up_bytes_per_s = q("scale_up_bandwidth");
  spec.collectives_nvls = reader.boolean(base + "collectives.nvls").value_or(false);
  spec.collectives_ll128_max_bytes_per_s = q("collectives.ll128_bandwidth");
  return spec;
}

/// Memory levels and power figures of one accelerator entry (already validated). Optional
/// levels exist only when both their capacity and bandwidth are given.
void read_memory_and_power(const ConfigNode& entry, const models::AcceleratorSpec& spec, platform::ClusterSpec& cluster) {
  const auto fields = accelerator_preset_fields();
  const SchemaReader reader(entry, fields);
  auto q = [&](const std::string& key) { return reader.quantity(key).value_or(0.0); };
  using models::MemoryLevelKind;
  cluster.memory_levels.clear();
  cluster.memory_levels.push_back({MemoryLevelKind::hbm, spec.hbm_capacity_bytes, spec.hbm_bytes_per_s,
                                   q("memory.hbm_latency"), q("memory.energy.hbm")});
  if (spec.l2_bytes > 0 && reader.has("memory.l2_bandwidth")) {
    cluster.memory_levels.push_back({MemoryLevelKind::l2, spec.l2_bytes, q("memory.l2_bandwidth"),
                                     q("memory.l2_latency"), q("memory.energy.l2")});
  }
  if (reader.has("memory.sram") && reader.has("memory.sram_bandwidth")) {
    cluster.memory_levels.push_back(
        {MemoryLevelKind::sram, q("memory.sram"), q("memory.sram_bandwidth"), 0.0, q("memory.energy.sram")});
  }
  if (reader.has("memory.host_capacity") && reader.has("memory.host_bandwidth")) {
    cluster.memory_levels.push_back({MemoryLevelKind::host, q("memory.host_capacity"), q("memory.host_bandwidth"),
                                     q("memory.host_latency"), q("memory.energy.host")});
  }
  if (reader.has("memory.cxl_capacity") && reader.has("memory.cxl_bandwidth")) {
    cluster.memory_levels.push_back({MemoryLevelKind::cxl, q("memory.cxl_capacity"), q("memory.cxl_bandwidth"),
                                     q("memory.cxl_latency"), q("memory.energy.cxl")});
  }
  cluster.host_link = reader.string("memory.host_link").value_or("pcie") == "c2c" ? models::HostLink::c2c
                                                                                 : models::HostLink::pcie;
  models::PowerSpec& power = cluster.power;
  power.tdp_w = spec.tdp_w;
  power.idle_w = spec.idle_w;
  power.energy_j_per_flop.clear();
  // Unset energies per FLOP: a best-efficiency GEMM is taken to draw the board's TDP with 80 %
  // of the dynamic power in the math units (assumption, docs/models.md "Power").
  for (const auto& [format, dtype] : kPeakFormats) {
    const std::string key = std::string("power.energy_per_flop.") + format;
    if (reader.has(key)) {
      power.energy_j_per_flop[dtype] = q(key);
    } else if (spec.peak_flops_per_s.count(dtype) && spec.tdp_w > spec.idle_w) {
      power.energy_j_per_flop[dtype] =
          0.8 * (spec.tdp_w - spec.idle_w) / (spec.matmul_efficiency_for(dtype) * spec.peak_flops_per_s.at(dtype));
    }
  }
}

models::TransformerSpec read_model(const ConfigNode& entry, const std::string& path,
                                   const std::string& name, Problems& problems) {
  const auto fields = model_fields();
  const SchemaReader reader(entry, fields);
  const std::string base;
  auto i = [&](const char* key) { return reader.integer(base + key).value_or(0); };
  models::TransformerSpec spec;
  spec.name = name;
  spec.source = reader.string(base + "source").value_or("");
  spec.hidden_size = i("hidden_size");
  spec.num_hidden_layers = i("num_hidden_layers");
  spec.num_attention_heads = i("num_attention_heads");
  spec.num_key_value_heads =
      reader.has(base + "num_key_value_heads") ? i("num_key_value_heads") : spec.num_attention_heads;
  spec.vocab_size = i("vocab_size");
  spec.max_position_embeddings = i("max_position_embeddings");
  spec.rope_theta = reader.number(base + "rope_theta").value_or(0.0);
  spec.linear_bias = reader.boolean(base + "linear_bias").value_or(false);
  const std::string act = reader.string(base + "hidden_act").value_or("gelu");
  spec.hidden_act = models::parse_activation(act);  // the schema has already limited `act` to valid names
  spec.tie_word_embeddings = reader.boolean(base + "tie_word_embeddings").value_or(false);
  if (reader.has(base + "intermediate_size")) {
    spec.intermediate_size = i("intermediate_size");
  } else if (spec.hidden_act == models::Activation::gelu) {
    spec.intermediate_size = 4 * spec.hidden_size;
  } else if (!problems.bad(path)) {
    problems.add(entry.position, path + ".intermediate_size",
                 "intermediate_size is required for hidden_act '" + act +
                     "' (only gelu defaults to 4 x hidden_size)");
  }
  read_moe(entry, reader, path, spec, problems);
  read_mla(entry, reader, path, spec, problems);
  return spec;
}

std::string unknown_name_hint(const std::string& name, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return choices_hint("choices", names, closest_match(name, names));
}

}  // namespace clustersim::scenario
