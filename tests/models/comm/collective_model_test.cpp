#include "models/comm/collective_model.hpp"

#include <algorithm>
#include <vector>

#include <doctest/doctest.h>

#include "sim/config/units.hpp"
#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"

namespace collective_model_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim::models;
using namespace clustersim::topologies;

namespace {

using clustersim::config::kGiB;

ClusterNetworkSpec cluster(int nodes, int per_node, int nics, const char* topology, int radix) {
  ClusterNetworkSpec spec;
  spec.nodes = nodes;
  spec.accelerators_per_node = per_node;
  spec.scale_up.bytes_per_s = 450e9;
  spec.scale_up.latency_s = 1e-6;
  spec.scale_out.topology = topology;
  spec.scale_out.radix = radix;
  spec.scale_out.tiers = 2;
  spec.scale_out.nics_per_node = nics;
  spec.scale_out.nic_bytes_per_s = 50e9;  // 400 Gb/s
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_up.efficiency = 1.0;  // ideal links (not the scenario defaults): payload = line rate
  spec.scale_out.efficiency = 1.0;
  return spec;
}

std::vector<int> iota(int n) {
  std::vector<int> ranks;
  for (int i = 0; i < n; ++i) ranks.push_back(i);
  return ranks;
}

/// Round numbers: every base latency 5 us, step latencies LL 1 us, LL128 2 us, Simple 4 us.
CommConfig ring_config() {
  CommConfig config;
  config.algorithm = Algorithm::ring;
  config.tuner.ll_base_latency_s = config.tuner.ll128_base_latency_s = config.tuner.simple_base_latency_s = 5e-6;
  config.tuner.ll_step_latency_s = 1e-6;
  config.tuner.ll128_step_latency_s = 2e-6;
  config.tuner.simple_step_latency_s = 4e-6;
  return config;
}

/// The fastest of the three ring protocols: base + steps x (path + step latency) + volume /
/// (bandwidth x payload fraction).
double ring_time(double volume_bytes, int steps, double path_latency_s, double bandwidth) {
  const double ll = 5e-6 + steps * (path_latency_s + 1e-6) + volume_bytes / (bandwidth * 0.5);
  const double ll128 = 5e-6 + steps * (path_latency_s + 2e-6) + volume_bytes / (bandwidth * 120.0 / 128.0);
  const double simple = 5e-6 + steps * (path_latency_s + 4e-6) + volume_bytes / bandwidth;
  return std::min({ll, ll128, simple});
}

}  // namespace

TEST_CASE("collective names") {
  CHECK(collective_name(CollectiveKind::all_reduce) == "all-reduce");
  CHECK(collective_name(CollectiveKind::all_gather) == "all-gather");
  CHECK(collective_name(CollectiveKind::reduce_scatter) == "reduce-scatter");
  CHECK(collective_name(CollectiveKind::send_recv) == "send-recv");
}

TEST_CASE("ring all-reduce over 8 GPUs of one NVSwitch node: the fastest protocol, per size") {
  ClusterNetworkSpec spec = cluster(1, 8, 8, "fat-tree", 64);
  spec.scale_up.efficiency = 0.8;
  const Topology topology = Topology::build(spec);
  const CollectiveModel model(topology, ring_config(), CollectiveHardware{});
  const std::vector<int> ranks = iota(8);
  // Each hop: GPU -> NVSwitch -> GPU, 450 GB/s x 0.8 = 360 GB/s payload, 1 us.
  // 1 GiB all-reduce: Simple = 5 + 14 x 5 us + 1.75 GiB / 360 GB/s = 5.294 ms.
  const double big = model.time_s(CollectiveKind::all_reduce, ranks, kGiB);
  CHECK(big == relative_approx(5e-6 + 14 * 5e-6 + 1.75 * kGiB / 360e9));
  CHECK(big == relative_approx(ring_time(1.75 * kGiB, 14, 1e-6, 360e9)));
  // 64 KiB: LL = 5 + 14 x 2 us + 114,688 B / 180 GB/s = 33.64 us wins.
  CHECK(model.time_s(CollectiveKind::all_reduce, ranks, 65536) ==
        relative_approx(5e-6 + 14 * 2e-6 + 1.75 * 65536 / 180e9));
  CHECK(model.plan(CollectiveKind::all_reduce, ranks, 65536).plan.protocol == Protocol::ll);
  // all-gather and reduce-scatter: (n-1)/n volume, n-1 steps.
  CHECK(model.time_s(CollectiveKind::all_gather, ranks, kGiB) ==
        relative_approx(ring_time(0.875 * kGiB, 7, 1e-6, 360e9)));
  CHECK(model.time_s(CollectiveKind::reduce_scatter, ranks, kGiB) ==
        relative_approx(ring_time(0.875 * kGiB, 7, 1e-6, 360e9)));
  CHECK(model.time_s(CollectiveKind::all_reduce, ranks, 0.0) == 0.0);
}

