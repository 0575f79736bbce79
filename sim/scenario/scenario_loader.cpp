#include "sim/scenario/scenario_loader.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <array>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <utility>

#include "models/llm/pipeline_split.hpp"
#include "sim/scenario/preset_readers.hpp"
#include "sim/config/problems.hpp"
#include "sim/scenario/scenario_schema.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/units.hpp"

namespace clustersim::scenario {

using config::ConfigEntry;
using config::ConfigNode;
using config::Diagnostic;
using config::Field;
using config::FieldKind;
using config::Position;
using config::Problems;
using config::ScenarioError;
using config::Schema;
using config::SchemaReader;
using config::UnitError;
using config::apply_set_override;
using config::choices_hint;
using config::closest_match;
using config::find_field;
using config::format_quantity;
using config::load_config_file;
using config::load_config_string;
using config::make_diagnostic;
using config::merge_config;
using config::object_field;
using config::parse_integer;
using config::parse_quantity;
using config::si_unit;
using config::validate;

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

/// The accelerator the cluster names (`cluster.node.accelerator`), its memory and power; false
/// when it is unknown or has problems.
bool read_accelerator_section(const ConfigNode& root, const SchemaReader& reader, const std::filesystem::path& data_dir,
                              platform::ClusterSpec& cluster, Problems& problems) {
  const std::string name = reader.string("cluster.node.accelerator").value_or("");
  const ConfigNode* accelerators = root.find("accelerators");
  const ConfigNode* entry =
      accelerators != nullptr && accelerators->is_mapping() ? accelerators->find(name) : nullptr;
  if (entry == nullptr && !name.empty() && !problems.bad("cluster.node.accelerator")) {
    std::vector<std::string> names = library_names(LibraryKind::accelerators, data_dir);
    if (accelerators != nullptr && accelerators->is_mapping()) {
      for (const auto& key : accelerators->keys()) names.push_back(key);
    }
    problems.add(reader.position("cluster.node.accelerator"), "cluster.node.accelerator",
                 "unknown accelerator '" + name + "'", unknown_name_hint(name, names));
  }
  if (entry == nullptr) return false;
  cluster.accelerator = read_accelerator(*entry, name);
  read_memory_and_power(*entry, cluster.accelerator, cluster);
  return !problems.bad("accelerators." + name);
}

/// Straggler nodes (`cluster.stragglers`).
void read_stragglers(const SchemaReader& reader, int nodes, platform::Stragglers& stragglers, Problems& problems) {
  if (!reader.has("cluster.stragglers") || problems.bad("cluster.stragglers")) return;
  stragglers.compute_speed = reader.number("cluster.stragglers.compute_speed").value_or(1.0);
  const std::string key = "cluster.stragglers.nodes";
  const ConfigNode* list = reader.node(key);
  if (list == nullptr || problems.bad(key)) return;
  const std::vector<ConfigNode> items = list->is_sequence() ? list->items : std::vector<ConfigNode>{*list};
  for (const ConfigNode& item : items) {
    const std::optional<std::int64_t> node = parse_integer(item.text);
    if (!node || *node < 0 || *node >= nodes) {
      problems.add(item.position, key,
                   "straggler node must be an integer in [0, " + std::to_string(nodes - 1) + "], got " +
                       item.describe());
    } else {
      stragglers.nodes.push_back(static_cast<int>(*node));
    }
  }
}

/// The nodes and their scale-up domain (`cluster.nodes`, `cluster.node`).
void read_nodes(const SchemaReader& reader, bool accelerator_ok, platform::ClusterSpec& cluster, Problems& problems) {
  topologies::ClusterNetworkSpec& network = cluster.network;
  const models::AcceleratorSpec& accelerator = cluster.accelerator;
  network.nodes = static_cast<int>(reader.integer("cluster.nodes").value_or(1));
  cluster.placement = reader.string("cluster.placement").value_or("packed") == "scattered"
                          ? platform::Placement::scattered
                          : platform::Placement::packed;
  read_stragglers(reader, network.nodes, cluster.stragglers, problems);
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
                   "missing scale-up bandwidth: accelerator '" + accelerator.name +
                       "' has no scale_up_bandwidth, so set cluster.node.scale_up.bandwidth");
    }
  }
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
                   "domain_size " + std::to_string(network.scale_up.domain_size) + " must be a multiple of per_node " +
                       std::to_string(network.accelerators_per_node) + " that divides the " +
                       std::to_string(accelerator_total) + " accelerators (whole nodes per domain)");
    }
  }
}

