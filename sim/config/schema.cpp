#include "sim/config/schema.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace clustersim::config {

namespace {
Field make_field(std::string key, FieldKind kind, std::string help) {
  Field field;
  field.key = std::move(key);
  field.kind = kind;
  field.help = std::move(help);
  return field;
}

std::string join_path(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string format_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}
}  // namespace

Field integer_field(std::string key, std::string help) {
  return make_field(std::move(key), FieldKind::integer, std::move(help));
}
Field number_field(std::string key, std::string help) {
  return make_field(std::move(key), FieldKind::number, std::move(help));
}
Field boolean_field(std::string key, std::string help) {
  return make_field(std::move(key), FieldKind::boolean, std::move(help));
}
Field string_field(std::string key, std::string help) {
  return make_field(std::move(key), FieldKind::string, std::move(help));
}
Field enum_field(std::string key, std::vector<std::string> choices, std::string help) {
  Field field = make_field(std::move(key), FieldKind::enumeration, std::move(help));
  field.choices = std::move(choices);
  return field;
}
Field quantity_field(std::string key, Dimension dimension, std::string help) {
  Field field = make_field(std::move(key), FieldKind::quantity, std::move(help));
  field.dimension = dimension;
  return field;
}
Field object_field(std::string key, std::vector<Field> fields, std::string help) {
  Field field = make_field(std::move(key), FieldKind::object, std::move(help));
  field.fields = std::move(fields);
  return field;
}
Field map_field(std::string key, std::vector<Field> fields, std::string help) {
  Field field = make_field(std::move(key), FieldKind::map_of_objects, std::move(help));
  field.fields = std::move(fields);
  return field;
}
Field open_map_field(std::string key, std::string help) {
  Field field = make_field(std::move(key), FieldKind::map_of_objects, std::move(help));
  field.open = true;
  return field;
}
Field list_field(std::string key, std::string help) {
  return make_field(std::move(key), FieldKind::list, std::move(help));
}
Field string_or_object_field(std::string key, std::vector<Field> fields, std::string help) {
  Field field = make_field(std::move(key), FieldKind::string_or_object, std::move(help));
  field.fields = std::move(fields);
  return field;
}

