#include "sim/config/config_tree.hpp"
#include "sim/config/node_override.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

namespace clustersim::config {

const ConfigNode* ConfigNode::find(std::string_view key) const {
  const ConfigEntry* entry = find_entry(key);
  return entry ? &entry->value : nullptr;
}

ConfigNode* ConfigNode::find(std::string_view key) {
  for (auto& entry : entries) {
    if (entry.key == key) return &entry.value;
  }
  return nullptr;
}

const ConfigEntry* ConfigNode::find_entry(std::string_view key) const {
  for (const auto& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

const ConfigNode* ConfigNode::find_path(std::string_view dotted_path) const {
  const ConfigNode* node = this;
  for (const auto& part : split_key_path(dotted_path)) {
    if (!node->is_mapping()) return nullptr;
    node = node->find(part);
    if (node == nullptr) return nullptr;
  }
  return node;
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : entries) out.push_back(entry.key);
  return out;
}

void ConfigNode::erase(std::string_view key) {
  std::erase_if(entries, [&](const ConfigEntry& entry) { return entry.key == key; });
}

ConfigNode& ConfigNode::set(std::string key, Position key_position, ConfigNode value) {
  if (ConfigNode* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  entries.push_back(ConfigEntry{std::move(key), std::move(key_position), std::move(value)});
  return entries.back().value;
}

std::string ConfigNode::describe() const {
  switch (kind) {
    case Kind::null: return "nothing";
    case Kind::scalar:  // a long one (a whole file read as text) is cut: its start says what it is
      return text.size() <= 80 ? "\"" + text + "\"" : "\"" + text.substr(0, 60) + "...\" (" + std::to_string(text.size()) + " characters)";
    case Kind::sequence: return "a list";
    case Kind::mapping: return "a mapping";
  }
  return "";
}

std::vector<std::string> split_key_path(std::string_view dotted_path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= dotted_path.size()) {
    const std::size_t dot = dotted_path.find('.', start);
    const std::size_t end = dot == std::string_view::npos ? dotted_path.size() : dot;
    parts.emplace_back(dotted_path.substr(start, end - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

namespace {

Position position_of(const YAML::Mark& mark, const std::string& file, const Position& fallback) {
  if (mark.line < 0 || mark.column < 0) return fallback;
  return Position{file, mark.line + 1, mark.column + 1};
}

/// How many more nodes a conversion may make. An alias repeats its anchor's whole subtree, so a
/// few lines of anchors and aliases (a "billion laughs") expand to more nodes than memory
/// holds; yaml-cpp shares the aliased nodes, the conversion would copy them.
struct NodeBudget {
  std::size_t left = kMaxConfigNodes;
  bool exceeded = false;
  /// The top-level key being converted: an aliased node's own mark is its anchor's, so the
  /// error points at the entry whose value expands instead.
  std::optional<ConfigEntry> top_entry;
};

ConfigNode convert(const YAML::Node& yaml, const std::string& file, const Position& fallback,
                   std::vector<Diagnostic>& diagnostics, NodeBudget& budget, int depth = 0) {
  ConfigNode node;
  node.position = position_of(yaml.Mark(), file, fallback);
  if (budget.exceeded) return node;
  if (budget.left == 0) {
    budget.exceeded = true;
    diagnostics.push_back(make_diagnostic(
        budget.top_entry ? budget.top_entry->key_position : node.position,
        budget.top_entry ? budget.top_entry->key : "",
        "the YAML expands to more than " + std::to_string(kMaxConfigNodes) +
            " nodes (each alias *name repeats its &name anchor's content: nested aliases multiply); a scenario "
            "needs far fewer"));
    return node;
  }
  --budget.left;
  switch (yaml.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      node.kind = ConfigNode::Kind::null;
      break;
    case YAML::NodeType::Scalar:
      node.kind = ConfigNode::Kind::scalar;
      node.text = yaml.Scalar();
      break;
    case YAML::NodeType::Sequence:
      node.kind = ConfigNode::Kind::sequence;
      for (const auto& item : yaml) node.items.push_back(convert(item, file, node.position, diagnostics, budget, depth + 1));
      break;
    case YAML::NodeType::Map:
      node.kind = ConfigNode::Kind::mapping;
      for (const auto& pair : yaml) {
        const Position key_position = position_of(pair.first.Mark(), file, node.position);
        if (!pair.first.IsScalar()) {
          diagnostics.push_back(make_diagnostic(key_position, "", "mapping keys must be plain names"));
          continue;
        }
        const std::string key = pair.first.Scalar();
        if (node.find(key) != nullptr) {
          diagnostics.push_back(make_diagnostic(key_position, key, "duplicate key '" + key + "'"));
          continue;
        }
        if (depth == 0) budget.top_entry = ConfigEntry{key, key_position, {}};
        node.entries.push_back(
            ConfigEntry{key, key_position, convert(pair.second, file, key_position, diagnostics, budget, depth + 1)});
      }
      break;
  }
  return node;
}

void set_position_recursive(ConfigNode& node, const Position& position) {
  node.position = position;
  for (auto& item : node.items) set_position_recursive(item, position);
  for (auto& entry : node.entries) {
    entry.key_position = position;
    set_position_recursive(entry.value, position);
  }
}

/// Line and column (1-based, in bytes) of `offset` in `text`.
Position position_at(std::string_view text, std::size_t offset, const std::string& file) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return Position{file, line, static_cast<int>(offset - line_start) + 1};
}

/// Length of the UTF-8 sequence starting at `text[i]`, or 0 when it is not valid UTF-8.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) >> 6) != 0x2) return 0;
  }
  return length;
}

}  // namespace

std::optional<Diagnostic> text_problem(std::string_view text, const std::string& file) {
  // UTF-16 and UTF-32 (with their byte-order mark) are YAML too; yaml-cpp decodes them.
  if (text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE") ||
      text.starts_with(std::string_view("\0\0\xFE\xFF", 4))) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      return make_diagnostic(position_at(text, i, file), "",
                             fmt::format("not a text (YAML) file: it holds the control byte 0x{:02X}, as binary "
                                         "files do",
                                         c));
    }
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      return make_diagnostic(position_at(text, i, file), "",
                             fmt::format("not a UTF-8 text (YAML) file: the byte 0x{:02X} starts no UTF-8 character "
                                         "(a binary file, or text in another encoding)",
                                         c));
    }
    i += length;
  }
  return std::nullopt;
}

