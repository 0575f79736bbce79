#pragma once
// Progress of long commands (sweeps, searches, validation) on a terminal: points done out of
// the total, the rate and the time left, redrawn in place on stderr. Quiet when stderr is not
// a terminal, so logs and CI output stay free of it.

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>

namespace clustersim::report {

/// The line a Progress draws: "LABEL: DONE/TOTAL UNIT (P %), R UNIT/s, T left" (below one a
/// second "S s each"; the rate and time left once something is done and time has passed;
/// "done in T" when done == total).
std::string progress_text(std::string_view label, std::size_t done, std::size_t total, std::string_view unit,
                          double elapsed_s);

/// A progress line, safe to advance from several threads. Draws at most every 0.2 s, and
/// once more when the last item is done; draws nothing when disabled.
class Progress {
 public:
  /// `start`: when the work began (the rate counts from it).
  Progress(std::string label, std::size_t total, std::string unit, bool enabled, std::ostream& out,
           std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now());
  /// Whether stderr is a terminal (the default for `enabled`).
  static bool stderr_is_terminal();
  /// Sets the count of items done (never lowers it: reports from several threads may arrive
  /// out of order) and redraws when due.
  void update(std::size_t done);
  std::size_t done() const;

 private:
  void redraw_if_due();  // with mutex_ held
  void draw(bool final_line);

  std::string label_;
  std::size_t total_;
  std::string unit_;
  bool enabled_;
  std::ostream& out_;
  mutable std::mutex mutex_;
  std::size_t done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

/// How a long computation reports what it has done: `label` ("sweep", "search: closed form"),
/// the `unit` counted, items done and the total. May be called from several threads.
using ProgressCallback =
    std::function<void(std::string_view label, std::string_view unit, std::size_t done, std::size_t total)>;

/// One progress line per label on stderr when it is a terminal (Progress), its rate counted
/// from the label's first call (callers report 0 done when the work starts); an empty
/// callback otherwise, so callers skip the counting.
ProgressCallback terminal_progress();

}  // namespace clustersim::report