TEST_CASE("the LL128 ceiling caps a GPU's LL128 throughput") {
  const Topology topology = Topology::build(cluster(1, 8, 8, "fat-tree", 64));
  CommConfig config = ring_config();
  CollectiveHardware capped;
  capped.ll128_max_bytes_per_s = 100e9;
  const CollectiveModel model(topology, config, capped);
  const std::vector<int> ranks = iota(8);
  // 16 MiB: Simple = 5 + 70 us + 29.36 MB / 450 GB/s = 140.2 us; LL128 at the 100 GB/s payload
  // ceiling = 5 + 42 us + 29.36 MB / 100 GB/s = 340.6 us; LL at 225 GB/s = 5 + 28 + 130.5 us.
  const double bytes = 16.0 * (1 << 20);
  const double simple = 5e-6 + 14 * 5e-6 + 1.75 * bytes / 450e9;
  CHECK(model.time_s(CollectiveKind::all_reduce, ranks, bytes) == doctest::Approx(simple));
  const auto plan = model.tuner().choose(CollectiveKind::all_reduce, Algorithm::ring, ranks, bytes, Protocol::ll128);
  CHECK(plan.analytical_time_s == relative_approx(5e-6 + 14 * 3e-6 + 1.75 * bytes / 100e9));
  // The ceiling is the GPU's: its one flow may carry 100e9 x 128/120 wire bytes/s.
  CHECK(plan.plan.phases[0].flows[0].rate_cap_bytes_per_s == doctest::Approx(100e9 * 128.0 / 120.0));
}

TEST_CASE("a ring over several nodes runs one channel per GPU of a node, each through its own NIC") {
  // 2 nodes x 8 GPUs, 8 NICs per node, one switch. Channel c enters a node at GPU c and
  // leaves it from GPU c-1, so every NIC carries one channel in each direction.
  const Topology topology = Topology::build(cluster(2, 8, 8, "switch", 64));
  const CollectiveModel model(topology, ring_config(), CollectiveHardware{});
  const std::vector<int> ranks = iota(16);
  REQUIRE(model.tuner().lowering().ring_channels(ranks) == 8);
  const auto plan = model.tuner().choose(CollectiveKind::all_reduce, Algorithm::ring, ranks, kGiB, Protocol::simple);
  REQUIRE(plan.plan.phases.size() == 1);
  CHECK(plan.plan.phases[0].flows.size() == 8 * 16);
  // Per channel 2 x 15/16 x 1 GiB / 8 = 0.234375 GiB. A NIC carries 1 channel flow at 50 GB/s
  // (25.17 ms); a GPU's NVLink carries 7 at 450/7 GB/s (3.92 ms): the NICs bound it.
  // Longest hop: GPU -> NIC -> switch -> NIC -> GPU = 2 x 1 us; 30 steps x (2 + 4) us.
  const double channel_bytes = 2.0 * 15 / 16 * kGiB / 8;
  CHECK(plan.analytical_time_s == relative_approx(5e-6 + 30 * 6e-6 + channel_bytes / 50e9));
  // A single ring would put all of it through one NIC: 8 times the transfer time.
  const auto one_ring = model.tuner().lowering().lower(CollectiveKind::all_reduce, Algorithm::ring, Protocol::simple,
                                                       std::vector<int>{0, 8}, kGiB);
  CHECK(one_ring.phases[0].flows.size() == 2);
}

