#include "sim/report/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>

#include <fmt/format.h>

namespace clustersim::report {
namespace {

std::string duration_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f} s", std::ceil(seconds));
  const auto whole = static_cast<long long>(std::ceil(seconds));
  if (whole < 3600) return fmt::format("{} min {:02d} s", whole / 60, static_cast<int>(whole % 60));
  return fmt::format("{} h {:02d} min", whole / 3600, static_cast<int>((whole % 3600) / 60));
}

}  // namespace

std::string progress_text(std::string_view label, std::size_t done, std::size_t total, std::string_view unit,
                          double elapsed_s) {
  const double share = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  std::string text = fmt::format("{}: {}/{} {} ({:.0f} %)", label, done, total, unit, std::floor(share));
  if (done == 0 || elapsed_s <= 0) return text;
  const double rate = static_cast<double>(done) / elapsed_s;
  text += rate >= 1 ? fmt::format(", {:.1f} {}/s", rate, unit) : fmt::format(", {:.1f} s each", 1 / rate);
  if (done >= total) return text + ", done in " + duration_text(elapsed_s);
  return text + ", " + duration_text(static_cast<double>(total - done) / rate) + " left";
}

Progress::Progress(std::string label, std::size_t total, std::string unit, bool enabled, std::ostream& out,
                   std::chrono::steady_clock::time_point start)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      enabled_(enabled && total > 0),
      out_(out),
      start_(start) {}

bool Progress::stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

void Progress::update(std::size_t done) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (done <= done_) return;
  done_ = done;
  redraw_if_due();
}

void Progress::redraw_if_due() {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool last = done_ >= total_;
  if (!last && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  draw(last);
}

std::size_t Progress::done() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void Progress::draw(bool final_line) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r and clear to the end of the line: a shorter line fully replaces a longer one.
  out_ << '\r' << progress_text(label_, done_, total_, unit_, elapsed) << "\x1b[K" << (final_line ? "\n" : "")
       << std::flush;
}

ProgressCallback terminal_progress() {
  if (!Progress::stderr_is_terminal()) return {};
  struct Lines {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<Progress>, std::less<>> by_label;
  };
  auto lines = std::make_shared<Lines>();
  return [lines](std::string_view label, std::string_view unit, std::size_t done, std::size_t total) {
    Progress* line = nullptr;
    {
      const std::lock_guard<std::mutex> lock(lines->mutex);
      auto it = lines->by_label.find(label);
      if (it == lines->by_label.end()) {
        it = lines->by_label
                 .emplace(std::string(label),
                          std::make_unique<Progress>(std::string(label), total, std::string(unit), true, std::cerr))
                 .first;
      }
      line = it->second.get();
    }
    line->update(done);
  };
}

}  // namespace clustersim::report
