#pragma once
/// Where a run's timeline goes when one is asked for (`clustersim run --trace`): workloads
/// report what they do to the session's sink, if it has one, and the sink formats it
/// (sim/report/chrome_trace.hpp). Reporting never schedules engine events, so a traced run's
/// fingerprint is the untraced run's.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/exec/observer.hpp"

namespace clustersim::platform {

/// A row of a workload's own activity on an accelerator's track, beside the streams of its
/// graphs (a serving replica's iterations): `key` tells a workload's rows apart (the replica's
/// index), `name` labels the row.
struct TraceLane {
  int accelerator = -1;
  int key = 0;
  std::string name;
};

/// A traced event's integer arguments, by name, in the order shown.
using TraceArgs = std::vector<std::pair<std::string, std::int64_t>>;

/// Something a workload did over [start_ps, end_ps) on a lane (a serving iteration).
struct TraceSpan {
  TraceLane lane;
  std::string name;
  std::string category;
  engine::TimePs start_ps = 0;
  engine::TimePs end_ps = 0;
  TraceArgs args;
};

/// A quantity a workload holds on its accelerator's track from `time_ps` on, in whole `unit`s
/// (a replica's KV cache in bytes). A sample that repeats its counter's last value adds nothing.
struct TraceSample {
  int accelerator = -1;
  std::string counter;
  std::string unit;
  engine::TimePs time_ps = 0;
  double value = 0;
};

/// One part of an item's life (a request's queueing, prefill or decode).
struct TracePhase {
  std::string name;
  engine::TimePs start_ps = 0;
  engine::TimePs end_ps = 0;
};

/// An item a workload handled over [start_ps, end_ps) on a lane, and its phases within that
/// interval (a request: queued, prefill, decode).
struct TraceItem {
  TraceLane lane;
  std::int64_t id = 0;
  std::string name;
  std::string category;
  engine::TimePs start_ps = 0;
  engine::TimePs end_ps = 0;
  TraceArgs args;
  std::vector<TracePhase> phases;
};

/// Knows no workload kind: graphs are watched as graphs, and a workload that runs outside the
/// executor reports spans, samples and items in these general terms.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  /// An executor is about to run `graph`: the returned observer (owned by the sink, alive until
  /// the sink is destroyed) is to be added to it. `accelerator_of(instance, device)` is the
  /// accelerator a stream of `device` (-1 for a stream without one) of replicated instance
  /// `instance` runs on. The graph's streams must all exist; tasks may be added later.
  virtual exec::ExecutionObserver& watch_graph(const exec::TaskGraph& graph,
                                               std::function<int(int instance, int device)> accelerator_of) = 0;
  virtual void span(const TraceSpan& span) = 0;
  virtual void sample(const TraceSample& sample) = 0;
  virtual void item(const TraceItem& item) = 0;
};

}  // namespace clustersim::platform
