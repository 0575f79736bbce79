#include "sim/config/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "sim/config/diagnostics.hpp"

namespace clustersim::config {

std::string_view dimension_name(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes: return "size";
    case Dimension::bytes_per_s: return "bandwidth";
    case Dimension::seconds: return "time";
    case Dimension::flops_per_s: return "compute rate";
    case Dimension::watts: return "power";
    case Dimension::joules: return "energy";
  }
  return "quantity";
}

std::string_view dimension_example(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes: return "\"80 GiB\" or \"50 MB\"";
    case Dimension::bytes_per_s: return "\"400 Gb/s\" or \"3.35 TB/s\"";
    case Dimension::seconds: return "\"1.5 us\" or \"2 ms\"";
    case Dimension::flops_per_s: return "\"989 TFLOP/s\"";
    case Dimension::watts: return "\"700 W\"";
    case Dimension::joules: return "\"2 pJ\"";
  }
  return "";
}

std::string_view si_unit(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes: return "B";
    case Dimension::bytes_per_s: return "B/s";
    case Dimension::seconds: return "s";
    case Dimension::flops_per_s: return "FLOP/s";
    case Dimension::watts: return "W";
    case Dimension::joules: return "J";
  }
  return "";
}

namespace {

struct UnitSpelling {
  std::string text;
  Dimension dimension;
  double factor;  ///< SI value of one unit
};

struct Prefix {
  const char* text;
  double factor;
};

/// Every unit spelling the parser accepts, built once per call (cheap, no globals).
std::vector<UnitSpelling> unit_table() {
  const std::array<Prefix, 6> decimal{{{"", 1.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9},
                                       {"T", 1e12}, {"P", 1e15}}};
  const std::array<Prefix, 4> binary{{{"Ki", 1024.0}, {"Mi", 1048576.0},
                                      {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}}};
  std::vector<UnitSpelling> table;
  for (const auto& prefix : decimal) {
    const std::string p = prefix.text;
    table.push_back({p + "B", Dimension::bytes, prefix.factor});
    table.push_back({p + "b", Dimension::bytes, prefix.factor / 8});
    table.push_back({p + "B/s", Dimension::bytes_per_s, prefix.factor});
    table.push_back({p + "b/s", Dimension::bytes_per_s, prefix.factor / 8});
    table.push_back({p + "FLOP/s", Dimension::flops_per_s, prefix.factor});
    table.push_back({p + "FLOPS", Dimension::flops_per_s, prefix.factor});
    table.push_back({p + "W", Dimension::watts, prefix.factor});
    table.push_back({p + "J", Dimension::joules, prefix.factor});
  }
  for (const auto& prefix : binary) {
    const std::string p = prefix.text;
    table.push_back({p + "B", Dimension::bytes, prefix.factor});
    table.push_back({p + "B/s", Dimension::bytes_per_s, prefix.factor});
  }
  for (const auto& small : std::array<Prefix, 5>{{{"m", 1e-3}, {"u", 1e-6}, {"\xC2\xB5", 1e-6},
                                                  {"n", 1e-9}, {"p", 1e-12}}}) {
    const std::string p = small.text;
    table.push_back({p + "s", Dimension::seconds, small.factor});
    table.push_back({p + "W", Dimension::watts, small.factor});
    table.push_back({p + "J", Dimension::joules, small.factor});
  }
  table.push_back({"s", Dimension::seconds, 1.0});
  table.push_back({"min", Dimension::seconds, 60.0});
  table.push_back({"h", Dimension::seconds, 3600.0});
  return table;
}

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

}  // namespace

