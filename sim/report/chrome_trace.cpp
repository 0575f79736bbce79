#include "sim/report/chrome_trace.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <set>
#include <string_view>

#include "sim/config/units.hpp"
#include "sim/engine/error.hpp"
#include "sim/exec/task_graph.hpp"

namespace clustersim::report {
namespace {

std::string json_quoted(std::string_view text) { return nlohmann::json(text).dump(); }

int parse_rank(const std::string& text, const std::string& whole) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    throw ConfigError(fmt::format("--trace-ranks '{}': '{}' is not a rank (a number >= 0); write e.g. 0-7 or 0-3,8",
                                  whole, text));
  }
  return value;
}

engine::TimePs parse_time(const std::string& text, const std::string& whole) {
  try {
    return engine::seconds_to_ps(config::parse_quantity(text, config::Dimension::seconds));
  } catch (const ConfigError& error) {
    throw ConfigError(fmt::format("--trace-window '{}': {}", whole, error.what()));
  }
}

}  // namespace

bool TraceFilter::keeps_rank(int rank) const {
  if (ranks.empty()) return true;
  for (const auto& [first, last] : ranks) {
    if (rank >= first && rank <= last) return true;
  }
  return false;
}

std::vector<std::pair<int, int>> parse_trace_ranks(const std::string& text) {
  std::vector<std::pair<int, int>> ranges;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string part = text.substr(begin, comma - begin);
    const std::size_t dash = part.find('-');
    const int first = parse_rank(part.substr(0, dash), text);
    const int last = dash == std::string::npos ? first : parse_rank(part.substr(dash + 1), text);
    if (last < first) throw ConfigError(fmt::format("--trace-ranks '{}': range '{}' ends before it starts", text, part));
    ranges.emplace_back(first, last);
    begin = comma + 1;
  }
  return ranges;
}

std::pair<engine::TimePs, engine::TimePs> parse_trace_window(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    throw ConfigError(fmt::format("--trace-window '{}' must be FROM:TO with units, e.g. 0:5ms (a side may be empty)", text));
  }
  const std::string from = text.substr(0, colon), to = text.substr(colon + 1);
  // A bare 0 needs no unit.
  const engine::TimePs from_ps = from.empty() || from == "0" ? 0 : parse_time(from, text);
  const engine::TimePs to_ps = to.empty() ? engine::kTimeNever : to == "0" ? 0 : parse_time(to, text);
  if (to_ps < from_ps) throw ConfigError(fmt::format("--trace-window '{}' ends before it starts", text));
  return {from_ps, to_ps};
}

std::string trace_microseconds(engine::TimePs ps) {
  const char* sign = ps < 0 ? "-" : "";
  const engine::TimePs magnitude = ps < 0 ? -ps : ps;
  return fmt::format("{}{}.{:06}", sign, magnitude / 1'000'000, magnitude % 1'000'000);
}

/// Watches one executor: a complete slice per task instance that passes the filters, and a
/// flow arrow per dependency between tasks on different accelerators.
class ChromeTrace::GraphObserver final : public exec::ExecutionObserver {
 public:
  GraphObserver(ChromeTrace& trace, const exec::TaskGraph& graph, std::function<int(int, int)> accelerator_of)
      : trace_(trace), graph_(graph), accelerator_of_(std::move(accelerator_of)), tid_base_(trace.next_tid_) {
    // Streams are all added before the run (tasks may come later).
    trace.next_tid_ += static_cast<int>(graph.stream_count());
    cross_prerequisites_.resize(graph.task_count());
    for (const exec::Dependency& d : graph.dependencies()) {
      const int from = graph.stream_device(graph.task(d.prerequisite).stream);
      const int to = graph.stream_device(graph.task(d.task).stream);
      if (from != to) {
        cross_prerequisites_[static_cast<std::size_t>(d.task)].push_back(d.prerequisite);
        watched_.insert(d.prerequisite);
      }
    }
  }

