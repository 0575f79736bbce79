#pragma once
/// The problems of a scenario being loaded: every diagnostic, which key paths already have one
/// (so cross-field checks on them are skipped instead of piling on), and the warnings that do
/// not stop the load (an override that has no effect).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/diagnostics.hpp"

namespace clustersim::config {

/// A cross-field rule that does not hold: the key it is reported at, relative to the section
/// the rule checks (e.g. "parallelism.ep" of a workload), and the message. Each rule is one
/// function returning it: the loader adds the key's file:line:column, models and simulations
/// throw the same text (throw_if).
struct RuleProblem {
  std::string key;
  std::string message;
};

/// Throws ConfigError(problem->message) when there is a problem.
inline void throw_if(const std::optional<RuleProblem>& problem) {
  if (problem) throw ConfigError(problem->message);
}

/// Accumulates diagnostics; knows which key paths already have a problem so cross-field
/// checks on them are skipped instead of piling on.
class Problems {
 public:
  explicit Problems(std::vector<Diagnostic>& diagnostics) : diagnostics_(&diagnostics) {}
  void add(const Position& position, std::string key_path, std::string message, std::string hint = {}) {
    diagnostics_->push_back(make_diagnostic(position, std::move(key_path), std::move(message), std::move(hint)));
  }
  /// True if `path` or anything inside it has a diagnostic.
  bool bad(std::string_view path) const {
    return std::any_of(diagnostics_->begin(), diagnostics_->end(), [&](const Diagnostic& d) {
      return d.key_path == path ||
             (d.key_path.size() > path.size() && d.key_path.compare(0, path.size(), path) == 0 &&
              d.key_path[path.size()] == '.');
    });
  }
  template <typename... Paths>
  bool any_bad(Paths... paths) const {
    return (bad(paths) || ...);
  }
  /// A problem that does not stop the load (e.g. a setting another layer overrides); the
  /// loader hands warnings() to the result's notes.
  void warn(const Position& position, std::string key_path, std::string message, std::string hint = {}) {
    warnings_.push_back(make_diagnostic(position, std::move(key_path), std::move(message), std::move(hint)));
  }
  const std::vector<Diagnostic>& warnings() const { return warnings_; }
  /// Information about how the run will be estimated, not about a key (e.g. an op class whose
  /// time is a roofline estimate with no measurement behind it); the loader hands notices() to
  /// the result's notes.
  void notice(std::string message) {
    if (std::find(notices_.begin(), notices_.end(), message) == notices_.end()) notices_.push_back(std::move(message));
  }
  const std::vector<std::string>& notices() const { return notices_; }

 private:
  std::vector<Diagnostic>* diagnostics_;
  std::vector<Diagnostic> warnings_;
  std::vector<std::string> notices_;
};

}  // namespace clustersim::config
