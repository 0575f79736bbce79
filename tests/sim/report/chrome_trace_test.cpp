// The Chrome trace writer on graphs and serving events small enough to derive every event by
// hand: slices, flow arrows, counters, async request slices and the rank / window filters.
#include "sim/report/chrome_trace.hpp"

#include <doctest/doctest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/engine/engine.hpp"
#include "sim/engine/error.hpp"
#include "sim/exec/executor.hpp"

namespace chrome_trace_test {

using clustersim::engine::TimePs;
namespace report = clustersim::report;
namespace exec = clustersim::exec;

namespace {

constexpr TimePs kUs = 1'000'000;

/// Two devices: device 0 runs "a" (10 us), device 1 runs "b" (5 us) after "a", then "c"
/// (2 us) after "b" on the same stream. Device d is accelerator 4 d.
nlohmann::json trace_graph(report::TraceFilter filter) {
  exec::TaskGraph graph;
  graph.set_category_names({"compute", "pp_comm"});
  const auto s0 = graph.add_stream("stage 0 compute", 0, exec::StreamRole::compute);
  const auto s1 = graph.add_stream("stage 1 compute", 1, exec::StreamRole::compute);
  const auto a = graph.add_task(s0, 10 * kUs, exec::TaskTraits(exec::TaskKind::compute, 1, 0, 64), "a");
  const auto b = graph.add_task(s1, 5 * kUs, exec::TaskTraits(exec::TaskKind::compute, 0, 1e9), "b", {a});
  graph.add_task(s1, 2 * kUs, exec::TaskTraits(exec::TaskKind::compute, 0), "c", {b});
  std::ostringstream out;
  report::ChromeTrace trace(out, std::move(filter));
  clustersim::engine::Engine engine;
  exec::ExecutionObserver* observers[] = {&trace.watch_graph(graph, [](int, int device) { return 4 * device; })};
  exec::run_graph(engine, graph, {}, {}, observers);
  trace.finish(R"({"scenario":"t"})");
  return nlohmann::json::parse(out.str());
}

std::vector<nlohmann::json> events_of(const nlohmann::json& doc, const std::string& phase) {
  std::vector<nlohmann::json> found;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == phase) found.push_back(e);
  }
  return found;
}

}  // namespace

