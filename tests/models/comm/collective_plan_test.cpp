// Algorithms lowered to phases, both evaluators, the auto tuner and the sweep, on small
// topologies with hand-computed times.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "models/comm/collective_plan.hpp"
#include "models/comm/collective_sweep.hpp"
#include "models/comm/collective_tuner.hpp"
#include "models/comm/plan_evaluators.hpp"
#include "sim/engine/error.hpp"
#include "topologies/topology.hpp"

namespace collective_plan_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;
using namespace clustersim::models;

namespace {

/// One node of 4 GPUs, 100 GB/s per GPU per direction, 1 us through the NVSwitch.
topologies::Topology four_gpu_node() {
  topologies::ClusterNetworkSpec spec;
  spec.nodes = 1;
  spec.accelerators_per_node = 4;
  spec.scale_up = {"nvswitch", 100e9, 1e-6, 0, 1.0};  // ideal NVLink
  spec.scale_out.nics_per_node = 4;
  return topologies::Topology::build(spec);
}

/// Easy numbers: base 5 us, Simple with 1 us per step, NVLS at half bandwidth with 2 us.
TunerParams simple_params() {
  TunerParams p;
  p.ll_base_latency_s = p.ll128_base_latency_s = p.simple_base_latency_s = 5e-6;
  p.simple_step_latency_s = 1e-6;
  p.nvls_efficiency = 0.5;
  p.nvls_step_latency_s = 2e-6;
  return p;
}

const std::vector<int> kGroup = {0, 1, 2, 3};

double analytical(CollectiveKind kind, Algorithm algorithm, double bytes, bool nvls = true) {
  const auto topology = four_gpu_node();
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{nvls});
  return analytical_time_s(lowering.lower(kind, algorithm, Protocol::simple, kGroup, bytes), topology);
}

}  // namespace

TEST_CASE("hand-computed analytical times of each algorithm on a 4-GPU NVSwitch node") {
  // ring all-reduce: 2*3/4*4 MB = 6 MB at 100 GB/s = 60 us; 6 steps x (1 + 1) us; base 5 us.
  CHECK(analytical(CollectiveKind::all_reduce, Algorithm::ring, 4e6) == relative_approx(77e-6));
  // ring all-gather: 3 MB -> 30 us, 3 steps x 2 us, base 5.
  CHECK(analytical(CollectiveKind::all_gather, Algorithm::ring, 4e6) == relative_approx(41e-6));
  // broadcast chain: 4 MB per hop -> 40 us, 3 steps -> 6 us, base 5.
  CHECK(analytical(CollectiveKind::broadcast, Algorithm::ring, 4e6) == relative_approx(51e-6));
  // nvls: 4 MB / 0.5 efficiency = 8 MB -> 80 us, 2 steps x (1 + 2) us, base 5.
  CHECK(analytical(CollectiveKind::all_reduce, Algorithm::nvls, 4e6) == relative_approx(91e-6));
  // halving-doubling: phases of 2, 1, 1, 2 MB -> 60 us; 4 steps x 2 us; base 5.
  CHECK(analytical(CollectiveKind::all_reduce, Algorithm::halving_doubling, 4e6) == relative_approx(73e-6));
  // double binary tree: every GPU sends 3 flows of 2 MB through its 100 GB/s link -> 60 us;
  // 2 x floor(log2 4) = 4 steps x 2 us; base 5.
  CHECK(analytical(CollectiveKind::all_reduce, Algorithm::tree, 4e6) == relative_approx(73e-6));
  // pairwise all-to-all: 3 phases of 1 MB flows -> 3 x (10 + 2) us; base 5.
  CHECK(analytical(CollectiveKind::all_to_all, Algorithm::pairwise, 4e6) == relative_approx(41e-6));
}

