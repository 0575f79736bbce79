// The replica scheduler's batches, iteration by iteration, derived by hand (issue 30 part 3,
// issue 33 part 4): one instance, a few requests that all arrive at once, and the sequence of
// (sequences, prefill tokens, decode tokens) each policy must build; and (issue 34 part 1) a
// prefix loaded back from a KV-cache tier. The batches come from the
// session's trace hook, so the run is the one `clustersim run` makes.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/exec/observer.hpp"
#include "sim/platform/memory_pool.hpp"
#include "sim/platform/trace_sink.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/replica.hpp"
#include "sim/serving/serving_workload.hpp"

namespace replica_schedule_test {

using ::clustersim::tolerance::relative_approx;
using namespace clustersim;

namespace {

struct Batch {
  int sequences = 0;
  std::int64_t prefill = 0, decode = 0;
  bool operator==(const Batch&) const = default;
};

doctest::String batch_text(const std::vector<Batch>& batches) {
  std::string text;
  for (const Batch& b : batches) {
    text += "(" + std::to_string(b.sequences) + ", " + std::to_string(b.prefill) + ", " + std::to_string(b.decode) + ") ";
  }
  return text.c_str();
}

/// Records every serving iteration's batch, in order.
class BatchRecorder : public platform::TraceSink {
 public:
  exec::ExecutionObserver& watch_graph(const exec::TaskGraph&, std::function<int(int, int)>) override {
    return ignored_;
  }
  void span(const platform::TraceSpan& span) override {
    REQUIRE(span.args.size() == 3);  // sequences, prefill_tokens, decode_tokens
    batches.push_back({static_cast<int>(span.args[0].second), span.args[1].second, span.args[2].second});
  }
  void sample(const platform::TraceSample&) override {}
  void item(const platform::TraceItem& request) override {
    if (static_cast<std::size_t>(request.id) >= replica_of.size()) replica_of.resize(static_cast<std::size_t>(request.id) + 1, -1);
    replica_of[static_cast<std::size_t>(request.id)] = request.lane.key;
  }

  std::vector<Batch> batches;
  std::vector<int> replica_of;  ///< by request id: the replica that finished it

 private:
  exec::ExecutionObserver ignored_;
};

// One H100, Llama-3-8B on one instance; `count` requests of fixed lengths, all at time 0
// (offline); the scheduler's limits small enough to count by hand.
std::string scenario(int count, int input, int output, const std::string& scheduler) {
  return R"(schema_version: 1
name: replica-schedule
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 1, tp: 1}
  requests:
    count: )" + std::to_string(count) + R"(
    arrival: {process: offline}
    input: {distribution: fixed, value: )" + std::to_string(input) + R"(}
    output: {distribution: fixed, value: )" + std::to_string(output) + R"(}
  scheduler: )" + scheduler + "\n";
}

std::vector<Batch> batches_of(const std::string& yaml) {
  BatchRecorder recorder;
  const auto run = runner::run_scenario(scenario::load_scenario_from_string(yaml, "s.yaml", {}), &recorder);
  const auto* result = dynamic_cast<const serving::ServingResult*>(run.primary.get());
  REQUIRE(result != nullptr);
  CHECK(result->rejected == 0);
  return recorder.batches;
}

}  // namespace

TEST_CASE("prefill_first admits new prompts only while fewer than max_sequences are running") {
  // 4 prompts of 100 tokens, 3 output tokens each (the first with the prefill), at most 2
  // sequences: A and B are prefilled together; then, with 2 running, nothing more is admitted
  // (vLLM's SchedulingBudget counts the running sequences), so A and B decode twice and finish;
  // then C and D. Counting only the batch being built admitted C and D in the second iteration,
  // before A and B had decoded at all.
  const auto batches =
      batches_of(scenario(4, 100, 3, "{policy: prefill_first, chunked_prefill: false, max_sequences: 2, "
                                     "max_batched_tokens: 1000}"));
  const std::vector<Batch> expected = {{2, 200, 0}, {2, 0, 2}, {2, 0, 2}, {2, 200, 0}, {2, 0, 2}, {2, 0, 2}};
  CHECK_MESSAGE(batches == expected, batch_text(batches));
}