  void on_task_start(const exec::TaskEvent& event) override {
    // A graph may grow while it runs (a collective loop adds its next round): tasks added
    // after the observer was made have no cross-device prerequisites it knows of.
    const auto t = static_cast<std::size_t>(event.task);
    if (t >= cross_prerequisites_.size()) return;
    const auto& prerequisites = cross_prerequisites_[t];
    if (prerequisites.empty() || !trace_.filter_.keeps_span(event.start_ps, event.start_ps)) return;
    const exec::Task& task = event.info();
    const int pid = accelerator(event.instance, task.stream);
    if (!trace_.filter_.keeps_rank(pid)) return;
    for (const exec::TaskId prerequisite : prerequisites) {
      const auto it = ended_.find(key(event.instance, prerequisite));
      if (it == ended_.end()) continue;
      const exec::Task& from = graph_.task(prerequisite);
      const int from_pid = accelerator(event.instance, from.stream);
      if (!trace_.filter_.keeps_rank(from_pid)) continue;
      const std::int64_t id = trace_.next_flow_++;
      const std::string name = json_quoted(graph_.category_name(from.traits.category));
      // The arrow leaves the prerequisite's slice (bound at its start, inside it) and enters
      // the waiting task's slice at its start.
      trace_.emit(fmt::format(R"({{"ph":"s","id":{},"name":{},"cat":"dependency","ts":{},"pid":{},"tid":{}}})", id,
                              name, trace_microseconds(it->second), from_pid, tid_base_ + from.stream));
      trace_.emit(fmt::format(R"({{"ph":"f","bp":"e","id":{},"name":{},"cat":"dependency","ts":{},"pid":{},"tid":{}}})",
                              id, name, trace_microseconds(event.start_ps), pid, tid_base_ + task.stream));
    }
  }

  void on_task_end(const exec::TaskEvent& event) override {
    if (watched_.contains(event.task)) ended_[key(event.instance, event.task)] = event.start_ps;
    if (!trace_.filter_.keeps_span(event.start_ps, event.end_ps)) return;
    const exec::Task& task = event.info();
    const int pid = accelerator(event.instance, task.stream);
    if (!trace_.filter_.keeps_rank(pid)) return;
    const int tid = tid_base_ + task.stream;
    trace_.name_process(pid, fmt::format("GPU {}", pid));
    trace_.name_thread(pid, tid, graph_.stream_name(task.stream));
    std::string args;
    if (task.traits.flops > 0) args += fmt::format(R"("flops":{:.6g})", task.traits.flops);
    if (task.traits.bytes > 0) args += fmt::format(R"({}"bytes":{:.6g})", args.empty() ? "" : ",", task.traits.bytes);
    trace_.emit(fmt::format(R"({{"ph":"X","name":{},"cat":{},"ts":{},"dur":{},"pid":{},"tid":{}{}}})", json_quoted(graph_.label(event.task)),
                            json_quoted(graph_.category_name(task.traits.category)), trace_microseconds(event.start_ps),
                            trace_microseconds(event.end_ps - event.start_ps), pid, tid,
                            args.empty() ? "" : fmt::format(R"(,"args":{{{}}})", args)));
  }

 private:
  static std::uint64_t key(int instance, exec::TaskId task) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(instance)) << 32) |
           static_cast<std::uint32_t>(task);
  }
  int accelerator(int instance, exec::StreamId stream) const {
    return accelerator_of_(instance, graph_.stream_device(stream));
  }

  ChromeTrace& trace_;
  const exec::TaskGraph& graph_;
  std::function<int(int, int)> accelerator_of_;
  int tid_base_;
  std::vector<std::vector<exec::TaskId>> cross_prerequisites_;  ///< per task
  std::set<exec::TaskId> watched_;                               ///< tasks that are such a prerequisite
  std::unordered_map<std::uint64_t, engine::TimePs> ended_;      ///< (instance, watched task) -> its start
};

ChromeTrace::ChromeTrace(std::ostream& out, TraceFilter filter) : out_(out), filter_(std::move(filter)) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

ChromeTrace::~ChromeTrace() = default;

void ChromeTrace::emit(const std::string& event, bool counted) {
  if (written_ > 0) out_ << ",\n";
  out_ << event;
  ++written_;
  if (counted) ++events_;
}

void ChromeTrace::name_process(int pid, const std::string& name) { process_names_.try_emplace(pid, name); }

void ChromeTrace::name_thread(int pid, int tid, const std::string& name) {
  const std::pair<int, int> key{pid, tid};
  for (const auto& [known, unused] : thread_names_) {
    if (known == key) return;
  }
  thread_names_.emplace_back(key, name);
}

exec::ExecutionObserver& ChromeTrace::watch_graph(const exec::TaskGraph& graph,
                                                  std::function<int(int instance, int device)> accelerator_of) {
  observers_.push_back(std::make_unique<GraphObserver>(*this, graph, std::move(accelerator_of)));
  return *observers_.back();
}

namespace {

/// `args` as the members of a JSON object: "a":1,"b":2.
std::string args_text(const platform::TraceArgs& args) {
  std::string text;
  for (const auto& [name, value] : args) text += fmt::format("{}{}:{}", text.empty() ? "" : ",", json_quoted(name), value);
  return text;
}

}  // namespace