TEST_CASE("ring hops sharing a NIC divide its bandwidth") {
  // 2 nodes x 8 GPUs, one 400 Gb/s NIC per node on one switch.
  const Topology topology = Topology::build(cluster(2, 8, 1, "switch", 64));
  const CollectiveModel model(topology, ring_config(), CollectiveHardware{});
  // Cross-node hop latency: 0.5 (GPU->NVSwitch) + 0 (->NIC) + 1 + 1 + 0 + 0.5 = 3 us.
  // Node-major ring, 8 channels that all leave a node through its one NIC: 8 flows per NIC
  // direction of 2 x 15/16 GiB / 8 each, i.e. the same as one ring at 50 GB/s.
  CHECK(model.time_s(CollectiveKind::all_reduce, iota(16), kGiB) ==
        relative_approx(ring_time(2.0 * 15 / 16 * kGiB, 30, 3e-6, 50e9)));
  // The channels follow the topology, not the order the ranks are listed in (NCCL builds
  // its rings from the topology): an interleaved listing of the same ranks costs the same.
  std::vector<int> interleaved;
  for (int i = 0; i < 8; ++i) {
    interleaved.push_back(i);
    interleaved.push_back(i + 8);
  }
  CHECK(model.time_s(CollectiveKind::all_reduce, interleaved, kGiB) ==
        doctest::Approx(model.time_s(CollectiveKind::all_reduce, iota(16), kGiB)));
  // Uneven domains (3 + 2 ranks) run one ring in the listed order: 0,8,1,9,2 crosses the
  // node boundary 4 times, twice each way through each NIC: 25 GB/s per hop.
  const std::vector<int> uneven = {0, 8, 1, 9, 2};
  CHECK(model.tuner().lowering().ring_channels(uneven) == 1);
  CHECK(model.time_s(CollectiveKind::all_reduce, uneven, kGiB) ==
        relative_approx(ring_time(2.0 * 4 / 5 * kGiB, 8, 3e-6, 25e9)));
}

TEST_CASE("send-recv is one path's latency plus bytes over its payload bottleneck") {
  ClusterNetworkSpec spec = cluster(2, 8, 1, "switch", 64);
  spec.scale_out.efficiency = 0.9;
  const Topology topology = Topology::build(spec);
  const CollectiveModel model(topology, ring_config(), CollectiveHardware{});
  // Simple: 5 us base + (3 us path + 4 us step) + 2^30 / (50e9 x 0.9).
  const double expected = ring_time(kGiB, 1, 3e-6, 45e9);
  CHECK(expected == relative_approx(12e-6 + kGiB / 45e9));
  CHECK(model.send_recv_time_s(0, 8, kGiB) == doctest::Approx(expected));
  const std::vector<int> pair = {0, 8};
  CHECK(model.time_s(CollectiveKind::send_recv, pair, kGiB) == doctest::Approx(expected));
  // Same node: 1 us path over NVLink.
  CHECK(model.send_recv_time_s(0, 1, kGiB) == relative_approx(ring_time(kGiB, 1, 1e-6, 450e9)));
  CHECK(model.send_recv_time_s(4, 4, kGiB) == 0.0);
}

TEST_CASE("auto picks NVLS for large all-reduces where the GPU has it, and the fixed algorithm where it applies") {
  const Topology topology = Topology::build(cluster(2, 8, 8, "switch", 64));
  CollectiveHardware hopper;
  hopper.nvls = true;
  const CollectiveModel automatic(topology, CommConfig{}, hopper);
  const std::vector<int> node = iota(8);
  CHECK(automatic.plan(CollectiveKind::all_reduce, node, kGiB).plan.algorithm == Algorithm::nvls);
  CHECK(automatic.plan(CollectiveKind::all_gather, node, kGiB).plan.algorithm == Algorithm::ring);
  CommConfig nvls_everywhere;
  nvls_everywhere.algorithm = Algorithm::nvls;
  const CollectiveModel fixed(topology, nvls_everywhere, hopper);
  // NVLS cannot span two nodes: the tuner chooses there instead of failing.
  const auto across = fixed.plan(CollectiveKind::all_reduce, iota(16), kGiB).plan.algorithm;
  CHECK(across != Algorithm::nvls);
  CHECK(fixed.time_s(CollectiveKind::all_reduce, iota(16), kGiB) ==
        doctest::Approx(automatic.time_s(CollectiveKind::all_reduce, iota(16), kGiB)));
}

TEST_CASE("a group of one costs nothing") {
  const Topology topology = Topology::build(cluster(1, 8, 8, "fat-tree", 64));
  const CollectiveModel model(topology, CommConfig{}, CollectiveHardware{});
  const std::vector<int> one = {5};
  CHECK(model.time_s(CollectiveKind::all_reduce, one, kGiB) == 0.0);
  CHECK(model.time_s(CollectiveKind::all_gather, one, kGiB) == 0.0);
}