TEST_CASE("protocols scale the wire bytes: LL moves twice the payload, LL128 128/120 of it") {
  const auto topology = four_gpu_node();
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{true});
  const auto ll = lowering.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::ll, kGroup, 4e6);
  const auto ll128 = lowering.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::ll128, kGroup, 4e6);
  REQUIRE(ll.phases.size() == 1);
  CHECK(ll.phases[0].flows.size() == 4);
  CHECK(ll.phases[0].flows[0].bytes == doctest::Approx(12e6));
  CHECK(ll128.phases[0].flows[0].bytes == doctest::Approx(6e6 * 128.0 / 120.0));
  CHECK(ll.phases[0].steps == 6);
}

TEST_CASE("the flow evaluator equals the analytical one without contention") {
  const auto topology = four_gpu_node();
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{true});
  for (const Algorithm a : {Algorithm::ring, Algorithm::nvls, Algorithm::halving_doubling, Algorithm::tree}) {
    const auto plan = lowering.lower(CollectiveKind::all_reduce, a, Protocol::simple, kGroup, 4e6);
    CAPTURE(algorithm_name(a));
    CHECK(flow_time_s(plan, topology) == doctest::Approx(analytical_time_s(plan, topology)).epsilon(1e-9));
  }
}

TEST_CASE("auto picks LL for small messages, NVLS for large ones where the GPU has it, ring otherwise") {
  topologies::ClusterNetworkSpec spec;
  spec.scale_up = {"nvswitch", 450e9, 1e-6, 0, 1.0};  // ideal NVLink
  const auto topology = topologies::Topology::build(spec);
  const std::vector<int> group = {0, 1, 2, 3, 4, 5, 6, 7};
  const CollectiveTuner hopper(topology, TunerParams{}, CollectiveHardware{true});
  const CollectiveTuner ampere(topology, TunerParams{}, CollectiveHardware{false});
  const auto small = hopper.choose(CollectiveKind::all_reduce, std::nullopt, group, 64e3);
  CHECK(small.plan.algorithm == Algorithm::ring);
  CHECK(small.plan.protocol == Protocol::ll);
  CHECK(hopper.choose(CollectiveKind::all_reduce, std::nullopt, group, 1e9).plan.algorithm == Algorithm::nvls);
  const auto large = ampere.choose(CollectiveKind::all_reduce, std::nullopt, group, 1e9);
  CHECK(large.plan.algorithm == Algorithm::ring);
  CHECK(large.plan.protocol == Protocol::simple);
  CHECK(hopper.choose(CollectiveKind::all_to_all, std::nullopt, group, 1e6).plan.algorithm == Algorithm::pairwise);
  // One node: no tree candidate (NCCL uses trees only across nodes).
  CHECK(hopper.auto_candidates(CollectiveKind::all_reduce, group) == std::vector<Algorithm>{Algorithm::ring, Algorithm::nvls});
}

TEST_CASE("bus bandwidth factors follow nccl-tests") {
  CHECK(bus_bandwidth_factor(CollectiveKind::all_reduce, 8) == doctest::Approx(1.75));
  CHECK(bus_bandwidth_factor(CollectiveKind::all_gather, 8) == doctest::Approx(0.875));
  CHECK(bus_bandwidth_factor(CollectiveKind::reduce_scatter, 4) == doctest::Approx(0.75));
  CHECK(bus_bandwidth_factor(CollectiveKind::all_to_all, 2) == doctest::Approx(0.5));
  CHECK(bus_bandwidth_factor(CollectiveKind::broadcast, 8) == doctest::Approx(1.0));
  CHECK(bus_bandwidth_factor(CollectiveKind::reduce, 8) == doctest::Approx(1.0));
  CHECK_THROWS_WITH_AS(bus_bandwidth_factor(CollectiveKind::all_reduce, 0), doctest::Contains("ranks >= 1"),
                       ConfigError);
}

