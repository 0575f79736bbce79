#include "sim/scenario/scenario_loader.hpp"

#include <algorithm>
#include <numeric>
#include <array>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <utility>

#include "models/llm/pipeline_split.hpp"
#include "sim/scenario/scenario_schema.hpp"
#include "sim/scenario/schema.hpp"
#include "sim/scenario/units.hpp"

namespace clustersim::scenario {

namespace {

std::string_view kind_folder(LibraryKind kind) {
  switch (kind) {
    case LibraryKind::accelerators: return "accelerators";
    case LibraryKind::models: return "llms";
    case LibraryKind::systems: return "systems";
  }
  return "";
}

ConfigNode empty_mapping(const Position& position) {
  ConfigNode node;
  node.kind = ConfigNode::Kind::mapping;
  node.position = position;
  return node;
}

/// Names a scenario refers to in `section` (accelerators / models): the entries of its own
/// map plus the name referenced at `reference_path`, if that is a plain name.
std::vector<std::string> referenced_names(const ConfigNode& root, std::string_view section,
                                          std::string_view reference_path) {
  std::vector<std::string> names;
  if (const ConfigNode* map = root.find(section); map != nullptr && map->is_mapping()) {
    names = map->keys();
  }
  if (const ConfigNode* reference = root.find_path(reference_path);
      reference != nullptr && reference->is_scalar() &&
      std::find(names.begin(), names.end(), reference->text) == names.end()) {
    names.push_back(reference->text);
  }
  return names;
}

/// Puts the library entry of every referenced preset underneath the scenario's own entries,
/// so a scenario can override single fields of a library preset.
void merge_library_presets(ConfigNode& root, LibraryKind kind, std::string_view section,
                           std::string_view reference_path, const std::filesystem::path& data_dir,
                           std::vector<Diagnostic>& diagnostics) {
  ConfigNode library_entries = empty_mapping(root.position);
  for (const auto& name : referenced_names(root, section, reference_path)) {
    const auto file = data_dir / kind_folder(kind) / (name + ".yaml");
    if (!std::filesystem::is_regular_file(file)) continue;
    std::vector<Diagnostic> file_problems;
    const ConfigNode preset = load_config_file(file, data_dir, file_problems);
    diagnostics.insert(diagnostics.end(), file_problems.begin(), file_problems.end());
    const ConfigNode* map = preset.is_mapping() ? preset.find(section) : nullptr;
    const ConfigEntry* entry = map != nullptr && map->is_mapping() ? map->find_entry(name) : nullptr;
    if (entry == nullptr) {
      if (file_problems.empty()) {
        diagnostics.push_back(make_diagnostic(preset.position, std::string(section),
                                              "library file has no entry '" + name + "' under '" +
                                                  std::string(section) + ":'"));
      }
      continue;
    }
    library_entries.set(name, entry->key_position, entry->value);
  }
  if (library_entries.entries.empty()) return;
  ConfigNode base = empty_mapping(root.position);
  ConfigNode& section_node = base.set(std::string(section), root.position, std::move(library_entries));
  if (const ConfigNode* own = root.find(section); own != nullptr && own->is_mapping()) {
    merge_config(section_node, *own);
  } else if (own != nullptr) {
    return;  // not a mapping: the validator reports it
  }
  if (ConfigNode* own = root.find(section)) {
    *own = section_node;
  } else {
    root.set(std::string(section), root.position, section_node);
  }
}

/// Accumulates diagnostics; knows which key paths already have a problem so cross-field
/// checks on them are skipped instead of piling on.
class Problems {
 public:
  explicit Problems(std::vector<Diagnostic>& diagnostics) : diagnostics_(&diagnostics) {}
  void add(const Position& position, std::string key_path, std::string message, std::string hint = {}) {
    diagnostics_->push_back(make_diagnostic(position, std::move(key_path), std::move(message), std::move(hint)));
  }
  /// True if `path` or anything inside it has a diagnostic.
  bool bad(std::string_view path) const {
    return std::any_of(diagnostics_->begin(), diagnostics_->end(), [&](const Diagnostic& d) {
      return d.key_path == path ||
             (d.key_path.size() > path.size() && d.key_path.compare(0, path.size(), path) == 0 &&
              d.key_path[path.size()] == '.');
    });
  }
  template <typename... Paths>
  bool any_bad(Paths... paths) const {
    return (bad(paths) || ...);
  }