const Field* find_field(const std::vector<Field>& fields, const std::vector<std::string>& path) {
  const std::vector<Field>* level = &fields;
  const Field* found = nullptr;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto it = std::find_if(level->begin(), level->end(),
                                 [&](const Field& field) { return field.key == path[i]; });
    if (it == level->end()) return nullptr;
    found = &*it;
    if (found->kind == FieldKind::map_of_objects) {
      if (i + 1 == path.size()) return found;
      ++i;  // the free-form entry name
    }
    level = &found->fields;
  }
  return found;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || stop != end || begin == end) return std::nullopt;
  return value;
}

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || stop != end || begin == end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<bool> parse_boolean(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

namespace {

std::string range_text(const Field& field) {
  const bool has_min = std::isfinite(field.min);
  const bool has_max = std::isfinite(field.max);
  if (has_min && has_max && !field.min_exclusive) {
    if (field.min == field.max) return "must be " + format_number(field.min);
    return "must be between " + format_number(field.min) + " and " + format_number(field.max);
  }
  std::string out;
  if (has_min) out += std::string(field.min_exclusive ? "must be > " : "must be >= ") + format_number(field.min);
  if (has_max) out += std::string(has_min ? " and <= " : "must be <= ") + format_number(field.max);
  return out;
}

bool in_range(const Field& field, double value) {
  if (field.min_exclusive ? !(value > field.min) : value < field.min) return false;
  return value <= field.max;
}

void check_range(const Field& field, double value, const std::string& shown, const ConfigNode& node,
                 const std::string& path, std::vector<Diagnostic>& diagnostics) {
  if (!in_range(field, value)) {
    diagnostics.push_back(
        make_diagnostic(node.position, path, "out of range: " + range_text(field) + ", got " + shown));
  }
}

void validate_value(const ConfigNode& node, const Field& field, const std::string& path,
                    std::vector<Diagnostic>& diagnostics) {
  auto type_error = [&](const std::string& expected) {
    diagnostics.push_back(
        make_diagnostic(node.position, path, "expected " + expected + ", got " + node.describe()));
  };
  switch (field.kind) {
    case FieldKind::integer: {
      const auto value = node.is_scalar() ? parse_integer(node.text) : std::nullopt;
      if (!value) return type_error("an integer");
      check_range(field, static_cast<double>(*value), node.text, node, path, diagnostics);
      return;
    }
    case FieldKind::number: {
      const auto value = node.is_scalar() ? parse_number(node.text) : std::nullopt;
      if (!value) return type_error("a number");
      check_range(field, *value, node.text, node, path, diagnostics);
      return;
    }
    case FieldKind::boolean:
      if (!node.is_scalar() || !parse_boolean(node.text)) return type_error("true or false");
      return;
    case FieldKind::string:
      if (!node.is_scalar()) return type_error("a string");
      return;
    case FieldKind::enumeration:
      if (!node.is_scalar()) return type_error("one of " + choices_hint("", field.choices, {}).substr(8));
      if (std::find(field.choices.begin(), field.choices.end(), node.text) == field.choices.end()) {
        diagnostics.push_back(make_diagnostic(
            node.position, path, "invalid value '" + node.text + "'",
            choices_hint("choices", field.choices, closest_match(node.text, field.choices))));
      }
      return;
    case FieldKind::quantity: {
      if (!node.is_scalar()) {
        return type_error("a " + std::string(dimension_name(field.dimension)) + " such as " +
                          std::string(dimension_example(field.dimension)));
      }
      try {
        const double value = parse_quantity(node.text, field.dimension);
        if (!in_range(field, value)) {
          diagnostics.push_back(make_diagnostic(
              node.position, path,
              "out of range: " + range_text(field) + " " + std::string(si_unit(field.dimension)) +
                  ", got \"" + node.text + "\""));
        }
      } catch (const UnitError& e) {
        std::string hint;
        if (e.suggestion()) hint = "did you mean '" + *e.suggestion() + "'?";
        diagnostics.push_back(make_diagnostic(node.position, path, e.what(), hint));
      }
      return;
    }
    case FieldKind::object:
      if (!node.is_mapping()) return type_error("a mapping");
      if (field.open) {  // only its declared keys are checked; the rest belong to its owner
        for (const auto& entry : node.entries) {
          const auto it = std::find_if(field.fields.begin(), field.fields.end(),
                                       [&](const Field& f) { return f.key == entry.key; });
          if (it != field.fields.end() && !entry.value.is_null()) {
            validate_value(entry.value, *it, join_path(path, entry.key), diagnostics);
          }
        }
        return;
      }
      validate(node, field.fields, path, diagnostics);
      return;
    case FieldKind::map_of_objects:
      if (!node.is_mapping()) return type_error("a mapping of name -> settings");
      for (const auto& entry : node.entries) {
        const std::string entry_path = join_path(path, entry.key);
        if (!entry.value.is_mapping()) {
          diagnostics.push_back(make_diagnostic(entry.value.position, entry_path,
                                                "expected a mapping, got " + entry.value.describe()));
          continue;
        }
        if (!field.open) validate(entry.value, field.fields, entry_path, diagnostics);
      }
      return;
    case FieldKind::list:
      if (node.is_scalar()) return;
      if (!node.is_sequence()) return type_error("a list");
      for (const auto& item : node.items) {
        if (!item.is_scalar()) {
          diagnostics.push_back(
              make_diagnostic(item.position, path, "expected a list item, got " + item.describe()));
        }
      }
      return;
    case FieldKind::string_or_object:
      if (node.is_scalar()) return;
      if (!node.is_mapping()) return type_error("a name or a mapping");
      validate(node, field.fields, path, diagnostics);
      return;
  }
}

}  // namespace

void validate(const ConfigNode& node, const std::vector<Field>& fields, const std::string& prefix,
              std::vector<Diagnostic>& diagnostics) {
  if (!node.is_mapping()) {
    diagnostics.push_back(
        make_diagnostic(node.position, prefix, "expected a mapping, got " + node.describe()));
    return;
  }
  std::vector<std::string> valid_keys;
  for (const auto& field : fields) valid_keys.push_back(field.key);
  for (const auto& entry : node.entries) {
    const std::string path = join_path(prefix, entry.key);
    const auto it = std::find_if(fields.begin(), fields.end(),
                                 [&](const Field& field) { return field.key == entry.key; });
    if (it == fields.end()) {
      diagnostics.push_back(make_diagnostic(
          entry.key_position, path, "unknown key '" + entry.key + "'",
          choices_hint("keys", valid_keys, closest_match(entry.key, valid_keys))));
      continue;
    }
    if (entry.value.is_null()) {
      if (it->required) {
        diagnostics.push_back(make_diagnostic(entry.key_position, path, "missing value"));
      }
      continue;  // an empty optional key means "use the default"
    }
    validate_value(entry.value, *it, path, diagnostics);
  }
  for (const auto& field : fields) {
    if (field.required && node.find(field.key) == nullptr) {
      diagnostics.push_back(make_diagnostic(node.position, join_path(prefix, field.key),
                                            "missing required key '" + field.key + "'"));
    }
  }
}

std::string describe_type(const Field& field) {
  switch (field.kind) {
    case FieldKind::integer:
    case FieldKind::number: {
      std::string out = field.kind == FieldKind::integer ? "integer" : "number";
      const std::string range = range_text(field);
      if (!range.empty()) out += " (" + range.substr(8) + ")";  // drop "must be "
      return out;
    }
    case FieldKind::boolean: return "boolean";
    case FieldKind::string: return "string";
    case FieldKind::enumeration: {
      std::string out = "one of:";
      for (std::size_t i = 0; i < field.choices.size(); ++i) {
        out += (i > 0 ? ", " : " ") + field.choices[i];
      }
      return out;
    }
    case FieldKind::quantity:
      return std::string(dimension_name(field.dimension)) + " (" + std::string(si_unit(field.dimension)) + ")";
    case FieldKind::object: return "mapping";
    case FieldKind::map_of_objects: return "mapping of name -> settings";
    case FieldKind::list: return "list of strings";
    case FieldKind::string_or_object: return "name or mapping";
  }
  return "";
}

namespace {
std::string escape_cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

void render_rows(const std::vector<Field>& fields, const std::string& prefix, std::string& out) {
  for (const auto& field : fields) {
    std::string key = join_path(prefix, field.key);
    if (field.kind == FieldKind::map_of_objects) key += ".<name>";
    const std::string default_cell =
        field.required ? "**required**" : (field.default_text.empty() ? "" : "`" + field.default_text + "`");
    out += "| `" + key + "` | " + escape_cell(describe_type(field)) + " | " + default_cell + " | " +
           escape_cell(field.help) + " |\n";
    if (!field.fields.empty()) render_rows(field.fields, key, out);
  }
}
}  // namespace

std::string render_markdown(const Schema& schema) {
  std::string out = "# " + schema.title + "\n\n";
  std::vector<Field> top_scalars;
  for (const auto& field : schema.fields) {
    if (field.fields.empty()) top_scalars.push_back(field);
  }
  const std::string header =
      "| key | type / unit | default | description |\n| --- | --- | --- | --- |\n";
  if (!top_scalars.empty()) {
    out += "## Top level\n\n" + header;
    render_rows(top_scalars, "", out);
    out += "\n";
  }
  for (const auto& field : schema.fields) {
    if (field.fields.empty()) continue;
    out += "## `" + field.key + "`\n\n" + field.help + "\n\n" + header;
    render_rows({field}, "", out);
    out += "\n";
  }
  return out;
}

}  // namespace clustersim::config
