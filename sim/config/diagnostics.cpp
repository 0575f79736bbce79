#include "sim/config/diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>
#include <utility>

namespace clustersim::config {

std::string Position::to_string() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::render() const {
  std::string out = Position{file, line, column}.to_string();
  out += ": ";
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

Diagnostic make_diagnostic(const Position& position, std::string key_path, std::string message,
                           std::string hint) {
  return Diagnostic{position.file, position.line,      position.column,
                    std::move(key_path), std::move(message), std::move(hint)};
}

std::string choices_hint(std::string_view what, const std::vector<std::string>& choices,
                         const std::optional<std::string>& suggestion) {
  std::string out;
  if (!choices.empty()) {
    out += "valid ";
    out += what;
    out += ": ";
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (i > 0) out += ", ";
      out += choices[i];
    }
  }
  if (suggestion) {
    if (!out.empty()) out += " | ";
    out += "did you mean '" + *suggestion + "'?";
  }
  return out;
}

void sort_diagnostics(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.file, a.line, a.column) <
                            std::tie(b.file, b.line, b.column);
                   });
}

namespace {
std::string render_all(std::vector<Diagnostic>& diagnostics) {
  sort_diagnostics(diagnostics);
  std::string out;
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    if (i > 0) out += "\n";
    out += diagnostics[i].render();
  }
  return out;
}
}  // namespace

ScenarioError::ScenarioError(std::vector<Diagnostic> diagnostics)
    : ConfigError(render_all(diagnostics)), diagnostics_(std::move(diagnostics)) {}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

namespace {
std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  const std::string word_lower = lower(word);
  std::optional<std::string> best;
  // Case-insensitive distance decides; the case-sensitive one breaks ties ("Gbs" -> "Gb/s"),
  // then the longer common prefix ("vpp" -> "vp", not "pp").
  std::tuple<std::size_t, std::size_t, std::size_t> best_distance{limit + 1, 0, 0};
  for (const auto& candidate : candidates) {
    const std::string candidate_lower = lower(candidate);
    const std::size_t prefix =
        static_cast<std::size_t>(std::mismatch(word_lower.begin(), word_lower.end(), candidate_lower.begin(),
                                               candidate_lower.end())
                                     .first -
                                 word_lower.begin());
    const std::tuple<std::size_t, std::size_t, std::size_t> distance{
        edit_distance(word_lower, candidate_lower), edit_distance(word, candidate), word_lower.size() - prefix};
    if (std::get<0>(distance) <= limit && distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace clustersim::config
