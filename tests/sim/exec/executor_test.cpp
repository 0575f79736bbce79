#include "sim/exec/executor.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace executor_test {

using clustersim::ConfigError;
using clustersim::SimulationError;
using clustersim::engine::Engine;
using clustersim::exec::Executor;
using clustersim::exec::TaskGraph;
using clustersim::exec::TaskId;
using clustersim::exec::TaskKind;
using clustersim::engine::TimePs;

namespace {

/// A run's result with every task's times (TaskTimesRecorder of instance 0), padded to the
/// graph's tasks (-1) and streams (busy 0, end at the start time).
struct RecordedRun {
  std::vector<TimePs> start_ps, end_ps, stream_busy_ps, stream_end_ps, stream_slowdown_ps;
  TimePs start_time_ps = 0, makespan_ps = 0;
};

RecordedRun run(TaskGraph& graph, Engine& engine, clustersim::exec::ExecutionOptions options = {}) {
  clustersim::exec::TaskTimesRecorder recorder;
  clustersim::exec::ExecutionObserver* observers[] = {&recorder};
  const auto result = clustersim::exec::run_graph(engine, graph, std::move(options), {}, observers);
  RecordedRun out;
  out.start_time_ps = result.start_time_ps;
  out.makespan_ps = result.makespan_ps;
  const auto pad = [](std::vector<TimePs> values, std::size_t size, TimePs fill) {
    values.resize(size, fill);
    return values;
  };
  out.start_ps = pad(recorder.start_ps, graph.task_count(), -1);
  out.end_ps = pad(recorder.end_ps, graph.task_count(), -1);
  out.stream_busy_ps = pad(recorder.stream_busy_ps, graph.stream_count(), 0);
  out.stream_end_ps = pad(recorder.stream_end_ps, graph.stream_count(), result.start_time_ps);
  out.stream_slowdown_ps = pad(recorder.stream_slowdown_ps, graph.stream_count(), 0);
  return out;
}

}  // namespace

TEST_CASE("a chain across two streams runs back to back") {
  TaskGraph graph;
  const auto compute = graph.add_stream("compute");
  const auto comm = graph.add_stream("comm");
  const TaskId a = graph.add_task(compute, 100, TaskKind::compute, "a");
  const TaskId b = graph.add_task(comm, 30, TaskKind::communication, "b", {a});
  const TaskId c = graph.add_task(compute, 50, TaskKind::compute, "c", {b});
  Engine engine(7);
  const auto result = run(graph, engine);
  CHECK(result.start_ps[static_cast<std::size_t>(a)] == 0);
  CHECK(result.start_ps[static_cast<std::size_t>(b)] == 100);
  CHECK(result.start_ps[static_cast<std::size_t>(c)] == 130);
  CHECK(result.end_ps[static_cast<std::size_t>(c)] == 180);
  CHECK(result.makespan_ps == 180);
  CHECK(result.stream_busy_ps[0] == 150);
  CHECK(result.stream_busy_ps[1] == 30);
  CHECK(result.stream_end_ps[1] == 130);
  // A finish per task; fixed kernels that may start when their prerequisite ends start from
  // its event (an asynchronous or group task, or one with a release time, from its own).
  CHECK(engine.events_fired() == 3);
}

TEST_CASE("independent streams overlap") {
  TaskGraph graph;
  const auto s0 = graph.add_stream("s0");
  const auto s1 = graph.add_stream("s1");
  graph.add_task(s0, 40, TaskKind::compute, "x0");
  graph.add_task(s0, 60, TaskKind::compute, "x1");
  graph.add_task(s1, 70, TaskKind::communication, "y0");
  Engine engine;
  const auto result = run(graph, engine);
  CHECK(result.start_ps[1] == 40);
  CHECK(result.start_ps[2] == 0);
  CHECK(result.makespan_ps == 100);  // max(40 + 60, 70), not the sum 170
}

