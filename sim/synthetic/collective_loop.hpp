#pragma once
/// A synthetic job: one collective over a range of accelerators, run back to back — a second
/// tenant loading the fabric beside the primary workload (`jobs: {NAME: {kind: collective-loop,
/// ...}}`), or a fixed number of rounds on its own. Under the flow fidelity its flows contend
/// with every other workload's; under the analytical one it only takes its own time.
#include <functional>
#include <memory>
#include <optional>

#include "models/comm/collective_kind.hpp"
#include "sim/exec/executor.hpp"
#include "sim/platform/workload.hpp"

namespace clustersim::synthetic {

/// The job's settings.
class CollectiveLoopSpec final : public platform::WorkloadSpec {
 public:
  models::CollectiveKind collective = models::CollectiveKind::all_reduce;
  platform::Allocation accelerators;  ///< the group, in ring order (>= 2 accelerators)
  double bytes = 0;                   ///< per collective, nccl-tests convention (> 0)
  /// Rounds to run; 0: until the primary workload finishes (then the round in flight ends).
  int rounds = 0;

  std::string_view kind() const override { return "collective-loop"; }
  std::optional<platform::Allocation> pinned() const override { return accelerators; }
  /// Throws ConfigError for fewer than two accelerators, bytes not > 0 or negative rounds.
  std::unique_ptr<platform::Workload> instantiate(const platform::Platform& platform,
                                                  const platform::Allocation& allocation,
                                                  const platform::SessionOptions& options) const override;
};

/// The running job: one stream whose next collective is added when the last one ends.
class CollectiveLoop final : public platform::Workload {
 public:
  explicit CollectiveLoop(const CollectiveLoopSpec& spec);
  void start(platform::Session& session, std::function<void()> on_done) override;
  void stop() override { stopped_ = true; }
  /// Metrics: rounds completed, bytes per round, busy time and mean round time, algorithm
  /// bandwidth.
  std::unique_ptr<platform::WorkloadResult> finish(platform::Session& session) override;

 private:
  void add_round();

  const CollectiveLoopSpec& spec_;
  std::vector<int> group_;
  exec::TaskGraph graph_;
  std::unique_ptr<exec::Executor> executor_;
  exec::StreamId stream_ = -1;
  platform::Session* session_ = nullptr;
  std::function<void()> on_done_;
  bool stopped_ = false;
  int rounds_started_ = 0;
  engine::TimePs start_ps_ = 0, end_ps_ = 0;
};

}  // namespace clustersim::synthetic
