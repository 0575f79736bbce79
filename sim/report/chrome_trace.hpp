#pragma once
/// `clustersim run --trace FILE`: the run's timeline as Chrome trace event JSON (the format
/// Perfetto and chrome://tracing open). pid is an accelerator ("GPU n"); each executor stream
/// of it (training: compute, pipeline sends, collectives...) is its own tid, and so is each
/// serving replica's iteration loop, so the complete ("X") slices of one (pid, tid) never
/// overlap. Cross-accelerator dependencies (pipeline send -> next stage's compute) are flow
/// arrows, served requests async slices (queued, prefill, decode) and the KV cache's HBM
/// occupancy a counter. Times are microseconds, written exactly from the engine's integer
/// picoseconds (six decimals). Events stream to the output as the run produces them.
#include <cstdint>
#include <memory>
#include <span>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/platform/trace_sink.hpp"

namespace clustersim::report {

/// What a trace keeps: accelerators in `ranks` (inclusive ranges; empty: all) and events that
/// overlap [from_ps, to_ps] (a slice that straddles a bound is kept whole).
struct TraceFilter {
  std::vector<std::pair<int, int>> ranks;
  engine::TimePs from_ps = 0;
  engine::TimePs to_ps = engine::kTimeNever;
  bool keeps_rank(int rank) const;
  bool keeps_span(engine::TimePs start_ps, engine::TimePs end_ps) const {
    return end_ps >= from_ps && start_ps <= to_ps;
  }
};

/// "0-7", "3", "0-3,8-11": the ranges of `--trace-ranks`. Throws ConfigError naming the text.
std::vector<std::pair<int, int>> parse_trace_ranks(const std::string& text);
/// "0:5ms", "2ms:", ":500us", "1 s:2 s": `--trace-window` as [from, to] picoseconds (an empty
/// side is open). Times take the scenario files' units. Throws ConfigError naming the text.
std::pair<engine::TimePs, engine::TimePs> parse_trace_window(const std::string& text);

/// "12.345678": picoseconds as exact microseconds.
std::string trace_microseconds(engine::TimePs ps);

/// The pid of the trace's "Network" process (link utilisation counters): above any rank.
inline constexpr int kNetworkTracePid = 1'000'000'000;

class ChromeTrace final : public platform::TraceSink {
 public:
  /// Writes the opening of the JSON document to `out` (which must outlive the trace).
  ChromeTrace(std::ostream& out, TraceFilter filter);
  ~ChromeTrace() override;
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  exec::ExecutionObserver& watch_graph(const exec::TaskGraph& graph,
                                       std::function<int(int instance, int device)> accelerator_of) override;
  /// A complete slice ("ph":"X") on the lane's thread of its accelerator's process.
  void span(const platform::TraceSpan& span) override;
  /// A counter sample ("ph":"C") on the accelerator's process.
  void sample(const platform::TraceSample& sample) override;
  /// Nested async slices ("ph":"b"/"e", the item's id): the whole item, then its phases.
  void item(const platform::TraceItem& item) override;

  /// A counter track ("ph":"C") named `name` on process `pid` (named `process_name` unless
  /// named already): `values[i]` (in `unit`, the counter's series) holds from times_ps[i] until
  /// the next time. Samples whose interval misses the window are dropped, and every sample of
  /// an accelerator's pid (`accelerator`) the rank filter drops. Call before finish().
  void counter(int pid, bool accelerator, const std::string& process_name, const std::string& name,
               const std::string& unit, std::span<const engine::TimePs> times_ps, std::span<const double> values);

  /// Writes the process and thread names and closes the document; `metadata` (a JSON object
  /// text, e.g. the scenario's name and the run's fingerprint) goes into "otherData".
  void finish(const std::string& metadata = "{}");
  /// Events written so far (metadata excluded).
  std::int64_t events() const { return events_; }

 private:
  class GraphObserver;
  void emit(const std::string& event, bool counted = true);
  void name_process(int pid, const std::string& name);
  void name_thread(int pid, int tid, const std::string& name);

  std::ostream& out_;
  TraceFilter filter_;
  std::int64_t events_ = 0, written_ = 0;
  std::int64_t next_flow_ = 1;
  int next_tid_ = 1;  ///< tids are unique over the whole trace (streams of every graph, replicas)
  bool finished_ = false;
  std::unordered_map<int, std::string> process_names_;
  std::vector<std::pair<std::pair<int, int>, std::string>> thread_names_;
  int lane_tid(const platform::TraceLane& lane);

  std::unordered_map<int, int> lane_tids_;                   ///< by TraceLane::key
  std::unordered_map<std::string, double> last_samples_;  ///< per counter: its last sample written
  std::vector<std::unique_ptr<GraphObserver>> observers_;
};

}  // namespace clustersim::report
