#pragma once
/// The names of an enumeration's values: one table per enum, read by its parse and name
/// functions, by the scenario keys that take it (their choices, their default's text) and by
/// the docs. Several names may denote one value (aliases, e.g. Hugging Face's "silu" and
/// "swiglu"); a value's name is the first one listed for it.
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine/error.hpp"

namespace clustersim::config {

/// Name <-> value table of one enumeration (V needs ==). Immutable once built.
template <class V>
class NameTable {
 public:
  /// `what` names the enumeration in messages ("dtype"); `entries` in the order the choices
  /// are listed. Throws ConfigError for an empty table or a name listed twice.
  NameTable(std::string what, std::vector<std::pair<std::string, V>> entries)
      : what_(std::move(what)), entries_(std::move(entries)) {
    if (entries_.empty()) throw ConfigError("name table '" + what_ + "' is empty");
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (entries_[i].first == entries_[j].first) {
          throw ConfigError("name table '" + what_ + "' lists '" + entries_[i].first + "' twice");
        }
      }
    }
  }

  /// The value named `name`, or nullopt.
  std::optional<V> find(std::string_view name) const {
    for (const auto& [entry_name, value] : entries_) {
      if (entry_name == name) return value;
    }
    return std::nullopt;
  }
  /// The value named `name`; throws ConfigError "unknown <what> '<name>'; valid: a, b, c".
  V parse(std::string_view name) const {
    if (auto value = find(name)) return *value;
    throw ConfigError("unknown " + what_ + " '" + std::string(name) + "'; valid: " + joined_names());
  }
  /// The first name of `value`; throws ConfigError when the table has none (a value outside
  /// the table, e.g. a key that accepts part of an enum).
  const std::string& name(const V& value) const {
    for (const auto& [entry_name, entry_value] : entries_) {
      if (entry_value == value) return entry_name;
    }
    throw ConfigError("name table '" + what_ + "' has no name for this value");
  }
  /// True when `value` has a name here.
  bool has(const V& value) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& entry) { return entry.second == value; });
  }
  /// Every name, aliases included, in table order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : entries_) out.push_back(entry.first);
    return out;
  }
  /// "a, b, c".
  std::string joined_names() const {
    std::string out;
    for (const auto& entry : entries_) out += (out.empty() ? "" : ", ") + entry.first;
    return out;
  }
  /// The entries named `names`, in that order: for a key that accepts part of an enum.
  /// Throws ConfigError for a name the table lacks.
  NameTable only(std::initializer_list<std::string_view> names) const {
    std::vector<std::pair<std::string, V>> kept;
    for (std::string_view wanted : names) kept.emplace_back(std::string(wanted), parse(wanted));
    return NameTable(what_, std::move(kept));
  }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::vector<std::pair<std::string, V>> entries_;
};

}  // namespace clustersim::config
