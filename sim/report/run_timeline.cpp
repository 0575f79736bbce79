#include "sim/report/run_timeline.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "sim/exec/task_graph.hpp"

namespace clustersim::report {
namespace {

/// Reads the number at the front of `text` (advancing it); -1 when there is none.
int take_number(std::string_view& text) {
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc()) return -1;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

/// The (micro-batch, chunk) of a training compute task's label, "fwd mb3 chunk1 qkv" or
/// "bwd mb3 attn bwd" (sim/training/step_graph.cpp writes them), and whether it is a forward
/// task; micro-batch -1 for any other label.
std::tuple<int, int, bool> microbatch_of(std::string_view label) {
  const bool forward = label.starts_with("fwd mb");
  if (!forward && !label.starts_with("bwd mb")) return {-1, 0, false};
  label.remove_prefix(6);
  const int microbatch = take_number(label);
  int chunk = 0;
  if (label.starts_with(" chunk")) {
    label.remove_prefix(6);
    chunk = std::max(0, take_number(label));
  }
  return {microbatch, chunk, forward};
}

}  // namespace

/// Records instance 0's task slices of one graph.
class RunTimeline::GraphObserver final : public exec::ExecutionObserver {
 public:
  GraphObserver(RunTimeline& timeline, const exec::TaskGraph& graph, std::function<int(int, int)> accelerator_of)
      : timeline_(timeline), graph_(graph), accelerator_of_(std::move(accelerator_of)) {}

  void on_task_end(const exec::TaskEvent& event) override {
    if (event.instance != 0) return;
    const exec::Task& task = event.info();
    const int device = graph_.stream_device(task.stream);
    const int accelerator = accelerator_of_(0, device);
    const std::size_t row = timeline_.row_of(&graph_, static_cast<int>(task.stream), accelerator,
                                             graph_.stream_name(task.stream));
    const std::size_t kind = timeline_.kind_of(graph_.category_name(task.traits.category));
    timeline_.slices_.push_back({row, kind, event.start_ps, event.end_ps});
    const auto [microbatch, chunk, forward] = microbatch_of(graph_.label(event.task));
    if (microbatch < 0 || device < 0) return;
    ActivationSpan& span = timeline_.spans_[{device, microbatch, chunk}];
    span.stage = device;
    span.accelerator = accelerator;
    if (forward && (span.first_forward_ps < 0 || event.start_ps < span.first_forward_ps)) {
      span.first_forward_ps = event.start_ps;
    }
    if (!forward) span.last_backward_end_ps = std::max(span.last_backward_end_ps, event.end_ps);
  }

 private:
  RunTimeline& timeline_;
  const exec::TaskGraph& graph_;
  std::function<int(int, int)> accelerator_of_;
};

RunTimeline::RunTimeline() = default;
RunTimeline::~RunTimeline() = default;

exec::ExecutionObserver& RunTimeline::watch_graph(const exec::TaskGraph& graph,
                                                  std::function<int(int instance, int device)> accelerator_of) {
  observers_.push_back(std::make_unique<GraphObserver>(*this, graph, std::move(accelerator_of)));
  return *observers_.back();
}

std::size_t RunTimeline::row_of(const void* graph, int stream, int accelerator, const std::string& name) {
  const auto [it, added] = row_index_.try_emplace({graph, stream}, rows_.size());
  if (added) rows_.push_back({accelerator, name});
  return it->second;
}

std::size_t RunTimeline::kind_of(const std::string& name) {
  const auto found = std::find(kinds_.begin(), kinds_.end(), name);
  if (found != kinds_.end()) return static_cast<std::size_t>(found - kinds_.begin());
  kinds_.push_back(name);
  return kinds_.size() - 1;
}

std::vector<ActivationSpan> RunTimeline::activation_spans() const {
  std::vector<ActivationSpan> out;
  for (const auto& [key, span] : spans_) {
    if (span.first_forward_ps >= 0 && span.last_backward_end_ps >= 0) out.push_back(span);
  }
  return out;
}

std::vector<StageHbmSeries> hbm_occupancy(const RunTimeline& timeline, const training::MemoryReport& memory) {
  std::vector<StageHbmSeries> out;
  if (!memory.computed) return out;
  const std::vector<ActivationSpan> spans = timeline.activation_spans();
  for (const training::StageMemory& stage : memory.stages) {
    std::vector<std::pair<engine::TimePs, int>> changes;  // (time, +1 / -1)
    int accelerator = -1;
    for (const ActivationSpan& span : spans) {
      if (span.stage != stage.stage) continue;
      accelerator = span.accelerator;
      changes.emplace_back(span.first_forward_ps, +1);
      changes.emplace_back(span.last_backward_end_ps, -1);
    }
    if (changes.empty()) continue;
    std::sort(changes.begin(), changes.end());  // at one instant, releases (-1) before starts
    int in_flight = 0, most = 0;
    for (const auto& change : changes) most = std::max(most, in_flight += change.second);
    StageHbmSeries series;
    series.stage = stage.stage;
    series.accelerator = accelerator;
    series.capacity_bytes = memory.capacity_bytes;
    const double fixed = stage.total_bytes - stage.activations_bytes;
    const double per_microbatch = most > 0 ? stage.activations_bytes / most : 0;
    series.times_ps.push_back(0);
    series.bytes.push_back(fixed);
    in_flight = 0;
    for (const auto& [time_ps, delta] : changes) {
      in_flight += delta;
      const double bytes = fixed + per_microbatch * in_flight;
      if (series.times_ps.back() == time_ps) {
        series.bytes.back() = bytes;
      } else {
        series.times_ps.push_back(time_ps);
        series.bytes.push_back(bytes);
      }
    }
    out.push_back(std::move(series));
  }
  return out;
}

/// Hands each task event to the observers of both sinks.
class TraceTee::PairObserver final : public exec::ExecutionObserver {
 public:
  PairObserver(exec::ExecutionObserver& first, exec::ExecutionObserver& second) : first_(first), second_(second) {}
  void on_task_start(const exec::TaskEvent& event) override {
    first_.on_task_start(event);
    second_.on_task_start(event);
  }
  void on_task_end(const exec::TaskEvent& event) override {
    first_.on_task_end(event);
    second_.on_task_end(event);
  }

 private:
  exec::ExecutionObserver& first_;
  exec::ExecutionObserver& second_;
};

TraceTee::TraceTee(platform::TraceSink& first, platform::TraceSink& second) : first_(first), second_(second) {}
TraceTee::~TraceTee() = default;

exec::ExecutionObserver& TraceTee::watch_graph(const exec::TaskGraph& graph,
                                               std::function<int(int instance, int device)> accelerator_of) {
  exec::ExecutionObserver& first = first_.watch_graph(graph, accelerator_of);
  exec::ExecutionObserver& second = second_.watch_graph(graph, std::move(accelerator_of));
  observers_.push_back(std::make_unique<PairObserver>(first, second));
  return *observers_.back();
}

void TraceTee::span(const platform::TraceSpan& span) {
  first_.span(span);
  second_.span(span);
}

void TraceTee::sample(const platform::TraceSample& sample) {
  first_.sample(sample);
  second_.sample(sample);
}

void TraceTee::item(const platform::TraceItem& item) {
  first_.item(item);
  second_.item(item);
}

}  // namespace clustersim::report
