#pragma once
/// Loading a scenario: YAML file (+ includes, + --set overrides) -> validated Scenario, and
/// the library catalog behind `clustersim list` / `clustersim describe`.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/scenario_schema.hpp"  // scenario_reference_markdown() for the CLI
#include "sim/scenario/workload_kinds.hpp"

namespace clustersim::scenario {

/// Loads, merges (includes, library presets), applies `set_overrides` ("key.path=value"),
/// validates and cross-checks a scenario file. Throws config::ScenarioError carrying every problem.
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

/// The three kinds of library presets (folders of the data dir: accelerators, llms, systems).
enum class LibraryKind { accelerators, models, systems };

/// Preset names of `kind` (file stems in the data dir), sorted.
std::vector<std::string> library_names(LibraryKind kind,
                                       const std::filesystem::path& data_dir = config::library_data_dir());

/// Every parameter of the accelerator, model or system preset `name`, one per line, with unit
/// and value (schema defaults shown for unset fields). Throws ConfigError listing close names
/// if there is no such preset.
std::string describe_library_entry(std::string_view name,
                                   const std::filesystem::path& data_dir = config::library_data_dir());

}  // namespace clustersim::scenario