TEST_CASE("a stream is FIFO even when a later task is ready") {
  TaskGraph graph;
  const auto main = graph.add_stream("main");
  const auto side = graph.add_stream("side");
  const TaskId slow = graph.add_task(side, 500, TaskKind::communication, "slow");
  const TaskId blocked = graph.add_task(main, 10, TaskKind::compute, "blocked", {slow});
  const TaskId ready = graph.add_task(main, 10, TaskKind::compute, "ready");
  Engine engine;
  const auto result = run(graph, engine);
  CHECK(result.start_ps[static_cast<std::size_t>(blocked)] == 500);
  CHECK(result.start_ps[static_cast<std::size_t>(ready)] == 510);
  CHECK(result.stream_end_ps[0] == 520);
}

TEST_CASE("a forward dependency is honoured and times start from engine.now()") {
  TaskGraph graph;
  const auto s0 = graph.add_stream("s0");
  const auto s1 = graph.add_stream("s1");
  const TaskId first = graph.add_task(s0, 5, TaskKind::compute, "first");
  const TaskId later = graph.add_task(s1, 20, TaskKind::compute, "later");
  graph.add_dependency(first, later);
  Engine engine;
  engine.schedule_at(1000, [](Engine&) {});
  engine.run();
  const auto result = run(graph, engine);
  CHECK(result.start_time_ps == 1000);
  CHECK(result.start_ps[static_cast<std::size_t>(first)] == 1020);
  CHECK(result.makespan_ps == 25);
}

TEST_CASE("a release time holds a ready task until its host issues it, counted from the start") {
  // A host issuing one op every 30 ps ahead of a device whose ops take 50, 10 and 10 ps: the
  // first op waits for its issue at 30; the others are issued before the device is free. Issued
  // at 200 instead, the third waits 110 ps after it is ready.
  TaskGraph graph;
  const auto device = graph.add_stream("device");
  const TaskId a = graph.add_task(device, 50, TaskKind::compute, "a");
  const TaskId b = graph.add_task(device, 10, TaskKind::compute, "b");
  const TaskId c = graph.add_task(device, 10, TaskKind::compute, "c");
  graph.set_release(a, 30);
  graph.set_release(b, 60);
  graph.set_release(c, 90);
  CHECK_THROWS_AS(graph.set_release(c, -1), ConfigError);
  CHECK_THROWS_AS(graph.set_release(7, 1), ConfigError);
  struct Ready final : clustersim::exec::ExecutionObserver {
    std::map<TaskId, std::pair<TimePs, TimePs>> seen;  // ready, start
    void on_task_start(const clustersim::exec::TaskEvent& e) override { seen[e.task] = {e.ready_ps, e.start_ps}; }
  } ready;
  Engine engine;
  engine.schedule_at(1000, [](Engine&) {});
  engine.run();
  clustersim::exec::ExecutionObserver* observers[] = {&ready};
  const auto result = clustersim::exec::run_graph(engine, graph, {}, {}, observers);
  CHECK(ready.seen[a] == std::pair<TimePs, TimePs>{1000, 1030});
  CHECK(ready.seen[b] == std::pair<TimePs, TimePs>{1080, 1080});
  CHECK(ready.seen[c] == std::pair<TimePs, TimePs>{1090, 1090});
  CHECK(result.makespan_ps == 100);
  graph.set_release(c, 200);
  Engine later;
  CHECK(clustersim::exec::run_graph(later, graph).makespan_ps == 210);
}

TEST_CASE("a deadlock names the blocked task of each stream and what it waits on") {
  TaskGraph graph;
  const auto compute = graph.add_stream("stage 2 compute");
  const auto recv = graph.add_stream("stage 3 send");
  const TaskId bwd = graph.add_task(compute, 10, TaskKind::compute, "bwd mb3 layer7");
  const TaskId fwd = graph.add_task(compute, 10, TaskKind::compute, "fwd mb4 layer0");
  const TaskId grad = graph.add_task(recv, 10, TaskKind::communication, "recv grad mb3 from stage 3");
  graph.add_dependency(bwd, grad);
  graph.add_dependency(grad, fwd);  // grad waits on a task queued behind bwd: cycle via FIFO
  Engine engine;
  try {
    run(graph, engine);
    FAIL("expected a deadlock");
  } catch (const SimulationError& error) {
    const std::string message = error.what();
    CHECK(message.find("3 of 3 tasks never ran") != std::string::npos);
    CHECK(message.find("stage 2 compute stream blocked at 'bwd mb3 layer7' waiting for "
                       "'recv grad mb3 from stage 3'") != std::string::npos);
    CHECK(message.find("stage 3 send stream blocked at 'recv grad mb3 from stage 3' waiting for "
                       "'fwd mb4 layer0'") != std::string::npos);
  }
}

