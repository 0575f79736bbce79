#pragma once
/// Diagnostics of a scenario: every problem found while loading, with its position, and the
/// one error that carries all of them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/error.hpp"

namespace clustersim::config {

/// Where a YAML node or key came from. `line` and `column` are 1-based; 0 means "no line"
/// (a command-line --set, or a whole file).
struct Position {
  std::string file;
  int line = 0;
  int column = 0;
  /// "file:line:column", or just "file" when line is 0.
  std::string to_string() const;
};

/// One problem in a scenario.
struct Diagnostic {
  std::string file;
  int line = 0;    ///< 1-based; 0 when the problem has no line (command line)
  int column = 0;  ///< 1-based; 0 when the problem has no line
  std::string key_path;  ///< dotted key, e.g. "workload.parallelism.tp"; may be empty
  std::string message;
  std::string hint;  ///< e.g. "valid choices: a, b | did you mean 'a'?"; may be empty

  /// `file:line:column: key.path: message (hint)`.
  std::string render() const;
};

/// Builds a diagnostic at `position`.
Diagnostic make_diagnostic(const Position& position, std::string key_path, std::string message,
                           std::string hint = {});

/// Builds a hint "valid <what>: a, b, c | did you mean 'x'?" (either part may be absent).
std::string choices_hint(std::string_view what, const std::vector<std::string>& choices,
                         const std::optional<std::string>& suggestion);

/// Sorts by file, then line, then column; ties keep their discovery order.
void sort_diagnostics(std::vector<Diagnostic>& diagnostics);

/// A scenario could not be loaded. Carries ALL problems found; what() renders them one per
/// line, sorted by position.
class ScenarioError : public ConfigError {
 public:
  explicit ScenarioError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Levenshtein edit distance (byte-wise).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` (case-insensitive edit distance), if within
/// max(2, len(word)/3) edits; ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace clustersim::config
