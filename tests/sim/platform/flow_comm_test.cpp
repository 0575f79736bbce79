// The flow fidelity: collectives as flows on one shared network, from a single collective up
// to a whole training step, with hand-computed expectations.
#include "sim/platform/flow_comm.hpp"

#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"
#include "sim/exec/executor.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/synthetic/collective_loop.hpp"
#include "sim/training/training_simulation.hpp"
#include "tests/sim/training/training_test_support.hpp"

namespace flow_comm_test {

using namespace clustersim;
using namespace clustersim::training;
using namespace clustersim::training::testing;

namespace {

constexpr double kEff = 1.0;       // test_cluster link efficiency
constexpr double kBase = 5e-6;     // test_comm base latency
constexpr double kStep = 4e-6;     // test_comm Simple step latency
constexpr double kNic = 50e9;      // test_cluster NIC bytes/s

// Ring collectives with round latencies; at 1 GB the Simple protocol is the fastest.
models::CommConfig test_comm() {
  models::CommConfig config;
  config.algorithm = models::Algorithm::ring;
  config.tuner.ll_base_latency_s = config.tuner.ll128_base_latency_s = config.tuner.simple_base_latency_s = kBase;
  config.tuner.ll_step_latency_s = 1e-6;
  config.tuner.ll128_step_latency_s = 2e-6;
  config.tuner.simple_step_latency_s = kStep;
  return config;
}

// Seconds one prepared collective takes on a fresh engine and network.
double run_collective(const topologies::Topology& topology, models::CollectiveKind kind,
                      const std::vector<std::vector<int>>& groups, double bytes, topologies::LinkTraffic* traffic = nullptr) {
  engine::Engine engine;
  const models::CollectiveModel model(topology, test_comm(), models::CollectiveHardware{});
  platform::FlowComm flow(engine, model);
  exec::TaskGraph graph;
  const auto stream = graph.add_stream("comm");
  graph.add_work(stream, flow.collective(kind, groups, bytes), exec::TaskKind::communication, "c");
  const auto result = exec::run_graph(engine, graph);
  if (traffic != nullptr) *traffic = *flow.traffic();
  return engine::ps_to_seconds(result.makespan_ps);
}

// Wire bytes per payload byte of the protocol the model picks for this collective.
double wire_per_payload(const Bench& bench, models::CollectiveKind kind, std::vector<int> group, double bytes) {
  const auto plan = bench.collectives.plan(kind, group, bytes).plan;
  return 1.0 / bench.collectives.tuner().lowering().efficiency(plan.algorithm, plan.protocol);
}

TrainingResult simulate(const Bench& bench, platform::Fidelity fidelity, std::vector<int> placement = {}) {
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  setup.placement = std::move(placement);
  return run_alone(setup, fidelity);
}

// Data-parallel-only reduction at the end of the step (no overlap, plain all-reduce).
TrainingWorkload exposed_all_reduce(TrainingWorkload w) {
  w.overlap_grad_reduce = false;
  w.parallelism.zero = 0;
  return w;
}

}  // namespace

TEST_CASE("an uncontended ring all-reduce on flows takes the closed-form time") {
  const auto topology = topologies::Topology::build(test_cluster(2, 1));
  const double bytes = 1e9;
  const double path_latency_s = topology.path(0, 1).latency_s;
  // n = 2: each direction carries 2(n-1)/n S / efficiency; 2(n-1) = 2 latency steps.
  const double expected = kBase + bytes / (kEff * kNic) + 2 * (path_latency_s + kStep);
  const double flow_s = run_collective(topology, models::CollectiveKind::all_reduce, {{0, 1}}, bytes);
  CHECK(flow_s == doctest::Approx(expected).epsilon(1e-9));
  const models::CollectiveModel closed_form(topology, test_comm(), models::CollectiveHardware{});
  CHECK(flow_s == doctest::Approx(closed_form.time_s(models::CollectiveKind::all_reduce, std::vector<int>{0, 1}, bytes))
                      .epsilon(1e-9));
}

TEST_CASE("replica groups sharing a NIC split it: two rings through one NIC take twice the transfer time") {
  auto cluster = test_cluster(2, 2);
  cluster.scale_out.nics_per_node = 1;  // both GPUs of a node leave through one NIC
  const auto topology = topologies::Topology::build(cluster);
  const double bytes = 1e9;
  const double latency_s = kBase + 2 * (topology.path(0, 2).latency_s + kStep);
  const double alone = run_collective(topology, models::CollectiveKind::all_reduce, {{0, 2}}, bytes);
  const double shared = run_collective(topology, models::CollectiveKind::all_reduce, {{0, 2}, {1, 3}}, bytes);
  CHECK(alone == doctest::Approx(bytes / (kEff * kNic) + latency_s).epsilon(1e-9));
  CHECK(shared == doctest::Approx(2 * bytes / (kEff * kNic) + latency_s).epsilon(1e-9));
  // A group of one accelerator moves nothing; identical requests share a plan.
  engine::Engine engine;
  const models::CollectiveModel model(topology, test_comm(), models::CollectiveHardware{});
  platform::FlowComm flow(engine, model);
  const int a = flow.prepare(models::CollectiveKind::all_gather, std::vector<std::vector<int>>{{0, 1}, {2}}, 1e6);
  CHECK(flow.prepare(models::CollectiveKind::all_gather, std::vector<std::vector<int>>{{0, 1}, {2}}, 1e6) == a);
  CHECK(flow.prepare(models::CollectiveKind::all_gather, std::vector<std::vector<int>>{{0, 1}}, 2e6) != a);
  CHECK(flow.plan_count() == 2);
}

TEST_CASE("flow collectives reject bad groups, bytes and handles") {
  const auto topology = topologies::Topology::build(test_cluster(2, 1));
  engine::Engine engine;
  const models::CollectiveModel model(topology, test_comm(), models::CollectiveHardware{});
  platform::FlowComm flow(engine, model);
  CHECK_THROWS_AS(flow.prepare(models::CollectiveKind::all_reduce, std::vector<std::vector<int>>{{0, 7}}, 1e6), ConfigError);
  CHECK_THROWS_AS(flow.prepare(models::CollectiveKind::all_reduce, std::vector<std::vector<int>>{{0, 1}}, -1.0), ConfigError);
  CHECK_THROWS_WITH_AS(flow.starter(3), "unknown flow collective handle 3 (0 prepared)", ConfigError);
}

TEST_CASE("link utilisation per tier is bytes over capacity x step time") {
  const auto topology = topologies::Topology::build(test_cluster(2, 1));
  topologies::LinkTraffic traffic;
  const double bytes = 1e9;
  run_collective(topology, models::CollectiveKind::all_reduce, {{0, 1}}, bytes, &traffic);
  // Each direction's flow carries S over the GPU->switch and switch->GPU links (tier 1).
  const double wire = bytes / kEff;
  const double step_s = 4 * wire / kNic;
  const auto tiers = tier_utilisation(topology, traffic, step_s);
  const TierUtilisation* edge = nullptr;
  for (const auto& t : tiers) {
    if (t.tier == 1) edge = &t;
  }
  REQUIRE(edge != nullptr);
  CHECK(edge->links == 4);
  CHECK(edge->bytes == doctest::Approx(4 * wire));
  CHECK(edge->max_utilisation == doctest::Approx(0.25));
  CHECK(edge->mean_utilisation == doctest::Approx(0.25));
  CHECK_THROWS_WITH_AS(tier_utilisation(topology, traffic, 0.0), "step time must be > 0 s, got 0", ConfigError);
  topologies::LinkTraffic short_traffic;
  short_traffic.bytes = {1.0};
  CHECK_THROWS_WITH_AS(tier_utilisation(topology, short_traffic, 1.0),
                       fmt::format("traffic covers 1 links, the topology has {}", topology.links().size()).c_str(),
                       ConfigError);
}

TEST_CASE("flow and analytical agree when nothing contends (collectives serialized, own NICs)") {
  // tp 2 inside a node, dp 4 across nodes, reduction after the backward: no two collectives
  // ever share a link, so every flow collective takes its closed-form time.
  const Bench bench(test_cluster(4, 2), exposed_all_reduce(workload(small_gpt(), 2, 1, 4, 16)));
  const auto analytical = simulate(bench, platform::Fidelity::analytical);
  const auto flow = simulate(bench, platform::Fidelity::flow);
  CHECK(flow.step_time_s == doctest::Approx(analytical.step_time_s).epsilon(1e-6));
  CHECK(flow.breakdown.exposed_dp_s == doctest::Approx(analytical.breakdown.exposed_dp_s).epsilon(1e-6));
  CHECK(flow.breakdown.exposed_tp_s == doctest::Approx(analytical.breakdown.exposed_tp_s).epsilon(1e-6));
  CHECK(analytical.fidelity == "analytical");
  CHECK(analytical.network_tiers.empty());
  CHECK(flow.fidelity == "flow");
  REQUIRE(flow.network_tiers.size() == 2);  // scale-up and the single switch's edge links
  CHECK(flow.network_tiers[0].tier == 0);
  CHECK(flow.network_tiers[1].tier == 1);
  CHECK(flow.network_tiers[1].max_utilisation > 0);
  CHECK(flow.network_tiers[1].max_utilisation < 1);
  bool noted = false;
  for (const auto& n : flow.notes) noted = noted || n.rfind("network fidelity: flow", 0) == 0;
  CHECK(noted);
}

TEST_CASE("flow and analytical agree within a few % with pipelining and overlapped reduction") {
  TrainingWorkload w = workload(small_gpt(8), 2, 2, 2, 16);
  w.parallelism.zero = 1;
  w.overlap_grad_reduce = true;
  const Bench bench(test_cluster(4, 2), w);
  const auto analytical = simulate(bench, platform::Fidelity::analytical);
  const auto flow = simulate(bench, platform::Fidelity::flow);
  CHECK(flow.step_time_s == doctest::Approx(analytical.step_time_s).epsilon(0.03));
  CHECK(flow.step_time_s >= analytical.step_time_s * (1 - 1e-6));  // contention only slows
}

TEST_CASE("oversubscription: three replica rings on one leaf uplink triple the reduction transfer") {
  // 2 nodes of 3 GPUs, tp 3 inside the node, dp 2 across. Radix-4 fat-tree at
  // oversubscription 3: 3 NICs and 1 uplink per leaf, one node per leaf. The gradient
  // all-reduce of every tp index (3 rings of 2) crosses the single uplink at once: each
  // flow gets 1/3 of it, in both fidelities (analytical shares links among the replicas).
  auto model = small_gpt(4, 768);
  model.num_attention_heads = 12;
  model.num_key_value_heads = 12;
  auto fat_tree = test_cluster(2, 3);
  fat_tree.scale_out.topology = "fat-tree";
  fat_tree.scale_out.tiers = 2;
  fat_tree.scale_out.radix = 4;
  fat_tree.scale_out.oversubscription = 3;
  const TrainingWorkload w = exposed_all_reduce(workload(model, 3, 1, 2, 8));
  const Bench oversubscribed(fat_tree, w, test_comm());
  const Bench non_blocking(test_cluster(2, 3), w, test_comm());  // one switch

  const auto programs = build_stage_programs(
      TrainingSetup{oversubscribed.workload, oversubscribed.compute, oversubscribed.collectives, oversubscribed.topology, 1});
  const double gradient_bytes = programs[0].stage_parameters * 2.0;
  const double wire =
      gradient_bytes * wire_per_payload(oversubscribed, models::CollectiveKind::all_reduce, {0, 3}, gradient_bytes);
  const double alone_s = wire / (kEff * kNic);  // n = 2: 2(n-1)/n S = S on the wire

  const auto analytical = simulate(oversubscribed, platform::Fidelity::analytical);
  const auto flow = simulate(oversubscribed, platform::Fidelity::flow);
  const auto flow_free = simulate(non_blocking, platform::Fidelity::flow);
  const auto analytical_free = simulate(non_blocking, platform::Fidelity::analytical);
  // The reduction's transfer takes 3x (plus two hops of latency, leaf -> spine -> leaf);
  // nothing else changes.
  CHECK(flow.step_time_s - flow_free.step_time_s == doctest::Approx(2 * alone_s).epsilon(1e-3));
  CHECK(flow.breakdown.exposed_dp_s - flow_free.breakdown.exposed_dp_s == doctest::Approx(2 * alone_s).epsilon(1e-3));
  CHECK(analytical.step_time_s == doctest::Approx(flow.step_time_s).epsilon(1e-6));
  CHECK(analytical.breakdown.exposed_dp_s == doctest::Approx(flow.breakdown.exposed_dp_s).epsilon(1e-6));
  CHECK(flow_free.step_time_s == doctest::Approx(analytical_free.step_time_s).epsilon(1e-6));
  // Leaf-spine links (tier 2) carry the reduction: 3 flows x S on the wire per direction.
  double spine_bytes = 0;
  for (const auto& t : flow.network_tiers) {
    if (t.tier == 2) spine_bytes = t.bytes;
  }
  CHECK(spine_bytes == doctest::Approx(2 * 2 * 3 * wire).epsilon(1e-9));
}

TEST_CASE("packet spraying splits each flow between nodes over hashed equal-cost routes") {
  // 2 nodes of 4 GPUs, one per leaf of a radix-8 fat-tree (4 NICs and 4 uplinks per leaf), 4
  // rings of 2 across the nodes: 4 flows each way over 4 uplinks. Hashed per flow (ecmp) some
  // share an uplink; sprayed, each flow is 16 subflows over hashed routes and the uplinks carry
  // nearly equal shares; one subflow per flow is ecmp exactly.
  auto cluster = test_cluster(2, 4);
  cluster.scale_out.topology = "fat-tree";
  cluster.scale_out.tiers = 2;
  cluster.scale_out.radix = 8;
  const std::vector<std::vector<int>> rings = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  const double bytes = 1e9;
  const auto time_with = [&](const std::string& routing, int paths, std::uint64_t* flows) {
    cluster.scale_out.routing = routing;
    cluster.scale_out.spray_paths = paths;
    const auto topology = topologies::Topology::build(cluster);
    engine::Engine engine;
    const models::CollectiveModel model(topology, test_comm(), models::CollectiveHardware{});
    platform::FlowComm flow(engine, model);
    exec::TaskGraph graph;
    graph.add_work(graph.add_stream("comm"), flow.collective(models::CollectiveKind::all_reduce, rings, bytes),
                   exec::TaskKind::communication, "c");
    const auto result = exec::run_graph(engine, graph);
    *flows = flow.flows_started();
    return engine::ps_to_seconds(result.makespan_ps);
  };
  std::uint64_t ecmp_flows = 0, sprayed_flows = 0, one_path_flows = 0;
  const double ecmp = time_with("ecmp", 16, &ecmp_flows);
  const double sprayed = time_with("spray", 16, &sprayed_flows);
  const double one_path = time_with("spray", 1, &one_path_flows);
  CHECK(sprayed_flows == 16 * ecmp_flows);
  CHECK(one_path_flows == ecmp_flows);
  CHECK(one_path == doctest::Approx(ecmp).epsilon(1e-12));
  // The transfer alone (n = 2: S on the wire each way) at one NIC's rate.
  const double alone_s = bytes / (kEff * kNic);
  CHECK(ecmp > 1.9 * alone_s);  // this hash puts two flows on one uplink
  // 64 hashed subflows over 4 uplinks: the fullest carries 24 (1.5x an even share); 256 spread
  // closer still. Per-packet spraying is the limit.
  CHECK(sprayed == doctest::Approx(1.5 * alone_s).epsilon(0.01));
  std::uint64_t many_flows = 0;
  const double many = time_with("spray", 256, &many_flows);
  CHECK(many < sprayed);
  CHECK(many > alone_s);
}

TEST_CASE("scattered placement sends tensor-parallel traffic over the NICs") {
  // 2 nodes x 2 GPUs, tp 2, dp 2. Scattered: rank r on accelerator (r mod 2) x 2 + r / 2, so
  // the TP group {rank 0, rank 1} is accelerators {0, 2}, one per node.
  const Bench bench(test_cluster(2, 2), workload(small_gpt(), 2, 1, 2, 8), test_comm());
  const std::vector<int> scattered{0, 2, 1, 3};
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  setup.placement = scattered;
  const auto programs = build_stage_programs(setup);
  const StageOp* tp = nullptr;
  for (const auto& op : programs[0].dense.forward) {
    if (op.kind == OpKind::tp_comm) tp = &op;
  }
  REQUIRE(tp != nullptr);
  // all-gather over n = 2 through the NICs: base + 1 step + (n-1)/n S on the wire / 50 GB/s.
  const auto plan = bench.collectives.plan(models::CollectiveKind::all_gather, std::vector<int>{0, 2}, tp->collective_bytes);
  const double step_s = plan.plan.protocol == models::Protocol::simple ? kStep : 2e-6;
  const double expected = kBase + bench.topology.path(0, 2).latency_s + step_s +
                          0.5 * tp->collective_bytes *
                              wire_per_payload(bench, models::CollectiveKind::all_gather, {0, 2}, tp->collective_bytes) /
                              (kEff * kNic);
  CHECK(engine::ps_to_seconds(tp->duration_ps) == doctest::Approx(expected).epsilon(1e-9));
  const auto packed = simulate(bench, platform::Fidelity::analytical);
  const auto spread = simulate(bench, platform::Fidelity::analytical, scattered);
  // 450 vs 50 GB/s links; the fixed latencies of these small (2 MB) gathers keep the ratio
  // below the 9x of the bandwidths.
  CHECK(spread.breakdown.exposed_tp_s > 3 * packed.breakdown.exposed_tp_s);
  const auto spread_flow = simulate(bench, platform::Fidelity::flow, scattered);
  CHECK(spread_flow.step_time_s >= spread.step_time_s * (1 - 1e-6));
  CHECK_THROWS_WITH_AS(simulate(bench, platform::Fidelity::analytical, {0, 1, 1, 3}),
                       "placement is not a permutation: rank 2 -> accelerator 1", ConfigError);
  CHECK_THROWS_WITH_AS(simulate(bench, platform::Fidelity::analytical, {0, 1}),
                       "placement maps 2 ranks but the job has tp * pp * dp * cp = 4", ConfigError);
}

TEST_CASE("a job sharing the NICs halves the training job's cross-node bandwidth") {
  // 3 nodes x 2 GPUs, one NIC per node. The training job (dp 3) runs on accelerators 0-2, a
  // collective-loop job (ring all-reduce) on 3-5 with a huge message, so its flows stay active
  // all step. Node 1's NIC carries the job's 2->0 and 1->2 hops and the other job's 3->4 and
  // 5->3 hops: each training hop gets half of it, so the training reduction transfer doubles.
  auto cluster = test_cluster(3, 2);
  cluster.scale_out.nics_per_node = 1;
  scenario::Scenario s;
  s.name = "shared";
  s.platform = test_platform_spec(cluster, test_comm());
  s.set_training(exposed_all_reduce(workload(small_gpt(), 1, 1, 3, 6)));
  auto job = std::make_shared<synthetic::CollectiveLoopSpec>();
  job->accelerators = {3, 3};
  job->bytes = 1e13;
  s.jobs.push_back({"other", job});
  s.simulation.fidelity = platform::Fidelity::analytical;
  const auto analytical = runner::run_training(s);
  s.simulation.fidelity = platform::Fidelity::flow;
  const auto flow = runner::run_training(s);
  const Bench bench(cluster, s.training(), test_comm());
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  setup.accelerators = 3;
  const double gradient_bytes = build_stage_programs(setup)[0].stage_parameters * 2.0;
  const double alone_s = 2.0 * 2.0 / 3.0 * gradient_bytes *
                         wire_per_payload(bench, models::CollectiveKind::all_reduce, {0, 1, 2}, gradient_bytes) /
                         (kEff * kNic);  // ring of 3: 2(n-1)/n S
  // The loop's flows run all step, so in both fidelities the reduction shares the NIC for all of
  // it (the analytical backend sees the loop's ring, started first, as running beside it).
  CHECK(analytical.step_time_s == doctest::Approx(flow.step_time_s).epsilon(1e-9));
  const Bench quiet(cluster, exposed_all_reduce(workload(small_gpt(), 1, 1, 3, 6)), test_comm());
  TrainingSetup alone{quiet.workload, quiet.compute, quiet.collectives, quiet.topology, 1};
  alone.accelerators = 3;
  CHECK(flow.step_time_s - run_alone(alone).step_time_s == doctest::Approx(alone_s).epsilon(1e-6));
  bool noted = false;
  for (const auto& n : analytical.notes) noted = noted || n.find("does not slow the ones already running") != std::string::npos;
  CHECK(noted);
  // Utilisation counts the step's bytes only: no link above 100 %.
  for (const auto& t : flow.network_tiers) CHECK(t.max_utilisation <= 1.0 + 1e-9);

  job->accelerators = {3, 1};
  CHECK_THROWS_WITH_AS(runner::run_training(s),
                       "a collective loop needs 2 or more of the platform's 6 accelerators, got [3, 4)", ConfigError);
  job->accelerators = {3, 3};
  job->bytes = 0;
  CHECK_THROWS_WITH_AS(runner::run_training(s), "a collective loop's bytes must be > 0, got 0", ConfigError);
  job->accelerators = {4, 2};
  job->bytes = 1e9;
  CHECK_THROWS_WITH_AS(runner::run_training(s),
                       "tp * pp * dp * cp = 1 * 1 * 3 * 1 = 3 does not match the 4 accelerators the other jobs leave "
                       "the training job",
                       ConfigError);
}

TEST_CASE("context parallelism on flows: the KV exchange overlaps attention as in the analytical model") {
  // Exposed exchange = max(attention, exchange) - attention in both fidelities; the flow
  // backward exchange moves 2x the bytes in one all-gather (one latency term, not two), so it
  // can only be a hair shorter.
  TrainingWorkload w = exposed_all_reduce(workload(small_gpt(), 1, 1, 2, 8, 8192));
  w.parallelism.cp = 2;
  auto slow_nvlink = test_cluster(2, 2);
  slow_nvlink.scale_up.bytes_per_s = 5e9;  // make the exchange longer than the attention kernel
  const Bench bench(slow_nvlink, w);
  const auto analytical = simulate(bench, platform::Fidelity::analytical);
  const auto flow = simulate(bench, platform::Fidelity::flow);
  CHECK(analytical.breakdown.exposed_cp_s > 0);
  CHECK(flow.breakdown.exposed_cp_s == doctest::Approx(analytical.breakdown.exposed_cp_s).epsilon(0.01));
  CHECK(flow.step_time_s == doctest::Approx(analytical.step_time_s).epsilon(0.01));
  CHECK(flow.step_time_s <= analytical.step_time_s * (1 + 1e-9));
}

TEST_CASE("analytical: a communication started while another runs shares its links until that one ends") {
  auto cluster = test_cluster(2, 2);
  cluster.scale_out.nics_per_node = 1;  // both GPUs of a node leave through one NIC
  const auto topology = topologies::Topology::build(cluster);
  const models::CollectiveModel model(topology, test_comm(), models::CollectiveHardware{});
  const double bytes = 1e9;
  const double latency_s = kBase + 2 * (topology.path(0, 2).latency_s + kStep);
  const double wire_s = bytes / (kEff * kNic);
  const double alone_s = latency_s + wire_s;
  // A runs alone from 0; B (another pair through the same NICs) starts halfway through A. While
  // A runs, every link B crosses carries A's flow too, so B would take latency + 2 x wire; it
  // does half of A's time at that pace, then the rest alone.
  const double start_b = alone_s / 2;
  const double window_s = alone_s - start_b;  // until A ends
  const double busy_s = latency_s + 2 * wire_s;
  const double expected_b = window_s + (1 - window_s / busy_s) * alone_s;  // B's duration
  engine::Engine engine;
  platform::AnalyticalComm comm(engine, model);
  exec::TaskGraph graph;
  const auto first = graph.add_stream("a");
  const auto second = graph.add_stream("b");
  graph.add_work(first, comm.collective(models::CollectiveKind::all_reduce, std::vector<std::vector<int>>{{0, 2}}, bytes),
                 exec::TaskKind::communication, "a");
  graph.add_task(second, engine::seconds_to_ps(start_b), exec::TaskKind::compute, "wait");
  graph.add_work(second, comm.collective(models::CollectiveKind::all_reduce, std::vector<std::vector<int>>{{1, 3}}, bytes),
                 exec::TaskKind::communication, "b");
  const auto result = exec::run_graph(engine, graph);
  CHECK(engine::ps_to_seconds(result.makespan_ps) == doctest::Approx(start_b + expected_b).epsilon(1e-9));
  // B started after A had ended runs alone: the same as its closed form.
  engine::Engine later_engine;
  platform::AnalyticalComm later(later_engine, model);
  exec::TaskGraph serial;
  const auto only = serial.add_stream("a then b");
  serial.add_work(only, later.collective(models::CollectiveKind::all_reduce, std::vector<std::vector<int>>{{0, 2}}, bytes),
                  exec::TaskKind::communication, "a");
  serial.add_work(only, later.collective(models::CollectiveKind::all_reduce, std::vector<std::vector<int>>{{1, 3}}, bytes),
                  exec::TaskKind::communication, "b");
  CHECK(engine::ps_to_seconds(exec::run_graph(later_engine, serial).makespan_ps) ==
        doctest::Approx(2 * alone_s).epsilon(1e-9));
}

}  // namespace flow_comm_test
