#pragma once
/// `clustersim validate --base SCENARIO`: the platform of a user's own scenario file (cluster,
/// network, accelerator and model presets, simulation and power options), for dataset rows to
/// run on instead of the system preset their source or gpu_type names.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/config_tree.hpp"

namespace clustersim::validate {

/// A base scenario's platform, as YAML text ready to merge with a row's workload.
struct BaseCluster {
  std::string file;  ///< the scenario file, as given
  /// Its top-level sections other than `cluster` and `models` (accelerators, simulation, power,
  /// cost), one flow-style line each; "" when it has none.
  std::string sections_yaml;
  /// Its `cluster:` entries except `nodes`, one flow-style line each, indented by two spaces;
  /// the row sets `nodes` (its GPUs / accelerators_per_node).
  std::string cluster_entries_yaml;
  /// Its `models:` entries, one flow-style line each, indented by two spaces; "" for none.
  std::string model_entries_yaml;
  std::vector<std::string> model_names;  ///< the names its `models:` map defines
  std::int64_t accelerators_per_node = 0;
  std::string accelerator;  ///< the accelerator preset its nodes hold, for messages
};

/// Loads `file` as a scenario first, so that every problem in it is reported with its own
/// file:line:column (config::ScenarioError), then keeps its platform: everything but
/// `schema_version`, `name`, `description`, `workload`, `jobs` and `output`, with its includes
/// and `base:` resolved.
BaseCluster load_base_cluster(const std::filesystem::path& file);

/// A config tree as one line of YAML flow style: every scalar double-quoted (the loader reads
/// quoted and plain scalars alike), null as `null`.
std::string flow_yaml(const config::ConfigNode& node);

}  // namespace clustersim::validate
