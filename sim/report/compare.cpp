#include "sim/report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace clustersim::report {
namespace {

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string shown(const std::string& text) {
  if (const auto value = number(text)) return fmt::format("{:.6g}", *value);
  return text.empty() ? "-" : text;
}

}  // namespace

std::string relative_change(double a, double b) {
  if (a == b) return "0%";
  if (a == 0) return "new";
  return fmt::format("{:+.1f}%", 100.0 * (b - a) / std::abs(a));
}

std::string compare_table(const ComparedRun& a, const ComparedRun& b) {
  std::string out = fmt::format("A: {}\nB: {}\n\n", a.label, b.label);
  // Inputs: keys in either, in key order.
  std::vector<std::vector<std::string>> inputs;
  auto ia = a.resolved.begin();
  auto ib = b.resolved.begin();
  while (ia != a.resolved.end() || ib != b.resolved.end()) {
    if (ib == b.resolved.end() || (ia != a.resolved.end() && ia->first < ib->first)) {
      inputs.push_back({ia->first, ia->second, "(unset)"});
      ++ia;
    } else if (ia == a.resolved.end() || ib->first < ia->first) {
      inputs.push_back({ib->first, "(unset)", ib->second});
      ++ib;
    } else {
      // "1" and "1.0" are the same input.
      const auto x = number(ia->second), y = number(ib->second);
      const bool same = x && y ? *x == *y : ia->second == ib->second;
      if (!same) inputs.push_back({ia->first, ia->second, ib->second});
      ++ia;
      ++ib;
    }
  }
  std::size_t key_width = 3;
  for (const auto& row : inputs) key_width = std::max(key_width, row[0].size());
  out += inputs.empty() ? "inputs: the same (every resolved key equal)\n"
                        : fmt::format("inputs: {} {}\n", inputs.size(), inputs.size() == 1 ? "key differs" : "keys differ");
  for (const auto& row : inputs) out += fmt::format("  {:<{}}  {} -> {}\n", row[0], key_width, row[1], row[2]);

  // Metrics: A's order, then those only B has.
  std::vector<std::string> names;
  std::map<std::string, std::string> va, vb;
  for (const auto& [name, value] : a.metrics) {
    names.push_back(name);
    va[name] = value;
  }
  for (const auto& [name, value] : b.metrics) {
    if (!va.contains(name)) names.push_back(name);
    vb[name] = value;
  }
  std::size_t name_width = 6;
  for (const auto& name : names) name_width = std::max(name_width, name.size());
  out += fmt::format("\n  {:<{}}  {:>14}  {:>14}  {:>9}\n", "metric", name_width, "A", "B", "change");
  for (const auto& name : names) {
    const std::string& x = va.contains(name) ? va[name] : std::string();
    const std::string& y = vb.contains(name) ? vb[name] : std::string();
    const auto nx = number(x), ny = number(y);
    const std::string change = nx && ny ? relative_change(*nx, *ny) : x == y ? "" : "differs";
    out += fmt::format("  {:<{}}  {:>14}  {:>14}  {:>9}\n", name, name_width, shown(x), shown(y), change);
  }
  return out;
}

}  // namespace clustersim::report