TEST_CASE("sweep sizes and sweep rows") {
  CHECK(sweep_sizes(8, 64, 2) == std::vector<double>{8, 16, 32, 64});
  CHECK_THROWS_WITH_AS(sweep_sizes(64, 8, 2), doctest::Contains("0 < min <= max"), ConfigError);
  CHECK_THROWS_WITH_AS(sweep_sizes(8, 64, 1), doctest::Contains("factor must be > 1"), ConfigError);
  const auto topology = four_gpu_node();
  const CollectiveTuner tuner(topology, simple_params(), CollectiveHardware{true});
  SweepRequest request;
  request.algorithm = Algorithm::ring;
  request.group = kGroup;
  request.min_bytes = 4e6;
  request.max_bytes = 4e6;
  const auto points = run_collective_sweep(tuner, request);
  REQUIRE(points.size() == 1);
  // Simple is the fastest protocol here (LL: 120 us of wire time alone), so the time is the
  // ring figure above.
  CHECK(points[0].time_s == relative_approx(77e-6));
  CHECK(points[0].protocol == Protocol::simple);
  CHECK(points[0].busbw_bytes_per_s == doctest::Approx(points[0].algbw_bytes_per_s * 1.5));
}

TEST_CASE("collective errors name the problem and the valid choices") {
  const auto topology = four_gpu_node();
  const CollectiveLowering no_nvls(topology, simple_params(), CollectiveHardware{false});
  CHECK_THROWS_WITH_AS(parse_algorithm("spiral"),
                       doctest::Contains("unknown algorithm 'spiral'; valid: auto, ring, tree, halving-doubling"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(no_nvls.lower(CollectiveKind::all_reduce, Algorithm::nvls, Protocol::simple, kGroup, 1e6),
                       doctest::Contains("nvls needs an accelerator with NVLink SHARP"), ConfigError);
  CHECK_THROWS_WITH_AS(no_nvls.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple, {{0}}, 1e6),
                       doctest::Contains("at least 2 ranks, got 1"), ConfigError);
  CHECK_THROWS_WITH_AS(no_nvls.lower(CollectiveKind::all_to_all, Algorithm::ring, Protocol::simple, kGroup, 1e6),
                       doctest::Contains("algorithms that can run all-to-all on these 4 ranks: pairwise"), ConfigError);
  CHECK_THROWS_WITH_AS(no_nvls.lower(CollectiveKind::all_reduce, Algorithm::hierarchical, Protocol::simple, kGroup, 1e6),
                       doctest::Contains("at least 2 scale-up domains"), ConfigError);
  CHECK_THROWS_WITH_AS(no_nvls.lower(CollectiveKind::all_reduce, Algorithm::halving_doubling, Protocol::simple,
                                     {{0, 1, 2}}, 1e6),
                       doctest::Contains("power-of-two rank count, got 3"), ConfigError);
  CHECK_THROWS_WITH_AS(no_nvls.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple, {{0, 0}}, 1e6),
                       doctest::Contains("more than once"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_collective("gather"), doctest::Contains("valid: all-reduce"), ConfigError);
  TunerParams bad;
  bad.nvls_efficiency = 1.5;
  CHECK_THROWS_WITH_AS(CollectiveLowering(topology, bad, CollectiveHardware{true}), doctest::Contains("nvls_efficiency must be in (0, 1]"),
                       ConfigError);
}

namespace {

/// `nodes` nodes of `per_node` GPUs (100 GB/s NVLink, 1 us), one 25 GB/s NIC per GPU, one
/// scale-out switch (1 us per link).
topologies::Topology switched_nodes(int nodes, int per_node) {
  topologies::ClusterNetworkSpec spec;
  spec.nodes = nodes;
  spec.accelerators_per_node = per_node;
  spec.scale_up = {"nvswitch", 100e9, 1e-6, 0, 1.0};  // ideal NVLink
  spec.scale_out.topology = "switch";
  spec.scale_out.nics_per_node = per_node;
  spec.scale_out.nic_bytes_per_s = 25e9;
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_out.efficiency = 1.0;  // ideal links
  return topologies::Topology::build(spec);
}

std::vector<int> first(int n) {
  std::vector<int> group;
  for (int i = 0; i < n; ++i) group.push_back(i);
  return group;
}

}  // namespace

TEST_CASE("hierarchical all-reduce by hand: reduce-scatter in the node, all-reduce per rail, all-gather") {
  // 4 nodes x 2 GPUs, S = 8 MB. Phase 1: in each node a 2-ring of 1/2 S = 4 MB per flow at
  // 100 GB/s = 40 us, 1 step x (1 + 1) us. Phase 2: rail j (GPU j of every node) rings over 4
  // nodes with 2 x 3/4 x S/2 = 6 MB per flow through 25 GB/s NICs = 240 us, 6 steps x (2 + 1)
  // us (GPU -> switch -> GPU: 2 links of 1 us). Phase 3 mirrors phase 1. Base 5 us.
  const auto topology = switched_nodes(4, 2);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::hierarchical, Protocol::simple, first(8), 8e6);
  REQUIRE(plan.phases.size() == 3);
  CHECK(plan.phases[0].flows.size() == 8);  // 4 nodes x 2-rings of 2 flows
  CHECK(plan.phases[0].flows[0].bytes == doctest::Approx(4e6));
  CHECK(plan.phases[1].flows.size() == 8);  // 2 rails x 4-rings
  CHECK(plan.phases[1].flows[0].bytes == doctest::Approx(6e6));
  CHECK(plan.phases[1].steps == 6);
  CHECK(plan.phases[1].fixed_latency_s == relative_approx(6 * 3e-6));
  const double expected = 5e-6 + 2 * (2e-6 + 40e-6) + (18e-6 + 240e-6);
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("SHARP all-reduce by hand: the switch reduces, each rail rank sends and receives S/m once") {
  // As the hierarchical case but the middle phase is 2 steps with S/2 = 4 MB per flow through
  // the NICs: 160 us, 2 x 3 us.
  const auto topology = switched_nodes(4, 2);
  TunerParams params = simple_params();
  params.scale_out_sharp = true;
  const CollectiveLowering lowering(topology, params, CollectiveHardware{});
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::sharp, Protocol::simple, first(8), 8e6);
  REQUIRE(plan.phases.size() == 3);
  CHECK(plan.phases[1].flows[0].bytes == doctest::Approx(4e6));
  CHECK(plan.phases[1].steps == 2);
  const double expected = 5e-6 + 2 * (2e-6 + 40e-6) + (6e-6 + 160e-6);
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  // Without SHARP switches the algorithm is refused with the reason.
  const CollectiveLowering plain(topology, simple_params(), CollectiveHardware{});
  CHECK_THROWS_WITH_AS(plain.lower(CollectiveKind::all_reduce, Algorithm::sharp, Protocol::simple, first(8), 8e6),
                       doctest::Contains("sharp needs scale-out switches with SHARP"), ConfigError);
}

