#include "models/comm/collective_model.hpp"

#include <vector>

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"

using namespace clustersim::models;
using namespace clustersim::topologies;

namespace {

constexpr double kGiB = 1073741824.0;

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
  return spec;
}

std::vector<int> iota(int n) {
  std::vector<int> ranks;
  for (int i = 0; i < n; ++i) ranks.push_back(i);
  return ranks;
}

}  // namespace

TEST_CASE("collective names") {
  CHECK(collective_name(CollectiveKind::all_reduce) == "all-reduce");
  CHECK(collective_name(CollectiveKind::all_gather) == "all-gather");
  CHECK(collective_name(CollectiveKind::reduce_scatter) == "reduce-scatter");
  CHECK(collective_name(CollectiveKind::send_recv) == "send-recv");
}

TEST_CASE("ring all-reduce of 1 GiB over 8 GPUs of one NVSwitch node") {
  const Topology topology = Topology::build(cluster(1, 8, 8, "fat-tree", 64));
  const CollectiveModel model(topology, CommParams{2e-6, 0.85});
  const std::vector<int> ranks = iota(8);
  // Each hop: GPU -> NVSwitch -> GPU, 450 GB/s, 1 us, no link shared by two hops.
  // B = 450e9 * 0.85 = 382.5e9 B/s; alpha = 1 us + 2 us = 3 us.
  // all-reduce = 2*7/8 * 2^30 / 382.5e9 + 14 * 3e-6 = 4.912544e-3 + 42e-6 = 4.954544e-3 s
  CHECK(model.time_s(CollectiveKind::all_reduce, ranks, kGiB) == doctest::Approx(4.954544292810458e-3));
  // all-gather = 7/8 * 2^30 / 382.5e9 + 7 * 3e-6 = 2.477272e-3 s; reduce-scatter the same.
  CHECK(model.time_s(CollectiveKind::all_gather, ranks, kGiB) == doctest::Approx(2.477272146405229e-3));
  CHECK(model.time_s(CollectiveKind::reduce_scatter, ranks, kGiB) ==
        doctest::Approx(2.477272146405229e-3));
  // Zero bytes still pays the 14 latency steps.
  CHECK(model.time_s(CollectiveKind::all_reduce, ranks, 0.0) == doctest::Approx(42e-6));
}

TEST_CASE("ring across 4 nodes, one GPU each, through a radix-4 2-tier fat-tree at 400 Gb/s") {
  // 4 NICs, d = u = 2: leaves {0,1} and {2,3}, one spine. Hops 0->1 and 2->3 stay on a leaf
  // (2 links); 1->2 goes up leaf 0, down leaf 1; 3->0 up leaf 1, down leaf 0: no link shared.
  const Topology topology = Topology::build(cluster(4, 1, 1, "fat-tree", 4));
  const CollectiveModel model(topology, CommParams{2e-6, 0.85});
  const std::vector<int> ranks = iota(4);
  // B = 50e9 * 0.85 = 42.5e9; alpha = 4 x 1 us (longest hop) + 2 us = 6 us.
  // all-reduce = 2*3/4 * 2^30 / 42.5e9 + 6 * 6e-6 = 37.93277e-3 s
  CHECK(model.time_s(CollectiveKind::all_reduce, ranks, kGiB) == doctest::Approx(37.93277025882353e-3));
}

TEST_CASE("ring hops sharing a NIC divide its bandwidth") {
  // 2 nodes x 8 GPUs, one 400 Gb/s NIC per node on one switch.
  const Topology topology = Topology::build(cluster(2, 8, 1, "switch", 64));
  const CollectiveModel model(topology, CommParams{2e-6, 0.85});
  // Cross-node hop latency: 0.5 (GPU->NVSwitch) + 0 (->NIC) + 1 + 1 + 0 + 0.5 = 3 us; alpha = 5 us.
  // Node-major ring: only hops 7->8 and 15->0 cross, in opposite directions: B = 42.5e9.
  // all-reduce = 2*15/16 * 2^30 / 42.5e9 + 30 * 5e-6 = 47.52096e-3 s
  CHECK(model.time_s(CollectiveKind::all_reduce, iota(16), kGiB) ==
        doctest::Approx(47.52096282352941e-3));
  // Interleaved ring 0,8,1,9,...: all 16 hops cross, 8 each way through each NIC:
  // B = 50e9 / 8 * 0.85; all-reduce = 2*15/16 * 2^30 / 5.3125e9 + 30 * 5e-6 = 0.3791177 s
  std::vector<int> interleaved;
  for (int i = 0; i < 8; ++i) {
    interleaved.push_back(i);
    interleaved.push_back(i + 8);
  }
  CHECK(model.time_s(CollectiveKind::all_reduce, interleaved, kGiB) ==
        doctest::Approx(0.3791177025882353));
}

TEST_CASE("send-recv is one path's latency plus bytes over its bottleneck") {
  const Topology topology = Topology::build(cluster(2, 8, 1, "switch", 64));
  const CollectiveModel model(topology, CommParams{2e-6, 0.85});
  // 3 us path + 2 us step + 2^30 / (50e9 * 0.85) = 25.26951e-3 s
  CHECK(model.send_recv_time_s(0, 8, kGiB) == doctest::Approx(25.269513505882354e-3));
  const std::vector<int> pair = {0, 8};
  CHECK(model.time_s(CollectiveKind::send_recv, pair, kGiB) == doctest::Approx(25.269513505882354e-3));
  // Same node: 1 us + 2 us + 2^30 / 382.5e9
  CHECK(model.send_recv_time_s(0, 1, kGiB) == doctest::Approx(3e-6 + kGiB / 382.5e9));
  CHECK(model.send_recv_time_s(4, 4, kGiB) == 0.0);
}

TEST_CASE("a group of one costs nothing") {
  const Topology topology = Topology::build(cluster(1, 8, 8, "fat-tree", 64));
  const CollectiveModel model(topology, CommParams{});
  const std::vector<int> one = {5};
  CHECK(model.time_s(CollectiveKind::all_reduce, one, kGiB) == 0.0);
  CHECK(model.time_s(CollectiveKind::all_gather, one, kGiB) == 0.0);
}

TEST_CASE("invalid collectives are rejected with the reason") {
  const Topology topology = Topology::build(cluster(1, 8, 8, "fat-tree", 64));
  const CollectiveModel model(topology, CommParams{});
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
  const std::vector<int> three = {0, 1, 2};
  CHECK_THROWS_WITH_AS(model.time_s(CollectiveKind::send_recv, three, kGiB),
                       "send-recv needs a group of exactly 2 (source, destination), got 3",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(model.send_recv_time_s(0, 9, kGiB), "accelerator index 9 is out of range [0, 8)",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(CollectiveModel(topology, CommParams{2e-6, 0.0}),
                       "comm bandwidth_efficiency must be in (0, 1], got 0", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(CollectiveModel(topology, CommParams{2e-6, 1.5}),
                       "comm bandwidth_efficiency must be in (0, 1], got 1.5", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(CollectiveModel(topology, CommParams{-1e-6, 0.85}),
                       "comm step_latency_s must be a finite number >= 0, got -1e-06",
                       clustersim::ConfigError);
}
