#pragma once
/// A YAML document as a position-carrying tree: every node and every mapping key remembers
/// file:line:column, so diagnostics can point at the exact spot. Also: reading files,
/// deep merge, `include:` resolution and `--set key.path=value` overrides.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/diagnostics.hpp"

namespace clustersim::config {

struct ConfigEntry;

/// One YAML node: null, scalar (kept as text), sequence or mapping (keys in document order).
struct ConfigNode {
  enum class Kind { null, scalar, sequence, mapping };
  Kind kind = Kind::null;
  Position position;
  std::string text;                 ///< scalar text (as written, without quotes)
  std::vector<ConfigNode> items;    ///< sequence items
  std::vector<ConfigEntry> entries; ///< mapping entries, document order, unique keys

  bool is_null() const { return kind == Kind::null; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_sequence() const { return kind == Kind::sequence; }
  bool is_mapping() const { return kind == Kind::mapping; }

  /// The entry's value for `key` in a mapping, or nullptr.
  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  /// The entry for `key` in a mapping, or nullptr.
  const ConfigEntry* find_entry(std::string_view key) const;
  /// Follows a dotted path of mapping keys; nullptr if any step is missing.
  const ConfigNode* find_path(std::string_view dotted_path) const;
  /// Keys of a mapping in document order.
  std::vector<std::string> keys() const;
  /// Removes `key` from a mapping (no-op when absent).
  void erase(std::string_view key);
  /// Sets `key` (appended if new) and returns the stored value.
  ConfigNode& set(std::string key, Position key_position, ConfigNode value);
  /// Short description for messages: the scalar text, "a mapping", "a list" or "nothing".
  std::string describe() const;
};

/// A mapping entry: the key, where the key is written, and the value.
struct ConfigEntry {
  std::string key;
  Position key_position;
  ConfigNode value;
};

/// Splits "a.b.c" into {"a", "b", "c"}.
std::vector<std::string> split_key_path(std::string_view dotted_path);

/// The most nodes one parsed YAML text may expand to (aliases repeat their anchor's content).
inline constexpr std::size_t kMaxConfigNodes = 100'000;

/// Why `text` (the content of `file`) is not YAML text, at the first offending byte: a control
/// byte (NUL and the like: a binary file) or a byte that starts no UTF-8 character. nullopt
/// for text (UTF-16/32 with a byte-order mark pass through to the parser).
std::optional<Diagnostic> text_problem(std::string_view text, const std::string& file);

/// Parses YAML text; `file_name` is the file reported in positions. A syntax error, text that
/// is not text (text_problem) or a document past kMaxConfigNodes becomes a diagnostic in
/// `diagnostics` (with its position) and a null (or cut) node is returned.
ConfigNode parse_config(std::string_view yaml, std::string_view file_name,
                        std::vector<Diagnostic>& diagnostics);

/// Deep merge: maps merge recursively, anything else in `overlay` replaces `base`.
void merge_config(ConfigNode& base, const ConfigNode& overlay);

/// The library data folder: env CLUSTERSIM_DATA when set, else the build's CLUSTERSIM_DATA_DIR.
std::filesystem::path library_data_dir();

/// Reads a YAML file and resolves its `include:` (a path or a list of paths, resolved against
/// the including file's folder first, then `data_dir`): included files merge first, in order,
/// then the including file on top; nested includes work; cycles and missing files become
/// diagnostics. A file's top-level `base: NAME` (a derived system) merges the library system
/// `data_dir`/systems/NAME.yaml underneath it, before its includes; an unknown name is a
/// diagnostic with the closest system. The returned tree has no `include` or `base` keys.
ConfigNode load_config_file(const std::filesystem::path& file, const std::filesystem::path& data_dir,
                            std::vector<Diagnostic>& diagnostics);

/// Like load_config_file for in-memory text named `file_name`; relative includes resolve
/// against the parent folder of `file_name` (or the current folder).
ConfigNode load_config_string(std::string_view yaml, std::string_view file_name,
                              const std::filesystem::path& data_dir,
                              std::vector<Diagnostic>& diagnostics);

/// Position of the value at `dotted_path` if it is written (not null), else of its closest
/// written ancestor (`root` at worst).
Position position_of(const ConfigNode& root, std::string_view dotted_path);
/// True if `dotted_path` holds a value (present and not null).
bool has_value(const ConfigNode& root, std::string_view dotted_path);

/// Applies one `--set key.path=value` to `root`. The key path must exist in `root`, or
/// `is_known_path` must accept it (then missing mappings are created). The value is parsed
/// as YAML (scalar, flow list or flow map) with position "--set <text>". Problems become
/// diagnostics at "<command line>": an unknown key is the first component neither written nor
/// declared, with the closest of the keys `declared_keys` lists under its parent path (and of
/// those written there).
void apply_set_override(
    ConfigNode& root, std::string_view set_text, std::vector<Diagnostic>& diagnostics,
    const std::function<bool(const std::vector<std::string>&)>& is_known_path = {},
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& declared_keys = {});

}  // namespace clustersim::config