 private:
  std::vector<Diagnostic>* diagnostics_;
};

models::Dtype dtype_from_name(std::string_view name) {
  if (name == "fp32") return models::Dtype::fp32;
  if (name == "tf32") return models::Dtype::tf32;
  if (name == "fp16") return models::Dtype::fp16;
  if (name == "fp8") return models::Dtype::fp8;
  if (name == "fp4") return models::Dtype::fp4;
  return models::Dtype::bf16;
}

constexpr std::array<std::pair<const char*, models::Dtype>, 6> kPeakFormats{{
    {"fp32", models::Dtype::fp32}, {"tf32", models::Dtype::tf32}, {"bf16", models::Dtype::bf16},
    {"fp16", models::Dtype::fp16}, {"fp8", models::Dtype::fp8},   {"fp4", models::Dtype::fp4}}};

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
void read_memory_and_power(const ConfigNode& entry, const models::AcceleratorSpec& spec, ClusterConfig& cluster) {
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

Scenario build_scenario(ConfigNode root, const std::string& source_file,
                        const std::vector<std::string>& set_overrides,
                        const std::filesystem::path& data_dir, std::vector<Diagnostic>& diagnostics) {
  const Schema schema = scenario_schema();
  Problems problems(diagnostics);
  if (root.is_null() && diagnostics.empty()) {
    problems.add(root.position, "", "the scenario is empty");
  }
  if (!root.is_mapping()) {
    if (!root.is_null()) problems.add(root.position, "", "expected a mapping, got " + root.describe());
    throw ScenarioError(diagnostics);
  }

  for (const auto& text : set_overrides) {
    apply_set_override(root, text, diagnostics, [&](const std::vector<std::string>& path) {
      return find_field(schema.fields, path) != nullptr;
    });
  }
  merge_library_presets(root, LibraryKind::accelerators, "accelerators", "cluster.node.accelerator",
                        data_dir, diagnostics);
  merge_library_presets(root, LibraryKind::models, "models", "workload.model", data_dir, diagnostics);
  validate(root, schema.fields, "", diagnostics);

  const SchemaReader reader(root, schema.fields);
  Scenario scenario;
  scenario.source_file = source_file;
  scenario.schema_version = static_cast<int>(reader.integer("schema_version").value_or(1));
  scenario.name = reader.string("name").value_or("");

  // --- accelerator ---
  const std::string accelerator_name = reader.string("cluster.node.accelerator").value_or("");
  const ConfigNode* accelerators = root.find("accelerators");
  const bool accelerator_found = accelerators != nullptr && accelerators->is_mapping() &&
                                 accelerators->find(accelerator_name) != nullptr;
  if (!accelerator_found && !accelerator_name.empty() && !problems.bad("cluster.node.accelerator")) {
    std::vector<std::string> names = library_names(LibraryKind::accelerators, data_dir);
    if (accelerators != nullptr && accelerators->is_mapping()) {
      for (const auto& key : accelerators->keys()) names.push_back(key);
    }
    problems.add(reader.position("cluster.node.accelerator"), "cluster.node.accelerator",
                 "unknown accelerator '" + accelerator_name + "'", unknown_name_hint(accelerator_name, names));
  }
  const std::string accelerator_path = "accelerators." + accelerator_name;
  const bool accelerator_ok = accelerator_found && !problems.bad(accelerator_path);
  if (accelerator_found) {
    scenario.cluster.accelerator = read_accelerator(*accelerators->find(accelerator_name), accelerator_name);
    read_memory_and_power(*accelerators->find(accelerator_name), scenario.cluster.accelerator, scenario.cluster);
  }
  const models::AcceleratorSpec& accelerator = scenario.cluster.accelerator;

  // --- model ---
  const ConfigNode* model_node = root.find_path("workload.model");
  std::string model_path = "workload.model";
  bool model_found = model_node != nullptr && model_node->is_mapping();
  const ConfigNode* model_entry = model_found ? model_node : nullptr;
  std::string model_name = "inline";
  if (model_node != nullptr && model_node->is_scalar()) {
    model_name = model_node->text;
    model_path = "models." + model_name;
    const ConfigNode* models_map = root.find("models");
    model_entry = models_map != nullptr && models_map->is_mapping() ? models_map->find(model_name) : nullptr;
    model_found = model_entry != nullptr;
    if (!model_found) {
      std::vector<std::string> names = library_names(LibraryKind::models, data_dir);
      if (models_map != nullptr && models_map->is_mapping()) {
        for (const auto& key : models_map->keys()) names.push_back(key);
      }
      problems.add(model_node->position, "workload.model", "unknown model '" + model_name + "'",
                   unknown_name_hint(model_name, names));
    }
  }
  training::TrainingWorkload& training = scenario.training;
  if (model_found) training.model = read_model(*model_entry, model_path, model_name, problems);
  const bool model_ok = model_found && !problems.bad(model_path) && training.model.num_attention_heads > 0 &&
                        training.model.num_key_value_heads > 0 && training.model.num_hidden_layers > 0;
  const models::TransformerSpec& model = training.model;

  // --- cluster ---
  topologies::ClusterNetworkSpec& network = scenario.cluster.network;
  network.nodes = static_cast<int>(reader.integer("cluster.nodes").value_or(1));
  scenario.cluster.placement =
      reader.string("cluster.placement").value_or("packed") == "scattered" ? Placement::scattered : Placement::packed;
  if (reader.has("cluster.background")) {
    auto& background = scenario.cluster.background;
    background.pattern = reader.string("cluster.background.pattern").value_or("ring") == "all-to-all"
                             ? training::BackgroundTraffic::Pattern::all_to_all
                             : training::BackgroundTraffic::Pattern::ring;
    background.gpus = static_cast<int>(reader.integer("cluster.background.gpus").value_or(0));
    background.bytes = reader.quantity("cluster.background.bytes").value_or(0);
  }
  if (reader.has("cluster.stragglers") && !problems.bad("cluster.stragglers")) {
    auto& stragglers = scenario.cluster.stragglers;
    stragglers.compute_speed = reader.number("cluster.stragglers.compute_speed").value_or(1.0);
    const std::string key = "cluster.stragglers.nodes";
    if (const ConfigNode* list = reader.node(key); list != nullptr && !problems.bad(key)) {
      const std::vector<ConfigNode> items = list->is_sequence() ? list->items : std::vector<ConfigNode>{*list};
      for (const ConfigNode& item : items) {
        const std::optional<std::int64_t> node = parse_integer(item.text);
        if (!node || *node < 0 || *node >= network.nodes) {
          problems.add(item.position, key,
                       "straggler node must be an integer in [0, " + std::to_string(network.nodes - 1) + "], got " +
                           item.describe());
        } else {
          stragglers.nodes.push_back(static_cast<int>(*node));
        }
      }
    }
  }
  network.accelerators_per_node = static_cast<int>(reader.integer("cluster.node.per_node").value_or(8));
  network.scale_up.fabric = reader.string("cluster.node.scale_up.fabric").value_or("nvswitch");
  network.scale_up.latency_s = reader.quantity("cluster.node.scale_up.latency").value_or(1e-6);
  network.scale_up.efficiency = reader.number("cluster.node.scale_up.efficiency").value_or(0.8);
  network.scale_up.domain_size = static_cast<int>(reader.integer("cluster.node.scale_up.domain_size").value_or(0));
  const std::string topology_name = reader.string("cluster.network.topology").value_or("fat-tree");
  // Torus and custom networks have no NVSwitch and no NICs.
  const bool whole_network = topology_name == "torus" || topology_name == "custom";
  const int scale_up_domain = network.scale_up.domain_size > 0 ? network.scale_up.domain_size
                                                               : network.accelerators_per_node;
  if (reader.has("cluster.node.scale_up.bandwidth")) {
    network.scale_up.bytes_per_s = reader.quantity("cluster.node.scale_up.bandwidth").value_or(0);
  } else {
    network.scale_up.bytes_per_s = accelerator.scale_up_bytes_per_s;
    if (accelerator_ok && accelerator.scale_up_bytes_per_s <= 0 && scale_up_domain > 1 && !whole_network) {
      problems.add(reader.position("cluster.node"), "cluster.node.scale_up.bandwidth",
                   "missing scale-up bandwidth: accelerator '" + accelerator_name +
                       "' has no scale_up_bandwidth, so set cluster.node.scale_up.bandwidth");
    }
  }
  topologies::ScaleOutSpec& scale_out = network.scale_out;
  scale_out.topology = reader.string("cluster.network.topology").value_or("fat-tree");
  scale_out.routing = reader.string("cluster.network.routing").value_or("ecmp");
  scale_out.tiers = static_cast<int>(reader.integer("cluster.network.tiers").value_or(2));
  scale_out.radix = static_cast<int>(reader.integer("cluster.network.radix").value_or(64));
  scale_out.oversubscription = reader.number("cluster.network.oversubscription").value_or(1.0);
  scale_out.aggregation_oversubscription =
      reader.number("cluster.network.aggregation_oversubscription").value_or(1.0);
  scale_out.link_bytes_per_s = reader.quantity("cluster.network.link.bandwidth").value_or(0);
  if (const ConfigNode* dims = reader.node("cluster.network.dims"); dims != nullptr && !problems.bad("cluster.network.dims")) {
    const std::vector<ConfigNode> items = dims->is_sequence() ? dims->items : std::vector<ConfigNode>{*dims};
    for (const ConfigNode& item : items) {
      const std::optional<std::int64_t> size = parse_integer(item.text);
      if (!size || *size < 1 || *size > 1000000) {
        problems.add(item.position, "cluster.network.dims",
                     "torus dimension size must be an integer in [1, 1000000], got " + item.describe());
      } else {
        scale_out.torus_dims.push_back(static_cast<int>(*size));
      }
    }
  }
  scale_out.dragonfly_groups = static_cast<int>(reader.integer("cluster.network.groups").value_or(0));
  scale_out.dragonfly_routers_per_group =
      static_cast<int>(reader.integer("cluster.network.routers_per_group").value_or(0));
  scale_out.dragonfly_terminals_per_router =
      static_cast<int>(reader.integer("cluster.network.terminals_per_router").value_or(0));
  scale_out.dragonfly_global_links_per_router =
      static_cast<int>(reader.integer("cluster.network.global_links_per_router").value_or(0));
  if (reader.has("cluster.network.file")) {
    // Relative to the file that sets the key (the scenario, or an included file).
    const std::filesystem::path written(reader.string("cluster.network.file").value_or(""));
    const std::filesystem::path base = std::filesystem::path(reader.position("cluster.network.file").file).parent_path();
    scale_out.custom_file = (written.is_absolute() ? written : base / written).lexically_normal().string();
  }
  // Keys a topology cannot do without (the schema cannot express "required if").
  const auto require_for_topology = [&](const char* topology, std::initializer_list<const char*> keys) {
    if (topology_name != topology || problems.bad("cluster.network.topology")) return;
    for (const char* key : keys) {
      const std::string path = std::string("cluster.network.") + key;
      if (!reader.has(path) && !problems.bad(path)) {
        problems.add(reader.position("cluster.network.topology"), path,
                     std::string("topology ") + topology + " needs cluster.network." + key);
      }
    }
  };
  require_for_topology("torus", {"dims"});
  require_for_topology("dragonfly", {"groups", "routers_per_group", "terminals_per_router", "global_links_per_router"});
  require_for_topology("custom", {"file"});
  if (reader.has("cluster.node.scale_up.domain_size") &&
      !problems.any_bad("cluster.node.scale_up.domain_size", "cluster.node.per_node", "cluster.nodes")) {
    const std::string key = "cluster.node.scale_up.domain_size";
    const std::int64_t accelerator_total = static_cast<std::int64_t>(network.nodes) * network.accelerators_per_node;
    if (whole_network) {
      problems.add(reader.position(key), key,
                   "domain_size does not apply to topology " + topology_name + " (it has no NVLink switch)");
    } else if (network.scale_up.domain_size % network.accelerators_per_node != 0 ||
               accelerator_total % network.scale_up.domain_size != 0) {
      problems.add(reader.position(key), key,
                   "domain_size " + std::to_string(network.scale_up.domain_size) +
                       " must be a multiple of per_node " + std::to_string(network.accelerators_per_node) +
                       " that divides the " + std::to_string(accelerator_total) + " accelerators (whole nodes per domain)");
    }
  }
  if (!whole_network && network.nodes > 1 && !reader.has("cluster.network.nic.bandwidth") &&
      !problems.any_bad("cluster.network.nic", "cluster.nodes")) {
    problems.add(reader.position("cluster.network.nic"), "cluster.network.nic.bandwidth",
                 "missing required key 'bandwidth': NIC bandwidth is needed with more than one node "
                 "(except for topology torus or custom)");
  }
  scale_out.nics_per_node = reader.has("cluster.network.nic.per_node")
                                ? static_cast<int>(reader.integer("cluster.network.nic.per_node").value_or(1))
                                : network.accelerators_per_node;
  scale_out.nic_bytes_per_s = reader.quantity("cluster.network.nic.bandwidth").value_or(0);
  scale_out.efficiency = reader.number("cluster.network.nic.efficiency").value_or(0.94);
  scale_out.link_latency_s = reader.quantity("cluster.network.link.latency").value_or(1e-6);

  // --- workload ---
  const std::string kind = reader.string("workload.kind").value_or("training");
  if (kind == "serving" && !problems.bad("workload.kind")) {
    problems.add(reader.position("workload.kind"), "workload.kind", "serving workloads are not supported yet");
  }
  training.seq_len = reader.integer("workload.seq_len").value_or(0);
  training.global_batch = reader.integer("workload.global_batch").value_or(0);
  training.micro_batch = reader.integer("workload.micro_batch").value_or(1);
  const std::string precision = reader.string("workload.precision").value_or("bf16");
  training.precision = dtype_from_name(precision);
  training::ParallelismConfig& par = training.parallelism;
  const auto degree = [&](const char* key) {
    return static_cast<int>(reader.integer(std::string("workload.parallelism.") + key).value_or(1));
  };
  par.tp = degree("tp");
  par.pp = degree("pp");
  par.cp = degree("cp");
  par.ep = degree("ep");
  par.vp = degree("vp");
  par.zero = static_cast<int>(reader.integer("workload.parallelism.zero").value_or(1));
  par.zero3_granularity = reader.string("workload.parallelism.zero3_granularity").value_or("layer") == "tensor"
                              ? training::Zero3Granularity::tensor
                              : training::Zero3Granularity::layer;
  par.zero3_list_gathers = reader.boolean("workload.parallelism.zero3_list_gathers").value_or(false);
  par.sequence_parallel = reader.boolean("workload.parallelism.sequence_parallel").value_or(true);
  const std::string stage_layers_key = "workload.parallelism.stage_layers";
  if (const ConfigNode* list = reader.node(stage_layers_key); list != nullptr && !problems.bad(stage_layers_key)) {
    const std::vector<ConfigNode> items = list->is_sequence() ? list->items : std::vector<ConfigNode>{*list};
    for (const ConfigNode& item : items) {
      const std::optional<std::int64_t> layers = parse_integer(item.text);
      if (!layers || *layers < 1 || *layers > 1000000) {
        problems.add(item.position, stage_layers_key,
                     "layers of a pipeline stage must be an integer in [1, 1000000], got " + item.describe());
      } else {
        par.stage_layers.push_back(static_cast<int>(*layers));
      }
    }
  }
  const std::string schedule = reader.string("workload.parallelism.schedule").value_or("1f1b");
  par.schedule = schedule == "gpipe"         ? training::PipelineSchedule::gpipe
                 : schedule == "interleaved" ? training::PipelineSchedule::interleaved
                                             : training::PipelineSchedule::one_f_one_b;
  // The training job gets the accelerators a background job (cluster.background) leaves.
  const std::int64_t accelerator_count =
      static_cast<std::int64_t>(network.nodes) * network.accelerators_per_node - scenario.cluster.background.gpus;
  const std::int64_t model_split = static_cast<std::int64_t>(par.tp) * par.pp * par.cp;
  const bool dp_written = reader.has("workload.parallelism.dp");
  if (dp_written) {
    par.dp = degree("dp");
  } else {
    par.dp = static_cast<int>(std::max<std::int64_t>(1, accelerator_count / std::max<std::int64_t>(1, model_split)));
  }
  const std::string recompute = reader.string("workload.recompute").value_or("selective");
  training.recompute = recompute == "none"   ? training::Recompute::none
                       : recompute == "full" ? training::Recompute::full
                                             : training::Recompute::selective;
  {
    const std::string attention = reader.string("workload.attention").value_or("flash");  // schema-checked
    training.attention = attention == "unfused" ? training::AttentionKernel::unfused
                         : attention == "fa2"   ? training::AttentionKernel::fa2
                         : attention == "fa3"   ? training::AttentionKernel::fa3
                         : attention == "cudnn" ? training::AttentionKernel::cudnn
                                                : training::AttentionKernel::flash;
  }
  training.overlap_grad_reduce = reader.boolean("workload.overlap_grad_reduce").value_or(true);
  training.tp_comm_overlap = reader.boolean("workload.tp_comm_overlap").value_or(false);
  training.tp_async_backward = reader.boolean("workload.tp_async_backward").value_or(true);
  training.train_tokens = reader.number("workload.train_tokens").value_or(0);
  training.grad_bytes_per_param = reader.string("workload.gradient_reduce_dtype").value_or("bf16") == "fp32" ? 4 : 2;

  // --- simulation, output ---
  const std::string fidelity = reader.string("simulation.fidelity").value_or("analytical");
  scenario.simulation.fidelity = fidelity == "flow" ? Fidelity::flow : Fidelity::analytical;
  const std::string mode = reader.string("simulation.mode").value_or("symmetric");
  scenario.simulation.mode = mode == "full" ? SimulationMode::full : SimulationMode::symmetric;
  if (!scenario.cluster.stragglers.nodes.empty() && mode != "full" && !problems.bad("simulation.mode")) {
    problems.add(reader.position("cluster.stragglers"), "cluster.stragglers",
                 "stragglers need simulation.mode: full (symmetric mode simulates one representative rank per "
                 "stage, which cannot be slower than its replicas)");
  }
  scenario.simulation.seed = static_cast<std::uint64_t>(reader.integer("simulation.seed").value_or(1));
  models::CommConfig& comm = scenario.simulation.comm;
  const models::TunerParams defaults;
  if (const auto algorithm = reader.string("simulation.comm.algorithm"); algorithm && *algorithm != "auto") {
    comm.algorithm = models::parse_algorithm(*algorithm);
  }
  comm.tuner.ll_base_latency_s =
      reader.quantity("simulation.comm.ll_base_latency").value_or(defaults.ll_base_latency_s);
  comm.tuner.ll128_base_latency_s =
      reader.quantity("simulation.comm.ll128_base_latency").value_or(defaults.ll128_base_latency_s);
  comm.tuner.simple_base_latency_s =
      reader.quantity("simulation.comm.simple_base_latency").value_or(defaults.simple_base_latency_s);
  comm.tuner.ll_step_latency_s =
      reader.quantity("simulation.comm.ll_step_latency").value_or(defaults.ll_step_latency_s);
  comm.tuner.ll128_step_latency_s =
      reader.quantity("simulation.comm.ll128_step_latency").value_or(defaults.ll128_step_latency_s);
  comm.tuner.simple_step_latency_s =
      reader.quantity("simulation.comm.simple_step_latency").value_or(defaults.simple_step_latency_s);
  comm.tuner.nvls_step_latency_s =
      reader.quantity("simulation.comm.nvls_step_latency").value_or(defaults.nvls_step_latency_s);
  comm.tuner.nvls_efficiency = reader.number("simulation.comm.nvls_efficiency").value_or(defaults.nvls_efficiency);
  comm.tuner.scale_out_sharp = reader.boolean("simulation.comm.scale_out_sharp").value_or(false);
  scenario.simulation.overlap_sms = static_cast<int>(reader.integer("simulation.comm.overlap_sms").value_or(16));
  scenario.output.dir = reader.string("output.dir").value_or("");

  // --- cross-field checks (skipped where an involved key already has a problem) ---
  const std::string tp = "workload.parallelism.tp", pp = "workload.parallelism.pp",
                    dp = "workload.parallelism.dp", cp = "workload.parallelism.cp",
                    vp = "workload.parallelism.vp", ep = "workload.parallelism.ep",
                    sched = "workload.parallelism.schedule";
  auto at = [&](const std::string& path) { return reader.position(path); };
  if (!problems.any_bad(tp, pp, dp, cp, "cluster.nodes", "cluster.node.per_node")) {
    const std::int64_t world = model_split * par.dp;
    if (world != accelerator_count) {
      const std::string key = dp_written ? dp : tp;
      problems.add(at(key), key,
                   "tp x pp x dp x cp = " + std::to_string(par.tp) + " x " + std::to_string(par.pp) +
                       " x " + std::to_string(par.dp) + " x " + std::to_string(par.cp) + " = " +
                       std::to_string(world) + ", but the cluster has " + std::to_string(accelerator_count) +
                       " accelerators (" + std::to_string(network.nodes) + " nodes x " +
                       std::to_string(network.accelerators_per_node) +
                       (scenario.cluster.background.gpus > 0
                            ? " - " + std::to_string(scenario.cluster.background.gpus) + " of cluster.background"
                            : std::string()) +
                       ")");
    }
  }
  if (model_ok) {
    if (model.attention == models::AttentionKind::mha && model.hidden_size % model.num_attention_heads != 0) {
      problems.add(model_entry->find("hidden_size")->position, model_path + ".hidden_size",
                   "hidden_size " + std::to_string(model.hidden_size) + " is not divisible by num_attention_heads " +
                       std::to_string(model.num_attention_heads));
    }
    if (!problems.bad(tp)) {
      if (model.num_attention_heads % par.tp != 0) {
        problems.add(at(tp), tp,
                     "num_attention_heads " + std::to_string(model.num_attention_heads) +
                         " is not divisible by tp " + std::to_string(par.tp));
      }
      if (model.num_key_value_heads % par.tp != 0 && par.tp % model.num_key_value_heads != 0) {
        problems.add(at(tp), tp,
                     "num_key_value_heads " + std::to_string(model.num_key_value_heads) + " and tp " +
                         std::to_string(par.tp) + " must divide one another");
      }
    }
    const std::string key = "workload.parallelism.stage_layers";
    const bool uneven = reader.has(key);
    if (!problems.any_bad(pp, vp, key)) {
      const int chunks = par.schedule == training::PipelineSchedule::interleaved ? par.vp : 1;
      try {
        (void)models::PipelineSplit(model.num_hidden_layers, par.pp, chunks, par.stage_layers);
      } catch (const ConfigError& e) {
        // An even split that does not divide is pp's (or vp's) fault; a listed split, its own.
        const std::string where = uneven ? key : reader.has(pp) || !reader.has(vp) ? pp : vp;
        problems.add(at(where), where, e.what());
      }
    }
  }
  if (!problems.any_bad(dp, "workload.micro_batch", "workload.global_batch", tp, pp, cp) && training.global_batch > 0 &&
      training.global_batch % (static_cast<std::int64_t>(par.dp) * training.micro_batch) != 0) {
    problems.add(at("workload.global_batch"), "workload.global_batch",
                 "global_batch " + std::to_string(training.global_batch) + " is not divisible by dp x micro_batch = " +
                     std::to_string(par.dp) + " x " + std::to_string(training.micro_batch));
  }
  if (!problems.any_bad(cp, "workload.seq_len") && training.seq_len > 0) {
    const std::int64_t divisor = par.cp > 1 ? 2 * par.cp : 1;
    if (training.seq_len % divisor != 0) {
      problems.add(at("workload.seq_len"), "workload.seq_len",
                   "seq_len " + std::to_string(training.seq_len) + " is not divisible by 2 x cp = " +
                       std::to_string(divisor) + " (context parallelism splits each sequence into 2 x cp chunks)");
    }
  }
  if (!problems.any_bad(vp, sched)) {
    if (par.vp > 1 && par.schedule != training::PipelineSchedule::interleaved) {
      problems.add(at(vp), vp, "vp = " + std::to_string(par.vp) + " needs schedule 'interleaved', got '" + schedule + "'");
    } else if (par.vp == 1 && par.schedule == training::PipelineSchedule::interleaved) {
      problems.add(at(sched), sched, "schedule 'interleaved' needs vp > 1 (virtual pipeline chunks per stage)");
    }
  }
  if (training.tp_comm_overlap && par.tp > 1 && !par.sequence_parallel && !problems.bad(tp)) {
    problems.add(at("workload.tp_comm_overlap"), "workload.tp_comm_overlap",
                 "tp_comm_overlap needs sequence parallelism (workload.parallelism.sequence_parallel: true), as in "
                 "Megatron-Core");
  }
  if (!problems.bad(ep) && par.ep > 1 && model_ok) {
    if (!model.is_moe()) {
      problems.add(at(ep), ep,
                   "expert parallelism needs a mixture-of-experts model (ep = " + std::to_string(par.ep) + "; model '" +
                       model.name + "' sets no num_local_experts / n_routed_experts)");
    } else if (model.moe.num_experts % par.ep != 0) {
      problems.add(at(ep), ep,
                   "ep " + std::to_string(par.ep) + " does not divide the " + std::to_string(model.moe.num_experts) +
                       " experts of model '" + model.name + "'");
    } else if (!problems.any_bad(dp, cp) && (static_cast<std::int64_t>(par.dp) * par.cp) % par.ep != 0) {
      problems.add(at(ep), ep,
                   "ep " + std::to_string(par.ep) + " does not divide dp x cp = " + std::to_string(par.dp) + " x " +
                       std::to_string(par.cp) +
                       " (the expert-parallel group is carved out of the data-parallel ranks, as in Megatron-Core)");
    }
  }
  // --- mixture-of-experts routing ---
  scenario.training.moe.capacity_factor = reader.number("workload.moe.capacity_factor").value_or(0.0);
  scenario.training.moe.imbalance = reader.number("workload.moe.imbalance").value_or(1.0);
  if (reader.has("workload.moe") && !problems.bad("workload.moe") && model_ok) {
    if (!model.is_moe()) {
      problems.add(at("workload.moe"), "workload.moe",
                   "workload.moe applies only to mixture-of-experts models; model '" + model.name + "' has no experts");
    } else {
      try {
        scenario.training.moe.validate(model.moe);
      } catch (const ConfigError& e) {
        problems.add(at("workload.moe.imbalance"), "workload.moe.imbalance", e.what());
      }
    }
  }
  if (!problems.any_bad("cluster.node.per_node", "cluster.network.nic.per_node") && !whole_network &&
      network.accelerators_per_node % scale_out.nics_per_node != 0) {
    problems.add(at("cluster.network.nic.per_node"), "cluster.network.nic.per_node",
                 "per_node " + std::to_string(network.accelerators_per_node) +
                     " accelerators is not divisible by nic.per_node " + std::to_string(scale_out.nics_per_node));
  }
  if (accelerator_ok && !problems.bad("workload.precision") &&
      accelerator.peak_flops_per_s.find(training.precision) == accelerator.peak_flops_per_s.end()) {
    std::string available;
    for (const auto& [format, dtype] : kPeakFormats) {
      if (accelerator.peak_flops_per_s.count(dtype)) available += (available.empty() ? "" : ", ") + std::string(format);
    }
    problems.add(at("workload.precision"), "workload.precision",
                 "precision " + precision + " needs a " + precision + " peak, but accelerator '" + accelerator_name +
                     "' has none (it has: " + available + ")");
  }
  if (!problems.bad("cluster")) {
    try {
      (void)topologies::Topology::build(network);
    } catch (const ConfigError& e) {
      // A custom network's problems are in its file: point at the key that names it.
      const std::string key = topology_name == "custom" ? "cluster.network.file" : "cluster.network";
      problems.add(at(key), key, e.what());
    }
  }

  // --- memory options, power, cost ---
  scenario.memory.offload_optimizer = reader.boolean("workload.offload.optimizer").value_or(false);
  scenario.memory.offload_activations = reader.boolean("workload.offload.activations").value_or(false);
  scenario.memory.workspace_bytes = reader.quantity("workload.memory.workspace").value_or(0.0);
  scenario.memory.fragmentation = reader.number("workload.memory.fragmentation").value_or(1.1);
  scenario.memory.zero3_max_live_parameters = reader.number("workload.memory.zero3_max_live_parameters").value_or(1e9);
  scenario.memory.zero3_prefetch_bucket_parameters =
      reader.number("workload.memory.zero3_prefetch_bucket_parameters").value_or(5e8);
  scenario.memory.zero3_reduce_bucket_parameters =
      reader.number("workload.memory.zero3_reduce_bucket_parameters").value_or(5e8);
  const bool offloads = scenario.memory.offload_optimizer || scenario.memory.offload_activations;
  const bool has_host = std::any_of(scenario.cluster.memory_levels.begin(), scenario.cluster.memory_levels.end(),
                                    [](const models::MemoryLevel& l) { return l.kind == models::MemoryLevelKind::host; });
  if (accelerator_ok && offloads && !has_host) {
    const std::string key =
        scenario.memory.offload_optimizer ? "workload.offload.optimizer" : "workload.offload.activations";
    problems.add(at(key), key,
                 "offloading needs host memory, but accelerator '" + accelerator_name +
                     "' sets no memory.host_capacity and memory.host_bandwidth");
  }
  scenario.power.apply_throttling = reader.boolean("power.apply_throttling").value_or(false);
  scenario.cluster.power.nic_w = reader.quantity("power.nic").value_or(0.0);
  scenario.cluster.power.switch_w = reader.quantity("power.switch").value_or(0.0);
  scenario.cluster.power.energy_j_per_bit = {
      {models::LinkKind::scale_up, reader.quantity("power.scale_up_energy_per_bit").value_or(0.0)},
      {models::LinkKind::scale_out, reader.quantity("power.scale_out_energy_per_bit").value_or(0.0)}};
  if (reader.has("cost.accelerator_hour_usd")) scenario.cost.accelerator_hour_usd = reader.number("cost.accelerator_hour_usd");
  if (reader.has("cost.capex_usd_per_accelerator")) {
    scenario.cost.capex_usd_per_accelerator = reader.number("cost.capex_usd_per_accelerator");
  }
  scenario.cost.amortization_years = reader.number("cost.amortization_years").value_or(4.0);
  scenario.cost.electricity_usd_per_kwh = reader.number("cost.electricity_usd_per_kwh").value_or(0.0);
  scenario.cost.pue = reader.number("cost.pue").value_or(1.2);
  if (scenario.cost.accelerator_hour_usd && scenario.cost.capex_usd_per_accelerator) {
    problems.add(at("cost.capex_usd_per_accelerator"), "cost.capex_usd_per_accelerator",
                 "set either cost.accelerator_hour_usd or cost.capex_usd_per_accelerator, not both");
  }

  if (!diagnostics.empty()) throw ScenarioError(diagnostics);
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& set_overrides,
                       const std::filesystem::path& data_dir) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = load_config_file(file, data_dir, diagnostics);
  return build_scenario(std::move(root), file.string(), set_overrides, data_dir, diagnostics);
}

Scenario load_scenario_from_string(std::string_view yaml, std::string_view virtual_file_name,
                                   const std::vector<std::string>& set_overrides,
                                   const std::filesystem::path& data_dir) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = load_config_string(yaml, virtual_file_name, data_dir, diagnostics);
  return build_scenario(std::move(root), std::string(virtual_file_name), set_overrides, data_dir, diagnostics);
}

std::vector<std::string> library_names(LibraryKind kind, const std::filesystem::path& data_dir) {
  std::vector<std::string> names;
  const auto folder = data_dir / kind_folder(kind);
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

using DescribedRow = std::pair<std::string, std::string>;

void describe_fields(const ConfigNode* node, const std::vector<Field>& fields, const std::string& prefix,
                     std::vector<DescribedRow>& rows) {
  for (const auto& field : fields) {
    const std::string key = prefix.empty() ? field.key : prefix + "." + field.key;
    const ConfigNode* value = node != nullptr && node->is_mapping() ? node->find(field.key) : nullptr;
    if (field.kind == FieldKind::object) {
      describe_fields(value, field.fields, key, rows);
      continue;
    }
    const bool is_quantity = field.kind == FieldKind::quantity;
    std::string shown;
    if (value != nullptr && value->is_scalar()) {
      shown = value->text;
      if (is_quantity) {
        try {
          const std::string normalized =
              format_quantity(parse_quantity(value->text, field.dimension), field.dimension);
          if (normalized != value->text) shown += " (" + normalized + ")";
        } catch (const UnitError& e) {
          shown += " (invalid: " + std::string(e.what()) + ")";
        }
      }
    } else if (value != nullptr) {
      shown = value->describe();
    } else if (!field.default_text.empty()) {
      shown = field.default_text + " (default)";
    } else {
      shown = "(unset)";
      if (is_quantity) shown += " [" + std::string(si_unit(field.dimension)) + "]";
    }
    rows.emplace_back(key, shown);
  }
}

std::string render_rows(const std::string& title, const std::vector<DescribedRow>& rows) {
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out = title + "\n";
  for (const auto& [key, shown] : rows) {
    out += "  " + key + std::string(width - key.size() + 2, ' ') + shown + "\n";
  }
  return out;
}

}  // namespace

std::string describe_library_entry(std::string_view name, const std::filesystem::path& data_dir) {
  const std::string wanted(name);
  const Schema schema = scenario_schema();
  std::vector<std::string> all;
  for (LibraryKind kind : {LibraryKind::accelerators, LibraryKind::models, LibraryKind::systems}) {
    const auto names = library_names(kind, data_dir);
    all.insert(all.end(), names.begin(), names.end());
    if (std::find(names.begin(), names.end(), wanted) == names.end()) continue;
    const auto file = data_dir / kind_folder(kind) / (wanted + ".yaml");
    std::vector<Diagnostic> diagnostics;
    const ConfigNode root = load_config_file(file, data_dir, diagnostics);
    if (!diagnostics.empty()) throw ScenarioError(diagnostics);
    if (kind == LibraryKind::systems) {
      std::vector<DescribedRow> rows;
      const Field* cluster = find_field(schema.fields, {"cluster"});
      describe_fields(root.find("cluster"), cluster->fields, "cluster", rows);
      return render_rows("system " + wanted + " (" + file.string() + ")", rows);
    }
    const bool is_accelerator = kind == LibraryKind::accelerators;
    const char* section = is_accelerator ? "accelerators" : "models";
    const ConfigNode* map = root.find(section);
    const ConfigNode* entry = map != nullptr && map->is_mapping() ? map->find(wanted) : nullptr;
    if (entry == nullptr) {
      throw ConfigError(file.string() + ": no entry '" + wanted + "' under '" + section + ":'");
    }
    std::vector<DescribedRow> rows;
    describe_fields(entry, is_accelerator ? accelerator_preset_fields() : model_fields(), "", rows);
    return render_rows(std::string(is_accelerator ? "accelerator " : "model ") + wanted + " (" +
                           file.string() + ")",
                       rows);
  }
  std::sort(all.begin(), all.end());
  throw ConfigError("unknown library entry '" + wanted + "' (" +
                    choices_hint("choices", all, closest_match(wanted, all)) + ")");
}

}  // namespace clustersim::scenario