namespace {

/// Reads `file` into `text`; on failure returns why (a folder, unreadable)
/// as a diagnostic for `shown` (the file as the user named it), reported at `where` unless the
/// problem has a line of its own.
std::optional<Diagnostic> read_text(const std::filesystem::path& file, const std::string& shown,
                                    const Position& where, const std::string& key, const std::string& what,
                                    std::string& text) {
  std::error_code error;
  if (std::filesystem::is_directory(file, error)) {
    return make_diagnostic(where, key, "'" + shown + "' is a folder, not a " + what + " file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return make_diagnostic(where, key,
                           "cannot read " + what + " file '" + shown + "'" +
                               (std::filesystem::exists(file, error) ? " (no permission)" : " (no such file)"));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return std::nullopt;
}

struct IncludeContext {
  std::filesystem::path data_dir;
  std::vector<std::filesystem::path> chain;  ///< canonical paths of the files being read
  std::vector<std::string> chain_names;      ///< the same, as displayed
  std::vector<Diagnostic>* diagnostics;
};

ConfigNode resolve_includes(ConfigNode node, const std::filesystem::path& folder,
                            IncludeContext& context);

/// `key` is what names the file: "include", or "base" for a derived system.
ConfigNode load_included(const std::filesystem::path& file, const std::string& display_name,
                         const ConfigNode& include_item, const std::string& key, IncludeContext& context) {
  std::error_code error;
  const auto canonical = std::filesystem::weakly_canonical(file, error);
  const auto in_chain = std::find(context.chain.begin(), context.chain.end(), canonical);
  if (in_chain != context.chain.end()) {
    std::string cycle;
    for (auto it = in_chain; it != context.chain.end(); ++it) {
      cycle += context.chain_names[static_cast<std::size_t>(it - context.chain.begin())] + " -> ";
    }
    cycle += display_name;
    context.diagnostics->push_back(make_diagnostic(include_item.position, key, key + " cycle: " + cycle));
    return {};
  }
  std::string text;
  if (auto problem = read_text(file, display_name, include_item.position, key, key, text)) {
    context.diagnostics->push_back(std::move(*problem));
    return {};
  }
  ConfigNode parsed = parse_config(text, display_name, *context.diagnostics);
  context.chain.push_back(canonical);
  context.chain_names.push_back(display_name);
  ConfigNode resolved = resolve_includes(std::move(parsed), file.parent_path(), context);
  context.chain.pop_back();
  context.chain_names.pop_back();
  return resolved;
}

/// The library system file a file's `base:` names (data_dir/systems/NAME.yaml), or nullopt
/// with a diagnostic naming the closest system.
std::optional<std::filesystem::path> base_system_file(const ConfigNode& base, IncludeContext& context) {
  if (!base.is_scalar()) {
    context.diagnostics->push_back(
        make_diagnostic(base.position, "base", "expected a system name, got " + base.describe()));
    return std::nullopt;
  }
  const std::filesystem::path folder = context.data_dir / "systems";
  const std::filesystem::path file = folder / (base.text + ".yaml");
  if (std::filesystem::is_regular_file(file)) return file;
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  context.diagnostics->push_back(make_diagnostic(base.position, "base", "unknown system '" + base.text + "'",
                                                 choices_hint("choices", names, closest_match(base.text, names))));
  return std::nullopt;
}

/// Merges the file `chosen` (included at `item`) into `merged`.
void merge_included(ConfigNode& merged, const std::filesystem::path& chosen, const ConfigNode& item,
                    const std::string& key, IncludeContext& context) {
  const ConfigNode included = load_included(chosen, chosen.lexically_normal().string(), item, key, context);
  if (included.is_mapping()) {
    merge_config(merged, included);
  } else if (included.is_scalar()) {  // plain text (any file parses as one scalar): not quoted back
    const auto words = std::count(included.text.begin(), included.text.end(), ' ') + 1;
    context.diagnostics->push_back(make_diagnostic(
        included.position, "",
        fmt::format("an included file must be a mapping of scenario keys; this one is plain text ({} characters, "
                    "{} words), not a scenario or preset file",
                    included.text.size(), words),
        "include names YAML files such as systems/dgx-h100.yaml"));
  } else if (!included.is_null()) {
    context.diagnostics->push_back(make_diagnostic(
        included.position, "", "an included file must be a mapping, got " + included.describe()));
  }
}

ConfigNode resolve_includes(ConfigNode node, const std::filesystem::path& folder,
                            IncludeContext& context) {
  if (!node.is_mapping()) return node;
  const ConfigEntry* include = node.find_entry("include");
  const ConfigEntry* base = node.find_entry("base");
  if (include == nullptr && base == nullptr) return node;
  ConfigNode merged;
  merged.kind = ConfigNode::Kind::mapping;
  merged.position = node.position;
  // A derived system: its base system underneath, then its includes, then itself.
  if (base != nullptr) {
    if (const auto file = base_system_file(base->value, context)) merge_included(merged, *file, base->value, "base", context);
    node.erase("base");
    include = node.find_entry("include");
  }
  std::vector<ConfigNode> paths;
  if (include == nullptr) {
    // no includes
  } else if (include->value.is_scalar()) {
    paths.push_back(include->value);
  } else if (include->value.is_sequence()) {
    for (const auto& item : include->value.items) {
      if (item.is_scalar()) {
        paths.push_back(item);
      } else {
        context.diagnostics->push_back(make_diagnostic(
            item.position, "include", "expected a file path, got " + item.describe()));
      }
    }
  } else {
    context.diagnostics->push_back(make_diagnostic(
        include->value.position, "include",
        "expected a file path or a list of file paths, got " + include->value.describe()));
  }
  for (const auto& item : paths) {
    const std::filesystem::path relative(item.text);
    const std::filesystem::path local = relative.is_absolute() ? relative : folder / relative;
    const std::filesystem::path library = context.data_dir / relative;
    std::filesystem::path chosen;
    if (std::filesystem::is_regular_file(local)) {
      chosen = local;
    } else if (!relative.is_absolute() && std::filesystem::is_regular_file(library)) {
      chosen = library;
    } else {
      std::string looked(1, '\'');
      looked += local.lexically_normal().string();
      looked += '\'';
      if (!relative.is_absolute()) looked += " and '" + library.lexically_normal().string() + "'";
      context.diagnostics->push_back(make_diagnostic(
          item.position, "include",
          "include file '" + item.text + "' not found (looked for " + looked + ")"));
      continue;
    }
    merge_included(merged, chosen, item, "include", context);
  }
  node.erase("include");
  merge_config(merged, node);
  return merged;
}

/// yaml-cpp's messages for a tab in the indentation ("illegal map value", "illegal tab when
/// looking for indentation", "end of map not found") do not say it is the tab: the last line at
/// or before `error_line` that indents with one, as a hint; "" when none does.
std::string tab_hint(std::string_view yaml, int error_line) {
  int line = 1;
  std::string hint;
  for (std::size_t start = 0; start <= yaml.size() && line <= error_line; ++line) {
    const std::size_t end = std::min(yaml.find('\n', start), yaml.size());
    const std::string_view text = yaml.substr(start, end - start);
    const std::size_t indent_end = std::min(text.find_first_not_of(" \t"), text.size());
    const std::size_t tab = text.substr(0, indent_end).find('\t');
    if (tab != std::string_view::npos) {
      hint = "line " + std::to_string(line) + " column " + std::to_string(tab + 1) +
             " indents with a tab: YAML indents with spaces only; replace the tab with spaces";
    }
    start = end + 1;
  }
  return hint;
}

}  // namespace

ConfigNode parse_config(std::string_view yaml, std::string_view file_name,
                        std::vector<Diagnostic>& diagnostics) {
  const std::string file(file_name);
  if (auto problem = text_problem(yaml, file)) {
    diagnostics.push_back(std::move(*problem));
    ConfigNode node;
    node.position = Position{file, 1, 1};
    return node;
  }
  try {
    const YAML::Node document = YAML::Load(std::string(yaml));
    NodeBudget budget;
    return convert(document, file, Position{file, 1, 1}, diagnostics, budget);
  } catch (const YAML::Exception& e) {
    Position position{file, 1, 1};
    if (!e.mark.is_null()) position = Position{file, e.mark.line + 1, e.mark.column + 1};
    diagnostics.push_back(make_diagnostic(position, "", "YAML syntax error: " + e.msg, tab_hint(yaml, position.line)));
    ConfigNode node;
    node.position = Position{file, 1, 1};
    return node;
  }
}

void merge_config(ConfigNode& base, const ConfigNode& overlay) {
  if (!base.is_mapping() || !overlay.is_mapping()) {
    base = overlay;
    return;
  }
  base.position = overlay.position;
  for (const auto& entry : overlay.entries) {
    if (ConfigNode* existing = base.find(entry.key)) {
      merge_config(*existing, entry.value);
      for (auto& base_entry : base.entries) {
        if (base_entry.key == entry.key) base_entry.key_position = entry.key_position;
      }
    } else {
      base.entries.push_back(entry);
    }
  }
}

std::filesystem::path library_data_dir() {
  if (const char* from_env = std::getenv("CLUSTERSIM_DATA"); from_env && *from_env) {
    return from_env;
  }
#ifdef CLUSTERSIM_DATA_DIR
  return CLUSTERSIM_DATA_DIR;
#else
  return "models/data";
#endif
}

ConfigNode load_config_file(const std::filesystem::path& file, const std::filesystem::path& data_dir,
                            std::vector<Diagnostic>& diagnostics) {
  std::string text;
  if (auto problem = read_text(file, file.string(), Position{file.string(), 0, 0}, "", "scenario", text)) {
    diagnostics.push_back(std::move(*problem));
    return {};
  }
  IncludeContext context{data_dir, {}, {}, &diagnostics};
  std::error_code error;
  context.chain.push_back(std::filesystem::weakly_canonical(file, error));
  context.chain_names.push_back(file.string());
  return resolve_includes(parse_config(text, file.string(), diagnostics), file.parent_path(),
                          context);
}

ConfigNode load_config_string(std::string_view yaml, std::string_view file_name,
                              const std::filesystem::path& data_dir,
                              std::vector<Diagnostic>& diagnostics) {
  const std::filesystem::path file(file_name);
  IncludeContext context{data_dir, {}, {}, &diagnostics};
  std::error_code error;
  context.chain.push_back(std::filesystem::weakly_canonical(file, error));
  context.chain_names.push_back(std::string(file_name));
  const std::filesystem::path folder =
      file.has_parent_path() ? file.parent_path() : std::filesystem::current_path();
  return resolve_includes(parse_config(yaml, file_name, diagnostics), folder, context);
}

Position position_of(const ConfigNode& root, std::string_view dotted_path) {
  auto parts = split_key_path(dotted_path);
  while (!parts.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < parts.size(); ++i) joined += (i > 0 ? "." : "") + parts[i];
    if (const ConfigNode* found = root.find_path(joined); found != nullptr && !found->is_null()) {
      return found->position;
    }
    parts.pop_back();
  }
  return root.position;
}

