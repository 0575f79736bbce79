#pragma once
/// What the HTML report (html_report.hpp) draws from a run's timeline: every task slice of the
/// first instance of each executor graph (training: one step of the representative rank of
/// every pipeline stage, on each of its streams), and, per stage, when each micro-batch's
/// activations come into being (its first forward task starts) and are released (its last
/// backward task ends). A TraceSink: the runner reports to it as to a trace, and it never
/// schedules events, so a recorded run's fingerprint is the unrecorded run's. Serving
/// iterations, KV samples and requests are not kept: a serving report reads the result
/// (every request's record, the time series).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/platform/trace_sink.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::report {

/// A row of the timeline: one stream of one graph, on one accelerator.
struct TimelineRow {
  int accelerator = -1;  ///< -1: a stream without a device
  std::string stream;    ///< the stream's name ("stage 0 compute", "stage 1 tp", ...)
};

/// One task instance: [start_ps, end_ps) on `row`, of category kinds()[kind].
struct TimelineSlice {
  std::size_t row = 0;
  std::size_t kind = 0;
  engine::TimePs start_ps = 0, end_ps = 0;
};

/// One micro-batch (and model chunk) on one pipeline stage: from its first forward task's
/// start to its last backward task's end.
struct ActivationSpan {
  int stage = 0;        ///< the stream's device (training: the pipeline stage)
  int accelerator = -1;
  engine::TimePs first_forward_ps = -1, last_backward_end_ps = -1;
};

/// HBM held by one pipeline stage's device over the step, bytes: the memory model's
/// footprint with the activations term following the schedule (see hbm_occupancy).
struct StageHbmSeries {
  int stage = 0;
  int accelerator = -1;
  std::vector<engine::TimePs> times_ps;  ///< ascending; the value holds until the next time
  std::vector<double> bytes;
  double capacity_bytes = 0;
};

class RunTimeline final : public platform::TraceSink {
 public:
  RunTimeline();
  ~RunTimeline() override;
  RunTimeline(const RunTimeline&) = delete;
  RunTimeline& operator=(const RunTimeline&) = delete;

  exec::ExecutionObserver& watch_graph(const exec::TaskGraph& graph,
                                       std::function<int(int instance, int device)> accelerator_of) override;
  /// The report's timeline draws graphs only.
  void span(const platform::TraceSpan&) override {}
  void sample(const platform::TraceSample&) override {}
  void item(const platform::TraceItem&) override {}

  /// Rows in the order their graphs were watched, then by stream; only rows with a slice.
  const std::vector<TimelineRow>& rows() const { return rows_; }
  const std::vector<TimelineSlice>& slices() const { return slices_; }
  /// The category names slices refer to, in first-seen order ("compute", "tp_comm", ...).
  const std::vector<std::string>& kinds() const { return kinds_; }
  /// Every (stage, micro-batch, chunk) seen, in (stage, micro-batch, chunk) order.
  std::vector<ActivationSpan> activation_spans() const;

 private:
  class GraphObserver;
  std::size_t row_of(const void* graph, int stream, int accelerator, const std::string& name);
  std::size_t kind_of(const std::string& name);

  std::vector<TimelineRow> rows_;
  std::map<std::pair<const void*, int>, std::size_t> row_index_;
  std::vector<TimelineSlice> slices_;
  std::vector<std::string> kinds_;
  /// (stage, micro-batch, chunk) -> its span.
  std::map<std::tuple<int, int, int>, ActivationSpan> spans_;
  std::vector<std::unique_ptr<GraphObserver>> observers_;
};

/// Per pipeline stage: HBM over the step = the stage's footprint without activations
/// (memory.stages: weights, gradients, optimizer state, buffers) + its activations term x
/// (micro-batches in flight now / the most in flight at once), so the curve peaks at the
/// memory model's footprint when the schedule holds the most micro-batches. Empty without
/// activation spans (no training graph) or without a computed memory report.
std::vector<StageHbmSeries> hbm_occupancy(const RunTimeline& timeline, const training::MemoryReport& memory);

/// Forwards everything to two sinks (the trace file and the report's timeline).
class TraceTee final : public platform::TraceSink {
 public:
  TraceTee(platform::TraceSink& first, platform::TraceSink& second);
  ~TraceTee() override;
  TraceTee(const TraceTee&) = delete;
  TraceTee& operator=(const TraceTee&) = delete;
  exec::ExecutionObserver& watch_graph(const exec::TaskGraph& graph,
                                       std::function<int(int instance, int device)> accelerator_of) override;
  void span(const platform::TraceSpan& span) override;
  void sample(const platform::TraceSample& sample) override;
  void item(const platform::TraceItem& item) override;

 private:
  class PairObserver;
  platform::TraceSink& first_;
  platform::TraceSink& second_;
  std::vector<std::unique_ptr<PairObserver>> observers_;
};

}  // namespace clustersim::report