int ChromeTrace::lane_tid(const platform::TraceLane& lane) {
  const auto [it, added] = lane_tids_.try_emplace(lane.key, next_tid_);
  if (added) ++next_tid_;
  name_process(lane.accelerator, fmt::format("GPU {}", lane.accelerator));
  name_thread(lane.accelerator, it->second, lane.name);
  return it->second;
}

void ChromeTrace::span(const platform::TraceSpan& span) {
  if (!filter_.keeps_rank(span.lane.accelerator) || !filter_.keeps_span(span.start_ps, span.end_ps)) return;
  const int tid = lane_tid(span.lane);
  emit(fmt::format(R"({{"ph":"X","name":{},"cat":{},"ts":{},"dur":{},"pid":{},"tid":{},"args":{{{}}}}})",
                   json_quoted(span.name), json_quoted(span.category), trace_microseconds(span.start_ps),
                   trace_microseconds(span.end_ps - span.start_ps), span.lane.accelerator, tid, args_text(span.args)));
}

void ChromeTrace::sample(const platform::TraceSample& sample) {
  if (!filter_.keeps_rank(sample.accelerator) || !filter_.keeps_span(sample.time_ps, sample.time_ps)) return;
  const auto [last, added] = last_samples_.try_emplace(sample.counter, sample.value);
  if (!added && last->second == sample.value) return;  // a counter holds its value until the next sample
  last->second = sample.value;
  name_process(sample.accelerator, fmt::format("GPU {}", sample.accelerator));
  emit(fmt::format(R"({{"ph":"C","name":{},"ts":{},"pid":{},"args":{{{}:{:.0f}}}}})", json_quoted(sample.counter),
                   trace_microseconds(sample.time_ps), sample.accelerator, json_quoted(sample.unit), sample.value));
}

void ChromeTrace::item(const platform::TraceItem& item) {
  if (!filter_.keeps_rank(item.lane.accelerator) || !filter_.keeps_span(item.start_ps, item.end_ps)) return;
  const int tid = lane_tid(item.lane);
  const auto slice = [&](const std::string& name, engine::TimePs from, engine::TimePs to, const std::string& args) {
    emit(fmt::format(R"({{"ph":"b","cat":{},"id":{},"name":{},"ts":{},"pid":{},"tid":{}{}}})", json_quoted(item.category),
                     item.id, json_quoted(name), trace_microseconds(from), item.lane.accelerator, tid, args));
    emit(fmt::format(R"({{"ph":"e","cat":{},"id":{},"name":{},"ts":{},"pid":{},"tid":{}}})", json_quoted(item.category),
                     item.id, json_quoted(name), trace_microseconds(to), item.lane.accelerator, tid));
  };
  // The whole item, then its phases nested in it (same category and id).
  slice(item.name, item.start_ps, item.end_ps, item.args.empty() ? "" : ",\"args\":{" + args_text(item.args) + "}");
  for (const platform::TracePhase& phase : item.phases) slice(phase.name, phase.start_ps, phase.end_ps, "");
}

void ChromeTrace::counter(int pid, bool accelerator, const std::string& process_name, const std::string& name,
                          const std::string& unit, std::span<const engine::TimePs> times_ps,
                          std::span<const double> values) {
  if (times_ps.size() != values.size()) {
    throw SimulationError(fmt::format("counter '{}' has {} times and {} values", name, times_ps.size(), values.size()));
  }
  if (accelerator && !filter_.keeps_rank(pid)) return;
  bool any = false;
  for (std::size_t i = 0; i < times_ps.size(); ++i) {
    const engine::TimePs until = i + 1 < times_ps.size() ? times_ps[i + 1] : times_ps[i];
    if (!filter_.keeps_span(times_ps[i], until)) continue;
    any = true;
    emit(fmt::format(R"({{"ph":"C","name":{},"ts":{},"pid":{},"args":{{{}:{:.6g}}}}})", json_quoted(name),
                     trace_microseconds(times_ps[i]), pid, json_quoted(unit), values[i]));
  }
  if (any) name_process(pid, process_name);
}

void ChromeTrace::finish(const std::string& metadata) {
  if (finished_) return;
  finished_ = true;
  for (const auto& [pid, name] : process_names_) {
    emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid, json_quoted(name)),
         false);
    emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})", pid,
                     pid),
         false);
  }
  for (const auto& [key, name] : thread_names_) {
    emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", key.first,
                     key.second, json_quoted(name)),
         false);
  }
  out_ << "\n],\"otherData\":" << metadata << "}\n";
}

}  // namespace clustersim::report