TEST_CASE("a curve costs its group as time_s does, at every size, without looking it up again") {
  const Topology topology = Topology::build(cluster(4, 8, 8, "fat-tree", 64));
  const CollectiveModel model(topology, CommConfig{}, CollectiveHardware{});
  const std::vector<int> node = iota(8);
  const std::vector<int> across = {0, 8, 16, 24, 1, 9, 17, 25};
  const std::vector<int> one = {5};
  for (const auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    for (const auto* group : {&node, &across, &one}) {
      const CollectiveModel::Curve curve = model.curve(kind, *group);
      // Sizes on both sides of the protocol switches (LL below ~64 KiB, Simple above MiBs).
      for (const double bytes : {0.0, 1.0, 4096.0, 65536.0, 1048576.0, 3.3e7, kGiB, 7.5 * kGiB}) {
        CHECK(curve.time_s(bytes) == model.time_s(kind, *group, bytes));
      }
    }
  }
  const std::vector<int> pair = {3, 17};
  CHECK(model.curve(CollectiveKind::send_recv, pair).time_s(kGiB) ==
        model.time_s(CollectiveKind::send_recv, pair, kGiB));
  CHECK(model.curve(CollectiveKind::all_reduce, one).time_s(kGiB) == 0.0);
  // The same checks as time_s: the group when the curve is made, the size when it is used.
  CHECK_THROWS_WITH_AS(model.curve(CollectiveKind::send_recv, one),
                       "send-recv needs a group of exactly 2 (source, destination), got 1", clustersim::ConfigError);
  const std::vector<int> outside = {0, 32};
  CHECK_THROWS_WITH_AS(model.curve(CollectiveKind::all_reduce, outside),
                       "all-reduce group has accelerator 32 outside [0, 32)", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(model.curve(CollectiveKind::all_gather, node).time_s(-1.0),
                       "all-gather bytes must be a finite number >= 0, got -1", clustersim::ConfigError);
}

TEST_CASE("invalid collectives are rejected with the reason") {
  const Topology topology = Topology::build(cluster(1, 8, 8, "fat-tree", 64));
  const CollectiveModel model(topology, CommConfig{}, CollectiveHardware{});
  const std::vector<int> none;
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::all_reduce, none, kGiB),
                       "all-reduce needs a non-empty group of accelerators", clustersim::ConfigError);
  const std::vector<int> ranks = iota(4);
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::all_gather, ranks, -1.0),
                       "all-gather bytes must be a finite number >= 0, got -1", clustersim::ConfigError);
  const std::vector<int> repeated = {0, 3, 1, 3};
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::reduce_scatter, repeated, kGiB),
                       "reduce-scatter group lists accelerator 3 more than once", clustersim::ConfigError);
  const std::vector<int> outside = {0, 8};
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::all_reduce, outside, kGiB),
                       "all-reduce group has accelerator 8 outside [0, 8)", clustersim::ConfigError);
  const std::vector<int> lone_outside = {9};
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::all_reduce, lone_outside, kGiB),
                       "all-reduce group has accelerator 9 outside [0, 8)", clustersim::ConfigError);
  const std::vector<int> three = {0, 1, 2};
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::send_recv, three, kGiB),
                       "send-recv needs a group of exactly 2 (source, destination), got 3",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(model.send_recv_time_s(0, 9, kGiB), "send-recv group has accelerator 9 outside [0, 8)",
                       clustersim::ConfigError);
  CommConfig bad;
  bad.tuner.nvls_efficiency = 1.5;
  CHECK_THROWS_WITH_AS(CollectiveModel(topology, bad, CollectiveHardware{}),
                       "comm nvls_efficiency must be in (0, 1], got 1.5", clustersim::ConfigError);
  bad = CommConfig{};
  bad.tuner.simple_step_latency_s = -1e-6;
  CHECK_THROWS_WITH_AS(CollectiveModel(topology, bad, CollectiveHardware{}),
                       "comm simple_step_latency_s must be a finite number >= 0, got -1e-06",
                       clustersim::ConfigError);
  CollectiveHardware broken;
  broken.ll128_max_bytes_per_s = -1;
  CHECK_THROWS_WITH_AS(CollectiveModel(topology, CommConfig{}, broken),
                       doctest::Contains("ll128_max_bytes_per_s must be a finite number >= 0"),
                       clustersim::ConfigError);
}

}  // namespace collective_model_test