TEST_CASE("picoseconds print as exact microseconds") {
  CHECK(report::trace_microseconds(0) == "0.000000");
  CHECK(report::trace_microseconds(1) == "0.000001");
  CHECK(report::trace_microseconds(12'345'678'901) == "12345.678901");
  CHECK(report::trace_microseconds(-1'500'000) == "-1.500000");
}

TEST_CASE("--trace-ranks and --trace-window parse and reject bad text") {
  const auto ranks = report::parse_trace_ranks("0-7,12");
  REQUIRE(ranks.size() == 2);
  CHECK(ranks[0] == std::pair{0, 7});
  CHECK(ranks[1] == std::pair{12, 12});
  report::TraceFilter filter;
  filter.ranks = ranks;
  CHECK(filter.keeps_rank(7));
  CHECK(!filter.keeps_rank(8));
  CHECK(filter.keeps_rank(12));
  CHECK_THROWS_AS(report::parse_trace_ranks("7-3"), clustersim::ConfigError);
  CHECK_THROWS_AS(report::parse_trace_ranks("a"), clustersim::ConfigError);
  CHECK_THROWS_AS(report::parse_trace_ranks("1,,2"), clustersim::ConfigError);

  CHECK(report::parse_trace_window("0:5ms") == std::pair<TimePs, TimePs>{0, 5'000'000'000});
  CHECK(report::parse_trace_window("2 us:3 us") == std::pair<TimePs, TimePs>{2 * kUs, 3 * kUs});
  CHECK(report::parse_trace_window("1ms:").second == clustersim::engine::kTimeNever);
  CHECK_THROWS_AS(report::parse_trace_window("5ms"), clustersim::ConfigError);
  CHECK_THROWS_AS(report::parse_trace_window("5ms:1ms"), clustersim::ConfigError);
  CHECK_THROWS_AS(report::parse_trace_window("0:5"), clustersim::ConfigError);  // no unit
}

TEST_CASE("a graph's tasks are slices on their accelerator and stream; a cross-device dependency is a flow") {
  const auto doc = trace_graph({});
  CHECK(doc["otherData"]["scenario"] == "t");
  const auto slices = events_of(doc, "X");
  REQUIRE(slices.size() == 3);
  // a: 0..10 us on GPU 0; b: 10..15 us and c: 15..17 us on GPU 4, another tid.
  CHECK(slices[0]["name"] == "a");
  CHECK(slices[0]["cat"] == "pp_comm");
  CHECK(slices[0]["ts"].get<double>() == 0.0);
  CHECK(slices[0]["dur"].get<double>() == 10.0);
  CHECK(slices[0]["pid"] == 0);
  CHECK(slices[0]["args"]["bytes"].get<double>() == 64.0);
  CHECK(slices[1]["name"] == "b");
  CHECK(slices[1]["ts"].get<double>() == 10.0);
  CHECK(slices[1]["dur"].get<double>() == 5.0);
  CHECK(slices[1]["pid"] == 4);
  CHECK(slices[1]["args"]["flops"].get<double>() == 1e9);
  CHECK(slices[2]["ts"].get<double>() == 15.0);
  CHECK(slices[1]["tid"] == slices[2]["tid"]);
  CHECK(slices[0]["tid"] != slices[1]["tid"]);
  // One arrow a -> b (c's prerequisite is on its own device: none).
  const auto out = events_of(doc, "s"), in = events_of(doc, "f");
  REQUIRE(out.size() == 1);
  REQUIRE(in.size() == 1);
  CHECK(out[0]["id"] == in[0]["id"]);
  CHECK(out[0]["pid"] == 0);
  CHECK(out[0]["ts"].get<double>() == 0.0);  // inside a's slice
  CHECK(in[0]["pid"] == 4);
  CHECK(in[0]["ts"].get<double>() == 10.0);  // b's start
  CHECK(in[0]["bp"] == "e");
  // Names: two processes, two threads.
  int processes = 0, threads = 0;
  for (const auto& e : events_of(doc, "M")) {
    processes += e["name"] == "process_name";
    threads += e["name"] == "thread_name";
  }
  CHECK(processes == 2);
  CHECK(threads == 2);
}

TEST_CASE("the rank and window filters cut slices and the arrows whose ends they cut") {
  report::TraceFilter ranks;
  ranks.ranks = {{4, 4}};
  const auto only_4 = trace_graph(ranks);
  const auto slices = events_of(only_4, "X");
  REQUIRE(slices.size() == 2);
  CHECK(slices[0]["name"] == "b");
  CHECK(events_of(only_4, "s").empty());

  report::TraceFilter window;
  window.from_ps = 11 * kUs;  // after a has ended, while b runs
  window.to_ps = 20 * kUs;
  const auto late = events_of(trace_graph(window), "X");
  REQUIRE(late.size() == 2);
  CHECK(late[0]["name"] == "b");  // straddles 11 us: kept whole
  CHECK(late[0]["ts"].get<double>() == 10.0);
  CHECK(late[1]["name"] == "c");

  window.from_ps = 18 * kUs;  // after everything
  window.to_ps = clustersim::engine::kTimeNever;
  const auto none = trace_graph(window);
  CHECK(events_of(none, "X").empty());
  CHECK(events_of(none, "M").empty());
}

TEST_CASE("spans are slices, samples a counter, items nested async slices (a serving replica's)") {
  std::ostringstream out;
  report::ChromeTrace trace(out, {});
  const clustersim::platform::TraceLane lane{2, 1, "replica 1 iterations"};
  trace.span({lane, "prefill", "iteration", 0, 3 * kUs, {{"sequences", 2}, {"prefill_tokens", 100}, {"decode_tokens", 0}}});
  trace.sample({2, "KV cache (replica 1)", "HBM bytes", 0, 4096});
  trace.sample({2, "KV cache (replica 1)", "HBM bytes", 3 * kUs, 4096});  // unchanged: no sample
  trace.sample({2, "KV cache (replica 1)", "HBM bytes", 5 * kUs, 8192});
  clustersim::platform::TraceItem r;
  r.lane = lane;
  r.id = 7;
  r.name = "request 7";
  r.category = "request";
  r.start_ps = 0;
  r.end_ps = 9 * kUs;
  r.phases = {{"queued", 0, 1 * kUs}, {"prefill", 1 * kUs, 3 * kUs}, {"decode", 3 * kUs, 9 * kUs}};
  trace.item(r);
  trace.finish();
  const auto doc = nlohmann::json::parse(out.str());
  const auto slices = events_of(doc, "X");
  REQUIRE(slices.size() == 1);
  CHECK(slices[0]["name"] == "prefill");
  CHECK(slices[0]["dur"].get<double>() == 3.0);
  CHECK(slices[0]["args"]["sequences"] == 2);
  const auto counters = events_of(doc, "C");
  REQUIRE(counters.size() == 2);
  CHECK(counters[1]["args"]["HBM bytes"].get<double>() == 8192.0);
  const auto begins = events_of(doc, "b"), ends = events_of(doc, "e");
  REQUIRE(begins.size() == 4);  // the request, queued, prefill, decode
  REQUIRE(ends.size() == 4);
  CHECK(begins[0]["name"] == "request 7");
  CHECK(ends[0]["ts"].get<double>() == 9.0);
  CHECK(begins[2]["name"] == "prefill");
  CHECK(begins[2]["ts"].get<double>() == 1.0);
  CHECK(ends[2]["ts"].get<double>() == 3.0);
  for (const auto& e : begins) CHECK(e["id"] == 7);
  CHECK(trace.events() == 1 + 2 + 8);
}

TEST_CASE("tasks added after the observer was made are traced (a graph that grows while it runs)") {
  exec::TaskGraph graph;
  const auto stream = graph.add_stream("loop", -1, exec::StreamRole::communication);
  graph.add_task(stream, 1 * kUs, exec::TaskTraits(exec::TaskKind::communication), "round 0");
  std::ostringstream out;
  report::ChromeTrace trace(out, {});
  auto& observer = trace.watch_graph(graph, [](int, int device) { return device < 0 ? 56 : device; });
  graph.add_task(stream, 2 * kUs, exec::TaskTraits(exec::TaskKind::communication), "round 1");
  clustersim::engine::Engine engine;
  exec::ExecutionObserver* observers[] = {&observer};
  exec::run_graph(engine, graph, {}, {}, observers);
  trace.finish();
  const auto slices = events_of(nlohmann::json::parse(out.str()), "X");
  REQUIRE(slices.size() == 2);
  CHECK(slices[1]["name"] == "round 1");
  CHECK(slices[1]["ts"].get<double>() == 1.0);
  CHECK(slices[1]["dur"].get<double>() == 2.0);
  CHECK(slices[1]["pid"] == 56);  // a stream without a device: where accelerator_of puts it
}

}  // namespace chrome_trace_test