TEST_CASE("torus-rings all-reduce by hand on a 4 x 2 torus") {
  // 8 chips, links of 25 GB/s and 1 us. Two shares of S/2 = 4 MB, one going x then y, the other
  // y then x, at the same time on different links. Stage 0: x share reduce-scatters on the
  // bidirectional 4-rings, 3/4 x 4 MB = 3 MB per chip, 1.5 MB each way round (60 us); the y
  // share on the 2-rings over the pair's one cable, 1/2 x 4 MB = 2 MB (80 us); 80 us, 3 steps x
  // (1 + 1) us. Stage 1: the x share now on y with 1 MB: 0.5 MB (20 us); the y share on x with
  // 2 MB: 1.5 MB, 0.75 MB each way (30 us); 30 us, 3 steps. All-gather: the same stages
  // reversed.
  topologies::ClusterNetworkSpec spec;
  spec.nodes = 8;
  spec.accelerators_per_node = 1;
  spec.scale_out.topology = "torus";
  spec.scale_out.torus_dims = {4, 2};
  spec.scale_out.nic_bytes_per_s = 25e9;
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_out.efficiency = 1.0;  // ideal links
  const auto topology = topologies::Topology::build(spec);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::torus_rings, Protocol::simple, first(8), 8e6);
  REQUIRE(plan.phases.size() == 4);
  REQUIRE(plan.phases[0].flows.size() == 16 + 8);  // x both ways round, y over the pair
  CHECK(plan.phases[0].flows[0].bytes == doctest::Approx(1.5e6));
  CHECK(plan.phases[0].flows[16].bytes == doctest::Approx(2e6));
  CHECK(plan.phases[1].flows[0].bytes == doctest::Approx(0.5e6));
  CHECK(plan.phases[1].flows[8].bytes == doctest::Approx(0.75e6));
  CHECK(plan.phases[3].flows[16].bytes == doctest::Approx(2e6));
  for (const Phase& phase : plan.phases) CHECK(phase.steps == 3);
  const double expected = 5e-6 + 2 * (6e-6 + 80e-6) + 2 * (6e-6 + 30e-6);
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("torus-rings on a 4 x 4 x 4 cube: three shares keep all six links of a chip busy") {
  // 100 GB/s links, ideal. Each stage moves, per chip and share, (3/4) x the share's data on
  // two links (one each way round); the three shares use the three dimensions at once, so
  // per-link time is the x share's: stage t carries (3/4) x S/3 x 4^-t over 2 links.
  topologies::ClusterNetworkSpec spec;
  spec.nodes = 16;
  spec.accelerators_per_node = 4;
  spec.scale_out.topology = "torus";
  spec.scale_out.torus_dims = {4, 4, 4};
  spec.scale_out.nic_bytes_per_s = 100e9;
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_out.efficiency = 1.0;
  const auto topology = topologies::Topology::build(spec);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  const double bytes = 96e6;
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::torus_rings, Protocol::simple, first(64), bytes);
  REQUIRE(plan.phases.size() == 6);
  double transfer_s = 0;
  for (int t = 0; t < 3; ++t) transfer_s += 2 * 0.75 * bytes / 3 / std::pow(4.0, t) / 2 / 100e9;
  const double expected = 5e-6 + 6 * 3 * 2e-6 + transfer_s;
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("multi-channel rings: the flow evaluator equals the analytical one and uses every NIC") {
  // 2 nodes x 4 GPUs, one 25 GB/s NIC per GPU: 4 channels, each NIC carries one channel flow
  // of 2 x 7/8 x S / 4 each way; NVLink carries 3 per GPU at 100/3 GB/s (slower than the NIC
  // share? 3 x 1.75 MB / 100 GB/s = 52.5 us vs 1.75 MB / 25 GB/s = 70 us: the NIC bounds it).
  const auto topology = switched_nodes(2, 4);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple, first(8), 8e6);
  REQUIRE(lowering.ring_channels(first(8)) == 4);
  const double expected = 5e-6 + 14 * (2e-6 + 1e-6) + 2.0 * 7 / 8 * 8e6 / 4 / 25e9;
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
}

