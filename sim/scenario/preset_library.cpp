#include "sim/scenario/preset_library.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
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

/// The name an entry's `base:` gives, if it is a plain name.
std::optional<std::string> base_of(const ConfigNode* entry) {
  const ConfigNode* base = entry != nullptr && entry->is_mapping() ? entry->find("base") : nullptr;
  if (base == nullptr || !base->is_scalar()) return std::nullopt;
  return base->text;
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

/// Library entries of every name the scenario reaches: its own entries, the reference, and
/// the bases of those (transitively).
ConfigNode library_entries(const ConfigNode& root, LibraryKind kind, std::string_view section,
                           std::string_view reference_path, const std::filesystem::path& data_dir,
                           std::vector<Diagnostic>& diagnostics) {
  const ConfigNode* own = root.find(section);
  std::vector<std::string> pending;
  if (own != nullptr && own->is_mapping()) pending = own->keys();
  // Each ';'-separated reference path; a '*' segment stands for every key of a mapping
  // ("workload.pools.*.accelerator").
  std::vector<const ConfigNode*> level;
  for (std::string_view rest = reference_path; !rest.empty();) {
    const std::size_t end = std::min(rest.find(';'), rest.size());
    const std::string one(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
    level = {&root};
    std::size_t start = 0;
    while (start <= one.size() && !level.empty()) {
      const std::size_t dot = std::min(one.find('.', start), one.size());
      const std::string part = one.substr(start, dot - start);
      std::vector<const ConfigNode*> next;
      for (const ConfigNode* node : level) {
        if (node == nullptr || !node->is_mapping()) continue;
        if (part == "*") {
          for (const std::string& key : node->keys()) next.push_back(node->find(key));
        } else if (const ConfigNode* child = node->find(part)) {
          next.push_back(child);
        }
      }
      level = std::move(next);
      start = dot + 1;
    }
    for (const ConfigNode* reference : level) {
      if (reference != nullptr && reference->is_scalar()) pending.push_back(reference->text);
    }
  }
  ConfigNode entries = empty_mapping(root.position);
  std::set<std::string> looked;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const std::string name = pending[i];
    if (!looked.insert(name).second) continue;
    const ConfigNode* own_entry = own != nullptr && own->is_mapping() ? own->find(name) : nullptr;
    if (const auto base = base_of(own_entry)) pending.push_back(*base);
    if (auto entry = library_entry(kind, section, name, data_dir, diagnostics)) {
      if (const auto base = base_of(&entry->value)) pending.push_back(*base);
      entries.set(name, entry->key_position, entry->value);
    }
  }
  return entries;
}

struct BaseContext {
  std::string_view section;
  std::vector<std::string> library;  ///< the library's names of this kind, for the near-miss
  std::vector<Diagnostic>* diagnostics;
};

/// Resolves the `base:` of entry `name` of `map` (and of its bases first); `chain` holds the
/// entries being resolved, to find cycles.
void resolve_base(ConfigNode& map, const std::string& name, std::vector<std::string>& chain, BaseContext& context) {
  ConfigNode* entry = map.find(name);
  const ConfigNode* base = entry != nullptr && entry->is_mapping() ? entry->find("base") : nullptr;
  if (base == nullptr) return;
  const std::string key = std::string(context.section) + "." + name + ".base";
  const config::Position at = base->position;
  const std::string base_name = base->is_scalar() ? base->text : "";
  chain.push_back(name);
  if (!base->is_scalar()) {
    context.diagnostics->push_back(make_diagnostic(at, key, "expected a preset name, got " + base->describe()));
  } else if (std::find(chain.begin(), chain.end(), base_name) != chain.end()) {
    std::string cycle;
    for (auto it = std::find(chain.begin(), chain.end(), base_name); it != chain.end(); ++it) cycle += *it + " -> ";
    context.diagnostics->push_back(make_diagnostic(at, key, "base cycle: " + cycle + base_name));
  } else if (map.find(base_name) == nullptr) {
    std::vector<std::string> names = context.library;
    for (const std::string& own : map.keys()) names.push_back(own);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    context.diagnostics->push_back(make_diagnostic(at, key, "unknown base '" + base_name + "'",
                                                   config::choices_hint("choices", names,
                                                                        config::closest_match(base_name, names))));
  } else {
    resolve_base(map, base_name, chain, context);
    ConfigNode derived = *map.find(base_name);
    ConfigNode own = *map.find(name);
    own.erase("base");
    config::merge_config(derived, own);
    *map.find(name) = std::move(derived);
    chain.pop_back();
    return;
  }
  map.find(name)->erase("base");  // reported: read the entry as it is
  chain.pop_back();
}

}  // namespace

