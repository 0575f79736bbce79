#pragma once
/// Loading a scenario: YAML file (+ includes, + --set overrides) -> validated Scenario, and
/// the catalog behind `clustersim list` / `clustersim describe`.
#include <filesystem>
#include <optional>
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

/// Where a scenario's YAML comes from: a file, or text held in memory (the Python module's
/// `clustersim.load(text)`) with the name its positions carry. What a search, a capacity search
/// or a sweep reloads with each candidate's overrides.
class ScenarioSource {
 public:
  /// A file (implicit: every path is a source).
  ScenarioSource(const std::filesystem::path& file);  // NOLINT(google-explicit-constructor)
  ScenarioSource(const std::string& file) : ScenarioSource(std::filesystem::path(file)) {}  // NOLINT
  ScenarioSource(const char* file) : ScenarioSource(std::filesystem::path(file)) {}         // NOLINT
  /// YAML text; `virtual_file_name` is used in positions and its folder (if any) resolves
  /// relative includes.
  static ScenarioSource text(std::string yaml, std::string virtual_file_name);

  /// The file's path or the text's virtual name.
  const std::string& name() const { return name_; }
  /// load_scenario / load_scenario_from_string of this source.
  Scenario load(const std::vector<std::string>& set_overrides = {},
                const std::filesystem::path& data_dir = config::library_data_dir()) const;
  /// The merged tree (includes and `base:` resolved, nothing validated): load_config_file /
  /// load_config_string of this source.
  config::ConfigNode tree(const std::filesystem::path& data_dir, std::vector<config::Diagnostic>& diagnostics) const;

 private:
  ScenarioSource() = default;
  std::string name_;
  std::optional<std::string> text_;  ///< the YAML when it is not read from `name_`
};

/// The platform of `source` without a workload: its `cluster`, `power`, `cost` and `simulation`
/// (presets, includes, `base:` and `--set` overrides) read and checked as load_scenario does,
/// `workload` and `jobs` optional and, when written, not read (a notice in the result's
/// `notices`). The result has no workload. For commands that need only the hardware (a
/// collective sweep, an accelerator preset, the nccl-tests comparison); build its Platform with
/// runner::build_platform or platform::Platform(result.platform). Throws
/// config::ScenarioError as load_scenario does.
Scenario load_platform(const ScenarioSource& source, const std::vector<std::string>& set_overrides = {},
                       const std::filesystem::path& data_dir = config::library_data_dir());

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