TEST_CASE("an empty graph gives an empty result") {
  TaskGraph graph;
  graph.add_stream("idle");
  Engine engine;
  const auto result = run(graph, engine);
  CHECK(result.makespan_ps == 0);
  CHECK(result.start_ps.empty());
  CHECK(result.stream_busy_ps.size() == 1);
  CHECK(engine.events_fired() == 0);
}

TEST_CASE("invalid graph construction is rejected with a message") {
  TaskGraph graph;
  const auto s = graph.add_stream("s");
  CHECK_THROWS_WITH_AS(graph.add_task(3, 1, TaskKind::compute, "t"),
                       "task 't': unknown stream 3 (graph has 1 streams)", ConfigError);
  CHECK_THROWS_WITH_AS(graph.add_task(s, -1, TaskKind::compute, "neg"),
                       "task 'neg': duration must be >= 0 ps, got -1 ps", ConfigError);
  CHECK_THROWS_WITH_AS(graph.add_task(s, 1, TaskKind::compute, "u", {0}),
                       "task 'u': unknown prerequisite task 0 (graph has 0 tasks)", ConfigError);
  const TaskId t = graph.add_task(s, 1, TaskKind::compute, "t");
  CHECK_THROWS_WITH_AS(graph.add_dependency(t, t), "task 't' cannot depend on itself", ConfigError);
  CHECK_THROWS_WITH_AS(graph.add_dependency(t, 9), "dependency prerequisite 9 is not a task (graph has 1 tasks)",
                       ConfigError);
}