const config::NameTable<LibraryKind>& library_kind_names() {
  static const config::NameTable<LibraryKind> names{"preset kind",
                                                    {{"accelerators", LibraryKind::accelerators},
                                                     {"models", LibraryKind::models},
                                                     {"systems", LibraryKind::systems},
                                                     {"stacks", LibraryKind::stacks}}};
  return names;
}

std::string_view library_folder(LibraryKind kind) {
  switch (kind) {
    case LibraryKind::accelerators: return "accelerators";
    case LibraryKind::models: return "llms";
    case LibraryKind::systems: return "systems";
    case LibraryKind::stacks: return "stacks";
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

std::vector<std::pair<std::string, std::string>> library_model_aliases(const std::filesystem::path& data_dir) {
  std::vector<std::pair<std::string, std::string>> aliases;
  for (const std::string& name : library_names(LibraryKind::models, data_dir)) {
    std::vector<Diagnostic> problems;  // a malformed file is reported when a scenario uses it
    const auto entry = library_entry(LibraryKind::models, "models", name, data_dir, problems);
    const ConfigNode* list = entry && entry->value.is_mapping() ? entry->value.find("aliases") : nullptr;
    if (list == nullptr || !list->is_sequence()) continue;
    for (const ConfigNode& item : list->items) {
      if (item.is_scalar()) aliases.emplace_back(item.text, name);
    }
  }
  return aliases;
}

std::string model_name_key(const std::string& name) {
  std::string key;
  for (const unsigned char c : name) {
    if (c != '-' && c != '_' && c != ' ') key += static_cast<char>(std::tolower(c));
  }
  return key;
}

std::string library_model_named(const std::string& name, const std::filesystem::path& data_dir) {
  if (name.empty()) return "";
  const std::string key = model_name_key(name);
  for (const auto& preset : library_names(LibraryKind::models, data_dir)) {
    if (model_name_key(preset) == key) return preset;
  }
  // The aliases, read once per data dir (every row of a dataset asks).
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::pair<std::string, std::string>>> read;
  const std::lock_guard<std::mutex> lock(mutex);
  auto aliases = read.find(data_dir.string());
  if (aliases == read.end()) aliases = read.emplace(data_dir.string(), library_model_aliases(data_dir)).first;
  for (const auto& [alias, preset] : aliases->second) {
    if (model_name_key(alias) == key) return preset;
  }
  return "";
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
  BaseContext context{section, library_names(kind, data_dir), &diagnostics};
  for (const std::string& name : section_node.keys()) {
    std::vector<std::string> chain;
    if (section_node.find(name)->is_mapping()) resolve_base(section_node, name, chain, context);
  }
  if (ConfigNode* existing = root.find(section)) {
    *existing = section_node;
  } else {
    root.set(std::string(section), root.position, section_node);
  }
}

/// Was `value` written outside the library file of its preset kind (by the scenario, an
/// include, a --set, or a derived preset of the scenario)?
bool written_by_scenario(const config::ConfigNode& value, const std::filesystem::path& data_dir, LibraryKind kind) {
  const std::filesystem::path folder = std::filesystem::path(value.position.file).parent_path().lexically_normal();
  // A kernel stack (simulation.kernel_stack) and a feasibility preset write accelerator settings
  // from their library files.
  if (kind == LibraryKind::accelerators && (folder == (data_dir / library_folder(LibraryKind::stacks)).lexically_normal() ||
                                            folder == (data_dir / kProjectedFolder).lexically_normal())) {
    return false;
  }
  return folder != (data_dir / library_folder(kind)).lexically_normal();
}

}  // namespace clustersim::scenario