TEST_CASE("decode_first: running decodes, then the started prompt's chunk, then new prompts within the budget") {
  // 3 prompts of 100 tokens, 2 output tokens each, budget 150 tokens, at most 2 sequences.
  // 1: A whole (100), B's first 50.  2: A's decode (1), B's last 50; A ends (its 2 tokens).
  // 3: B's decode (1), C whole (100); B ends.  4: C's decode; C ends.
  const auto batches =
      batches_of(scenario(3, 100, 2, "{policy: decode_first, chunked_prefill: true, max_sequences: 2, "
                                     "max_batched_tokens: 150}"));
  const std::vector<Batch> expected = {{2, 150, 0}, {2, 50, 1}, {2, 100, 1}, {1, 0, 1}};
  CHECK_MESSAGE(batches == expected, batch_text(batches));
}

TEST_CASE("static_batch: the next batch is admitted only when the last one has ended") {
  // 3 prompts of 100 tokens, 3 output tokens, batches of 2: A and B prefill and decode to their
  // end; then C alone.
  const auto batches =
      batches_of(scenario(3, 100, 3, "{policy: static_batch, chunked_prefill: false, max_sequences: 2, "
                                     "max_batched_tokens: 1000}"));
  const std::vector<Batch> expected = {{2, 200, 0}, {2, 0, 2}, {2, 0, 2}, {1, 100, 0}, {1, 0, 1}, {1, 0, 1}};
  CHECK_MESSAGE(batches == expected, batch_text(batches));
}

TEST_CASE("the router: round robin in turn; least outstanding and shortest queue by load, ties from the turn") {
  // Two instances and a trace: A (500 output tokens, seconds of decoding) and B (2 tokens) at 0,
  // C and D at 0.5 s, when B has long finished and A has not. Round robin: 0 1 0 1. By load: A
  // and B in turn (both idle); C to instance 1 (0 outstanding against A's 1); D finds both at 1
  // and keeps the turn's instance, 1. Shortest queue looks at the waiting requests first: C,
  // arrived in the same instant, still waits at instance 1 while A runs at instance 0, so D
  // goes to 0.
  const auto trace = std::filesystem::temp_directory_path() / "clustersim-router-trace.csv";
  std::ofstream(trace) << "arrival_s,input_tokens,output_tokens\n0,100,500\n0,100,2\n0.5,100,10\n0.5,100,10\n";
  const auto routed = [&](const std::string& router) {
    std::string yaml = scenario(4, 100, 2, "{max_sequences: 8}");
    yaml.replace(yaml.find("main: {replicas: 1, tp: 1}"), 26, "main: {replicas: 2, tp: 1}");
    yaml.replace(yaml.find("arrival: {process: offline}"), 27, "arrival: {process: trace}\n    trace: " + trace.string());
    yaml += "  router: " + router + "\n";
    BatchRecorder recorder;
    (void)runner::run_scenario(scenario::load_scenario_from_string(yaml, "s.yaml", {}), &recorder);
    return recorder.replica_of;
  };
  CHECK(routed("round_robin") == std::vector<int>{0, 1, 0, 1});
  CHECK(routed("least_outstanding") == std::vector<int>{0, 1, 1, 1});
  CHECK(routed("shortest_queue") == std::vector<int>{0, 1, 1, 0});
  std::filesystem::remove(trace);
}