TEST_CASE("labels are kept whole across the graph's blocks, empty ones too; one beyond the limit is refused") {
  TaskGraph graph;
  const auto s = graph.add_stream("s");
  // Labels of 40,000 bytes among short ones: label blocks of 4 KB doubling up to 1 MiB (26 of
  // the long ones fill one), a long label opening a block of its own size where that is larger;
  // the tasks pass many blocks of their own. Each label ends with its task's number.
  std::vector<std::string> written;
  for (int i = 0; i < 5'000; ++i) {
    const std::size_t size = i % 100 == 0 ? 40'000 : static_cast<std::size_t>(i % 7);
    written.push_back(std::string(size, static_cast<char>('a' + i % 26)) + std::to_string(i));
    if (i == 3) written.back().clear();
    const TaskId id = i % 3 == 0 ? graph.add_task(s, 1, TaskKind::compute, written.back())
                                 : graph.add_async_task(s, [](Engine&, clustersim::exec::DoneCallback) {},
                                                        TaskKind::communication, written.back());
    REQUIRE(id == i);
  }
  for (int i = 0; i < 5'000; ++i) {
    CAPTURE(i);
    CHECK(graph.label(i) == written[static_cast<std::size_t>(i)]);
    CHECK(graph.task(i).asynchronous() == (i % 3 != 0));
  }
  const std::string longest(TaskGraph::kMaxLabel, 'x');
  CHECK(graph.label(graph.add_task(s, 1, TaskKind::compute, longest)) == longest);
  CHECK_THROWS_WITH_AS(graph.add_task(s, 1, TaskKind::compute, longest + "y"),
                       "task 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...': a label of 65537 bytes is longer than the "
                       "65536 a task may have",
                       ConfigError);
  CHECK(graph.task_count() == 5'001);
}

TEST_CASE("same graph and seed give the same fingerprint; a different schedule does not") {
  auto build = [](clustersim::engine::TimePs second_duration) {
    TaskGraph graph;
    const auto a = graph.add_stream("a");
    const auto b = graph.add_stream("b");
    const TaskId x = graph.add_task(a, 10, TaskKind::compute, "x");
    graph.add_task(b, second_duration, TaskKind::compute, "y", {x});
    graph.add_task(a, 10, TaskKind::compute, "z");
    return graph;
  };
  auto fingerprint = [](TaskGraph graph) {
    Engine engine(3);
    run(graph, engine);
    return engine.fingerprint();
  };
  const auto g1 = build(5);
  const auto g2 = build(5);
  const auto g3 = build(6);
  CHECK(fingerprint(g1) == fingerprint(g2));
  CHECK(fingerprint(g1) != fingerprint(g3));
}

TEST_CASE("200k tasks on 8 streams chained across streams finish at the hand-computed makespan") {
  TaskGraph graph;
  constexpr int kStreams = 8;
  constexpr int kPerStream = 25'000;
  graph.reserve_dependencies(kStreams * kPerStream);
  for (int s = 0; s < kStreams; ++s) graph.add_stream(fmt::format("s{}", s));
  TaskId previous = -1;
  for (int i = 0; i < kPerStream; ++i) {
    for (int s = 0; s < kStreams; ++s) {
      const TaskId id = graph.add_task(s, 1 + s, TaskKind::compute, "t");
      if (previous >= 0 && s == 0) graph.add_dependency(id, previous);  // stream 0 waits on stream 7
      previous = id;
    }
  }
  Engine engine;
  const auto result = run(graph, engine);
  // Stream 0's i-th task waits for stream 7's (i-1)-th, which ends no earlier than 8*i; the
  // chain makes stream 7 the bottleneck: its 25k tasks of 8 ps each, plus the first lag.
  CHECK(result.makespan_ps == 8 * kPerStream);
}

TEST_CASE("an asynchronous task ends when its start hook's callback is called") {
  TaskGraph graph;
  const auto compute = graph.add_stream("compute");
  const auto comm = graph.add_stream("comm");
  const TaskId a = graph.add_task(compute, 100, TaskKind::compute, "a");
  // The hook finishes the task 70 ps after it starts, from an engine event.
  const TaskId b = graph.add_async_task(
      comm,
      [](Engine& engine, clustersim::exec::DoneCallback done) {
        engine.schedule_after(70, [done = std::move(done)](Engine& e) { done(e); });
      },
      TaskKind::communication, "b", {a});
  const TaskId c = graph.add_task(compute, 50, TaskKind::compute, "c", {b});
  // Ends at once: the callback is called from the hook itself.
  const TaskId d = graph.add_async_task(
      comm, [](Engine& engine, clustersim::exec::DoneCallback done) { done(engine); }, TaskKind::idle, "d");
  Engine engine(7);
  const auto result = run(graph, engine);
  CHECK(result.start_ps[static_cast<std::size_t>(b)] == 100);
  CHECK(result.end_ps[static_cast<std::size_t>(b)] == 170);
  CHECK(result.start_ps[static_cast<std::size_t>(c)] == 170);
  CHECK(result.end_ps[static_cast<std::size_t>(c)] == 220);
  CHECK(result.start_ps[static_cast<std::size_t>(d)] == 170);  // behind b in the FIFO
  CHECK(result.end_ps[static_cast<std::size_t>(d)] == 170);
  CHECK(result.makespan_ps == 220);
  CHECK(result.stream_busy_ps[1] == 70);  // b's 70 ps + d's 0
  CHECK(graph.task(b).duration_ps == 0);
}

TEST_CASE("asynchronous tasks: a missing hook, a double completion and a lost completion are errors") {
  TaskGraph graph;
  const auto s = graph.add_stream("comm");
  CHECK_THROWS_WITH_AS(graph.add_async_task(s, {}, TaskKind::communication, "x"),
                       "asynchronous task 'x' has no start hook", ConfigError);
  CHECK_THROWS_WITH_AS(graph.add_async_task(5, [](Engine&, clustersim::exec::DoneCallback) {}, TaskKind::communication, "y"),
                       "task 'y': unknown stream 5 (graph has 1 streams)", ConfigError);

  TaskGraph twice;
  const auto t = twice.add_stream("comm");
  twice.add_async_task(
      t, [](Engine& engine, clustersim::exec::DoneCallback done) { done(engine); done(engine); },
      TaskKind::communication, "twice");
  Engine engine;
  CHECK_THROWS_WITH_AS(run(twice, engine), "task 'twice' signalled completion twice", SimulationError);

  TaskGraph lost;
  const auto u = lost.add_stream("comm");
  lost.add_async_task(u, [](Engine&, clustersim::exec::DoneCallback) {}, TaskKind::communication, "lost");
  lost.add_task(u, 10, TaskKind::compute, "after");
  Engine other;
  CHECK_THROWS_WITH_AS(run(lost, other),
                       "task graph deadlocked: 2 of 2 tasks never ran; comm stream blocked at 'lost' waiting for ",
                       SimulationError);
}

TEST_CASE("communication on the same device slows compute while it runs, and only then") {
  // Device 0: compute task of 1000 ps; a 400 ps communication task from t = 200. At rate 0.8
  // while communicating: 200 ps at full speed, 400 ps at 0.8 (320 ps of work), then the last
  // 480 ps of work at full speed: ends at 1080 ps.
  using clustersim::exec::StreamRole;
  TaskGraph graph;
  const auto compute = graph.add_stream("compute", 0, StreamRole::compute);
  const auto comm = graph.add_stream("comm", 0, StreamRole::communication);
  const auto other_device = graph.add_stream("compute 1", 1, StreamRole::compute);
  const auto delay = graph.add_stream("delay");
  const TaskId work = graph.add_task(compute, 1000, TaskKind::compute, "work");
  const TaskId wait = graph.add_task(delay, 200, TaskKind::idle, "wait");
  graph.add_task(comm, 400, TaskKind::communication, "reduce", {wait});
  const TaskId untouched = graph.add_task(other_device, 1000, TaskKind::compute, "other device");
  Engine engine;
  clustersim::exec::ExecutionOptions options;
  options.compute_rate_while_communicating = {0.8, 0.8};
  const auto result = run(graph, engine, options);
  CHECK(result.end_ps[static_cast<std::size_t>(work)] == 1080);
  CHECK(result.stream_slowdown_ps[static_cast<std::size_t>(compute)] == 80);
  CHECK(result.end_ps[static_cast<std::size_t>(untouched)] == 1000);  // another device's comm is not its
  // Without the option, nothing slows.
  Engine plain;
  CHECK(run(graph, plain).end_ps[static_cast<std::size_t>(work)] == 1000);
  // A task that starts while communication runs starts slow: 500 ps of work at 0.5 during
  // the 400 ps of communication (200 ps of work), then 300 ps: ends at 700.
  TaskGraph second;
  const auto c2 = second.add_stream("compute", 0, StreamRole::compute);
  const auto m2 = second.add_stream("comm", 0, StreamRole::communication);
  second.add_task(m2, 400, TaskKind::communication, "reduce");
  const TaskId late = second.add_task(c2, 500, TaskKind::compute, "work");
  Engine e2;
  options.compute_rate_while_communicating = {0.5};
  CHECK(run(second, e2, options).end_ps[static_cast<std::size_t>(late)] == 700);
  options.compute_rate_while_communicating = {0.0};
  CHECK_THROWS_WITH_AS(Executor(e2, second, options), "compute rate while communicating of device 0 must be in (0, 1], got 0",
                       ConfigError);
  CHECK_THROWS_WITH_AS(second.add_stream("bad", -2), "stream 'bad': device must be >= -1, got -2", ConfigError);
}

namespace {

/// Records every task instance's start and end as observers see them.
struct Recording : clustersim::exec::ExecutionObserver {
  struct Seen {
    TaskId task;
    int instance;
    clustersim::exec::StreamId stream;
    TimePs start = -1, end = -1;
    TaskId released_by = -1;
  };
  std::vector<Seen> started, ended;
  void on_task_start(const clustersim::exec::TaskEvent& e) override {
    CHECK(e.end_ps == -1);
    started.push_back({e.task, e.instance, e.info().stream, e.start_ps, -1, e.released_by});
  }
  void on_task_end(const clustersim::exec::TaskEvent& e) override {
    ended.push_back({e.task, e.instance, e.info().stream, e.start_ps, e.end_ps, -1});
  }
};

}  // namespace

TEST_CASE("an observer sees every task instance exactly once, start <= end, never two at once on a stream") {
  using clustersim::exec::GroupMembership;
  using clustersim::exec::Replication;
  using clustersim::exec::StreamRole;
  // Three instances of a graph with a synchronising task, cross-stream dependencies and
  // compute sharing, so starts are delayed and durations stretched.
  TaskGraph graph;
  const auto compute = graph.add_stream("compute", 0, StreamRole::compute);
  const auto comm = graph.add_stream("comm", 0, StreamRole::communication);
  const TaskId a = graph.add_task(compute, 100, TaskKind::compute, "a");
  const TaskId sync = graph.add_task(comm, 40, TaskKind::communication, "all-reduce", {a});
  graph.set_sync(sync, 1);
  graph.add_task(compute, 70, TaskKind::compute, "b");
  const TaskId c = graph.add_task(compute, 30, TaskKind::compute, "c", {sync});
  graph.add_task(comm, 25, TaskKind::communication, "send", {c});
  Replication replication;
  replication.instances = 3;
  replication.group_of = [](int, TaskId task) { return GroupMembership{static_cast<std::uint64_t>(task), 3}; };
  Engine engine;
  clustersim::exec::ExecutionOptions options;
  options.compute_rate_while_communicating = {0.5};
  Executor executor(engine, graph, options, replication);
  executor.set_device_speed(2, 0, 0.5);  // instance 2 is a straggler: the group waits for it
  Recording seen;
  executor.add_observer(seen);
  executor.start();
  engine.run();
  const auto result = executor.finish();
  REQUIRE(seen.started.size() == graph.task_count() * 3);
  REQUIRE(seen.ended.size() == graph.task_count() * 3);
  std::map<std::pair<TaskId, int>, int> count;
  for (const auto& e : seen.ended) {
    ++count[{e.task, e.instance}];
    CHECK(e.start <= e.end);
  }
  for (const auto& [key, n] : count) CHECK(n == 1);
  // Per (instance, stream): ended in FIFO order, each starting no earlier than the last ended.
  std::map<std::pair<int, int>, TimePs> last_end;
  for (const auto& e : seen.ended) {
    const auto key = std::make_pair(e.instance, static_cast<int>(e.stream));
    if (last_end.count(key) != 0) CHECK(e.start >= last_end[key]);
    last_end[key] = e.end;
  }
  // The group task starts for all three when the straggler's `a` (200 ps at half speed) ends.
  for (const auto& e : seen.started) {
    if (e.task == sync) CHECK(e.start == 200);
  }
  CHECK(result.makespan_ps > 0);
}

TEST_CASE("released_by names the prerequisite whose end started a task") {
  TaskGraph graph;
  const auto s0 = graph.add_stream("s0");
  const auto s1 = graph.add_stream("s1");
  const TaskId early = graph.add_task(s1, 10, TaskKind::compute, "early");
  const TaskId late = graph.add_task(s1, 50, TaskKind::communication, "late");
  const TaskId first = graph.add_task(s0, 20, TaskKind::compute, "first");
  const TaskId waits = graph.add_task(s0, 5, TaskKind::compute, "waits", {early, late});
  const TaskId follows = graph.add_task(s0, 5, TaskKind::compute, "follows");
  Engine engine;
  Recording seen;
  clustersim::exec::ExecutionObserver* observers[] = {&seen};
  clustersim::exec::run_graph(engine, graph, {}, {}, observers);
  for (const auto& e : seen.started) {
    if (e.task == waits) {
      CHECK(e.released_by == late);  // ends at 60, after `first` (20) and `early` (10)
      CHECK(e.start == 60);
    }
    if (e.task == follows || e.task == first) CHECK(e.released_by == -1);  // its stream's order
  }
}

TEST_CASE("tasks added while the engine runs start when their stream and prerequisites allow") {
  TaskGraph graph;
  const auto main = graph.add_stream("main");
  const TaskId a = graph.add_task(main, 100, TaskKind::compute, "a");
  Engine engine;
  Executor executor(engine, graph);
  Recording seen;
  executor.add_observer(seen);
  int finished_calls = 0;
  executor.on_finished([&] { ++finished_calls; });
  TaskId added = -1, later = -1;
  clustersim::exec::StreamId side = -1;
  // At 40 ps, while `a` runs: a task on a new stream that waits for `a`, and one behind `a`.
  engine.schedule_at(40, [&](Engine&) {
    side = executor.add_stream("side");
    const TaskId after_a[] = {a};
    added = executor.add_task(side, 30, TaskKind::communication, "after a", after_a);
    later = executor.add_task(main, 10, TaskKind::compute, "behind a");
  });
  // At 500 ps, after everything ended: a task on an idle stream starts at once.
  TaskId tail = -1;
  engine.schedule_at(500, [&](Engine&) { tail = executor.add_task(main, 7, TaskKind::compute, "tail"); });
  executor.start();
  engine.run();
  const auto result = executor.finish();
  std::map<TaskId, std::pair<TimePs, TimePs>> times;
  for (const auto& e : seen.ended) times[e.task] = {e.start, e.end};
  CHECK(times[added] == std::make_pair<TimePs, TimePs>(100, 130));
  CHECK(times[later] == std::make_pair<TimePs, TimePs>(100, 110));
  CHECK(times[tail] == std::make_pair<TimePs, TimePs>(500, 507));
  CHECK(result.makespan_ps == 507);
  CHECK(finished_calls == 2);  // once after `after a`, once after `tail`
  CHECK(executor.finished());
  // A prerequisite that already ended counts as done.
  Engine again;
  TaskGraph g2;
  const auto s = g2.add_stream("s");
  const TaskId x = g2.add_task(s, 10, TaskKind::compute, "x");
  Executor e2(again, g2);
  e2.start();
  again.run();
  const TaskId after_x[] = {x};
  const TaskId y = e2.add_task(s, 5, TaskKind::compute, "y", after_x);
  again.run();
  CHECK(e2.finish().makespan_ps == 15);
  CHECK(y == 1);
}

TEST_CASE("a device speed profile slows, stalls and resumes a running kernel") {
  using clustersim::engine::Profile;
  using clustersim::exec::StreamRole;
  TaskGraph graph;
  const auto compute = graph.add_stream("compute", 0, StreamRole::compute);
  const auto comm = graph.add_stream("comm", 0, StreamRole::communication);
  const TaskId work = graph.add_task(compute, 1000, TaskKind::compute, "work");
  const TaskId transfer = graph.add_task(comm, 1000, TaskKind::communication, "transfer");
  Engine engine;
  Executor executor(engine, graph);
  // 0-200 ps at full speed (200 ps of work), 200-600 at half (200), stalled 600-1000, then
  // the last 600 at full speed: ends at 1600. Communication is not slowed.
  executor.apply_speed_profile(0, 0, Profile{1.0, {{200, 0.5}, {600, 0.0}, {1000, 1.0}}});
  Recording seen;
  executor.add_observer(seen);
  executor.start();
  engine.run();
  executor.finish();
  for (const auto& e : seen.ended) {
    if (e.task == work) CHECK(e.end == 1600);
    if (e.task == transfer) CHECK(e.end == 1000);
  }
  // A stall that never lifts is a deadlock naming the task.
  TaskGraph stuck;
  const auto c2 = stuck.add_stream("compute", 0, StreamRole::compute);
  stuck.add_task(c2, 100, TaskKind::compute, "frozen");
  Engine e2;
  Executor frozen(e2, stuck);
  frozen.set_device_speed(0, 0, 0.0);
  frozen.start();
  e2.run();
  CHECK_THROWS_WITH_AS(frozen.finish(), doctest::Contains("compute stream blocked at 'frozen'"), SimulationError);
  // Bad speeds and profiles are configuration errors.
  CHECK_THROWS_WITH_AS(frozen.set_device_speed(0, 0, -1.0), "device speed must be a finite number >= 0, got -1",
                       ConfigError);
  CHECK_THROWS_WITH_AS(frozen.set_device_speed(3, 0, 1.0), "device speed: instance 3 is not in [0, 1)", ConfigError);
  CHECK_THROWS_WITH_AS(frozen.apply_speed_profile(0, 0, Profile{1.0, {{300, 0.5}, {200, 1.0}}}),
                       "speed profile of device 0 of instance 0: change times must increase, got 200 ps after 300 ps",
                       ConfigError);
  CHECK_THROWS_WITH_AS(executor.apply_speed_profile(0, 0, Profile{1.0, {{10, 0.5}}}),
                       "speed profile of device 0 of instance 0: a change at 10 ps is in the past (now 1600 ps)",
                       ConfigError);
}

TEST_CASE("profiles: value_at and validation") {
  using clustersim::engine::Profile;
  const Profile p{2.0, {{10, 3.0}, {20, 0.0}}};
  CHECK(p.value_at(0) == 2.0);
  CHECK(p.value_at(10) == 3.0);
  CHECK(p.value_at(19) == 3.0);
  CHECK(p.value_at(25) == 0.0);
  CHECK(Profile::constant(0.9).is_constant());
  CHECK_THROWS_WITH_AS(clustersim::engine::check_profile(p, "link 3", 0.0, true),
                       "link 3: the value at 20 ps must be a finite number > 0, got 0", ConfigError);
  CHECK_THROWS_WITH_AS(clustersim::engine::check_profile(Profile{1.0, {{-5, 1.0}}}, "x", 0.0, false),
                       "x: a change at -5 ps is before time 0", ConfigError);
}

TEST_CASE("a task counter reports progress at the start, every N ends and at the last, without changing the run") {
  const auto chain = [](TaskGraph& graph) {
    const auto stream = graph.add_stream("compute");
    TaskId previous = graph.add_task(stream, 10, TaskKind::compute, "t0");
    for (int i = 1; i < 10; ++i) previous = graph.add_task(stream, 10, TaskKind::compute, fmt::format("t{}", i), {previous});
  };
  TaskGraph graph;
  chain(graph);
  std::vector<std::pair<std::size_t, std::size_t>> reports;
  clustersim::exec::TaskCountObserver counter(
      graph.task_count(), [&](std::size_t done, std::size_t total) { reports.emplace_back(done, total); }, 4);
  clustersim::exec::ExecutionObserver* observers[] = {&counter};
  Engine engine(3);
  const auto counted = clustersim::exec::run_graph(engine, graph, {}, {}, observers);
  using Reports = std::vector<std::pair<std::size_t, std::size_t>>;
  CHECK(reports == Reports{{0, 10}, {4, 10}, {8, 10}, {10, 10}});
  CHECK(counter.done() == 10);
  // The same graph without the counter: the same times and events.
  TaskGraph plain;
  chain(plain);
  Engine other(3);
  const auto uncounted = clustersim::exec::run_graph(other, plain, {}, {}, {});
  CHECK(uncounted.makespan_ps == counted.makespan_ps);
  CHECK(other.fingerprint() == engine.fingerprint());
  // More ends than the tasks known at the start (tasks added while running) raise the total.
  std::vector<std::pair<std::size_t, std::size_t>> grown;
  clustersim::exec::TaskCountObserver small(2, [&](std::size_t done, std::size_t total) { grown.emplace_back(done, total); },
                                            100);
  clustersim::exec::TaskEvent event;
  for (int i = 0; i < 3; ++i) small.on_task_end(event);
  CHECK(grown == Reports{{0, 2}, {2, 2}, {3, 3}});
}

}  // namespace executor_test