bool has_value(const ConfigNode& root, std::string_view dotted_path) {
  const ConfigNode* found = root.find_path(dotted_path);
  return found != nullptr && !found->is_null();
}

namespace {

/// The unknown key of an override that may not be set: the first component of `parts` that is
/// neither written in `root` nor declared, with the keys valid there.
Diagnostic unknown_override_key(
    const ConfigNode& root, const std::vector<std::string>& parts, const Position& position, const std::string& shown,
    const std::function<bool(const std::vector<std::string>&)>& is_known_path,
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& declared_keys) {
  const ConfigNode* node = &root;
  std::vector<std::string> prefix;
  std::size_t i = 0;
  for (; i + 1 < parts.size(); ++i) {
    prefix.push_back(parts[i]);
    const ConfigNode* child = node != nullptr && node->is_mapping() ? node->find(parts[i]) : nullptr;
    if (child == nullptr && !(is_known_path && is_known_path(prefix))) {
      prefix.pop_back();
      break;
    }
    node = child;
  }
  std::vector<std::string> valid = declared_keys ? declared_keys(prefix) : std::vector<std::string>{};
  if (node != nullptr && node->is_mapping()) {
    for (const std::string& key : node->keys()) {
      if (std::find(valid.begin(), valid.end(), key) == valid.end()) valid.push_back(key);
    }
  }
  std::string walked;
  for (std::size_t j = 0; j <= i; ++j) walked += (j > 0 ? "." : "") + parts[j];
  return make_diagnostic(position, walked, "unknown key '" + parts[i] + "' in " + shown,
                         choices_hint("keys", valid, closest_match(parts[i], valid)));
}

}  // namespace

