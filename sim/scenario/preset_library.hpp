#pragma once
/// The preset library (models/data: accelerators/, llms/, systems/) as a scenario sees it:
/// library entries merged underneath the scenario's own, and derived presets (`base:`).
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/config/name_table.hpp"

namespace clustersim::scenario {

/// The kinds of library files (folders of the data dir: accelerators, llms, systems, stacks).
enum class LibraryKind { accelerators, models, systems, stacks };

/// The kinds by the names `clustersim list` and `clustersim.presets()` take: accelerators, models,
/// systems, stacks.
const config::NameTable<LibraryKind>& library_kind_names();

/// The data-dir folder of `kind`: "accelerators", "llms", "systems", "stacks".
std::string_view library_folder(LibraryKind kind);
/// The library folder of feasibility presets (models/data/projected): parts and settings not
/// shipping yet, derived with `base:` from calibrated presets, which a scenario includes
/// (`include: [projected/rubin.yaml]`). Their accelerator settings are the library's, not the
/// scenario's.
inline constexpr std::string_view kProjectedFolder = "projected";

/// Preset names of `kind` (file stems in the data dir), sorted.
std::vector<std::string> library_names(LibraryKind kind,
                                       const std::filesystem::path& data_dir = config::library_data_dir());

/// Every (alias, preset) pair of the model library: the `aliases` lists of models/data/llms
/// (Hugging Face ids, release names).
std::vector<std::pair<std::string, std::string>> library_model_aliases(
    const std::filesystem::path& data_dir = config::library_data_dir());

/// A model name compared as a measurement gives it: lower case, without '-', '_' and spaces
/// ("LLAMA3-8B" is "llama38b").
std::string model_name_key(const std::string& name);

/// The library model preset `name` refers to: its name or one of its aliases, compared by
/// model_name_key; "" for none.
std::string library_model_named(const std::string& name,
                                const std::filesystem::path& data_dir = config::library_data_dir());

/// Completes the preset map `section` of `root` ("accelerators" or "models"): the library
/// entry of every preset the scenario names (an entry of its own, the one at `reference_path`,
/// a base) goes underneath the scenario's own entry, so a scenario overrides single fields; then
/// `reference_path` may list several paths separated by ';', and a '*' segment matches every key
/// of a mapping ("workload.pools.*.accelerator"). Then every entry with `base: NAME` becomes NAME's (resolved) entry with its own keys on top, so a
/// derived preset keeps everything of its base it does not set. An unknown base (with the
/// closest name) and a cycle of bases are diagnostics at the `base` key.
/// Was `value` written outside the library file of its preset kind (by the scenario, an
/// include, a --set, or a derived preset of the scenario)? A kernel stack's settings
/// (models/data/stacks) count as the accelerator library's.
bool written_by_scenario(const config::ConfigNode& value, const std::filesystem::path& data_dir, LibraryKind kind);

void merge_library_presets(config::ConfigNode& root, LibraryKind kind, std::string_view section,
                           std::string_view reference_path, const std::filesystem::path& data_dir,
                           std::vector<config::Diagnostic>& diagnostics);

}  // namespace clustersim::scenario
