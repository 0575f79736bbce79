#pragma once
/// Loading a scenario from a tree already read (config::load_config_file), with values set at
/// key paths that keep their own positions: what `clustersim sweep` does for each point, so a
/// point's bad key or value is reported where the `sweep:` block writes it.
#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_kinds.hpp"

namespace clustersim::scenario {

/// A value to set at a dotted key path, as `--set` does; `key_position` is where the key is
/// written and `shown` names it in messages (e.g. "sweep key 'cluster.nodes'").
struct KeyOverride {
  std::string key_path;
  config::Position key_position;
  config::ConfigNode value;
  std::string shown;
};

/// load_scenario for a tree read from `source_file`: applies `set_overrides` ("key.path=value"),
/// then `key_overrides`, then merges presets, validates and reads as load_scenario does. Throws
/// config::ScenarioError carrying every problem.
Scenario load_scenario_tree(config::ConfigNode root, const std::string& source_file,
                            const std::vector<std::string>& set_overrides,
                            const std::vector<KeyOverride>& key_overrides,
                            const std::filesystem::path& data_dir = config::library_data_dir(),
                            const WorkloadKinds& kinds = builtin_workload_kinds());

}  // namespace clustersim::scenario