namespace {

/// `nodes` nodes of `per_node` GPUs on `fabric` (`scale_up_bytes_per_s` per GPU, 1 us, ideal),
/// one `nic_bytes_per_s` NIC per GPU on one switch, 1 us per cable.
topologies::Topology switched_nodes(int nodes, int per_node, const char* fabric, double scale_up_bytes_per_s,
                                    double nic_bytes_per_s) {
  topologies::ClusterNetworkSpec spec;
  spec.nodes = nodes;
  spec.accelerators_per_node = per_node;
  spec.scale_up = {fabric, scale_up_bytes_per_s, 1e-6, 0, 1.0};
  spec.scale_out.topology = "switch";
  spec.scale_out.nics_per_node = per_node;
  spec.scale_out.nic_bytes_per_s = nic_bytes_per_s;
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_out.efficiency = 1.0;
  return topologies::Topology::build(spec);
}

/// `nodes` MI300X-like nodes: 8 GPUs on an xGMI full mesh of 64 GB/s links (448 GB/s per GPU),
/// 1 us per link, ideal; one 25 GB/s NIC per GPU on one switch.
topologies::Topology mesh_nodes(int nodes) { return switched_nodes(nodes, 8, "xgmi-mesh", 448e9, 25e9); }

/// Flows of `phase` per directed link.
std::map<topologies::LinkId, int> flows_per_link(const Phase& phase, const topologies::Topology& topology) {
  std::map<topologies::LinkId, int> count;
  for (const FlowSpec& f : phase.flows) {
    for (const topologies::LinkId id : topology.path(f.src, f.dst, f.flow_key).links) ++count[id];
  }
  return count;
}

}  // namespace

