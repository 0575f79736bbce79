#pragma once
/// A declarative schema of configuration fields (key, kind, range, choices, unit, default,
/// help), the validator that checks a ConfigNode against it, and the Markdown reference
/// generated from it. Fields are made by declarations (declarations.hpp), which bind each key
/// to the member it sets.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/config/units.hpp"

namespace clustersim::config {

/// What a field's value is.
enum class FieldKind {
  integer,           ///< whole number within [min, max]
  number,            ///< real number within [min, max]
  boolean,           ///< true / false
  string,            ///< any scalar
  enumeration,       ///< one of `choices`
  quantity,          ///< "<number> <unit>" of `dimension`
  object,            ///< mapping with `fields`
  map_of_objects,    ///< mapping name -> object with `fields`
  list,              ///< list of scalars (a single scalar is accepted as a one-item list)
  string_or_object,  ///< a name, or an inline object with `fields`
};

/// One documented field of the schema.
struct Field {
  std::string key;
  FieldKind kind = FieldKind::string;
  std::string help;
  bool required = false;
  std::string default_text;  ///< default as it would be written in YAML; empty: none
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;        ///< range is (min, max] instead of [min, max]
  std::vector<std::string> choices;  ///< enumeration values
  Dimension dimension = Dimension::bytes;  ///< quantity dimension
  std::vector<Field> fields;               ///< object / map_of_objects / string_or_object
  /// map_of_objects: its entries are checked by their owner (each against the fields of the
  /// kind it names), not against `fields`; object: only the keys in `fields` are checked.
  bool open = false;

  // Fluent setters for building schemas (on a temporary, or on a declared key's Field).
  Field&& need() && { return std::move(need()); }
  Field&& def(std::string text) && { return std::move(def(std::move(text))); }
  Field&& range(double low, double high) && { return std::move(range(low, high)); }
  Field&& positive() && { return std::move(positive()); }
  Field& need() & {
    required = true;
    default_text.clear();  // a required key has no default
    return *this;
  }
  Field& def(std::string text) & {
    default_text = std::move(text);
    return *this;
  }
  Field& range(double low, double high) & {
    min = low;
    max = high;
    return *this;
  }
  Field& positive() & {
    min = 0;
    min_exclusive = true;
    return *this;
  }
  /// No default: an absent key leaves its member's "unset" value (the help says what that means).
  Field& optional() & {
    default_text.clear();
    return *this;
  }
};

Field integer_field(std::string key, std::string help);
Field number_field(std::string key, std::string help);
Field boolean_field(std::string key, std::string help);
Field string_field(std::string key, std::string help);
Field enum_field(std::string key, std::vector<std::string> choices, std::string help);
Field quantity_field(std::string key, Dimension dimension, std::string help);
Field object_field(std::string key, std::vector<Field> fields, std::string help);
Field map_field(std::string key, std::vector<Field> fields, std::string help);
Field list_field(std::string key, std::string help);
Field string_or_object_field(std::string key, std::vector<Field> fields, std::string help);
/// A map of name -> mapping whose entries its owner checks (Field::open).
Field open_map_field(std::string key, std::string help);

/// A titled set of top-level fields.
struct Schema {
  std::string title;
  std::vector<Field> fields;
};

/// The field at a dotted path ("workload.parallelism.tp"); map_of_objects consume one
/// free-form name component ("accelerators.h100-sxm.memory"). nullptr if unknown.
const Field* find_field(const std::vector<Field>& fields, const std::vector<std::string>& path);

/// Checks `node` (a mapping) against `fields`, appending every problem to `diagnostics`:
/// unknown keys (with the closest valid key), wrong types, missing units, wrong dimensions,
/// out-of-range values, bad enum values and missing required keys. `prefix` is the dotted
/// path of `node` ("" for the root).
void validate(const ConfigNode& node, const std::vector<Field>& fields, const std::string& prefix,
              std::vector<Diagnostic>& diagnostics);

/// Parses an integer scalar ("8", "-3"); nullopt if not a whole number.
std::optional<std::int64_t> parse_integer(std::string_view text);
/// Parses a real scalar ("0.85", "1e-3"); nullopt if not a number.
std::optional<double> parse_number(std::string_view text);
/// Parses true/false (also yes/no, on/off, any case); nullopt otherwise.
std::optional<bool> parse_boolean(std::string_view text);

/// Human name of a field's type and unit for docs: "integer >= 1", "bandwidth (B/s)",
/// "one of: a, b".
std::string describe_type(const Field& field);

/// The Markdown reference of `schema`: one table per top-level section (key, type/unit,
/// default, description).
std::string render_markdown(const Schema& schema);

}  // namespace clustersim::config
