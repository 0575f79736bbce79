// Flow model speed: max-min fair sharing with incremental recomputes (topologies/flow_network).
// Results and the command that produced them: docs/performance.md, section "Flow model".
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "sim/engine/engine.hpp"
#include "topologies/flow_network.hpp"
#include "topologies/topology.hpp"

namespace {

using clustersim::engine::Engine;
using clustersim::engine::TimePs;
using clustersim::topologies::ClusterNetworkSpec;
using clustersim::topologies::FlowId;
using clustersim::topologies::FlowNetwork;
using clustersim::topologies::Link;
using clustersim::topologies::LinkId;
using clustersim::topologies::Topology;

/// 2,048 nodes x 8 GPUs, one 50 GB/s NIC per GPU: 16,384 endpoints on a 3-tier radix-64
/// fat-tree (non-blocking), 450 GB/s NVSwitch inside a node.
Topology fat_tree_16k() {
  ClusterNetworkSpec spec;
  spec.nodes = 2048;
  spec.accelerators_per_node = 8;
  spec.scale_up.bytes_per_s = 450e9;
  spec.scale_up.latency_s = 1e-6;
  spec.scale_out.topology = "fat-tree";
  spec.scale_out.tiers = 3;
  spec.scale_out.radix = 64;
  spec.scale_out.nics_per_node = 8;
  spec.scale_out.nic_bytes_per_s = 50e9;
  spec.scale_out.link_latency_s = 1e-6;
  spec.scale_up.efficiency = 1.0;  // ideal links, as in the figures of docs/performance.md
  spec.scale_out.efficiency = 1.0;
  return Topology::build(spec);
}

/// `count` (src, dst) pairs: successive random permutations of the accelerators (no self pairs).
std::vector<std::pair<int, int>> permutation_pairs(int accelerators, int count) {
  std::mt19937_64 rng(42);
  std::vector<int> order(static_cast<std::size_t>(accelerators));
  std::vector<std::pair<int, int>> pairs;
  while (static_cast<int>(pairs.size()) < count) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int src = 0; src < accelerators && static_cast<int>(pairs.size()) < count; ++src) {
      const int dst = order[static_cast<std::size_t>(src)];
      if (dst != src) pairs.emplace_back(src, dst);
    }
  }
  return pairs;
}

/// Starts `pairs[i]` with `bytes[i]` at t = 0 on a fresh network and runs to completion.
void run_flows(benchmark::State& state, const Topology& topology,
               const std::vector<std::pair<int, int>>& pairs, const std::vector<double>& bytes) {
  std::uint64_t events = 0;
  TimePs simulated_ps = 0;
  for (auto _ : state) {
    Engine engine;
    FlowNetwork network(engine, topology);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      network.start_flow_between(pairs[i].first, pairs[i].second, bytes[i], nullptr);
    }
    const auto stats = engine.run();
    events = stats.events_fired;
    simulated_ps = stats.end_time_ps;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["simulated_ms"] = static_cast<double>(simulated_ps) * 1e-9;
}

