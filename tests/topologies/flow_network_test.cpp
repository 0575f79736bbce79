#include "topologies/flow_network.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "sim/engine/error.hpp"
#include "topologies/flow_incidence.hpp"
#include "topologies/flow_max_min.hpp"
#include "topology_test_support.hpp"

namespace flow_network_test {

using namespace clustersim::topologies;
using clustersim::engine::Engine;
using clustersim::engine::TimePs;

namespace {

constexpr double kGBps = 1e9;  // bytes/s
constexpr TimePs kPsPerS = clustersim::engine::kPsPerSecond;

/// Directed links of the given capacities (bytes/s), no latency.
std::vector<Link> links_of(std::vector<double> bytes_per_s) {
  std::vector<Link> links;
  for (const double capacity : bytes_per_s) links.push_back({0, 1, capacity, 0.0, 1});
  return links;
}

/// Records the time each flow's completion handler fires, by flow index.
struct Arrivals {
  std::vector<TimePs> at_ps;
  explicit Arrivals(std::size_t flows) : at_ps(flows, -1) {}
  FlowNetwork::CompletionHandler record(std::size_t index) {
    return [this, index](Engine& engine) { at_ps[index] = engine.now(); };
  }
};

}  // namespace

TEST_CASE("two flows sharing one bottleneck each get half and finish exactly") {
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  const std::vector<LinkId> path{0};
  const FlowId a = network.start_flow(path, 1e9, 0.0, arrivals.record(0));
  const FlowId b = network.start_flow(path, 1e9, 0.0, arrivals.record(1));
  CHECK(network.active_flows() == 2);
  CHECK(network.rate_bytes_per_s(a) == 5 * kGBps);
  CHECK(network.rate_bytes_per_s(b) == 5 * kGBps);
  engine.run();
  // 1 GB at 5 GB/s = 0.2 s.
  CHECK(arrivals.at_ps[0] == kPsPerS / 5);
  CHECK(arrivals.at_ps[1] == kPsPerS / 5);
  CHECK(network.active_flows() == 0);
  CHECK(network.rate_bytes_per_s(a) == 0.0);
}

TEST_CASE("classic max-min: a two-link flow and one single-link flow per link all get 5") {
  Engine engine;
  const auto links = links_of({10 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  const FlowId a = network.start_flow(std::vector<LinkId>{0, 1}, 1e9, 0.0, nullptr);
  const FlowId b = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);
  const FlowId c = network.start_flow(std::vector<LinkId>{1}, 1e9, 0.0, nullptr);
  CHECK(network.rate_bytes_per_s(a) == 5 * kGBps);
  CHECK(network.rate_bytes_per_s(b) == 5 * kGBps);
  CHECK(network.rate_bytes_per_s(c) == 5 * kGBps);
}

TEST_CASE("a flow limited elsewhere frees capacity for the others") {
  Engine engine;
  // Link 0: 1 GB/s, link 1: 10 GB/s. X crosses both, Y only link 1.
  const auto links = links_of({1 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  const FlowId x = network.start_flow(std::vector<LinkId>{0, 1}, 1e9, 0.0, arrivals.record(0));
  const FlowId y = network.start_flow(std::vector<LinkId>{1}, 9e9, 0.0, arrivals.record(1));
  CHECK(network.rate_bytes_per_s(x) == 1 * kGBps);
  CHECK(network.rate_bytes_per_s(y) == 9 * kGBps);
  engine.run();
  CHECK(arrivals.at_ps[0] == kPsPerS);  // 1 GB at 1 GB/s
  CHECK(arrivals.at_ps[1] == kPsPerS);  // 9 GB at 9 GB/s
}

TEST_CASE("three-level progressive filling") {
  Engine engine;
  // Link 0 (3 GB/s): A, B, C. Link 1 (10 GB/s): C, D. Link 2 (4 GB/s): D, E.
  // Link 0 fixes A, B, C at 1; link 2 then shares 4 between D and E = 2 each (link 1 would
  // give D 9); link 1 keeps 10 - 1 - 2 = 7 unused.
  const auto links = links_of({3 * kGBps, 10 * kGBps, 4 * kGBps});
  FlowNetwork network(engine, links);
  const FlowId a = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);
  const FlowId b = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);
  const FlowId c = network.start_flow(std::vector<LinkId>{0, 1}, 1e9, 0.0, nullptr);
  const FlowId d = network.start_flow(std::vector<LinkId>{1, 2}, 1e9, 0.0, nullptr);
  const FlowId e = network.start_flow(std::vector<LinkId>{2}, 1e9, 0.0, nullptr);
  CHECK(network.rate_bytes_per_s(a) == 1 * kGBps);
  CHECK(network.rate_bytes_per_s(b) == 1 * kGBps);
  CHECK(network.rate_bytes_per_s(c) == 1 * kGBps);
  CHECK(network.rate_bytes_per_s(d) == 2 * kGBps);
  CHECK(network.rate_bytes_per_s(e) == 2 * kGBps);
}

TEST_CASE("opposite directions of a full-duplex cable do not share") {
  Engine engine;
  // A cable's two directions are two links.
  const auto links = links_of({50 * kGBps, 50 * kGBps});
  FlowNetwork network(engine, links);
  const FlowId forward = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);
  const FlowId backward = network.start_flow(std::vector<LinkId>{1}, 1e9, 0.0, nullptr);
  CHECK(network.rate_bytes_per_s(forward) == 50 * kGBps);
  CHECK(network.rate_bytes_per_s(backward) == 50 * kGBps);
}

TEST_CASE("on a built topology: opposite directions and a NIC-limited flow") {
  // 2 nodes x 2 GPUs, one shared 50 GB/s NIC per node, 450 GB/s NVSwitch, single switch.
  const Topology topology = Topology::build(testing::cluster(2, 2, 1, "switch"));
  SUBCASE("GPU 0 -> GPU 2 and GPU 2 -> GPU 0 each get the full NIC") {
    Engine engine;
    FlowNetwork network(engine, topology);
    const FlowId there = network.start_flow_between(0, 2, 1e9, nullptr);
    const FlowId back = network.start_flow_between(2, 0, 1e9, nullptr);
    CHECK(network.rate_bytes_per_s(there) == 50 * kGBps);
    CHECK(network.rate_bytes_per_s(back) == 50 * kGBps);
  }
  SUBCASE("an NVLink flow sharing GPU 0's port gets what the NIC-bound flow leaves") {
    Engine engine;
    FlowNetwork network(engine, topology);
    Arrivals arrivals(2);
    const FlowId cross = network.start_flow_between(0, 2, 1e9, arrivals.record(0));
    const FlowId local = network.start_flow_between(0, 1, 4e9, arrivals.record(1));
    CHECK(network.rate_bytes_per_s(cross) == 50 * kGBps);
    CHECK(network.rate_bytes_per_s(local) == 400 * kGBps);
    engine.run();
    // 1 GB at 50 GB/s = 20 ms, plus the path latency.
    const Path& cross_path = topology.path(0, 2);
    CHECK(arrivals.at_ps[0] ==
          kPsPerS / 50 + clustersim::engine::seconds_to_ps(cross_path.latency_s));
    // 4 GB at 400 GB/s = 10 ms (the cross flow is still running: its rate never changes).
    CHECK(arrivals.at_ps[1] ==
          kPsPerS / 100 + clustersim::engine::seconds_to_ps(topology.path(0, 1).latency_s));
  }
}

TEST_CASE("a flow finishing early raises the other's rate and reschedules its completion") {
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  const std::vector<LinkId> path{0};
  network.start_flow(path, 1e9, 0.0, arrivals.record(0));
  const FlowId big = network.start_flow(path, 2e9, 0.0, arrivals.record(1));
  CHECK(network.rate_bytes_per_s(big) == 5 * kGBps);
  engine.run(kPsPerS / 5);  // the small flow's last byte leaves at 0.2 s
  CHECK(arrivals.at_ps[0] == kPsPerS / 5);
  CHECK(network.rate_bytes_per_s(big) == 10 * kGBps);
  engine.run();
  // 1 GB moved at 5 GB/s by 0.2 s; the other 1 GB at 10 GB/s takes 0.1 s more.
  CHECK(arrivals.at_ps[1] == 3 * kPsPerS / 10);
}

TEST_CASE("only flows whose rate changed are rescheduled") {
  Engine engine;
  // X is held to 1 GB/s by link 0 whatever happens on link 1.
  const auto links = links_of({1 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  network.start_flow(std::vector<LinkId>{0, 1}, 1e9, 0.0, arrivals.record(0));
  engine.run(kPsPerS / 10);
  network.start_flow(std::vector<LinkId>{1}, 9e8, 0.0, arrivals.record(1));
  const auto stats = engine.run();
  // recompute at 0.1 s, Y's last byte + arrival, recompute after Y, X's last byte + arrival,
  // recompute after X; X's completion event was never cancelled.
  CHECK(stats.events_cancelled == 0);
  CHECK(stats.events_fired == 7);
  CHECK(arrivals.at_ps[0] == kPsPerS);
  CHECK(arrivals.at_ps[1] == kPsPerS / 10 + kPsPerS / 10);  // 0.9 GB at 9 GB/s
}

TEST_CASE("a rate cap acts as a private link") {
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  const std::vector<LinkId> path{0};
  const FlowId capped = network.start_flow(path, 1e9, 0.0, arrivals.record(0), 2 * kGBps);
  const FlowId open = network.start_flow(path, 4e9, 0.0, arrivals.record(1));
  CHECK(network.rate_bytes_per_s(capped) == 2 * kGBps);
  CHECK(network.rate_bytes_per_s(open) == 8 * kGBps);
  engine.run();
  CHECK(arrivals.at_ps[0] == kPsPerS / 2);  // 1 GB at 2 GB/s
  CHECK(arrivals.at_ps[1] == kPsPerS / 2);  // 4 GB at 8 GB/s
  SUBCASE("a cap above the fair share does not bind") {
    const FlowId a = network.start_flow(path, 1e9, 0.0, nullptr, 7 * kGBps);
    const FlowId b = network.start_flow(path, 1e9, 0.0, nullptr);
    CHECK(network.rate_bytes_per_s(a) == 5 * kGBps);
    CHECK(network.rate_bytes_per_s(b) == 5 * kGBps);
  }
}

TEST_CASE("latency delays the handler but not the release of bandwidth") {
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  const std::vector<LinkId> path{0};
  network.start_flow(path, 1e9, 1e-3, arrivals.record(0));
  network.start_flow(path, 2e9, 2e-6, arrivals.record(1));
  engine.run();
  CHECK(arrivals.at_ps[0] == kPsPerS / 5 + kPsPerS / 1000);       // 0.2 s + 1 ms
  CHECK(arrivals.at_ps[1] == 3 * kPsPerS / 10 + 2 * kPsPerS / 1'000'000);  // 0.3 s + 2 us
  SUBCASE("a flow with no links takes only its latency") {
    Arrivals local(1);
    const TimePs start_ps = engine.now();
    const FlowId self = network.start_flow({}, 1e9, 5e-6, local.record(0));
    CHECK(network.active_flows() == 0);
    CHECK(network.rate_bytes_per_s(self) == 0.0);
    engine.run();
    CHECK(local.at_ps[0] == start_ps + 5'000'000);
  }
}

TEST_CASE("completion times are picosecond ceilings, never early") {
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(3);
  const std::vector<LinkId> path{0};
  for (std::size_t i = 0; i < 3; ++i) network.start_flow(path, 1e9, 0.0, arrivals.record(i));
  engine.run();
  // 10/3 GB/s is inexact in binary, yet 1 GB takes 0.3 s to the picosecond.
  for (const TimePs at : arrivals.at_ps) CHECK(at == 3 * kPsPerS / 10);
  SUBCASE("a duration that is not a whole number of picoseconds is rounded up") {
    Arrivals odd(1);
    const TimePs start_ps = engine.now();
    network.start_flow(path, 1.0, 0.0, odd.record(0), 3e9);  // 1 byte at 3 GB/s = 333.3 ps
    engine.run();
    CHECK(odd.at_ps[0] == start_ps + 334);
  }
}

TEST_CASE("traffic counts the bytes each link carried") {
  Engine engine;
  const auto links = links_of({10 * kGBps, 10 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  network.start_flow(std::vector<LinkId>{0, 1}, 2e9, 0.0, nullptr);
  network.start_flow(std::vector<LinkId>{1}, 2e9, 0.0, nullptr);
  engine.run(kPsPerS / 10);  // both at 5 GB/s for 0.1 s
  CHECK(network.traffic().bytes == std::vector<double>{5e8, 1e9, 0.0});
  engine.run();
  CHECK(network.traffic().bytes == std::vector<double>{2e9, 4e9, 0.0});
}

TEST_CASE("invalid flows and links are rejected with the reason") {
  Engine engine;
  const auto links = links_of({10 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  const std::vector<LinkId> path{0};
  CHECK_THROWS_WITH_AS(network.start_flow(path, 0.0, 0.0, nullptr),
                       "flow bytes must be a finite number > 0, got 0", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow(path, -5.0, 0.0, nullptr),
                       "flow bytes must be a finite number > 0, got -5", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(
      network.start_flow(path, std::numeric_limits<double>::quiet_NaN(), 0.0, nullptr),
      "flow bytes must be a finite number > 0, got nan", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow(path, 1.0, -1e-6, nullptr),
                       "flow latency_s must be a finite number in [0, 1000000], got -1e-06",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow(std::vector<LinkId>{0, 2}, 1.0, 0.0, nullptr),
                       "flow link id 2 is out of range [0, 2)", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow(std::vector<LinkId>{-1}, 1.0, 0.0, nullptr),
                       "flow link id -1 is out of range [0, 2)", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow(std::vector<LinkId>{1, 0, 1}, 1.0, 0.0, nullptr),
                       "flow crosses link 1 twice", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow(path, 1.0, 0.0, nullptr, 0.0),
                       "flow rate_cap_bytes_per_s must be > 0, got 0", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(network.start_flow_between(0, 1, 1.0, nullptr),
                       "start_flow_between needs a FlowNetwork built on a Topology",
                       clustersim::ConfigError);
  CHECK(network.active_flows() == 0);
  CHECK(engine.pending() == 0);

  const auto bad_links = links_of({10 * kGBps, 0.0});
  CHECK_THROWS_WITH_AS(FlowNetwork(engine, bad_links),
                       "link 1 bytes_per_s must be a finite number > 0, got 0",
                       clustersim::ConfigError);
  auto late_links = links_of({10 * kGBps});
  late_links[0].latency_s = -1;
  CHECK_THROWS_WITH_AS(FlowNetwork(engine, late_links),
                       "link 0 latency_s must be a finite number >= 0, got -1",
                       clustersim::ConfigError);
}

namespace {

/// Staggered flows over a few shared links; returns (fingerprint, sum of arrival times).
std::pair<std::uint64_t, TimePs> staggered_run(int flows, double first_bytes) {
  Engine engine(7);
  const auto links = links_of({10 * kGBps, 25 * kGBps, 40 * kGBps, 5 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(static_cast<std::size_t>(flows));
  for (int i = 0; i < flows; ++i) {
    const std::vector<LinkId> path = i % 3 == 0   ? std::vector<LinkId>{0, 1}
                                     : i % 3 == 1 ? std::vector<LinkId>{1, 2, 3}
                                                  : std::vector<LinkId>{2};
    const double bytes = (i == 0 ? first_bytes : 1e8) * (1 + i % 7);
    network.start_flow(path, bytes, 1e-6 * (i % 5), arrivals.record(static_cast<std::size_t>(i)));
    engine.run(engine.now() + TimePs{1'000'000'000} * (i % 4));  // 0-3 ms apart
  }
  engine.run();
  TimePs sum = 0;
  for (const TimePs at : arrivals.at_ps) {
    CHECK(at > 0);
    sum += at;
  }
  CHECK(network.active_flows() == 0);
  return {engine.fingerprint(), sum};
}

}  // namespace

TEST_CASE("the same sequence of flows gives the same fingerprint") {
  const auto first = staggered_run(40, 1e8);
  const auto second = staggered_run(40, 1e8);
  CHECK(first == second);
  const auto other = staggered_run(40, 2e8);
  CHECK(other.first != first.first);
}

TEST_CASE("a departure's freed capacity cascades two and three bottleneck levels away") {
  // L0 (2 GB/s): X, F1. L1 (3.5 GB/s): F1, F2. L2 (6 GB/s): F2, F3. L3 (8 GB/s): F3, Y.
  // Filling: L0 fixes X = F1 = 1; L1 gives F2 2.5; L2 gives F3 3.5; L3 gives Y 4.5. When X
  // leaves, L1 binds first: F1 = F2 = 1.75 (F1 up, F2 down); then F3 can rise, L3 binds at 4
  // and Y, three links away from the change, drops to 4.
  Engine engine;
  const auto links = links_of({2 * kGBps, 3.5 * kGBps, 6 * kGBps, 8 * kGBps});
  FlowNetwork network(engine, links);
  const FlowId x = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);  // ends at 1 s
  const FlowId f1 = network.start_flow(std::vector<LinkId>{0, 1}, 1e12, 0.0, nullptr);
  const FlowId f2 = network.start_flow(std::vector<LinkId>{1, 2}, 1e12, 0.0, nullptr);
  const FlowId f3 = network.start_flow(std::vector<LinkId>{2, 3}, 1e12, 0.0, nullptr);
  const FlowId y = network.start_flow(std::vector<LinkId>{3}, 1e12, 0.0, nullptr);
  CHECK(network.rate_bytes_per_s(x) == 1 * kGBps);
  CHECK(network.rate_bytes_per_s(f1) == 1 * kGBps);
  CHECK(network.rate_bytes_per_s(f2) == 2.5 * kGBps);
  CHECK(network.rate_bytes_per_s(f3) == 3.5 * kGBps);
  CHECK(network.rate_bytes_per_s(y) == 4.5 * kGBps);
  engine.run(kPsPerS);
  CHECK(network.rate_bytes_per_s(x) == 0.0);
  CHECK(network.rate_bytes_per_s(f1) == 1.75 * kGBps);
  CHECK(network.rate_bytes_per_s(f2) == 1.75 * kGBps);
  CHECK(network.rate_bytes_per_s(f3) == 4 * kGBps);
  CHECK(network.rate_bytes_per_s(y) == 4 * kGBps);
  SUBCASE("without the last link the cascade ends two levels away, at F3") {
    Engine short_engine;
    const auto short_links = links_of({2 * kGBps, 3.5 * kGBps, 6 * kGBps});
    FlowNetwork short_network(short_engine, short_links);
    Arrivals arrivals(1);
    short_network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);
    short_network.start_flow(std::vector<LinkId>{0, 1}, 1e12, 0.0, nullptr);
    short_network.start_flow(std::vector<LinkId>{1, 2}, 1e12, 0.0, nullptr);
    // 3.5 GB for 1 s, then 4.25 GB/s: 7.75 GB end exactly at 2 s.
    const FlowId last = short_network.start_flow(std::vector<LinkId>{2}, 7.75e9, 0.0,
                                                 arrivals.record(0));
    CHECK(short_network.rate_bytes_per_s(last) == 3.5 * kGBps);
    short_engine.run(kPsPerS);
    CHECK(short_network.rate_bytes_per_s(last) == 4.25 * kGBps);
    short_engine.run(3 * kPsPerS);
    CHECK(arrivals.at_ps[0] == 2 * kPsPerS);
  }
}

TEST_CASE("a flow not on the changed link, faster than a re-solved flow, is pulled down") {
  // L (6 GB/s): h, k. M (10 GB/s): h, g. h = k = 3 on L; g takes the 7 left on M. When k
  // leaves, h rises until M is full: h = g = 5, so g, on no changed link, must slow down.
  Engine engine;
  const auto links = links_of({6 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  const FlowId h = network.start_flow(std::vector<LinkId>{0, 1}, 1e12, 0.0, nullptr);
  const FlowId k = network.start_flow(std::vector<LinkId>{0}, 3e9, 0.0, nullptr);  // 1 s
  const FlowId g = network.start_flow(std::vector<LinkId>{1}, 1e12, 0.0, nullptr);
  CHECK(network.rate_bytes_per_s(h) == 3 * kGBps);
  CHECK(network.rate_bytes_per_s(k) == 3 * kGBps);
  CHECK(network.rate_bytes_per_s(g) == 7 * kGBps);
  engine.run(kPsPerS);
  CHECK(network.rate_bytes_per_s(k) == 0.0);
  CHECK(network.rate_bytes_per_s(h) == 5 * kGBps);
  CHECK(network.rate_bytes_per_s(g) == 5 * kGBps);
}

namespace {

/// The network's current payload capacity of every link, bytes/s.
std::vector<double> capacities_of(const FlowNetwork& network, std::size_t link_count) {
  std::vector<double> capacity;
  for (std::size_t l = 0; l < link_count; ++l) {
    capacity.push_back(network.link_capacity_bytes_per_s(static_cast<LinkId>(l)));
  }
  return capacity;
}

/// From-scratch progressive filling of the given flows (by slot: path and cap) on links of
/// the given capacities.
std::vector<double> full_max_min(const std::vector<double>& capacity_bytes_per_s,
                                 const std::vector<std::vector<LinkId>>& paths,
                                 const std::vector<double>& caps,
                                 const std::vector<std::int32_t>& active) {
  const std::size_t link_count = capacity_bytes_per_s.size();
  FlowLinkIncidence incidence(link_count);
  for (const std::int32_t flow : active) incidence.add(flow, paths[static_cast<std::size_t>(flow)]);
  std::vector<LinkId> all_links;
  for (std::size_t l = 0; l < link_count; ++l) all_links.push_back(static_cast<LinkId>(l));
  MaxMinFairSolver solver(capacity_bytes_per_s);
  std::vector<double> rate(paths.size(), 0.0);
  solver.solve(incidence, all_links, active, caps, rate);
  return rate;
}

/// Random arrivals and completions on a random small network; with `change_capacities`, links
/// are also degraded, taken down and restored, now or by profiles whose changes often fall on
/// the instants where flows start. After every step each active flow's rate (0 when stalled)
/// must equal a from-scratch solve on the links' current capacities.
void random_network_run(std::uint64_t seed, bool change_capacities) {
  std::mt19937_64 rng(seed);
  const auto uniform_int = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const auto random_scale = [&] {
    constexpr double kScales[] = {0.0, 0.25, 0.5, 1.0, 1.0, 2.0};
    const int pick = uniform_int(0, 6);
    return pick < 6 ? kScales[pick] : std::uniform_real_distribution<double>(0.05, 1.5)(rng);
  };
  std::vector<double> capacities;
  const int link_count = uniform_int(2, 10);
  for (int l = 0; l < link_count; ++l) capacities.push_back(kGBps * uniform_int(1, 12));
  const auto links = links_of(capacities);
  Engine engine(seed);
  FlowNetwork network(engine, links);
  std::vector<FlowId> ids;
  std::vector<std::vector<LinkId>> paths;
  std::vector<double> caps;
  std::vector<LinkId> order;
  for (int l = 0; l < link_count; ++l) order.push_back(l);
  Arrivals arrivals(0);
  for (int step = 0; step < 80; ++step) {
    const int starts = uniform_int(0, 3);  // several at one instant: one batched recompute
    for (int a = 0; a < starts; ++a) {
      std::shuffle(order.begin(), order.end(), rng);
      paths.emplace_back(order.begin(), order.begin() + uniform_int(1, std::min(link_count, 4)));
      caps.push_back(uniform_int(0, 3) == 0 ? 0.5 * kGBps * uniform_int(1, 8)
                                            : std::numeric_limits<double>::infinity());
      const double bytes = 1e6 * uniform_int(1, 400);
      arrivals.at_ps.push_back(-1);
      ids.push_back(network.start_flow(paths.back(), bytes, 0.0,
                                       arrivals.record(arrivals.at_ps.size() - 1), caps.back()));
    }
    if (change_capacities && uniform_int(0, 1) == 0) {
      const LinkId link = uniform_int(0, link_count - 1);
      if (uniform_int(0, 1) == 0) {
        network.set_link_scale(link, random_scale());
      } else {
        LinkProfile profile;
        TimePs at_ps = engine.now();
        for (int c = uniform_int(1, 3); c > 0; --c) {
          at_ps += TimePs{10'000'000} * uniform_int(profile.changes.empty() ? 0 : 1, 10);
          profile.changes.push_back({at_ps, random_scale()});
        }
        network.apply_profile(link, profile);
      }
    }
    engine.run(engine.now() + TimePs{10'000'000} * uniform_int(0, 20));  // 0-200 us later
    std::vector<std::int32_t> active;
    std::vector<double> got(ids.size(), 0.0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      got[i] = network.rate_bytes_per_s(ids[i]);
      if (arrivals.at_ps[i] < 0) active.push_back(static_cast<std::int32_t>(i));
    }
    REQUIRE(active.size() == network.active_flows());
    const std::vector<double> want =
        full_max_min(capacities_of(network, links.size()), paths, caps, active);
    for (const std::int32_t i : active) {
      INFO("seed ", seed, " step ", step, " flow ", i);
      const auto f = static_cast<std::size_t>(i);
      if (!change_capacities) CHECK(got[f] > 0);  // rate 0 needs a link that is down
      CHECK(std::abs(got[f] - want[f]) <= 1e-9 * want[f]);
    }
  }
}

}  // namespace

TEST_CASE("rates after random arrivals and completions equal a from-scratch solve") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) random_network_run(seed, false);
}

TEST_CASE("rates under random capacity changes and profiles equal a from-scratch solve") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) random_network_run(seed, true);
}

TEST_CASE("on a fat-tree, random-size permutation traffic keeps exact max-min rates") {
  // 64 nodes x 8 GPUs with a 50 GB/s NIC each on a 2-tier fat-tree: 2,000 flows of 1-32 MB
  // between random pairs, all started at once. Their completions cascade rate changes through
  // chains of NIC bottlenecks; at several instants every active flow's rate must equal a
  // from-scratch solve.
  const Topology topology = Topology::build(testing::cluster(64, 8, 8, "fat-tree"));
  std::vector<Link> links(topology.links().begin(), topology.links().end());
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> gpu(0, topology.accelerator_count() - 1);
  std::uniform_real_distribution<double> megabytes(1.0, 32.0);
  Engine engine;
  FlowNetwork network(engine, topology);
  std::vector<FlowId> ids;
  std::vector<std::vector<LinkId>> paths;
  while (ids.size() < 2000) {
    const int src = gpu(rng);
    const int dst = gpu(rng);
    if (src == dst) continue;
    paths.push_back(topology.path(src, dst).links);
    ids.push_back(network.start_flow_between(src, dst, megabytes(rng) * 1e6, nullptr));
  }
  const std::vector<double> no_caps(ids.size(), std::numeric_limits<double>::infinity());
  int checked = 0;
  while (network.active_flows() > 0) {
    std::vector<std::int32_t> active;
    std::vector<double> got(ids.size(), 0.0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      got[i] = network.rate_bytes_per_s(ids[i]);
      if (got[i] > 0) active.push_back(static_cast<std::int32_t>(i));
    }
    const std::vector<double> want =
        full_max_min(capacities_of(network, links.size()), paths, no_caps, active);
    double worst = 0;
    for (const std::int32_t i : active) {
      const auto f = static_cast<std::size_t>(i);
      worst = std::max(worst, std::abs(got[f] - want[f]) / want[f]);
    }
    CHECK(worst <= 1e-12);
    ++checked;
    engine.run(engine.now() + 300'000'000);  // 0.3 ms
  }
  CHECK(checked >= 5);
}

TEST_CASE("a flow whose link halves midway finishes when the arithmetic says") {
  // 2 GB over 10 GB/s; at 0.1 s (1 GB carried) the link drops to 5 GB/s: the other 1 GB takes
  // 0.2 s more, so the flow ends at 0.3 s instead of 0.2 s.
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(1);
  const FlowId flow = network.start_flow(std::vector<LinkId>{0}, 2e9, 0.0, arrivals.record(0));
  network.apply_profile(0, LinkProfile{{{kPsPerS / 10, 0.5}}});
  CHECK(network.link_capacity_bytes_per_s(0) == 10 * kGBps);
  auto stats = engine.run(kPsPerS / 10);
  CHECK(network.link_capacity_bytes_per_s(0) == 5 * kGBps);
  CHECK(network.rate_bytes_per_s(flow) == 5 * kGBps);
  CHECK(network.traffic().bytes == std::vector<double>{1e9});
  const auto rest = engine.run();
  CHECK(arrivals.at_ps[0] == 3 * kPsPerS / 10);
  CHECK(network.traffic().bytes == std::vector<double>{2e9});
  // Its completion at 0.2 s was cancelled once and replaced by the one at 0.3 s.
  CHECK(stats.events_cancelled + rest.events_cancelled == 1);
  SUBCASE("a rate cap under the degraded capacity still binds: min of both") {
    const FlowId capped = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr, 2 * kGBps);
    CHECK(network.rate_bytes_per_s(capped) == 2 * kGBps);
    network.set_link_scale(0, 0.1);  // 1 GB/s, under the cap
    CHECK(network.rate_bytes_per_s(capped) == 1 * kGBps);
  }
}

TEST_CASE("a link down then up stalls its flow, which completes at the computed time") {
  // 2 GB over 10 GB/s; down from 0.1 s (1 GB carried) to 0.4 s, then the other 1 GB takes
  // 0.1 s: the flow ends at 0.5 s.
  Engine engine;
  const auto links = links_of({10 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(2);
  const FlowId flow = network.start_flow(std::vector<LinkId>{0}, 2e9, 0.0, arrivals.record(0));
  network.apply_profile(0, LinkProfile{{{kPsPerS / 10, 0.0}, {4 * kPsPerS / 10, 1.0}}});
  engine.run(kPsPerS / 10);
  CHECK(network.rate_bytes_per_s(flow) == 0.0);
  CHECK(network.active_flows() == 1);
  CHECK(network.link_capacity_bytes_per_s(0) == 0.0);
  // Stalled: no completion event, only the profile's next change is pending.
  CHECK(engine.pending() == 1);
  engine.run(3 * kPsPerS / 10);
  CHECK(network.traffic().bytes == std::vector<double>{1e9, 0.0});  // what it carried stays
  engine.run();
  CHECK(arrivals.at_ps[0] == kPsPerS / 2);
  CHECK(network.traffic().bytes == std::vector<double>{2e9, 0.0});
  SUBCASE("a flow started over a down link stalls from its start") {
    network.set_link_scale(1, 0.0);
    const FlowId late = network.start_flow(std::vector<LinkId>{1}, 1e9, 0.0, arrivals.record(1));
    CHECK(network.rate_bytes_per_s(late) == 0.0);
    engine.run(kPsPerS);
    CHECK(arrivals.at_ps[1] == -1);
    CHECK(network.active_flows() == 1);
    network.set_link_scale(1, 0.5);  // 1 GB at 5 GB/s from 1 s
    engine.run();
    CHECK(arrivals.at_ps[1] == kPsPerS + kPsPerS / 5);
  }
  SUBCASE("a flow on a link that never comes back never completes") {
    network.set_link_scale(1, 0.0);
    network.start_flow(std::vector<LinkId>{1}, 1e9, 0.0, arrivals.record(1));
    engine.run();
    CHECK(arrivals.at_ps[1] == -1);
    CHECK(network.active_flows() == 1);
    CHECK(engine.pending() == 0);
  }
}

TEST_CASE("two flows on a degraded link and a third elsewhere keep max-min rates") {
  // A crosses link 0, B links 0 and 1, C link 2; all 10 GB/s. A = B = 5, C = 10 throughout:
  // no change touches C, whose completion is never rescheduled.
  Engine engine;
  const auto links = links_of({10 * kGBps, 10 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  Arrivals arrivals(3);
  const std::vector<std::vector<LinkId>> paths{{0}, {0, 1}, {2}};
  const std::vector<double> bytes{4e9, 4e9, 1e10};
  std::vector<FlowId> ids;
  for (std::size_t i = 0; i < 3; ++i) {
    ids.push_back(network.start_flow(paths[i], bytes[i], 0.0, arrivals.record(i)));
  }
  const std::vector<double> no_caps(3, std::numeric_limits<double>::infinity());
  const std::vector<std::int32_t> all{0, 1, 2};
  std::uint64_t cancelled = 0;
  // Runs to `at_ps`, applies `scales` (link, scale) and checks the rates against `want` and
  // a from-scratch solve.
  const auto change_and_check = [&](TimePs at_ps, std::vector<std::pair<LinkId, double>> scales,
                                    std::vector<double> want) {
    cancelled += engine.run(at_ps).events_cancelled;
    for (const auto& [link, scale] : scales) network.set_link_scale(link, scale);
    const std::vector<double> solved =
        full_max_min(capacities_of(network, links.size()), paths, no_caps, all);
    for (std::size_t i = 0; i < 3; ++i) {
      INFO("at ", at_ps, " ps, flow ", i);
      CHECK(network.rate_bytes_per_s(ids[i]) == want[i]);
      CHECK(solved[i] == want[i]);
    }
  };
  change_and_check(0, {}, {5 * kGBps, 5 * kGBps, 10 * kGBps});
  // 0.1 s: link 0 at 4 GB/s; A and B carried 0.5 GB each.
  change_and_check(kPsPerS / 10, {{0, 0.4}}, {2 * kGBps, 2 * kGBps, 10 * kGBps});
  // 0.2 s: link 1 at 1 GB/s binds B; A takes the 3 left on link 0. Carried: 0.7 GB each.
  change_and_check(2 * kPsPerS / 10, {{1, 0.1}}, {3 * kGBps, 1 * kGBps, 10 * kGBps});
  // 0.3 s: link 0 down; A carried 1 GB, B 0.8 GB.
  change_and_check(3 * kPsPerS / 10, {{0, 0.0}}, {0.0, 0.0, 10 * kGBps});
  // 0.4 s: both back: A has 3 GB left at 5 GB/s (ends 1.0 s), B 3.2 GB.
  change_and_check(4 * kPsPerS / 10, {{0, 1.0}, {1, 1.0}}, {5 * kGBps, 5 * kGBps, 10 * kGBps});
  cancelled += engine.run().events_cancelled;
  CHECK(arrivals.at_ps[0] == kPsPerS);
  CHECK(arrivals.at_ps[2] == kPsPerS);  // 10 GB at 10 GB/s, never slowed
  // B: 0.2 GB left at 1.0 s, then alone at 10 GB/s: 20 ms.
  CHECK(arrivals.at_ps[1] == kPsPerS + kPsPerS / 50);
  // A and B were rescheduled at 0.1, 0.2 and 0.3 s (two each), B again when A left; C never.
  // The other 4 are the recompute events of the 4 changes, run early by rate_bytes_per_s.
  CHECK(cancelled == 7 + 4);
}

TEST_CASE("a capacity change at the instant a flow starts is one batched recompute") {
  // The link halves at 0.1 s, when a 1 GB flow starts on it: it runs at 5 GB/s from its start
  // and ends at 0.3 s. Events: the start, the change, one recompute, last byte, arrival, and
  // the recompute after it leaves.
  for (const bool start_first : {true, false}) {
    INFO("start scheduled first: ", start_first);
    Engine engine;
    const auto links = links_of({10 * kGBps});
    FlowNetwork network(engine, links);
    Arrivals arrivals(1);
    const auto schedule_start = [&] {
      engine.schedule_at(kPsPerS / 10, [&](Engine&) {
        network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, arrivals.record(0));
      });
    };
    if (start_first) schedule_start();
    network.apply_profile(0, LinkProfile{{{kPsPerS / 10, 0.5}}});
    if (!start_first) schedule_start();
    const auto stats = engine.run();
    CHECK(arrivals.at_ps[0] == 3 * kPsPerS / 10);
    CHECK(stats.events_fired == 6);
    CHECK(stats.events_cancelled == 0);
  }
  SUBCASE("set now, then started now, before the recompute runs") {
    Engine engine;
    const auto links = links_of({10 * kGBps});
    FlowNetwork network(engine, links);
    network.set_link_scale(0, 0.5);
    const FlowId flow = network.start_flow(std::vector<LinkId>{0}, 1e9, 0.0, nullptr);
    CHECK(network.rate_bytes_per_s(flow) == 5 * kGBps);
  }
}

TEST_CASE("invalid capacity changes and profiles are rejected with the value") {
  Engine engine;
  const auto links = links_of({10 * kGBps, 10 * kGBps});
  FlowNetwork network(engine, links);
  engine.run(100);
  using clustersim::ConfigError;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(network.set_link_scale(0, -1.0),
                       "link 0 scale must be a finite number >= 0, got -1", ConfigError);
  CHECK_THROWS_WITH_AS(network.set_link_scale(1, inf),
                       "link 1 scale must be a finite number >= 0, got inf", ConfigError);
  CHECK_THROWS_WITH_AS(network.set_link_scale(2, 0.5),
                       "scaled link id 2 is out of range [0, 2)", ConfigError);
  CHECK_THROWS_WITH_AS(network.link_capacity_bytes_per_s(-1),
                       "queried link id -1 is out of range [0, 2)", ConfigError);
  CHECK_THROWS_WITH_AS(network.apply_profile(7, LinkProfile{{{200, 0.5}}}),
                       "profiled link id 7 is out of range [0, 2)", ConfigError);
  CHECK_THROWS_WITH_AS(network.apply_profile(1, LinkProfile{{{50, 0.5}}}),
                       "link 1 profile: change 0 at 50 ps is before the current time 100 ps",
                       ConfigError);
  CHECK_THROWS_WITH_AS(network.apply_profile(1, LinkProfile{{{200, 0.5}, {200, 1.0}}}),
                       "link 1 profile: change 1 at 200 ps is not after change 0 at 200 ps",
                       ConfigError);
  CHECK_THROWS_WITH_AS(network.apply_profile(0, LinkProfile{{{200, 0.5}, {300, -0.5}}}),
                       "link 0 profile: change 1 scale must be a finite number >= 0, got -0.5",
                       ConfigError);
  CHECK_THROWS_WITH_AS(network.apply_profile(0, LinkProfile{{{200, nan}}}),
                       "link 0 profile: change 0 scale must be a finite number >= 0, got nan",
                       ConfigError);
  // Nothing was scheduled or changed by the rejected calls.
  CHECK(engine.pending() == 0);
  CHECK(network.link_capacity_bytes_per_s(0) == 10 * kGBps);
  CHECK(network.link_capacity_bytes_per_s(1) == 10 * kGBps);
}

TEST_CASE("a new profile replaces the changes still pending from the link's last one") {
  Engine engine;
  const auto links = links_of({10 * kGBps});
  FlowNetwork network(engine, links);
  network.apply_profile(0, LinkProfile{{{kPsPerS, 0.5}, {2 * kPsPerS, 0.0}}});
  engine.run(kPsPerS);
  CHECK(network.link_capacity_bytes_per_s(0) == 5 * kGBps);
  // A change now (at the current time) is allowed; the 0.0 at 2 s is dropped.
  network.apply_profile(0, LinkProfile{{{kPsPerS, 0.25}, {3 * kPsPerS, 1.0}}});
  engine.run(2 * kPsPerS);
  CHECK(network.link_capacity_bytes_per_s(0) == 2.5 * kGBps);
  network.apply_profile(0, LinkProfile{});  // drops the 1.0 at 3 s
  CHECK(engine.pending() == 0);
  engine.run();
  CHECK(network.link_capacity_bytes_per_s(0) == 2.5 * kGBps);
}

}  // namespace flow_network_test
