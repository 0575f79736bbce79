#include "sim/scenario/platform_reader.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/accelerator/calibration_table.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/units.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/preset_readers.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "topologies/link_faults.hpp"
#include "topologies/topology_keys.hpp"

namespace clustersim::scenario {
namespace {

using config::ConfigNode;
using config::has_value;
using config::parse_integer;
using config::position_of;
using config::Problems;

/// The accelerator the cluster names (`cluster.node.accelerator`), with what the platform
/// derives from it; false when it is unknown or has problems.
bool read_accelerator_section(const ConfigNode& root, const std::filesystem::path& data_dir,
                              platform::ClusterSpec& cluster, Problems& problems) {
  const ConfigNode* named = root.find_path("cluster.node.accelerator");
  const std::string name = named != nullptr && named->is_scalar() ? named->text : "";
  const ConfigNode* accelerators = root.find("accelerators");
  const ConfigNode* entry =
      accelerators != nullptr && accelerators->is_mapping() ? accelerators->find(name) : nullptr;
  if (entry == nullptr && !name.empty() && !problems.bad("cluster.node.accelerator")) {
    std::vector<std::string> names = library_names(LibraryKind::accelerators, data_dir);
    if (accelerators != nullptr && accelerators->is_mapping()) {
      for (const auto& key : accelerators->keys()) names.push_back(key);
    }
    problems.add(position_of(root, "cluster.node.accelerator"), "cluster.node.accelerator",
                 "unknown accelerator '" + name + "'", unknown_name_hint(name, names));
  }
  if (entry == nullptr) return false;
  set_accelerator(read_accelerator(*entry, "accelerators." + name, name, problems), cluster);
  if (!cluster.accelerator.projected.empty()) {
    problems.notice(fmt::format("cluster.node.accelerator: '{}' is a projected part, not a shipping one: {}", name,
                                cluster.accelerator.projected));
  }
  return !problems.bad("accelerators." + name);
}

/// Every straggler node is a node of the cluster.
void check_stragglers(const ConfigNode& root, const platform::ClusterSpec& cluster, Problems& problems) {
  const std::string key = "cluster.stragglers.nodes";
  const ConfigNode* list = root.find_path(key);
  if (list == nullptr || problems.bad("cluster.nodes")) return;
  const int nodes = cluster.network.nodes;
  for (const ConfigNode& item : config::list_items(*list)) {
    const std::optional<std::int64_t> node = item.is_scalar() ? parse_integer(item.text) : std::nullopt;
    if (node && *node >= nodes && *node <= 10000000) {  // the rest: reported by the declaration
      problems.add(item.position, key,
                   "straggler node must be an integer in [0, " + std::to_string(nodes - 1) + "], got " +
                       item.describe());
    }
  }
}

/// `cluster.memory_pool`: a pool lies within one node (its size divides per_node) or spans whole
/// nodes (a multiple of per_node that divides the cluster's accelerators).
void check_memory_pool(const ConfigNode& root, const platform::ClusterSpec& cluster, Problems& problems) {
  const platform::MemoryPoolSpec& pool = cluster.memory_pool;
  const std::string key = "cluster.memory_pool.accelerators";
  if (!pool.on()) {
    for (const char* other : {"capacity", "bandwidth", "link_bandwidth", "latency"}) {
      warn_no_effect(root, problems, std::string("cluster.memory_pool.") + other,
                               "cluster.memory_pool.accelerators is 0 (no pool)");
    }
    return;
  }
  for (const auto& [name, value] : {std::pair<const char*, double>{"capacity", pool.capacity_bytes},
                                    {"bandwidth", pool.bytes_per_s}, {"link_bandwidth", pool.link_bytes_per_s}}) {
    if (!(value > 0) && !problems.bad(std::string("cluster.memory_pool.") + name)) {
      problems.add(position_of(root, "cluster.memory_pool"), std::string("cluster.memory_pool.") + name,
                   std::string("a memory pool needs its ") + name, "set cluster.memory_pool." + std::string(name));
    }
  }
  if (problems.bad(key) || problems.bad("cluster.nodes") || problems.bad("cluster.node.per_node")) return;
  const int per_node = cluster.network.accelerators_per_node;
  const int total = cluster.accelerator_count();
  const bool inside = per_node % pool.accelerators == 0;
  const bool whole_nodes = pool.accelerators % per_node == 0 && total % pool.accelerators == 0;
  if (!inside && !whole_nodes) {
    problems.add(position_of(root, key), key,
                 fmt::format("{} accelerators per pool neither divide a node's {} nor group whole nodes of the "
                             "cluster's {} accelerators",
                             pool.accelerators, per_node, total),
                 fmt::format("a divisor of {} (a pool inside each node) or a multiple of it dividing {}", per_node, total));
  }
}

/// The scale-up domain: its bandwidth defaults to the accelerator's, its size divides the cluster.
void complete_scale_up(const ConfigNode& root, bool accelerator_ok, bool whole_network,
                       platform::ClusterSpec& cluster, Problems& problems) {
  topologies::ClusterNetworkSpec& network = cluster.network;
  const int domain = network.scale_up_domain_size();
  if (!has_value(root, "cluster.node.scale_up.bandwidth")) {
    network.scale_up.bytes_per_s = cluster.accelerator.scale_up_bytes_per_s;
    if (accelerator_ok && network.scale_up.bytes_per_s <= 0 && domain > 1 && !whole_network) {
      problems.add(position_of(root, "cluster.node"), "cluster.node.scale_up.bandwidth",
                   "missing scale-up bandwidth: accelerator '" + cluster.accelerator.name +
                       "' has no scale_up_bandwidth, so set cluster.node.scale_up.bandwidth");
    }
  }
  const std::string key = "cluster.node.scale_up.domain_size";
  if (!has_value(root, key) || problems.any_bad(key, "cluster.node.per_node", "cluster.nodes")) return;
  const std::int64_t accelerator_total = static_cast<std::int64_t>(network.nodes) * network.accelerators_per_node;
  if (whole_network) {
    problems.add(position_of(root, key), key,
                 "domain_size does not apply to topology " + network.scale_out.topology +
                     " (it has no NVLink switch)");
  } else if (network.scale_up.domain_size % network.accelerators_per_node != 0 ||
             accelerator_total % network.scale_up.domain_size != 0) {
    problems.add(position_of(root, key), key,
                 "domain_size " + std::to_string(network.scale_up.domain_size) + " must be a multiple of per_node " +
                     std::to_string(network.accelerators_per_node) + " that divides the " +
                     std::to_string(accelerator_total) + " accelerators (whole nodes per domain)");
  }
}

/// What each scale-up fabric is, for messages.
std::string fabric_description(const std::string& fabric) {
  if (fabric == "nvswitch") return "NVSwitch / NVLink switch";
  if (fabric == "pcie") return "PCIe switch";
  if (fabric == "ualink") return "UALink switch";
  if (fabric == "xgmi-mesh") return "AMD Infinity Fabric (xGMI) full mesh";
  if (fabric == "ethernet-mesh") return "all-to-all RoCE Ethernet mesh";
  if (fabric == "ici-torus") return "ICI torus";
  return fabric;
}

/// The cluster runs the accelerator on the scale-up fabric it is built into (its
/// scale_up_fabric): an MI300X has no NVSwitch, an H100 no xGMI mesh, a TPU no switch at all.
/// Torus and custom networks are whole networks of their own: any chip may run on them (a
/// design study), but a TPU runs on nothing else. A scale_up.fabric set with a torus or custom
/// network has no effect: a warning.
void check_accelerator_fabric(const ConfigNode& root, bool accelerator_ok, const topologies::TopologyKind& kind,
                              const platform::ClusterSpec& cluster, Problems& problems) {
  const std::string fabric_key = "cluster.node.scale_up.fabric";
  const std::string topology_key = "cluster.network.topology";
  const topologies::ClusterNetworkSpec& network = cluster.network;
  if (kind.whole_network && has_value(root, fabric_key) && !problems.bad(fabric_key)) {
    problems.warn(position_of(root, fabric_key), fabric_key,
                  "has no effect: topology " + kind.name +
                      " is the whole network (no scale-up switch or mesh; its links are cluster.network's)");
  }
  const std::string& built_into = cluster.accelerator.scale_up_fabric;
  if (!accelerator_ok || built_into.empty() || problems.any_bad(fabric_key, topology_key)) return;
  const std::string& name = cluster.accelerator.name;
  if (built_into == "ici-torus") {
    if (kind.whole_network) return;
    const std::string where = has_value(root, topology_key) ? topology_key : "cluster.node.accelerator";
    problems.add(position_of(root, where), topology_key,
                 "accelerator '" + name + "' is built into the " + fabric_description(built_into) +
                     " (scale_up_fabric ici-torus): cluster.network.topology must be torus (or custom), got " +
                     network.scale_out.topology,
                 "valid choices for " + name + ": custom, torus");
    return;
  }
  if (kind.whole_network || network.scale_up.fabric == built_into) return;
  const std::string where = has_value(root, fabric_key) ? fabric_key : "cluster.node.accelerator";
  problems.add(position_of(root, where), fabric_key,
               "accelerator '" + name + "' is built into the " + fabric_description(built_into) +
                   ", not the " + fabric_description(network.scale_up.fabric) + ": " + fabric_key + " must be " +
                   built_into + ", got " + network.scale_up.fabric,
               "valid choices for " + name + ": " + built_into);
}

/// The keys the chosen topology cannot do without (the schema cannot say "required if"), and
/// the NIC bandwidth every multi-node switched network needs.
void require_topology_keys(const ConfigNode& root, const topologies::TopologyKind& kind, int nodes,
                           Problems& problems) {
  if (!problems.bad("cluster.network.topology")) {
    for (const std::string& key : kind.required) {
      const std::string path = "cluster.network." + key;
      if (!has_value(root, path) && !problems.bad(path)) {
        problems.add(position_of(root, "cluster.network.topology"), path,
                     "topology " + kind.name + " needs cluster.network." + key);
      }
    }
  }
  if (!kind.whole_network && nodes > 1 && !has_value(root, "cluster.network.nic.bandwidth") &&
      !problems.any_bad("cluster.network.nic", "cluster.nodes")) {
    problems.add(position_of(root, "cluster.network.nic"), "cluster.network.nic.bandwidth",
                 "missing required key 'bandwidth': NIC bandwidth is needed with more than one node "
                 "(except for topology torus or custom)");
  }
}


/// One setting a system preset writes that belongs to the generation of hardware it was built for.
struct SystemSetting {
  const char* key;  ///< dotted path under the scenario root
  std::optional<config::Dimension> dimension;  ///< unset: a plain number
};

constexpr SystemSetting kGenerationSettings[] = {
    {"cluster.node.scale_up.bandwidth", config::Dimension::bytes_per_s},
    {"cluster.node.scale_up.latency", config::Dimension::seconds},
    {"cluster.node.scale_up.efficiency", std::nullopt},
    {"cluster.network.nic.bandwidth", config::Dimension::bytes_per_s},
    {"cluster.network.nic.efficiency", std::nullopt},
};

/// A setting's value in SI units, or nullopt when it is not written or does not parse (the
/// declaration reports that).
std::optional<double> setting_value(const ConfigNode& root, const SystemSetting& setting) {
  const ConfigNode* node = root.find_path(setting.key);
  if (node == nullptr || !node->is_scalar()) return std::nullopt;
  if (!setting.dimension) return config::parse_number(node->text);
  try {
    return config::parse_quantity(node->text, *setting.dimension);
  } catch (const config::UnitError&) {
    return std::nullopt;
  }
}

/// The accelerator a system file is built for (its own `cluster.node.accelerator`), or "".
std::string system_accelerator(const std::filesystem::path& file, const std::filesystem::path& data_dir) {
  std::vector<config::Diagnostic> ignored;  // a library file's own problems are its tests' business
  const ConfigNode system = config::load_config_file(file, data_dir, ignored);
  const ConfigNode* named = system.find_path("cluster.node.accelerator");
  return named != nullptr && named->is_scalar() ? named->text : "";
}

/// Is the scenario's accelerator `chosen` a preset derived (`base:`, possibly through others)
/// from the library accelerator `built_for`? Resolving a base copies the base's entries, which
/// keep the position of the base's library file: a setting the derived preset did not write.
bool derives_from(const ConfigNode& root, const std::string& chosen, const std::string& built_for,
                  const std::filesystem::path& data_dir) {
  const ConfigNode* entry = root.find_path("accelerators." + chosen);
  if (entry == nullptr || !entry->is_mapping()) return false;
  const std::filesystem::path base_file =
      (data_dir / library_folder(LibraryKind::accelerators) / (built_for + ".yaml")).lexically_normal();
  return std::any_of(entry->entries.begin(), entry->entries.end(), [&](const config::ConfigEntry& setting) {
    return std::filesystem::path(setting.value.position.file).lexically_normal() == base_file;
  });
}

/// The library systems built for `accelerator`, by name, each with its merged tree.
std::vector<std::pair<std::string, ConfigNode>> systems_built_for(const std::string& accelerator,
                                                                  const std::filesystem::path& data_dir) {
  std::vector<std::pair<std::string, ConfigNode>> found;
  for (const std::string& name : library_names(LibraryKind::systems, data_dir)) {
    const std::filesystem::path file = data_dir / library_folder(LibraryKind::systems) / (name + ".yaml");
    std::vector<config::Diagnostic> ignored;
    ConfigNode system = config::load_config_file(file, data_dir, ignored);
    const ConfigNode* named = system.find_path("cluster.node.accelerator");
    if (named != nullptr && named->is_scalar() && named->text == accelerator) found.emplace_back(name, std::move(system));
  }
  return found;
}

/// A library system preset built for one accelerator, run with another
/// (`--set cluster.node.accelerator=b200` on `systems/dgx-h100.yaml`): the preset's scale-up
/// bandwidth gives way to the new accelerator's own `scale_up_bandwidth`, and every other
/// generation-bound setting the preset wrote and the scenario kept (scale-up latency and
/// efficiency, NIC bandwidth and efficiency) is named in a warning with the value of the new
/// accelerator's own system, where the library has one. Never silent: a mixed platform is a
/// design study the user must have meant. A fabric the accelerator is not built into is an
/// error of its own (check_accelerator_fabric).
void check_system_generation(const ConfigNode& root, const std::filesystem::path& data_dir, bool accelerator_ok,
                             bool whole_network, platform::ClusterSpec& cluster, Problems& problems) {
  const ConfigNode* named = root.find_path("cluster.node.accelerator");
  if (!accelerator_ok || whole_network || named == nullptr ||
      problems.any_bad("cluster.node.scale_up", "cluster.network.nic")) {
    return;
  }
  // The preset that wrote the settings: a library system file other than the one naming the
  // accelerator, built for another accelerator.
  std::string preset_file;
  for (const SystemSetting& setting : kGenerationSettings) {
    const ConfigNode* value = root.find_path(setting.key);
    if (value != nullptr && !written_by_scenario(*value, data_dir, LibraryKind::systems) &&
        value->position.file != named->position.file) {
      preset_file = value->position.file;
      break;
    }
  }
  if (preset_file.empty()) return;
  const std::string built_for = system_accelerator(preset_file, data_dir);
  const std::string& chosen = cluster.accelerator.name;
  if (built_for.empty() || built_for == chosen || derives_from(root, chosen, built_for, data_dir)) return;
  const std::string preset = std::filesystem::path(preset_file).stem().string();
  const auto own_systems = systems_built_for(chosen, data_dir);
  std::vector<std::string> changed;
  std::vector<std::string> kept;
  for (const SystemSetting& setting : kGenerationSettings) {
    const ConfigNode* node = root.find_path(setting.key);
    const std::optional<double> value = setting_value(root, setting);
    if (node == nullptr || node->position.file != preset_file || !value) continue;
    const std::string short_key = std::string(setting.key).substr(std::string("cluster.").size());
    if (std::string_view(setting.key) == "cluster.node.scale_up.bandwidth" && cluster.accelerator.scale_up_bytes_per_s > 0) {
      if (cluster.accelerator.scale_up_bytes_per_s != *value) {
        cluster.network.scale_up.bytes_per_s = cluster.accelerator.scale_up_bytes_per_s;
        changed.push_back(fmt::format("{} {} -> {}'s own {}", short_key, node->text, chosen,
                                      config::format_quantity(cluster.accelerator.scale_up_bytes_per_s, *setting.dimension)));
      }
      continue;
    }
    if (own_systems.empty()) {
      kept.push_back(fmt::format("{} {}", short_key, node->text));
      continue;
    }
    const ConfigNode& own_system = own_systems.front().second;
    const std::optional<double> own = setting_value(own_system, setting);
    if (own && *own != *value) {
      kept.push_back(fmt::format("{} {} ({} has {})", short_key, node->text, own_systems.front().first,
                                 own_system.find_path(setting.key)->text));
    }
  }
  if (changed.empty() && kept.empty()) return;
  std::vector<std::string> own_names;
  for (const auto& [name, tree] : own_systems) own_names.push_back("systems/" + name + ".yaml");
  std::string message = fmt::format("system preset {} was built for {}, the cluster runs {}", preset, built_for, chosen);
  if (!changed.empty()) message += fmt::format("; applied: {}", fmt::join(changed, ", "));
  if (!kept.empty()) {
    message += fmt::format("; kept from {} ({}'s hardware): {}", preset, built_for, fmt::join(kept, ", "));
  }
  const std::string hint = own_names.empty()
                               ? "set these keys for " + chosen + " (no library system is built for it)"
                               : fmt::format("include {} for {}'s own platform, or set these keys", fmt::join(own_names, " or "), chosen);
  problems.warn(named->position, "cluster.node.accelerator", message, hint);
}

/// Every `cluster.network.faults` entry names a cable or switch of the built network, at its
/// key's position with the closest names.
void check_link_faults(const ConfigNode& root, const topologies::Topology& topology,
                       const topologies::ScaleOutSpec& scale_out, Problems& problems) {
  if (scale_out.faults.empty() || problems.bad("cluster.network.faults")) return;
  std::vector<topologies::LinkFaultProblem> found;
  (void)topologies::resolve_link_faults(topology, scale_out, found);
  for (const topologies::LinkFaultProblem& problem : found) {
    const std::string key = "cluster.network.faults." + problem.fault + "." + problem.key;
    problems.add(position_of(root, key), key, problem.message, problem.hint);
  }
}

/// The scale-out network: NICs per node default to the accelerators per node and divide them;
/// the network is built once so that the topology's own problems point at its keys.
void complete_network(const ConfigNode& root, const topologies::TopologyKind& kind, platform::ClusterSpec& cluster,
                      const platform::ResourceLimits& limits, Problems& problems) {
  topologies::ClusterNetworkSpec& network = cluster.network;
  topologies::ScaleOutSpec& scale_out = network.scale_out;
  require_topology_keys(root, kind, network.nodes, problems);
  if (!has_value(root, "cluster.network.nic.per_node")) scale_out.nics_per_node = network.accelerators_per_node;
  if (!problems.any_bad("cluster.node.per_node", "cluster.network.nic.per_node") && !kind.whole_network &&
      network.accelerators_per_node % scale_out.nics_per_node != 0) {
    problems.add(position_of(root, "cluster.network.nic.per_node"), "cluster.network.nic.per_node",
                 "per_node " + std::to_string(network.accelerators_per_node) +
                     " accelerators is not divisible by nic.per_node " + std::to_string(scale_out.nics_per_node));
  }
  if (problems.bad("cluster")) return;
  // The cheap checks of the spec first, then the size estimate: a cluster too big for memory
  // is refused before its graph is built.
  if (const std::vector<std::string> spec = topologies::spec_problems(network); !spec.empty()) {
    const std::string key = kind.name == "custom" ? "cluster.network.file" : "cluster.network";
    std::string message = spec.front();
    for (std::size_t i = 1; i < spec.size(); ++i) message += "; " + spec[i];
    problems.add(position_of(root, key), key, message);
    return;
  }
  if (const auto too_big = platform::network_memory_problem(network, limits)) {
    problems.add(position_of(root, "cluster.nodes"), "cluster.nodes", *too_big);
    return;
  }
  try {
    const topologies::Topology topology = topologies::Topology::build(network);
    check_link_faults(root, topology, scale_out, problems);
  } catch (const ConfigError& e) {
    // A custom network's problems are in its file: point at the key that names it.
    const std::string key = kind.name == "custom" ? "cluster.network.file" : "cluster.network";
    problems.add(position_of(root, key), key, e.what());
  }
}

/// Settings another layer overrides have no effect: warn, naming the key that wins.
void warn_shadowed(const ConfigNode& root, const std::filesystem::path& data_dir, const platform::ClusterSpec& cluster,
                   Problems& problems) {
  const std::string winner = "cluster.node.scale_up.bandwidth";
  const std::string key = "accelerators." + cluster.accelerator.name + ".scale_up_bandwidth";
  const ConfigNode* accelerators = root.find("accelerators");
  const ConfigNode* entry =
      accelerators != nullptr && accelerators->is_mapping() ? accelerators->find(cluster.accelerator.name) : nullptr;
  const ConfigNode* shadowed = entry != nullptr && entry->is_mapping() ? entry->find("scale_up_bandwidth") : nullptr;
  if (shadowed == nullptr || !has_value(root, winner) ||
      !written_by_scenario(*shadowed, data_dir, LibraryKind::accelerators)) {
    return;
  }
  problems.warn(shadowed->position, key,
                "has no effect: " + winner + " (" + position_of(root, winner).to_string() +
                    ") sets the scale-up bandwidth and wins");
}

/// Fused-attention keys a scenario writes for its accelerator that no family running on its
/// matrix path reads: warn, naming the path and its families.
void warn_unread_attention_keys(const ConfigNode& root, const std::filesystem::path& data_dir,
                                const platform::ClusterSpec& cluster, Problems& problems) {
  const models::AcceleratorSpec& accelerator = cluster.accelerator;
  const ConfigNode* accelerators = root.find("accelerators");
  const ConfigNode* entry =
      accelerators != nullptr && accelerators->is_mapping() ? accelerators->find(accelerator.name) : nullptr;
  const ConfigNode* attention = entry != nullptr && entry->is_mapping() ? entry->find("attention") : nullptr;
  if (attention == nullptr || !attention->is_mapping()) return;
  const std::vector<models::AttentionKernelFamily> families = models::families_on(accelerator.matrix_path);
  const bool any_overlaps = std::any_of(families.begin(), families.end(), [&](models::AttentionKernelFamily family) {
    return models::overlaps_softmax(family, accelerator.matrix_path);
  });
  const bool runs_fa2 = models::runs_on(models::AttentionKernelFamily::fa2, accelerator.matrix_path);
  const std::string path_text = "matrix path " + std::string(models::matrix_path_name(accelerator.matrix_path)) +
                                " (families: " + models::families_on_text(accelerator.matrix_path) + ")";
  const auto warn_key = [&](const char* key, bool read, const std::string& why) {
    const ConfigNode* value = attention->find(key);
    if (read || value == nullptr || !written_by_scenario(*value, data_dir, LibraryKind::accelerators)) return;
    problems.warn(value->position, "accelerators." + accelerator.name + ".attention." + key,
                  "has no effect: " + why + " on " + path_text);
  };
  warn_key("softmax_overlap", any_overlaps, "no family overlaps its softmax");
  warn_key("warp_mma_fraction", runs_fa2, "fa2, the warp-MMA family, does not run");
}

/// power.accelerator_limit: above the accelerator's idle power; without power data it has no effect.
void check_power_limit(const ConfigNode& root, bool accelerator_ok, const platform::ClusterSpec& cluster,
                       Problems& problems) {
  const std::string key = "power.accelerator_limit";
  const double limit = cluster.power.accelerator_limit_w;
  if (!accelerator_ok || !has_value(root, key) || problems.bad(key) || limit == 0) return;  // 0: the TDP
  const models::AcceleratorSpec& chip = cluster.accelerator;
  if (!(chip.tdp_w > chip.idle_w)) {
    problems.warn(position_of(root, key), key,
                  "has no effect: accelerator '" + chip.name + "' has no power.tdp, so there is no power report to limit");
  } else if (limit <= chip.idle_w) {
    problems.add(position_of(root, key), key,
                 fmt::format("limit {:g} W must be above accelerator '{}''s idle power {:g} W (its TDP: {:g} W)", limit,
                             chip.name, chip.idle_w, chip.tdp_w));
  }
}

/// simulation.calibration: the rows of the file or folder, read here so that a missing file, a
/// malformed row or a table without the cluster's accelerator is an error at the key. Every
/// accelerator's rows are kept: a serving pool on another accelerator is costed from its own.
void read_calibration(const ConfigNode& root, platform::PlatformSpec& platform, Problems& problems) {
  const std::string key = "simulation.calibration";
  if (platform.calibration_path.empty() || problems.bad(key)) return;
  const std::string& accelerator = platform.cluster.accelerator.name;
  try {
    const models::CalibrationTable all = models::read_calibration_path(platform.calibration_path);
    platform.calibration = all;
    if (models::merge_calibration({all}, accelerator).rows.empty()) {
      std::vector<std::string> present;  // in first-appearance order
      for (const models::CalibrationRow& row : all.rows) {
        if (std::find(present.begin(), present.end(), row.accelerator) == present.end()) present.push_back(row.accelerator);
      }
      problems.add(position_of(root, key), key,
                   fmt::format("no rows for accelerator '{}' in '{}' (its rows are for: {})", accelerator,
                               platform.calibration_path, present.empty() ? "no accelerator" : fmt::format("{}", fmt::join(present, ", "))));
    }
  } catch (const ConfigError& e) {
    problems.add(position_of(root, key), key, e.what());
  }
}

/// Values beyond any shipping part by a wide margin (ten times and more) are accepted, since a
/// what-if may ask for them, but said: most often they are a unit or an exponent typed wrong.
/// Each bound names the part it is measured against.
void warn_implausible(const ConfigNode& root, const platform::ClusterSpec& cluster, Problems& problems) {
  const auto check = [&](const std::string& key, const std::string& fallback_key, double value, double bound,
                         config::Dimension dimension, const char* basis) {
    if (!(value > bound)) return;
    const std::string at = has_value(root, key) ? key : fallback_key;
    if (problems.bad(at)) return;
    problems.warn(position_of(root, at), at,
                  fmt::format("{} is implausible: above {}, {}", config::format_quantity(value, dimension),
                              config::format_quantity(bound, dimension), basis),
                  "check the unit and the exponent; a deliberate what-if may keep it");
  };
  const models::AcceleratorSpec& chip = cluster.accelerator;
  const std::string chip_key = "accelerators." + chip.name;
  // A projected part may exceed every shipping one: its notice says what is projected.
  if (chip.projected.empty()) {
    for (const auto& [dtype, peak] : chip.peak_flops_per_s) {
      check(chip_key + ".peak." + std::string(models::dtype_name(dtype)), "cluster.node.accelerator", peak, 1e17,
            config::Dimension::flops_per_s,
            "about 7x the densest shipping matrix peak (GB300: 15 PFLOP/s dense FP4, NVIDIA datasheet)");
    }
    check(chip_key + ".memory.hbm_bandwidth", "cluster.node.accelerator", chip.hbm_bytes_per_s, 1e14,
          config::Dimension::bytes_per_s, "over 10x the fastest shipping HBM3E (8 TB/s: B200, MI355X datasheets)");
  }
  const topologies::ClusterNetworkSpec& network = cluster.network;
  check("cluster.node.scale_up.bandwidth", chip_key + ".scale_up_bandwidth", network.scale_up.bytes_per_s, 1e13,
        config::Dimension::bytes_per_s, "over 10x NVLink 5's 900 GB/s per GPU and direction (NVIDIA B200)");
  check("cluster.node.scale_up.latency", "cluster.node.scale_up.latency", network.scale_up.latency_s, 1e-3,
        config::Dimension::seconds, "1,000x an NVLink or switch hop (under 1 us)");
  check("cluster.network.nic.bandwidth", "cluster.network.nic.bandwidth", network.scale_out.nic_bytes_per_s, 1e12,
        config::Dimension::bytes_per_s, "10x the fastest shipping NIC (800 Gb/s: NVIDIA ConnectX-8)");
  check("cluster.network.link.bandwidth", "cluster.network.link.bandwidth", network.scale_out.link_bytes_per_s, 1e12,
        config::Dimension::bytes_per_s, "10x an 800 Gb/s switch port (NVIDIA Quantum-X800, Spectrum-X800)");
  check("cluster.network.link.latency", "cluster.network.link.latency", network.scale_out.link_latency_s, 1e-3,
        config::Dimension::seconds, "1,000x a switch hop with its cable (under 1 us: InfiniBand NDR, Ethernet cut-through)");
}

}  // namespace

bool complete_platform(const ConfigNode& root, const std::filesystem::path& data_dir, platform::PlatformSpec& platform,
                       const platform::ResourceLimits& limits, Problems& problems) {
  platform::ClusterSpec& cluster = platform.cluster;
  const bool accelerator_ok = read_accelerator_section(root, data_dir, cluster, problems);
  const topologies::TopologyKind* kind = topologies::find_topology_kind(cluster.network.scale_out.topology);
  check_stragglers(root, cluster, problems);
  check_memory_pool(root, cluster, problems);
  if (cluster.network.scale_out.routing != "spray") {
    warn_no_effect(root, problems, "cluster.network.spray_paths", "cluster.network.routing is not spray");
  }
  if (!cluster.network.scale_out.projected.empty()) {
    problems.notice("cluster.network: a projected fabric, not a shipping one: " + cluster.network.scale_out.projected);
  }
  complete_scale_up(root, accelerator_ok, kind->whole_network, cluster, problems);
  check_accelerator_fabric(root, accelerator_ok, *kind, cluster, problems);
  check_system_generation(root, data_dir, accelerator_ok && !problems.bad("cluster.node.scale_up.fabric"),
                          kind->whole_network, cluster, problems);
  complete_network(root, *kind, cluster, limits, problems);
  if (const auto problem = platform.cost.basis_problem()) {
    problems.add(position_of(root, "cost." + problem->key), "cost." + problem->key, problem->message);
  }
  check_power_limit(root, accelerator_ok, cluster, problems);
  warn_shadowed(root, data_dir, cluster, problems);
  if (accelerator_ok) warn_unread_attention_keys(root, data_dir, cluster, problems);
  if (accelerator_ok) read_calibration(root, platform, problems);
  if (accelerator_ok) warn_implausible(root, cluster, problems);
  return accelerator_ok;
}

}  // namespace clustersim::scenario
