#pragma once
/// Where a run's timeline goes when one is asked for (`clustersim run --trace`): workloads
/// report what they do to the session's sink, if it has one, and the sink formats it
/// (sim/report/chrome_trace.hpp). Reporting never schedules engine events, so a traced run's
/// fingerprint is the untraced run's.
#include <cstdint>
#include <functional>
#include <string>

#include "sim/engine/time.hpp"
#include "sim/exec/observer.hpp"

namespace clustersim::platform {

/// A served request's life, in engine picoseconds (-1: did not happen).
struct TracedRequest {
  std::int64_t id = 0;
  int replica = -1;
  int accelerator = -1;  ///< the first accelerator of the replica that finished it
  engine::TimePs arrival_ps = 0, scheduled_ps = -1, first_token_ps = -1, finish_ps = -1;
  std::int64_t input_tokens = 0, output_tokens = 0;
  bool rejected = false;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  /// An executor is about to run `graph`: the returned observer (owned by the sink, alive until
  /// the sink is destroyed) is to be added to it. `accelerator_of(instance, device)` is the
  /// accelerator a stream of `device` (-1 for a stream without one) of replicated instance
  /// `instance` runs on. The graph's streams must all exist; tasks may be added later.
  virtual exec::ExecutionObserver& watch_graph(const exec::TaskGraph& graph,
                                               std::function<int(int instance, int device)> accelerator_of) = 0;
  /// A serving replica whose first accelerator is `accelerator` ran one iteration.
  virtual void serving_iteration(int replica, int accelerator, engine::TimePs start_ps, engine::TimePs end_ps,
                                 int sequences, std::int64_t prefill_tokens, std::int64_t decode_tokens) = 0;
  /// Serving replica `replica` (first accelerator `accelerator`) holds `used_bytes` of KV cache
  /// in HBM from `time_ps` on.
  virtual void kv_cache(int replica, int accelerator, engine::TimePs time_ps, double used_bytes) = 0;
  /// A request finished (or was rejected).
  virtual void request(const TracedRequest& request) = 0;
};

}  // namespace clustersim::platform
