#include "sim/exec/executor.hpp"

#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

using clustersim::ConfigError;
using clustersim::SimulationError;
using clustersim::engine::Engine;
using clustersim::exec::Executor;
using clustersim::exec::TaskGraph;
using clustersim::exec::TaskId;
using clustersim::exec::TaskKind;

TEST_CASE("a chain across two streams runs back to back") {
  TaskGraph graph;
  const auto compute = graph.add_stream("compute");
  const auto comm = graph.add_stream("comm");
  const TaskId a = graph.add_task(compute, 100, TaskKind::compute, "a");
  const TaskId b = graph.add_task(comm, 30, TaskKind::tp_comm, "b", {a});
  const TaskId c = graph.add_task(compute, 50, TaskKind::compute, "c", {b});
  Engine engine(7);
  const auto result = Executor(graph).run(engine);
  CHECK(result.start_ps[static_cast<std::size_t>(a)] == 0);
  CHECK(result.start_ps[static_cast<std::size_t>(b)] == 100);
  CHECK(result.start_ps[static_cast<std::size_t>(c)] == 130);
  CHECK(result.end_ps[static_cast<std::size_t>(c)] == 180);
  CHECK(result.makespan_ps == 180);
  CHECK(result.stream_busy_ps[0] == 150);
  CHECK(result.stream_busy_ps[1] == 30);
  CHECK(result.stream_end_ps[1] == 130);
  CHECK(engine.events_fired() == 6);  // a start and a finish per task
}

TEST_CASE("independent streams overlap") {
  TaskGraph graph;
  const auto s0 = graph.add_stream("s0");
  const auto s1 = graph.add_stream("s1");
  graph.add_task(s0, 40, TaskKind::compute, "x0");
  graph.add_task(s0, 60, TaskKind::compute, "x1");
  graph.add_task(s1, 70, TaskKind::dp_comm, "y0");
  Engine engine;
  const auto result = Executor(graph).run(engine);
  CHECK(result.start_ps[1] == 40);
  CHECK(result.start_ps[2] == 0);
  CHECK(result.makespan_ps == 100);  // max(40 + 60, 70), not the sum 170
}

TEST_CASE("a stream is FIFO even when a later task is ready") {
  TaskGraph graph;
  const auto main = graph.add_stream("main");
  const auto side = graph.add_stream("side");
  const TaskId slow = graph.add_task(side, 500, TaskKind::pp_comm, "slow");
  const TaskId blocked = graph.add_task(main, 10, TaskKind::compute, "blocked", {slow});
  const TaskId ready = graph.add_task(main, 10, TaskKind::compute, "ready");
  Engine engine;
  const auto result = Executor(graph).run(engine);
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
  const auto result = Executor(graph).run(engine);
  CHECK(result.start_time_ps == 1000);
  CHECK(result.start_ps[static_cast<std::size_t>(first)] == 1020);
  CHECK(result.makespan_ps == 25);
}

TEST_CASE("a deadlock names the blocked task of each stream and what it waits on") {
  TaskGraph graph;
  const auto compute = graph.add_stream("stage 2 compute");
  const auto recv = graph.add_stream("stage 3 send");
  const TaskId bwd = graph.add_task(compute, 10, TaskKind::compute, "bwd mb3 layer7");
  const TaskId fwd = graph.add_task(compute, 10, TaskKind::compute, "fwd mb4 layer0");
  const TaskId grad = graph.add_task(recv, 10, TaskKind::pp_comm, "recv grad mb3 from stage 3");
  graph.add_dependency(bwd, grad);
  graph.add_dependency(grad, fwd);  // grad waits on a task queued behind bwd: cycle via FIFO
  Engine engine;
  try {
    Executor(graph).run(engine);
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
  const auto result = Executor(graph).run(engine);
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
  auto fingerprint = [](const TaskGraph& graph) {
    Engine engine(3);
    Executor(graph).run(engine);
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
  graph.reserve(kStreams * kPerStream, kStreams * kPerStream);
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
  const auto result = Executor(graph).run(engine);
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
      TaskKind::dp_comm, "b", {a});
  const TaskId c = graph.add_task(compute, 50, TaskKind::compute, "c", {b});
  // Ends at once: the callback is called from the hook itself.
  const TaskId d = graph.add_async_task(
      comm, [](Engine& engine, clustersim::exec::DoneCallback done) { done(engine); }, TaskKind::other, "d");
  Engine engine(7);
  const auto result = Executor(graph).run(engine);
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
  CHECK_THROWS_WITH_AS(graph.add_async_task(s, {}, TaskKind::tp_comm, "x"),
                       "asynchronous task 'x' has no start hook", ConfigError);
  CHECK_THROWS_WITH_AS(graph.add_async_task(5, [](Engine&, clustersim::exec::DoneCallback) {}, TaskKind::tp_comm, "y"),
                       "task 'y': unknown stream 5 (graph has 1 streams)", ConfigError);

  TaskGraph twice;
  const auto t = twice.add_stream("comm");
  twice.add_async_task(
      t, [](Engine& engine, clustersim::exec::DoneCallback done) { done(engine); done(engine); },
      TaskKind::tp_comm, "twice");
  Engine engine;
  CHECK_THROWS_WITH_AS(Executor(twice).run(engine), "task 'twice' signalled completion twice", SimulationError);

  TaskGraph lost;
  const auto u = lost.add_stream("comm");
  lost.add_async_task(u, [](Engine&, clustersim::exec::DoneCallback) {}, TaskKind::tp_comm, "lost");
  lost.add_task(u, 10, TaskKind::compute, "after");
  Engine other;
  CHECK_THROWS_WITH_AS(Executor(lost).run(other),
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
  const TaskId wait = graph.add_task(delay, 200, TaskKind::other, "wait");
  graph.add_task(comm, 400, TaskKind::dp_comm, "reduce", {wait});
  const TaskId untouched = graph.add_task(other_device, 1000, TaskKind::compute, "other device");
  Engine engine;
  clustersim::exec::ExecutionOptions options;
  options.compute_rate_while_communicating = {0.8, 0.8};
  const auto result = Executor(graph, options).run(engine);
  CHECK(result.end_ps[static_cast<std::size_t>(work)] == 1080);
  CHECK(result.stream_slowdown_ps[static_cast<std::size_t>(compute)] == 80);
  CHECK(result.end_ps[static_cast<std::size_t>(untouched)] == 1000);  // another device's comm is not its
  // Without the option, nothing slows.
  Engine plain;
  CHECK(Executor(graph).run(plain).end_ps[static_cast<std::size_t>(work)] == 1000);
  // A task that starts while communication runs starts slow: 500 ps of work at 0.5 during
  // the 400 ps of communication (200 ps of work), then 300 ps: ends at 700.
  TaskGraph second;
  const auto c2 = second.add_stream("compute", 0, StreamRole::compute);
  const auto m2 = second.add_stream("comm", 0, StreamRole::communication);
  second.add_task(m2, 400, TaskKind::dp_comm, "reduce");
  const TaskId late = second.add_task(c2, 500, TaskKind::compute, "work");
  Engine e2;
  options.compute_rate_while_communicating = {0.5};
  CHECK(Executor(second, options).run(e2).end_ps[static_cast<std::size_t>(late)] == 700);
  options.compute_rate_while_communicating = {0.0};
  CHECK_THROWS_WITH_AS(Executor(second, options), "compute rate while communicating of device 0 must be in (0, 1], got 0",
                       ConfigError);
  CHECK_THROWS_WITH_AS(second.add_stream("bad", -2), "stream 'bad': device must be >= -1, got -2", ConfigError);
}