/// Keys a topology cannot do without (the schema cannot express "required if").
void require_for_topology(const SchemaReader& reader, Problems& problems, const std::string& topology_name,
                          const char* topology, std::initializer_list<const char*> keys) {
  if (topology_name != topology || problems.bad("cluster.network.topology")) return;
  for (const char* key : keys) {
    const std::string path = std::string("cluster.network.") + key;
    if (!reader.has(path) && !problems.bad(path)) {
      problems.add(reader.position("cluster.network.topology"), path,
                   std::string("topology ") + topology + " needs cluster.network." + key);
    }
  }
}

/// Torus dimensions (`cluster.network.dims`).
void read_torus_dims(const SchemaReader& reader, topologies::ScaleOutSpec& scale_out, Problems& problems) {
  const ConfigNode* dims = reader.node("cluster.network.dims");
  if (dims == nullptr || problems.bad("cluster.network.dims")) return;
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

/// The scale-out network (`cluster.network`) and its checks against the nodes.
void read_network(const SchemaReader& reader, platform::ClusterSpec& cluster, Problems& problems) {
  topologies::ClusterNetworkSpec& network = cluster.network;
  topologies::ScaleOutSpec& scale_out = network.scale_out;
  const std::string topology_name = reader.string("cluster.network.topology").value_or("fat-tree");
  const bool whole_network = topology_name == "torus" || topology_name == "custom";
  scale_out.topology = topology_name;
  scale_out.routing = reader.string("cluster.network.routing").value_or("ecmp");
  scale_out.tiers = static_cast<int>(reader.integer("cluster.network.tiers").value_or(2));
  scale_out.radix = static_cast<int>(reader.integer("cluster.network.radix").value_or(64));
  scale_out.oversubscription = reader.number("cluster.network.oversubscription").value_or(1.0);
  scale_out.aggregation_oversubscription = reader.number("cluster.network.aggregation_oversubscription").value_or(1.0);
  scale_out.link_bytes_per_s = reader.quantity("cluster.network.link.bandwidth").value_or(0);
  read_torus_dims(reader, scale_out, problems);
  scale_out.dragonfly_groups = static_cast<int>(reader.integer("cluster.network.groups").value_or(0));
  scale_out.dragonfly_routers_per_group = static_cast<int>(reader.integer("cluster.network.routers_per_group").value_or(0));
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
  require_for_topology(reader, problems, topology_name, "torus", {"dims"});
  require_for_topology(reader, problems, topology_name, "dragonfly",
                       {"groups", "routers_per_group", "terminals_per_router", "global_links_per_router"});
  require_for_topology(reader, problems, topology_name, "custom", {"file"});
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
  if (!problems.any_bad("cluster.node.per_node", "cluster.network.nic.per_node") && !whole_network &&
      network.accelerators_per_node % scale_out.nics_per_node != 0) {
    problems.add(reader.position("cluster.network.nic.per_node"), "cluster.network.nic.per_node",
                 "per_node " + std::to_string(network.accelerators_per_node) +
                     " accelerators is not divisible by nic.per_node " + std::to_string(scale_out.nics_per_node));
  }
  if (!problems.bad("cluster")) {
    try {
      (void)topologies::Topology::build(network);
    } catch (const ConfigError& e) {
      // A custom network's problems are in its file: point at the key that names it.
      const std::string key = topology_name == "custom" ? "cluster.network.file" : "cluster.network";
      problems.add(reader.position(key), key, e.what());
    }
  }
}

/// Power of the network gear and prices (`power`, `cost`).
void read_power_and_cost(const SchemaReader& reader, platform::PlatformSpec& spec, Problems& problems) {
  spec.apply_throttling = reader.boolean("power.apply_throttling").value_or(false);
  models::PowerSpec& power = spec.cluster.power;
  power.nic_w = reader.quantity("power.nic").value_or(0.0);
  power.switch_w = reader.quantity("power.switch").value_or(0.0);
  power.energy_j_per_bit = {
      {models::LinkKind::scale_up, reader.quantity("power.scale_up_energy_per_bit").value_or(0.0)},
      {models::LinkKind::scale_out, reader.quantity("power.scale_out_energy_per_bit").value_or(0.0)}};
  models::CostSpec& cost = spec.cost;
  if (reader.has("cost.accelerator_hour_usd")) cost.accelerator_hour_usd = reader.number("cost.accelerator_hour_usd");
  if (reader.has("cost.capex_usd_per_accelerator")) {
    cost.capex_usd_per_accelerator = reader.number("cost.capex_usd_per_accelerator");
  }
  cost.amortization_years = reader.number("cost.amortization_years").value_or(4.0);
  cost.electricity_usd_per_kwh = reader.number("cost.electricity_usd_per_kwh").value_or(0.0);
  cost.pue = reader.number("cost.pue").value_or(1.2);
  if (cost.accelerator_hour_usd && cost.capex_usd_per_accelerator) {
    problems.add(reader.position("cost.capex_usd_per_accelerator"), "cost.capex_usd_per_accelerator",
                 "set either cost.accelerator_hour_usd or cost.capex_usd_per_accelerator, not both");
  }
}

/// The collective library's settings (`simulation.comm`).
void read_comm(const SchemaReader& reader, platform::PlatformSpec& spec) {
  models::CommConfig& comm = spec.comm;
  const models::TunerParams defaults;
  if (const auto algorithm = reader.string("simulation.comm.algorithm"); algorithm && *algorithm != "auto") {
    comm.algorithm = models::parse_algorithm(*algorithm);
  }
  const auto latency = [&](const char* key, double fallback) {
    return reader.quantity(std::string("simulation.comm.") + key).value_or(fallback);
  };
  comm.tuner.ll_base_latency_s = latency("ll_base_latency", defaults.ll_base_latency_s);
  comm.tuner.ll128_base_latency_s = latency("ll128_base_latency", defaults.ll128_base_latency_s);
  comm.tuner.simple_base_latency_s = latency("simple_base_latency", defaults.simple_base_latency_s);
  comm.tuner.ll_step_latency_s = latency("ll_step_latency", defaults.ll_step_latency_s);
  comm.tuner.ll128_step_latency_s = latency("ll128_step_latency", defaults.ll128_step_latency_s);
  comm.tuner.simple_step_latency_s = latency("simple_step_latency", defaults.simple_step_latency_s);
  comm.tuner.nvls_step_latency_s = latency("nvls_step_latency", defaults.nvls_step_latency_s);
  comm.tuner.nvls_efficiency = reader.number("simulation.comm.nvls_efficiency").value_or(defaults.nvls_efficiency);
  comm.tuner.scale_out_sharp = reader.boolean("simulation.comm.scale_out_sharp").value_or(false);
  spec.overlap_sms = static_cast<int>(reader.integer("simulation.comm.overlap_sms").value_or(16));
}

/// The run's options (`simulation`).
platform::SessionOptions read_simulation(const SchemaReader& reader) {
  platform::SessionOptions options;
  options.fidelity = reader.string("simulation.fidelity").value_or("analytical") == "flow" ? platform::Fidelity::flow
                                                                                          : platform::Fidelity::analytical;
  options.mode = reader.string("simulation.mode").value_or("symmetric") == "full" ? platform::SimulationMode::full
                                                                                 : platform::SimulationMode::symmetric;
  options.seed = static_cast<std::uint64_t>(reader.integer("simulation.seed").value_or(1));
  return options;
}

/// The kind a workload mapping names (its `kind`, or the first kind when it names none).
std::string kind_name(const ConfigNode* workload, const WorkloadKinds& kinds) {
  const ConfigNode* kind = workload != nullptr && workload->is_mapping() ? workload->find("kind") : nullptr;
  return kind != nullptr && kind->is_scalar() ? kind->text : kinds.all().front().name;
}

/// Job names become key path components, so they must not hold dots.
bool valid_job_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

/// A schema of one job, `jobs.NAME.*` (for its reader's defaults and units).
std::vector<Field> job_schema(const WorkloadKinds& kinds, const WorkloadKind& kind, const std::string& name) {
  return {object_field("jobs", {workload_field(kinds, kind, name, kind.help, true)}, "jobs")};
}

/// Checks and reads `jobs`: each against its kind's keys, pinned to its accelerators.
void read_jobs(const ConfigNode& root, const WorkloadKinds& kinds, const WorkloadReadContext& base,
               std::vector<Diagnostic>& diagnostics, Scenario& scenario) {
  const ConfigNode* jobs = root.find("jobs");
  if (jobs == nullptr || !jobs->is_mapping()) return;
  for (const ConfigEntry& entry : jobs->entries) {
    const std::string path = "jobs." + entry.key;
    if (!valid_job_name(entry.key)) {
      base.problems.add(entry.key_position, path, "a job name may hold letters, digits, '-' and '_' only");
      continue;
    }
    if (!entry.value.is_mapping()) continue;  // reported by the schema
    const std::string name = kind_name(&entry.value, kinds);
    const WorkloadKind* kind = kinds.find(name);
    const std::vector<Field> fields = kind != nullptr ? job_schema(kinds, *kind, entry.key)
                                                      : std::vector<Field>{};
    if (kind == nullptr || !kind->can_be_job) {
      const ConfigNode* kind_node = entry.value.find("kind");
      std::vector<std::string> choices;
      for (const WorkloadKind& k : kinds.all()) {
        if (k.can_be_job) choices.push_back(k.name);
      }
      base.problems.add(kind_node != nullptr ? kind_node->position : entry.value.position, path + ".kind",
                        kind == nullptr ? "unknown workload kind '" + name + "'"
                                        : "a workload of kind '" + name + "' can only be the primary workload",
                        choices_hint("choices", choices, closest_match(name, choices)));
      continue;
    }
    validate(entry.value, fields.front().fields.front().fields, path, diagnostics);
    const SchemaReader reader(root, fields);
    WorkloadReadContext context{root, reader, path, base.platform, base.platform_ok, base.simulation, 0, base.data_dir,
                                base.problems};
    auto spec = kind->read(context);
    if (spec) scenario.jobs.push_back({entry.key, std::move(spec)});
  }
}

/// The accelerators the primary workload gets: what the pinned jobs leave.
int primary_accelerators(const Scenario& scenario, const SchemaReader& reader, Problems& problems) {
  std::vector<platform::Allocation> pinned;
  for (const NamedWorkload& job : scenario.jobs) {
    if (const auto range = job.spec->pinned()) pinned.push_back(*range);
  }
  if (pinned.empty() || problems.any_bad("cluster", "jobs")) return scenario.platform.cluster.accelerator_count();
  try {
    return platform::primary_allocation(scenario.platform.cluster.accelerator_count(), pinned).count;
  } catch (const ConfigError& e) {
    problems.add(reader.position("jobs"), "jobs", e.what());
    return scenario.platform.cluster.accelerator_count();
  }
}

/// The schema with the primary workload's kind (only `kind` when it is unknown: its keys are
/// not checked against another kind's).
Schema schema_for(const ConfigNode& root, const WorkloadKinds& kinds) {
  const std::string name = kind_name(root.find("workload"), kinds);
  Schema schema = scenario_schema(kinds, name);
  if (kinds.find(name) == nullptr || !kinds.find(name)->can_be_primary) {
    for (Field& field : schema.fields) {
      if (field.key != "workload") continue;
      field.fields.resize(1);  // kind
      field.open = true;
    }
  }
  return schema;
}

/// Is `path` a declared key (for --set): the schema's, or a job's own kind's.
bool known_path(const Schema& schema, const ConfigNode& root, const WorkloadKinds& kinds,
                const std::vector<std::string>& path) {
  if (path.size() >= 3 && path[0] == "jobs") {
    const ConfigNode* jobs = root.find("jobs");
    const ConfigNode* job = jobs != nullptr && jobs->is_mapping() ? jobs->find(path[1]) : nullptr;
    const WorkloadKind* kind = kinds.find(kind_name(job, kinds));
    if (kind == nullptr) return false;
    return find_field(job_schema(kinds, *kind, path[1]), path) != nullptr;
  }
  return find_field(schema.fields, path) != nullptr;
}

/// The primary workload (`workload`).
void read_primary(const ConfigNode& root, const WorkloadKinds& kinds, const WorkloadReadContext& context,
                  Scenario& scenario) {
  const std::string name = kind_name(root.find("workload"), kinds);
  const WorkloadKind* kind = kinds.find(name);
  if (kind == nullptr || context.problems.bad("workload.kind")) return;
  if (!kind->can_be_primary) {
    std::vector<std::string> choices;
    for (const WorkloadKind& k : kinds.all()) {
      if (k.can_be_primary) choices.push_back(k.name);
    }
    context.problems.add(context.reader.position("workload.kind"), "workload.kind",
                         "a workload of kind '" + name + "' can only run as one of `jobs:` beside a primary workload",
                         choices_hint("choices", choices, std::nullopt));
    return;
  }
  scenario.workload = kind->read(context);
}

Scenario build_scenario(ConfigNode root, const std::string& source_file, const std::vector<std::string>& set_overrides,
                        const std::filesystem::path& data_dir, const WorkloadKinds& kinds,
                        std::vector<Diagnostic>& diagnostics) {
  Problems problems(diagnostics);
  if (root.is_null() && diagnostics.empty()) problems.add(root.position, "", "the scenario is empty");
  if (!root.is_mapping()) {
    if (!root.is_null()) problems.add(root.position, "", "expected a mapping, got " + root.describe());
    throw ScenarioError(diagnostics);
  }
  for (const auto& text : set_overrides) {
    const Schema schema = schema_for(root, kinds);
    apply_set_override(root, text, diagnostics, [&](const std::vector<std::string>& path) {
      return known_path(schema, root, kinds, path);
    });
  }
  const Schema schema = schema_for(root, kinds);
  merge_library_presets(root, LibraryKind::accelerators, "accelerators", "cluster.node.accelerator", data_dir,
                        diagnostics);
  merge_library_presets(root, LibraryKind::models, "models", "workload.model", data_dir, diagnostics);
  validate(root, schema.fields, "", diagnostics);

  const SchemaReader reader(root, schema.fields);
  Scenario scenario;
  scenario.source_file = source_file;
  scenario.schema_version = static_cast<int>(reader.integer("schema_version").value_or(1));
  scenario.name = reader.string("name").value_or("");
  platform::PlatformSpec& platform = scenario.platform;
  const bool accelerator_ok = read_accelerator_section(root, reader, data_dir, platform.cluster, problems);
  read_nodes(reader, accelerator_ok, platform.cluster, problems);
  read_network(reader, platform.cluster, problems);
  read_power_and_cost(reader, platform, problems);
  read_comm(reader, platform);
  scenario.simulation = read_simulation(reader);
  scenario.output.dir = reader.string("output.dir").value_or("");

  const bool platform_ok = accelerator_ok && !problems.bad("cluster");
  WorkloadReadContext jobs_context{root,     reader, "jobs", platform, platform_ok, scenario.simulation, 0,
                                   data_dir, problems};
  read_jobs(root, kinds, jobs_context, diagnostics, scenario);
  // With a job in error the primary's share is unknown: its count is not checked then (-1).
  const int accelerators = problems.bad("jobs") ? -1 : primary_accelerators(scenario, reader, problems);
  WorkloadReadContext primary{root,     reader, "workload", platform, platform_ok, scenario.simulation, accelerators,
                              data_dir, problems};
  read_primary(root, kinds, primary, scenario);
  if (!diagnostics.empty()) throw ScenarioError(diagnostics);
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& set_overrides,
                       const std::filesystem::path& data_dir, const WorkloadKinds& kinds) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = load_config_file(file, data_dir, diagnostics);
  return build_scenario(std::move(root), file.string(), set_overrides, data_dir, kinds, diagnostics);
}

Scenario load_scenario_from_string(std::string_view yaml, std::string_view virtual_file_name,
                                   const std::vector<std::string>& set_overrides,
                                   const std::filesystem::path& data_dir, const WorkloadKinds& kinds) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = load_config_string(yaml, virtual_file_name, data_dir, diagnostics);
  return build_scenario(std::move(root), std::string(virtual_file_name), set_overrides, data_dir, kinds, diagnostics);
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
  const Schema schema = scenario_schema(builtin_workload_kinds(), "training");
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
