#pragma once
/// Loading a scenario: YAML file (+ includes, + --set overrides) -> validated Scenario, and
/// the catalog behind `clustersim list` / `clustersim describe`.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/scenario_schema.hpp"  // scenario_reference_markdown() for the CLI
#include "sim/scenario/workload_kinds.hpp"

namespace clustersim::scenario {

/// Loads, merges (includes, library presets, derived presets), applies `set_overrides`
/// ("key.path=value"), validates and cross-checks a scenario file, reading every key through
/// its declaration (scenario_schema.hpp). Throws config::ScenarioError carrying every problem;
/// problems that do not stop the load are the scenario's `warnings`.
/// `data_dir` is the preset library (models/data; env CLUSTERSIM_DATA overrides the default);
/// `kinds` the workload kinds the scenario may name.
Scenario load_scenario(const std::filesystem::path& file,
                       const std::vector<std::string>& set_overrides = {},
                       const std::filesystem::path& data_dir = config::library_data_dir(),
                       const WorkloadKinds& kinds = builtin_workload_kinds());

/// Same for YAML text; `virtual_file_name` is used in positions and its folder (if any)
/// resolves relative includes.
Scenario load_scenario_from_string(std::string_view yaml, std::string_view virtual_file_name,
                                   const std::vector<std::string>& set_overrides = {},
                                   const std::filesystem::path& data_dir = config::library_data_dir(),
                                   const WorkloadKinds& kinds = builtin_workload_kinds());

/// One key of a `clustersim describe` listing: its path below the entry's prefix, and its
/// value (written, with its SI form when that differs), default or "(unset)".
struct DescribedKey {
  std::string key;
  std::string shown;
};

/// What `clustersim describe NAME` lists: a topology's keys (type, default, help) or a library
/// preset's values.
struct Description {
  std::string title;   ///< first line, e.g. "accelerator h100-sxm (models/data/accelerators/h100-sxm.yaml)"
  std::string help;    ///< a topology's description; empty for presets
  /// Where the keys live in a scenario: "cluster.network" (topologies), "accelerators.NAME",
  /// "models.NAME", "" (systems: their keys start with "cluster.").
  std::string prefix;
  std::vector<DescribedKey> keys;
};

/// The description of the topology, accelerator, model or system named `name` (topologies
/// first). Throws ConfigError listing close names if there is none.
Description describe(std::string_view name, const std::filesystem::path& data_dir = config::library_data_dir());
/// The text `clustersim describe` prints.
std::string render_description(const Description& description);

/// The description of the library preset (accelerator, model or system) `name`, rendered.
/// Throws ConfigError listing close preset names if there is none.
std::string describe_library_entry(std::string_view name,
                                   const std::filesystem::path& data_dir = config::library_data_dir());

}  // namespace clustersim::scenario