double parse_quantity(std::string_view text, Dimension expected) {
  const std::string input = trim(text);
  const std::string expectation =
      "expected a " + std::string(dimension_name(expected)) + " such as " +
      std::string(dimension_example(expected));
  if (input.empty()) throw UnitError("empty value: " + expectation, std::nullopt);

  // The number: the longest prefix from_chars accepts (it takes "1e9", "-3", "0.5").
  double number = 0;
  const char* begin = input.data();
  const char* end = input.data() + input.size();
  const char* cursor = begin;
  if (*cursor == '+') ++cursor;
  auto [number_end, ec] = std::from_chars(cursor, end, number);
  if (ec != std::errc() || number_end == cursor) {
    throw UnitError("bad number in " + in_quotes(input) + ": " + expectation, std::nullopt);
  }
  if (!std::isfinite(number)) {
    throw UnitError("bad number in " + in_quotes(input) + ": not finite", std::nullopt);
  }
  const std::string unit = trim(std::string_view(number_end, static_cast<std::size_t>(end - number_end)));
  if (unit.empty()) {
    throw UnitError("missing unit: " + expectation, std::nullopt);
  }
  const auto table = unit_table();
  for (const auto& spelling : table) {
    if (spelling.text != unit) continue;
    if (spelling.dimension != expected) {
      throw UnitError(in_quotes(input) + " is a " + std::string(dimension_name(spelling.dimension)) +
                          ", " + expectation,
                      std::nullopt);
    }
    if (number < 0) {
      throw UnitError("negative " + std::string(dimension_name(expected)) + " " + in_quotes(input) +
                          ": must be >= 0",
                      std::nullopt);
    }
    return number * spelling.factor;
  }
  // Unknown unit: suggest the closest spelling of the expected dimension first.
  std::vector<std::string> same_dimension, all;
  for (const auto& spelling : table) {
    all.push_back(spelling.text);
    if (spelling.dimension == expected) same_dimension.push_back(spelling.text);
  }
  auto suggestion = closest_match(unit, same_dimension);
  if (!suggestion) suggestion = closest_match(unit, all);
  throw UnitError("unknown unit " + in_quotes(unit) + " in " + in_quotes(input) + ": " + expectation,
                  suggestion);
}

namespace {

struct Scale {
  double factor;
  const char* unit;
};

/// The units format_quantity prints for `dimension`, largest first.
std::vector<Scale> print_scales(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes:
      return {{1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}, {1.0, "B"}};
    case Dimension::bytes_per_s:
      return {{1e15, "PB/s"}, {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "kB/s"}, {1.0, "B/s"}};
    case Dimension::seconds:
      return {{1.0, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}};
    case Dimension::flops_per_s:
      return {{1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}, {1e6, "MFLOP/s"}, {1e3, "kFLOP/s"}, {1.0, "FLOP/s"}};
    case Dimension::watts:
      return {{1e6, "MW"}, {1e3, "kW"}, {1.0, "W"}, {1e-3, "mW"}};
    case Dimension::joules:
      return {{1e3, "kJ"}, {1.0, "J"}, {1e-3, "mJ"}, {1e-6, "uJ"}, {1e-9, "nJ"}, {1e-12, "pJ"}};
  }
  return {{1.0, ""}};
}

std::string scaled_text(double value_si, const Scale& scale, int precision) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g %s", precision, value_si / scale.factor, scale.unit);
  return buffer;
}

bool round_trips(const std::string& text, double value_si, Dimension dimension) {
  try {
    return parse_quantity(text, dimension) == value_si;
  } catch (const UnitError&) {
    return false;
  }
}

}  // namespace

std::string format_quantity(double value_si, Dimension dimension) {
  const std::vector<Scale> scales = print_scales(dimension);
  Scale chosen = scales.back();
  for (const auto& scale : scales) {
    if (std::fabs(value_si) >= scale.factor * (1 - 1e-12)) {
      chosen = scale;
      break;
    }
  }
  if (value_si == 0) {
    for (const auto& scale : scales) {
      if (scale.factor == 1.0) chosen = scale;
    }
  }
  return scaled_text(value_si, chosen, 6);
}

std::string format_quantity_exact(double value_si, Dimension dimension) {
  const std::string preferred = format_quantity(value_si, dimension);
  if (round_trips(preferred, value_si, dimension)) return preferred;
  // Another unit may name the same double ("0.6 us" is 0.6 x 1e-6, "600 ns" is not).
  std::string shortest;
  for (const Scale& scale : print_scales(dimension)) {
    for (int precision : {6, 17}) {
      const std::string text = scaled_text(value_si, scale, precision);
      if (round_trips(text, value_si, dimension) && (shortest.empty() || text.size() < shortest.size())) {
        shortest = text;
      }
    }
  }
  return shortest.empty() ? preferred : shortest;
}

}  // namespace clustersim::config
