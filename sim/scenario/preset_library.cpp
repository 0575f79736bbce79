#include "sim/scenario/preset_library.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace clustersim::scenario {
namespace {

using config::ConfigEntry;
using config::ConfigNode;
using config::Diagnostic;
using config::make_diagnostic;

ConfigNode empty_mapping(const config::Position& position) {
  ConfigNode node;
  node.kind = ConfigNode::Kind::mapping;
  node.position = position;
  return node;
}

/// The library entry `name` of `section` (in its own file), or nullopt (with a diagnostic when
/// the file exists but lacks the entry).
std::optional<ConfigEntry> library_entry(LibraryKind kind, std::string_view section, const std::string& name,
                                         const std::filesystem::path& data_dir, std::vector<Diagnostic>& diagnostics) {
  const auto file = data_dir / library_folder(kind) / (name + ".yaml");
  if (!std::filesystem::is_regular_file(file)) return std::nullopt;
  std::vector<Diagnostic> file_problems;
  const ConfigNode preset = config::load_config_file(file, data_dir, file_problems);
  diagnostics.insert(diagnostics.end(), file_problems.begin(), file_problems.end());
  const ConfigNode* map = preset.is_mapping() ? preset.find(section) : nullptr;
  const ConfigEntry* entry = map != nullptr && map->is_mapping() ? map->find_entry(name) : nullptr;
  if (entry == nullptr) {
    if (file_problems.empty()) {
      diagnostics.push_back(make_diagnostic(preset.position, std::string(section),
                                            "library file has no entry '" + name + "' under '" +
                                                std::string(section) + ":'"));
    }
    return std::nullopt;
  }
  return *entry;
}

/// Library entries of every name the scenario reaches: its own entries and the reference.
ConfigNode library_entries(const ConfigNode& root, LibraryKind kind, std::string_view section,
                           std::string_view reference_path, const std::filesystem::path& data_dir,
                           std::vector<Diagnostic>& diagnostics) {
  const ConfigNode* own = root.find(section);
  std::vector<std::string> pending;
  if (own != nullptr && own->is_mapping()) pending = own->keys();
  if (const ConfigNode* reference = root.find_path(reference_path); reference != nullptr && reference->is_scalar()) {
    pending.push_back(reference->text);
  }
  ConfigNode entries = empty_mapping(root.position);
  std::set<std::string> looked;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const std::string name = pending[i];
    if (!looked.insert(name).second) continue;
    if (auto entry = library_entry(kind, section, name, data_dir, diagnostics)) {
      entries.set(name, entry->key_position, entry->value);
    }
  }
  return entries;
}

}  // namespace

std::string_view library_folder(LibraryKind kind) {
  switch (kind) {
    case LibraryKind::accelerators: return "accelerators";
    case LibraryKind::models: return "llms";
    case LibraryKind::systems: return "systems";
  }
  return "";
}

std::vector<std::string> library_names(LibraryKind kind, const std::filesystem::path& data_dir) {
  std::vector<std::string> names;
  const auto folder = data_dir / library_folder(kind);
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

void merge_library_presets(ConfigNode& root, LibraryKind kind, std::string_view section,
                           std::string_view reference_path, const std::filesystem::path& data_dir,
                           std::vector<Diagnostic>& diagnostics) {
  const ConfigNode* own = root.find(section);
  if (own != nullptr && !own->is_mapping()) return;  // not a mapping: the validator reports it
  ConfigNode library = library_entries(root, kind, section, reference_path, data_dir, diagnostics);
  if (library.entries.empty() && own == nullptr) return;
  ConfigNode merged = empty_mapping(root.position);
  ConfigNode& section_node = merged.set(std::string(section), root.position, std::move(library));
  if (own != nullptr) config::merge_config(section_node, *own);
  if (ConfigNode* existing = root.find(section)) {
    *existing = section_node;
  } else {
    root.set(std::string(section), root.position, section_node);
  }
}

}  // namespace clustersim::scenario