TEST_CASE("recv_interval: a decoding instance takes new requests in every N decode iterations (SGLang)") {
  // A (100 in, 40 out) at 0, B (100 in, 5 out) at 50 ms, while A decodes. SGLang's
  // SchedulerRecvSkipper: A's prefill iteration counts enough to take requests in before the
  // next iteration (2); each decode-only iteration counts 1, so with an interval of 8 the instance
  // takes requests in again before iterations 10, 18, ...: B's prefill runs in one of those. With
  // every iteration taking them in (1, every other framework), B starts in the first iteration
  // after it arrives, earlier (iterations 8 and 10 on this preset).
  const auto trace = std::filesystem::temp_directory_path() / "clustersim-recv-interval-trace.csv";
  std::ofstream(trace) << "arrival_s,input_tokens,output_tokens\n0,100,40\n0.05,100,5\n";
  const auto second_prefill = [&](int interval) {
    std::string yaml = scenario(2, 100, 2, "{policy: prefill_first, chunked_prefill: false, recv_interval: " +
                                               std::to_string(interval) + "}");
    yaml.replace(yaml.find("arrival: {process: offline}"), 27, "arrival: {process: trace}\n    trace: " + trace.string());
    const auto batches = batches_of(yaml);
    int seen = 0;
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (batches[i].prefill > 0 && ++seen == 2) return static_cast<int>(i) + 1;  // 1-based
    }
    FAIL("no second prefill: " << batch_text(batches));
    return 0;
  };
  const int every = second_prefill(1), eighth = second_prefill(8);
  CAPTURE(every);
  CAPTURE(eighth);
  CHECK(eighth % 8 == 2);
  CHECK(every < eighth);
  CHECK(second_prefill(1000) == 41);  // never while A decodes (its prefill, then 39 decodes): B after A
  std::filesystem::remove(trace);
}

}  // namespace replica_schedule_test

namespace replica_schedule_test {

namespace {

/// One Replica built by hand on a 6-block KV cache of 4-token blocks (24 tokens), Llama-3-8B's
/// cost on one H100 (only the order of the batches matters here), 1,000 bytes per token of KV
/// and a 1 GB/s host link for swaps. Requests A (id 0) and B (id 1), 8 tokens in and 8 out,
/// arrive together.
struct KvRun {
  std::vector<Batch> batches;
  std::vector<serving::RequestRecord> records;
  serving::ReplicaStats stats;
};

serving::InstanceLayout first_accelerator_layout(const scenario::Scenario& s) {
  serving::InstanceLayout layout;
  layout.model = dynamic_cast<const serving::ServingSpec&>(*s.workload).model;
  layout.accelerators = {0};
  return layout;
}

/// The scenario's Llama-3-8B costed alone on its first H100, and a scheduler small enough to
/// count by hand: blocks of 4 tokens, at most 8 sequences and 100 tokens per iteration.
struct OneInstance {
  OneInstance()
      : s(scenario::load_scenario_from_string(scenario(1, 8, 8, "{}"), "s.yaml", {})),
        platform(runner::build_platform(s)),
        cost(platform->compute(), platform->collectives(), first_accelerator_layout(s)) {
    scheduler.block_size = 4;
    scheduler.max_sequences = 8;
    scheduler.max_batched_tokens = 100;
  }
  scenario::Scenario s;
  std::unique_ptr<platform::Platform> platform;
  serving::IterationCostModel cost;
  serving::SchedulerSpec scheduler;
};

KvRun run_kv(serving::PreemptionMode preemption) {
  OneInstance one;
  one.scheduler.preemption = preemption;
  serving::Replica replica(0, serving::ReplicaRole::mixed, one.cost, nullptr, one.scheduler, {}, 6, 1000.0, 1e9, false);
  platform::Session session(*one.platform, one.s.simulation);
  BatchRecorder recorder;
  session.set_trace(&recorder);
  KvRun run;
  run.records.resize(2);
  for (int i = 0; i < 2; ++i) {
    run.records[static_cast<std::size_t>(i)].request.id = i;
    run.records[static_cast<std::size_t>(i)].request.input_tokens = 8;
    run.records[static_cast<std::size_t>(i)].request.output_tokens = 8;
  }
  int finished = 0;
  replica.start(session, engine::Profile::constant(1.0), {[&finished](serving::RequestRecord&) { ++finished; }, {}, {}}, 0);
  replica.hold();
  for (serving::RequestRecord& record : run.records) replica.submit(record);
  replica.release();
  session.engine().run();
  CHECK(finished == 2);
  CHECK(replica.used_blocks() == 0);
  run.batches = recorder.batches;
  run.stats = replica.stats();
  return run;
}

}  // namespace

TEST_CASE("the KV cache full: the last admitted sequence is preempted, recomputed or swapped, by hand") {
  // Both prompts prefill together (2 blocks each, 4 of 6 used) and give their first token.
  // Decodes 2-5: each sequence reaches 12 tokens of KV in 3 blocks (6 used). Decode 6: A needs a
  // 4th block for its 13th token and none is free, so B, the last admitted, is preempted (its
  // 3 blocks freed); A runs alone while B waits, since B needs 3 blocks and 2 are free, until A
  // finishes after decode 8 (8 tokens out).
  // Recompute: B had 5 tokens out, so it prefills its 8 + 4 tokens again (the 5th token's KV is
  // made by its next decode), which yields its 6th token; two decodes give the 7th and 8th.
  const KvRun recompute = run_kv(serving::PreemptionMode::recompute);
  const std::vector<Batch> prefill_again = {{2, 16, 0}, {2, 0, 2}, {2, 0, 2}, {2, 0, 2}, {2, 0, 2}, {1, 0, 1},
                                            {1, 0, 1}, {1, 0, 1}, {1, 12, 0}, {1, 0, 1}, {1, 0, 1}};
  CHECK_MESSAGE(recompute.batches == prefill_again, batch_text(recompute.batches));
  CHECK(recompute.records[0].preemptions == 0);
  CHECK(recompute.records[1].preemptions == 1);
  CHECK(recompute.stats.preemptions == 1);
  CHECK(recompute.stats.prefill_tokens == 16 + 12);
  CHECK(recompute.stats.swap_s == 0);
  CHECK(recompute.stats.peak_blocks == 6);
  // Swap: B's 12 tokens of KV go to host memory and come back when 3 blocks are free; it goes
  // on decoding (tokens 6, 7, 8) with no prefill. Each way moves 12 x 1,000 bytes at 1 GB/s.
  const KvRun swap = run_kv(serving::PreemptionMode::swap);
  const std::vector<Batch> swapped_back = {{2, 16, 0}, {2, 0, 2}, {2, 0, 2}, {2, 0, 2}, {2, 0, 2}, {1, 0, 1},
                                           {1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}};
  CHECK_MESSAGE(swap.batches == swapped_back, batch_text(swap.batches));
  CHECK(swap.records[1].preemptions == 1);
  CHECK(swap.stats.prefill_tokens == 16);
  CHECK(swap.stats.swap_s == relative_approx(2 * 12 * 1000.0 / 1e9));
}

}  // namespace replica_schedule_test