void apply_set_override(
    ConfigNode& root, std::string_view set_text, std::vector<Diagnostic>& diagnostics,
    const std::function<bool(const std::vector<std::string>&)>& is_known_path,
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& declared_keys) {
  const Position command_line{"<command line>", 0, 0};
  const std::string shown = "--set " + std::string(set_text);
  const std::size_t equals = set_text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    diagnostics.push_back(make_diagnostic(
        command_line, "", "expected --set key.path=value, got '" + std::string(set_text) + "'"));
    return;
  }
  const std::string key_path(set_text.substr(0, equals));
  const std::string value_text(set_text.substr(equals + 1));

  const Position value_position{shown, 0, 0};
  std::vector<Diagnostic> value_problems;
  ConfigNode value = parse_config(value_text, shown, value_problems);
  if (!value_problems.empty()) {
    diagnostics.push_back(make_diagnostic(value_position, key_path,
                                          "cannot parse the value '" + value_text + "' as YAML"));
    return;
  }
  set_position_recursive(value, value_position);
  if (value.is_null()) {
    diagnostics.push_back(make_diagnostic(value_position, key_path, "missing value after '='"));
    return;
  }
  apply_node_override(root, key_path, command_line, value, shown, diagnostics, is_known_path, declared_keys);
}

void apply_node_override(
    ConfigNode& root, std::string_view key_path, const Position& key_position, const ConfigNode& value,
    const std::string& shown, std::vector<Diagnostic>& diagnostics,
    const std::function<bool(const std::vector<std::string>&)>& is_known_path,
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& declared_keys) {
  const auto parts = split_key_path(key_path);
  if (parts.empty()) {
    diagnostics.push_back(make_diagnostic(key_position, "", "empty key path in " + shown));
    return;
  }
  const bool known = is_known_path && is_known_path(parts);
  ConfigNode* node = &root;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    walked += (i > 0 ? "." : "") + part;
    if (!node->is_mapping()) {
      if (known && node->is_null()) {
        node->kind = ConfigNode::Kind::mapping;
      } else {
        diagnostics.push_back(make_diagnostic(key_position, walked,
                                              "cannot set a key inside " + node->describe() + " in " + shown));
        return;
      }
    }
    if (i + 1 == parts.size()) {
      if (node->find(part) == nullptr && !known) break;
      node->set(part, value.position, value);
      return;
    }
    ConfigNode* child = node->find(part);
    if (child == nullptr) {
      if (!known) break;
      ConfigNode empty;
      empty.kind = ConfigNode::Kind::mapping;
      empty.position = value.position;
      child = &node->set(part, value.position, std::move(empty));
    }
    node = child;
  }
  diagnostics.push_back(unknown_override_key(root, parts, key_position, shown, is_known_path, declared_keys));
}

}  // namespace clustersim::config
