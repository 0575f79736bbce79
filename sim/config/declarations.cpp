#include "sim/config/declarations.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace clustersim::config {

std::string number_text(double value) {
  // Shortest round-trip text; scientific only for very large or small magnitudes ("1e9").
  char buffer[64];
  const double magnitude = std::fabs(value);
  const bool scientific = magnitude >= 1e6 || (magnitude > 0 && magnitude < 1e-4);
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 scientific ? std::chars_format::scientific : std::chars_format::fixed)
                       .ptr;
  // "1e+09" -> "1e9", "5e-07" -> "5e-7": the exponent as YAML users write it.
  std::string text;
  bool in_exponent = false;
  bool leading_zero = false;
  for (const char* c = buffer; c != end; ++c) {
    if (*c == 'e') {
      in_exponent = leading_zero = true;
    } else if (in_exponent && *c == '+') {
      continue;
    } else if (in_exponent && leading_zero && *c == '0' && c + 1 != end) {
      continue;
    } else if (in_exponent && *c != '-') {
      leading_zero = false;
    }
    text.push_back(*c);
  }
  return text;
}

std::string integer_range_text(double min, double max) {
  std::string text = "[";
  text += std::to_string(static_cast<std::int64_t>(min));
  text += ", ";
  text += std::to_string(static_cast<std::int64_t>(max));
  text += "]";
  return text;
}

std::optional<std::int64_t> integer_value(const ConfigNode& node) {
  return node.is_scalar() ? parse_integer(node.text) : std::nullopt;
}

std::optional<double> number_value(const ConfigNode& node) {
  return node.is_scalar() ? parse_number(node.text) : std::nullopt;
}

std::optional<bool> boolean_value(const ConfigNode& node) {
  return node.is_scalar() ? parse_boolean(node.text) : std::nullopt;
}

std::optional<double> quantity_value(const ConfigNode& node, Dimension dimension) {
  if (!node.is_scalar()) return std::nullopt;
  try {
    return parse_quantity(node.text, dimension);
  } catch (const UnitError&) {
    return std::nullopt;  // validation reports it with the unit suggestion
  }
}

std::vector<ConfigNode> list_items(const ConfigNode& node) {
  return node.is_sequence() ? node.items : std::vector<ConfigNode>{node};
}

}  // namespace clustersim::config