// (a) range(0) flows of 16 MB between random permutation pairs, all started at t = 0, run to
// completion. Equal sizes and a common start make the fastest flows on a link finish first,
// so most departures leave every other flow's bottleneck intact (the easy case for the
// incremental recompute).
void BM_FatTreeRandomFlows(benchmark::State& state) {
  const Topology topology = fat_tree_16k();
  const auto pairs = permutation_pairs(topology.accelerator_count(), static_cast<int>(state.range(0)));
  for (const auto& [src, dst] : pairs) benchmark::DoNotOptimize(topology.path(src, dst));  // warm the path cache
  run_flows(state, topology, pairs, std::vector<double>(pairs.size(), 16e6));
}
BENCHMARK(BM_FatTreeRandomFlows)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// (a') The same pairs with sizes drawn uniformly from 1-32 MB: flows still running when a
// faster one leaves gain or lose bandwidth, and rate changes cascade through chains of
// bottlenecks (the hard case).
void BM_FatTreeRandomSizedFlows(benchmark::State& state) {
  const Topology topology = fat_tree_16k();
  const auto pairs = permutation_pairs(topology.accelerator_count(), static_cast<int>(state.range(0)));
  for (const auto& [src, dst] : pairs) benchmark::DoNotOptimize(topology.path(src, dst));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> megabytes(1.0, 32.0);
  std::vector<double> bytes(pairs.size());
  for (double& b : bytes) b = megabytes(rng) * 1e6;
  run_flows(state, topology, pairs, bytes);
}
BENCHMARK(BM_FatTreeRandomSizedFlows)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// (b) One pipelined ring all-reduce phase across all 16,384 GPUs: GPU i sends to GPU i+1 (mod
// N) the 2(N-1)/N share of a 1 GiB buffer, all flows at once, run to completion.
void BM_RingAllReducePhase16k(benchmark::State& state) {
  const Topology topology = fat_tree_16k();
  const int gpus = topology.accelerator_count();
  for (int i = 0; i < gpus; ++i) benchmark::DoNotOptimize(topology.path(i, (i + 1) % gpus));
  const double bytes = 2.0 * (gpus - 1) / gpus * 1073741824.0;
  std::uint64_t events = 0;
  TimePs simulated_ps = 0;
  for (auto _ : state) {
    Engine engine;
    FlowNetwork network(engine, topology);
    for (int i = 0; i < gpus; ++i) network.start_flow_between(i, (i + 1) % gpus, bytes, nullptr);
    const auto stats = engine.run();
    events = stats.events_fired;
    simulated_ps = stats.end_time_ps;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["simulated_ms"] = static_cast<double>(simulated_ps) * 1e-9;
}
BENCHMARK(BM_RingAllReducePhase16k)->Unit(benchmark::kMillisecond);

// (d) Routing at 100K endpoints: the 102,400-GPU fabric of examples/feasibility/cpo-100k-training.yaml
// (12,800 nodes x 8 GPUs, one NIC per GPU, a 3-tier radix-128 fat-tree) built, then 100,000
// random-permutation pairs routed on it, every route and hop-distance cache cold.
void BM_FatTree102kBuildAndRoute(benchmark::State& state) {
  ClusterNetworkSpec spec;
  spec.nodes = 12800;
  spec.accelerators_per_node = 8;
  spec.scale_up.bytes_per_s = 900e9;
  spec.scale_out.topology = "fat-tree";
  spec.scale_out.tiers = 3;
  spec.scale_out.radix = 128;
  spec.scale_out.nics_per_node = 8;
  spec.scale_out.nic_bytes_per_s = 100e9;
  const auto pairs = permutation_pairs(spec.nodes * spec.accelerators_per_node, 100'000);
  std::size_t links = 0;
  for (auto _ : state) {
    const Topology topology = Topology::build(spec);
    links = 0;
    for (const auto& [src, dst] : pairs) links += topology.path(src, dst).links.size();
  }
  state.counters["route_links"] = static_cast<double>(links);
}
BENCHMARK(BM_FatTree102kBuildAndRoute)->Unit(benchmark::kMillisecond)->Iterations(3);

/// One connected component of 1,000 long flows over 8 links of different capacities: flow i
/// crosses links i mod 8 and (i + 1) mod 8.
struct Component1k {
  std::vector<Link> links;
  Engine engine;
  FlowNetwork network;

  static std::vector<Link> make_links() {
    std::vector<Link> links;
    for (int l = 0; l < 8; ++l) links.push_back({0, 1, (10.0 + 5.0 * l) * 1e9, 0.0, 1});
    return links;
  }
  Component1k() : links(make_links()), network(engine, links) {
    for (int i = 0; i < 1000; ++i) {
      const std::vector<LinkId> path{i % 8, (i + 1) % 8};
      network.start_flow(path, 1e12, 0.0, nullptr);  // long enough never to finish here
    }
    engine.run(engine.now() + 1);
  }
};

// (c) A single arrival (start_flow + its recompute) and the matching departure (the flow's
// completion event + its recompute) in a component of 1,000 flows. Manual time: arrival only
// for /0, departure only for /1.
void BM_Component1kArrivalDeparture(benchmark::State& state) {
  const bool time_departure = state.range(0) == 1;
  Component1k component;
  const std::vector<LinkId> path{0, 1};
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    const auto arrive_begin = Clock::now();
    const FlowId flow = component.network.start_flow(path, 1e3, 0.0, nullptr);
    benchmark::DoNotOptimize(component.network.rate_bytes_per_s(flow));  // runs the recompute
    const auto depart_begin = Clock::now();
    component.engine.run(component.engine.now() + 100'000'000);  // 1 kB at >= 40 MB/s: < 100 us
    const auto depart_end = Clock::now();
    if (component.network.active_flows() != 1000) state.SkipWithError("flow did not depart");
    const auto elapsed = time_departure ? depart_end - depart_begin : depart_begin - arrive_begin;
    state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
  }
}
BENCHMARK(BM_Component1kArrivalDeparture)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
