#include "sim/synthetic/collective_loop.hpp"

#include <numeric>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::synthetic {

std::unique_ptr<platform::Workload> CollectiveLoopSpec::instantiate(const platform::Platform& platform,
                                                                    const platform::Allocation& allocation,
                                                                    const platform::SessionOptions& /*options*/) const {
  if (allocation.count < 2 || allocation.first < 0 || allocation.end() > platform.accelerator_count()) {
    throw ConfigError(fmt::format("a collective loop needs 2 or more of the platform's {} accelerators, got [{}, {})",
                                  platform.accelerator_count(), allocation.first, allocation.end()));
  }
  if (!(bytes > 0)) throw ConfigError(fmt::format("a collective loop's bytes must be > 0, got {}", bytes));
  if (rounds < 0) throw ConfigError(fmt::format("a collective loop's rounds must be >= 0, got {}", rounds));
  return std::make_unique<CollectiveLoop>(*this);
}

CollectiveLoop::CollectiveLoop(const CollectiveLoopSpec& spec) : spec_(spec) {
  group_.resize(static_cast<std::size_t>(spec.accelerators.count));
  std::iota(group_.begin(), group_.end(), spec.accelerators.first);
}

void CollectiveLoop::add_round() {
  const exec::Work work =
      session_->comm().collective(spec_.collective, std::span<const std::vector<int>>(&group_, 1), spec_.bytes);
  executor_->add_work(stream_, work, {exec::TaskKind::communication, 0, 0, spec_.bytes},
                      fmt::format("{} round {}", models::collective_name(spec_.collective), rounds_started_));
  ++rounds_started_;
}

void CollectiveLoop::start(platform::Session& session, std::function<void()> on_done) {
  session_ = &session;
  on_done_ = std::move(on_done);
  stream_ = graph_.add_stream(fmt::format("{} collective loop", models::collective_name(spec_.collective)));
  executor_ = std::make_unique<exec::Executor>(session.engine(), graph_);
  if (platform::TraceSink* trace = session.trace()) {
    // One stream for the whole group: shown on the group's first accelerator.
    executor_->add_observer(trace->watch_graph(graph_, [first = spec_.accelerators.first](int, int) { return first; }));
  }
  start_ps_ = session.engine().now();
  executor_->on_finished([this] {
    end_ps_ = session_->engine().now();
    const bool more = spec_.rounds == 0 ? !stopped_ : rounds_started_ < spec_.rounds;
    if (more) {
      add_round();
    } else if (on_done_) {
      on_done_();
    }
  });
  add_round();
  executor_->start();
}

std::unique_ptr<platform::WorkloadResult> CollectiveLoop::finish(platform::Session& /*session*/) {
  (void)executor_->finish();
  auto result = std::make_unique<platform::WorkloadResult>();
  result->kind = "collective-loop";
  const double busy_s = engine::ps_to_seconds(end_ps_ - start_ps_);
  const double rounds = static_cast<double>(rounds_started_);
  result->metrics = {{"rounds", rounds, ""},
                     {"bytes_per_round", spec_.bytes, "B"},
                     {"busy_time", busy_s, "s"},
                     {"mean_round_time", rounds > 0 ? busy_s / rounds : 0.0, "s"},
                     {"algorithm_bandwidth", busy_s > 0 ? rounds * spec_.bytes / busy_s : 0.0, "B/s"}};
  result->notes.push_back(fmt::format("{} of {} B over accelerators [{}, {}), {}", models::collective_name(spec_.collective),
                                      spec_.bytes, spec_.accelerators.first, spec_.accelerators.end(),
                                      spec_.rounds == 0 ? "repeated until the primary workload finished"
                                                        : fmt::format("{} rounds", spec_.rounds)));
  return result;
}

}  // namespace clustersim::synthetic