TEST_CASE("ring all-reduce on an 8-GPU mesh: 7 disjoint rings, one per link, the aggregate bandwidth") {
  const auto topology = mesh_nodes(1);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{true});
  const auto orders = lowering.ring_orders(first(8));
  CHECK(orders.size() == 7);
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple, first(8), 8e6);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].flows.size() == 56);
  const auto load = flows_per_link(plan.phases[0], topology);
  CHECK(load.size() == 56);  // every directed mesh link ...
  for (const auto& [link, flows] : load) CHECK(flows == 1);  // ... carries one ring
  // Each ring moves 2 x 7/8 x 8 MB / 7 = 2 MB over its own 64 GB/s link: 31.25 us, i.e. the
  // 448 GB/s aggregate; 14 steps x (1 us link + 1 us step); base 5 us.
  const double expected = 5e-6 + 14 * 2e-6 + 2e6 / 64e9;
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
  // NVLS needs a switch even on a chip that has it.
  CHECK(lowering.inapplicable_reason(CollectiveKind::all_reduce, Algorithm::nvls, first(8)) ==
        "nvls needs an NVSwitch scale-up fabric, not xgmi-mesh");
  const CollectiveTuner tuner(topology, simple_params(), CollectiveHardware{true});
  CHECK(tuner.choose(CollectiveKind::all_reduce, std::nullopt, first(8), 1e9).plan.algorithm == Algorithm::ring);
}

TEST_CASE("mesh: one ring or one pair alone gets one link's bandwidth") {
  const auto topology = mesh_nodes(1);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  // send-recv between two GPUs: 64 MB over the pair's 64 GB/s link (1 ms), not 448 GB/s.
  const std::vector<int> pair = {2, 5};
  const auto p2p = lowering.lower(CollectiveKind::send_recv, Algorithm::ring, Protocol::simple, pair, 64e6);
  const double p2p_expected = 5e-6 + 1 * 2e-6 + 64e6 / 64e9;
  CHECK(analytical_time_s(p2p, topology) == doctest::Approx(p2p_expected));
  CHECK(flow_time_s(p2p, topology) == doctest::Approx(p2p_expected).epsilon(1e-9));
  // A 4-GPU group: K4 has only 2 disjoint Hamiltonian rings (0123 and its reverse), so an
  // all-reduce gets 2 links of 64 GB/s: 2 x 3/4 x 8 MB = 12 MB per rank, 6 MB on each ring.
  const std::vector<int> four = {0, 2, 4, 6};
  CHECK(lowering.ring_orders(four).size() == 2);
  const auto ar = lowering.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple, four, 8e6);
  const double ar_expected = 5e-6 + 6 * 2e-6 + 6e6 / 64e9;
  CHECK(analytical_time_s(ar, topology) == doctest::Approx(ar_expected));
  CHECK(flow_time_s(ar, topology) == doctest::Approx(ar_expected).epsilon(1e-9));
}