namespace replica_schedule_test {

namespace {

struct TierRun {
  std::vector<Batch> batches;
  std::vector<serving::RequestRecord> records;
  serving::ReplicaStats stats;
  serving::KvTierStats host;
};

/// One replica of 6 blocks of 4 tokens (1,000 bytes per token) with prefix caching, and a host
/// tier of 4 blocks at 1 GB/s after 1 us (none when `tiers` is false). A (prefix 1, 8 tokens,
/// all reusable) at 0 s, B (20 tokens, no prefix) at 1 s, C (12 tokens whose first 8 are
/// prefix 1) at 2 s; one output token each.
TierRun run_tiers(bool tiers, serving::TierWrite write, serving::TierLoad load, double tier_bytes_per_s = 1e9) {
  OneInstance one;
  one.scheduler.prefix_caching = true;
  serving::Replica replica(0, serving::ReplicaRole::mixed, one.cost, nullptr, one.scheduler, {}, 6, 1000.0, 1e9, false);
  if (tiers) {
    replica.set_kv_tiers(serving::KvTierStore({{"host", 4, tier_bytes_per_s, 1e-6}}, 4, 1000.0), write, load);
  }
  platform::Session session(*one.platform, one.s.simulation);
  BatchRecorder recorder;
  session.set_trace(&recorder);
  TierRun run;
  run.records.resize(3);
  const std::int64_t inputs[] = {8, 20, 12};
  for (std::size_t i = 0; i < 3; ++i) {
    serving::Request& r = run.records[i].request;
    r.id = static_cast<std::int64_t>(i);
    r.arrival_s = static_cast<double>(i);
    r.input_tokens = inputs[i];
    r.output_tokens = 1;
    if (i != 1) {
      r.prefix_id = 1;
      r.prefix_tokens = r.reusable_tokens = 8;
    }
  }
  int finished = 0;
  replica.start(session, engine::Profile::constant(1.0), {[&finished](serving::RequestRecord&) { ++finished; }, {}, {}}, 0);
  for (serving::RequestRecord& record : run.records) {
    session.engine().schedule_at(engine::seconds_to_ps(record.request.arrival_s),
                                 [&replica, &record](engine::Engine&) { replica.submit(record); });
  }
  session.engine().run();
  CHECK(finished == 3);
  run.batches = recorder.batches;
  run.stats = replica.stats();
  if (tiers) run.host = replica.kv_tiers()->stats(0);
  return run;
}

}  // namespace

TEST_CASE("a prefix HBM let go comes back from the host tier: its transfer by hand, async or blocking") {
  // A prefills 8 tokens; its 2 blocks stay cached (write-through: copied to the host as A
  // ends). B needs 5 of the 6 blocks, so A's prefix leaves HBM. C finds nothing in HBM and
  // its 8 prefix tokens in the host tier: it loads them, 8 x 1,000 B at 1 GB/s after 1 us,
  // 9 us, and prefills only its last 4 tokens. Without the tier it prefills all 12.
  const TierRun none = run_tiers(false, serving::TierWrite::write_through, serving::TierLoad::async);
  const std::vector<Batch> recomputed = {{1, 8, 0}, {1, 20, 0}, {1, 12, 0}};
  CHECK_MESSAGE(none.batches == recomputed, batch_text(none.batches));
  CHECK(none.stats.prefix_hit_tokens == 0);

  const std::vector<Batch> loaded = {{1, 8, 0}, {1, 20, 0}, {1, 4, 0}};
  const TierRun async = run_tiers(true, serving::TierWrite::write_through, serving::TierLoad::async);
  CHECK_MESSAGE(async.batches == loaded, batch_text(async.batches));
  CHECK(async.host.hits == 1);
  CHECK(async.host.loaded_tokens == 8);
  CHECK(async.host.stored_tokens == 8);  // A's prefix; C's is the same 8 tokens, already there
  CHECK(async.host.load_s == relative_approx(9e-6));
  CHECK(async.stats.prompt_tokens == 40);
  CHECK(async.stats.prefix_hit_tokens == 8);
  CHECK(async.stats.tier_hit_tokens == 8);  // hit rate 8 / 40
  CHECK(async.stats.tier_wait_s == 0);
  // Async: C is admitted when its copy has arrived; blocking: at once, its iteration 9 us longer.
  CHECK(async.records[2].scheduled_s == relative_approx(2 + 9e-6));
  const TierRun blocking = run_tiers(true, serving::TierWrite::write_through, serving::TierLoad::blocking);
  CHECK_MESSAGE(blocking.batches == loaded, batch_text(blocking.batches));
  CHECK(blocking.records[2].scheduled_s == relative_approx(2.0));
  CHECK(blocking.stats.tier_wait_s == relative_approx(9e-6));
  CHECK(blocking.records[2].first_token_s == relative_approx(async.records[2].first_token_s));
  CHECK(blocking.records[2].first_token_s < none.records[2].first_token_s);

  // A copy whose arrival is no whole number of picoseconds in seconds still lets C in when it
  // arrives (the wake-up and the check agree in the engine's picoseconds).
  for (const double bytes_per_s : {3e9, 7e9, 0.9e9}) {
    const TierRun odd = run_tiers(true, serving::TierWrite::write_through, serving::TierLoad::async, bytes_per_s);
    CHECK_MESSAGE(odd.batches == loaded, batch_text(odd.batches));
    CHECK(odd.records[2].scheduled_s == relative_approx(2 + 1e-6 + 8000 / bytes_per_s));
  }

  // Write-back: nothing is copied when A ends; B's admission evicts A's prefix, which goes to
  // the host then. C loads it alike.
  const TierRun back = run_tiers(true, serving::TierWrite::write_back, serving::TierLoad::async);
  CHECK_MESSAGE(back.batches == loaded, batch_text(back.batches));
  CHECK(back.host.stored_tokens == 8);
  CHECK(back.host.hits == 1);
}

namespace {

/// Two replicas (accelerators 0 and 1), each of 6 blocks of 4 tokens and 1,000 bytes per token,
/// sharing one memory pool (a pool tier only): port and links 1 GB/s, 1 us. At 0 s A (prefix
/// 1) goes to replica 0 and A2 (prefix 2) to replica 1, 8 tokens each; at 1 s 20-token requests
/// to both push those prefixes out of HBM; at 2 s C (prefix 2) to replica 0 and C2 (prefix 1)
/// to replica 1, 12 tokens each.
std::vector<serving::RequestRecord> run_pool() {
  OneInstance one;
  one.scheduler.prefix_caching = true;
  auto pool = std::make_shared<serving::KvTierStore>(std::vector<serving::KvTier>{{"pool", 8, 1e9, 1e-6}}, 4, 1000.0);
  platform::Session session(*one.platform, one.s.simulation);
  const platform::MemoryPoolSpec pools{2, 1e6, 1e9, 1e9, 1e-6};
  platform::MemoryPoolRuntime runtime(session.engine(), pools, 2);
  std::vector<std::unique_ptr<serving::Replica>> replicas;
  for (int r = 0; r < 2; ++r) {
    replicas.push_back(std::make_unique<serving::Replica>(r, serving::ReplicaRole::mixed, one.cost, nullptr, one.scheduler,
                                                          serving::SpeculativeSpec{}, 6, 1000.0, 1e9, false));
    replicas.back()->set_kv_tiers(serving::KvTierStore({}, 4, 1000.0, pool), serving::TierWrite::write_through,
                                  serving::TierLoad::async);
    replicas.back()->start(session, engine::Profile::constant(1.0), {}, r);
    replicas.back()->set_memory_pool(&runtime, {r});
  }
  std::vector<serving::RequestRecord> records(6);
  for (std::size_t i = 0; i < records.size(); ++i) {
    serving::Request& r = records[i].request;
    r.id = static_cast<std::int64_t>(i);
    r.arrival_s = static_cast<double>(i / 2);
    r.input_tokens = i / 2 == 0 ? 8 : i / 2 == 1 ? 20 : 12;
    r.output_tokens = 1;
    if (i / 2 != 1) {
      r.prefix_id = i == 0 || i == 5 ? 1 : 2;  // A, C2: prefix 1; A2, C: prefix 2
      r.prefix_tokens = r.reusable_tokens = 8;
    }
    session.engine().schedule_at(engine::seconds_to_ps(r.arrival_s), [&replicas, &records, i](engine::Engine&) {
      replicas[i % 2]->submit(records[i]);
    });
  }
  session.engine().run();
  CHECK(pool->stats(0).stored_tokens == 16);
  CHECK(pool->stats(0).hits == 2);
  CHECK(runtime.bytes(0, platform::PoolDirection::read) == relative_approx(2 * 8000.0));
  return records;
}

}  // namespace

TEST_CASE("a shared memory pool: one instance reads what another stored, and loads at once share its port") {
  // C finds prefix 2, which only replica 1 ever computed, in the pool; C2 finds prefix 1 of
  // replica 0. Both load 8,000 bytes at 2 s over links of 1 GB/s through one port of 1 GB/s:
  // 0.5 GB/s each, 16 us, + 1 us (alone: 9 us).
  const std::vector<serving::RequestRecord> records = run_pool();
  for (const std::size_t c : {std::size_t{4}, std::size_t{5}}) {
    CHECK(records[c].prefix_hit_tokens == 8);
    CHECK(records[c].scheduled_s == relative_approx(2 + 17e-6));
    CHECK(records[c].finish_s > 0);
  }
}

}  // namespace replica_schedule_test