TEST_CASE("mesh all-to-all sends to every peer at once, each pair on its link") {
  const auto topology = mesh_nodes(1);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  const auto plan = lowering.lower(CollectiveKind::all_to_all, Algorithm::pairwise, Protocol::simple, first(8), 8e6);
  REQUIRE(plan.phases.size() == 1);
  for (const auto& [link, flows] : flows_per_link(plan.phases[0], topology)) CHECK(flows == 1);
  const double expected = 5e-6 + 7 * 2e-6 + 1e6 / 64e9;  // S/8 per peer over its own link
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("mesh across nodes: 8 channels on disjoint Hamiltonian paths, rail-aligned, NIC-bound") {
  const auto topology = mesh_nodes(2);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{});
  const auto plan = lowering.lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple, first(16), 16e6);
  REQUIRE(plan.phases.size() == 1);
  int nic_flows = 0;
  for (const FlowSpec& f : plan.phases[0].flows) {
    if (f.src / 8 != f.dst / 8) {
      ++nic_flows;
      CHECK(f.src % 8 == f.dst % 8);  // same local rank: the same rail
    }
  }
  CHECK(nic_flows == 16);  // 8 channels, each crossing twice
  for (const auto& [link, flows] : flows_per_link(plan.phases[0], topology)) CHECK(flows == 1);
  // Each channel: 2 x 15/16 x 16 MB / 8 = 3.75 MB per hop; the 25 GB/s NIC bounds it.
  const double expected = 5e-6 + 30 * (2e-6 + 1e-6) + 3.75e6 / 25e9;
  CHECK(analytical_time_s(plan, topology) == doctest::Approx(expected));
  CHECK(flow_time_s(plan, topology) == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("pairwise all-to-all runs 16 rounds at once, as NCCL's p2p channels do; a NIC carries them all") {
  // 2 nodes x 12 GPUs, a NIC per GPU at 50 GB/s, ideal NVLink at 100 GB/s: 24 ranks, 23 rounds in
  // windows of 16 and 7 (two phases, 16 and 7 latency steps).
  const auto topology = switched_nodes(2, 12, "nvswitch", 100e9, 50e9);
  const CollectiveLowering lowering(topology, simple_params(), CollectiveHardware{true});
  std::vector<int> group(24);
  for (int i = 0; i < 24; ++i) group[static_cast<std::size_t>(i)] = i;
  const double bytes = 24e6;  // 1 MB to each peer
  const auto plan = lowering.lower(CollectiveKind::all_to_all, Algorithm::pairwise, Protocol::simple, group, bytes);
  REQUIRE(plan.phases.size() == 2);
  CHECK(plan.phases[0].flows.size() == 16 * 24);
  CHECK(plan.phases[0].steps == 16);
  CHECK(plan.phases[1].flows.size() == 7 * 24);
  CHECK(plan.phases[1].steps == 7);
  // Window 1 (rounds 1-16): GPU 11 sends to 12..23 (all 12 on the other node) and 0..3, so its
  // NIC carries 12 flows of 1 MB at once: 12 MB / 50 GB/s = 240 us (GPU 12's NIC receives as
  // many); no NVLink cable carries more than 11 MB at 100 GB/s. Window 2 (rounds 17-23): GPU 0
  // sends to 17..23, all remote: 7 MB / 50 GB/s = 140 us. Latency: the remote path is two 1 us
  // cables, so each round's step is 2 + 1 us: (16 + 7) x 3 us; base 5 us. One round at a time
  // the same NIC would carry each remote round alone, 23 rounds x 20 us: the concurrency is what
  // lets the NVLink rounds hide under the NIC's.
  const double transfer_s = 240e-6 + 140e-6;
  const double latency_s = (16 + 7) * (2e-6 + 1e-6) + 5e-6;
  CHECK(analytical_time_s(plan, topology) == relative_approx(transfer_s + latency_s, 1e-9));
}

}  // namespace collective_plan_test
