#include "topologies/flow_incremental.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "topologies/flow_incidence.hpp"
#include "topologies/flow_max_min.hpp"

namespace flow_incremental_test {

using namespace clustersim::topologies;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Rates of the `active` flows by a from-scratch progressive filling of everything.
std::vector<double> full_solve(const std::vector<double>& capacity_bytes_per_s,
                               const std::vector<std::vector<LinkId>>& path_by_slot,
                               const std::vector<std::int32_t>& active,
                               const std::vector<double>& cap_by_slot) {
  FlowLinkIncidence incidence(capacity_bytes_per_s.size());
  for (const std::int32_t slot : active) {
    incidence.add(slot, path_by_slot[static_cast<std::size_t>(slot)]);
  }
  std::vector<LinkId> all_links(capacity_bytes_per_s.size());
  for (std::size_t l = 0; l < all_links.size(); ++l) all_links[l] = static_cast<LinkId>(l);
  MaxMinFairSolver solver(capacity_bytes_per_s);
  std::vector<double> rate(path_by_slot.size(), 0.0);
  solver.solve(incidence, all_links, active, cap_by_slot, rate);
  return rate;
}

/// Each active flow's bottleneck must still bind it: its rate cap equals its rate, or its link
/// is full and no flow on it runs faster. (A stale bottleneck hides the flow from that link's
/// later changes.)
void check_bottlenecks(const IncrementalMaxMin& rates, const FlowLinkIncidence& incidence,
                       const std::vector<double>& capacity_bytes_per_s,
                       const std::vector<std::int32_t>& active,
                       const std::vector<double>& cap_by_slot) {
  for (const std::int32_t slot : active) {
    const double rate = rates.rate_bytes_per_s(slot);
    const LinkId bottleneck = rates.bottleneck(slot);
    INFO("flow ", slot, " rate ", rate, " bottleneck ", bottleneck);
    REQUIRE(bottleneck != kUnsolved);
    if (bottleneck == kRateCapBottleneck) {
      REQUIRE(std::abs(cap_by_slot[static_cast<std::size_t>(slot)] - rate) <= 1e-9 * rate);
      continue;
    }
    double load = 0;
    double fastest = 0;
    for (const LinkUse& use : incidence.flows_on(bottleneck)) {
      load += rates.rate_bytes_per_s(use.flow);
      fastest = std::max(fastest, rates.rate_bytes_per_s(use.flow));
    }
    const double capacity = capacity_bytes_per_s[static_cast<std::size_t>(bottleneck)];
    REQUIRE(std::abs(load - capacity) <= 1e-9 * capacity);
    REQUIRE(fastest <= rate * (1 + 1e-9));
  }
}

/// Random arrivals and departures, several per update, on a random small network; with
/// `change_capacities`, links are also degraded, taken down and restored between updates.
/// After every update the incremental rates must match a from-scratch solve of the same flows
/// on the same capacities, and every flow's recorded bottleneck must bind it.
void differential_run(std::uint64_t seed, bool change_capacities) {
  std::mt19937_64 rng(seed);
  const auto uniform_int = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const int link_count = uniform_int(2, 14);
  std::vector<double> capacity(static_cast<std::size_t>(link_count));
  for (double& c : capacity) {
    // Round figures make ties (the hard case for a bottleneck test) common; odd ones do not.
    c = uniform_int(0, 1) == 0 ? 1e9 * uniform_int(1, 8)
                               : std::uniform_real_distribution<double>(1e8, 1e10)(rng);
  }
  const std::vector<double> nominal = capacity;
  const int max_flows = uniform_int(4, 60);
  const int max_hops = std::min(link_count, uniform_int(1, 5));
  std::vector<std::vector<LinkId>> path_by_slot(static_cast<std::size_t>(max_flows));
  std::vector<double> cap_by_slot(static_cast<std::size_t>(max_flows), kInf);
  std::vector<std::int32_t> free_slots;
  for (int s = max_flows - 1; s >= 0; --s) free_slots.push_back(s);
  std::vector<std::int32_t> active;

  FlowLinkIncidence incidence(capacity.size());
  IncrementalMaxMin rates(capacity);
  std::vector<LinkId> order(capacity.size());
  for (std::size_t l = 0; l < order.size(); ++l) order[l] = static_cast<LinkId>(l);

  for (int step = 0; step < 150; ++step) {
    const int changes = uniform_int(1, 4);
    for (int c = 0; c < changes; ++c) {
      const bool arrive =
          !free_slots.empty() && (active.empty() || uniform_int(0, 99) < 55);
      if (arrive) {
        const std::int32_t slot = free_slots.back();
        free_slots.pop_back();
        std::shuffle(order.begin(), order.end(), rng);
        auto& path = path_by_slot[static_cast<std::size_t>(slot)];
        path.assign(order.begin(), order.begin() + uniform_int(1, max_hops));
        cap_by_slot[static_cast<std::size_t>(slot)] =
            uniform_int(0, 3) == 0 ? 1e8 * uniform_int(1, 40) : kInf;
        incidence.add(slot, path);
        rates.flow_added(slot);
        active.push_back(slot);
      } else {
        const auto pick = static_cast<std::size_t>(
            uniform_int(0, static_cast<int>(active.size()) - 1));
        const std::int32_t slot = active[pick];
        active.erase(active.begin() + static_cast<std::ptrdiff_t>(pick));
        // A flow may leave in the batch it arrived in, and its slot be reused at once.
        rates.flow_removing(incidence, slot);
        incidence.remove(slot);
        free_slots.push_back(slot);
      }
    }
    const int capacity_changes = change_capacities ? uniform_int(0, 3) : 0;
    for (int c = 0; c < capacity_changes; ++c) {
      // Down, degraded, restored or boosted; round scales tie often with other links.
      const auto link = static_cast<std::size_t>(uniform_int(0, link_count - 1));
      constexpr double kScales[] = {0.0, 0.25, 0.5, 1.0, 1.0, 2.0};
      const int pick = uniform_int(0, 6);
      const double scale = pick < 6 ? kScales[pick]
                                    : std::uniform_real_distribution<double>(0.05, 1.5)(rng);
      capacity[link] = nominal[link] * scale;
      rates.set_capacity(static_cast<LinkId>(link), capacity[link]);
    }
    rates.update(incidence, cap_by_slot);
    const std::vector<double> expected = full_solve(capacity, path_by_slot, active, cap_by_slot);
    for (const std::int32_t slot : active) {
      const double want = expected[static_cast<std::size_t>(slot)];
      const double got = rates.rate_bytes_per_s(slot);
      INFO("seed ", seed, " step ", step, " flow ", slot);
      if (!change_capacities) REQUIRE(want > 0);  // rate 0 needs a link that is down
      REQUIRE(std::abs(got - want) <= 1e-9 * want);
    }
    check_bottlenecks(rates, incidence, capacity, active, cap_by_slot);
  }
}

/// Flows 0, 1, ... on `paths` over links of the given capacities, uncapped, solved once.
struct SolvedFlows {
  FlowLinkIncidence incidence;
  IncrementalMaxMin rates;
  std::vector<double> no_caps;

  SolvedFlows(const std::vector<double>& capacity_bytes_per_s,
              const std::vector<std::vector<LinkId>>& paths)
      : incidence(capacity_bytes_per_s.size()),
        rates(capacity_bytes_per_s),
        no_caps(paths.size(), kInf) {
    for (std::size_t f = 0; f < paths.size(); ++f) {
      incidence.add(static_cast<std::int32_t>(f), paths[f]);
      rates.flow_added(static_cast<std::int32_t>(f));
    }
    rates.update(incidence, no_caps);
  }
  /// Removes `flow` and restores the rates.
  void remove(std::int32_t flow) {
    rates.flow_removing(incidence, flow);
    incidence.remove(flow);
    rates.update(incidence, no_caps);
  }
  /// Restores the rates after capacity changes; returns the re-solved flows, sorted.
  std::vector<std::int32_t> resolve() {
    const auto solved = rates.update(incidence, no_caps);
    std::vector<std::int32_t> sorted(solved.begin(), solved.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }
};

}  // namespace

TEST_CASE("incremental rates equal a from-scratch solve after random arrivals and departures") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) differential_run(seed, false);  // 136: stale bottleneck
}

TEST_CASE("incremental rates equal a from-scratch solve under random capacity changes") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) differential_run(seed, true);
}

TEST_CASE("a departure re-solves only the flows it can affect") {
  // Twenty separate 1 GB/s links each carry two flows and feed one shared 100 GB/s link that
  // every flow crosses: one component of 40 flows. Each flow is bottlenecked on its own link.
  std::vector<double> capacity(21, 1e9);
  capacity[20] = 100e9;
  FlowLinkIncidence incidence(capacity.size());
  IncrementalMaxMin rates(capacity);
  const std::vector<double> no_caps(40, kInf);
  for (std::int32_t f = 0; f < 40; ++f) {
    incidence.add(f, std::vector<LinkId>{f / 2, 20});
    rates.flow_added(f);
  }
  CHECK(rates.update(incidence, no_caps).size() == 40);
  CHECK(rates.rate_bytes_per_s(0) == 5e8);
  // Flow 0 leaves: flow 1 doubles; the shared link (40 GB/s used of 100) binds nobody, so the
  // other 38 flows keep their rates and are not re-solved.
  rates.flow_removing(incidence, 0);
  incidence.remove(0);
  const auto solved = rates.update(incidence, no_caps);
  CHECK(rates.rate_bytes_per_s(1) == 1e9);
  CHECK(rates.rate_bytes_per_s(2) == 5e8);
  CHECK(rates.bottleneck(1) == 0);
  // Only flow 1 lost its bottleneck (link 0 is no longer full). Rising past 0.5 GB/s it makes
  // link 20 tracked, but the flows there are bottlenecked on untracked links, so their old
  // rates stand without a solve.
  CHECK(solved.size() == 1);
  CHECK(rates.last_tracked_links() == 2);
}

TEST_CASE("a held flow faster than a re-solved flow on its bottleneck joins the region") {
  // Link 0 (L, 6 GB/s) carries h and k; link 1 (M, 10 GB/s) carries h and g. h and k get 3 on
  // L, g the 7 left on M. When k leaves only h is on a changed link, and held at 7, g leaves h
  // only 3 on M; but h is then bottlenecked on M below g, so g must join: both get 5.
  constexpr std::int32_t h = 0;
  constexpr std::int32_t k = 1;
  constexpr std::int32_t g = 2;
  SolvedFlows network({6e9, 10e9}, {{0, 1}, {0}, {1}});
  const IncrementalMaxMin& rates = network.rates;
  CHECK(rates.rate_bytes_per_s(h) == 3e9);
  CHECK(rates.rate_bytes_per_s(g) == 7e9);
  CHECK(rates.bottleneck(h) == 0);
  CHECK(rates.bottleneck(g) == 1);
  network.remove(k);
  CHECK(rates.rate_bytes_per_s(h) == 5e9);
  CHECK(rates.rate_bytes_per_s(g) == 5e9);
  CHECK(rates.bottleneck(h) == 1);
  CHECK(rates.bottleneck(g) == 1);
}

TEST_CASE("a rate cap is a bottleneck that no change elsewhere invalidates") {
  const std::vector<double> capacity{10e9};
  FlowLinkIncidence incidence(capacity.size());
  IncrementalMaxMin rates(capacity);
  const std::vector<double> caps{2e9, kInf, kInf};
  incidence.add(0, std::vector<LinkId>{0});
  incidence.add(1, std::vector<LinkId>{0});
  rates.flow_added(0);
  rates.flow_added(1);
  rates.update(incidence, caps);
  CHECK(rates.rate_bytes_per_s(0) == 2e9);
  CHECK(rates.bottleneck(0) == kRateCapBottleneck);
  CHECK(rates.rate_bytes_per_s(1) == 8e9);
  incidence.add(2, std::vector<LinkId>{0});
  rates.flow_added(2);
  rates.update(incidence, caps);
  CHECK(rates.rate_bytes_per_s(0) == 2e9);
  CHECK(rates.rate_bytes_per_s(1) == 4e9);
  CHECK(rates.rate_bytes_per_s(2) == 4e9);
}

TEST_CASE("a capacity change re-solves the flows it binds and leaves the others alone") {
  // Link 0 (10 GB/s) carries a and b; link 1 (100 GB/s) carries b and c; link 2 (50 GB/s)
  // carries a only. a = b = 5 on link 0, c takes the 95 left on link 1, link 2 binds nobody.
  constexpr std::int32_t a = 0;
  constexpr std::int32_t b = 1;
  constexpr std::int32_t c = 2;
  SolvedFlows network({10e9, 100e9, 50e9}, {{0, 2}, {0, 1}, {1}});
  IncrementalMaxMin& rates = network.rates;
  CHECK(rates.rate_bytes_per_s(b) == 5e9);
  CHECK(rates.rate_bytes_per_s(c) == 95e9);
  const std::vector<std::int32_t> all{a, b, c};
  const std::vector<std::int32_t> none;
  const auto rates_now = [&] {
    return std::vector<double>{rates.rate_bytes_per_s(a), rates.rate_bytes_per_s(b),
                               rates.rate_bytes_per_s(c)};
  };

  // Link 0 degraded to 4 GB/s: a = b = 2, and c takes the room b left on link 1.
  rates.set_capacity(0, 4e9);
  CHECK(rates.capacity_bytes_per_s(0) == 4e9);
  CHECK(rates.has_changes());
  CHECK(network.resolve() == all);
  CHECK(rates_now() == std::vector<double>{2e9, 2e9, 98e9});
  // Link 1 doubled: only c, its one bottlenecked flow, rises; link 1 alone is tracked.
  rates.set_capacity(1, 200e9);
  CHECK(network.resolve() == std::vector<std::int32_t>{c});
  CHECK(rates.rate_bytes_per_s(c) == 198e9);
  CHECK(rates.last_tracked_links() == 1);
  // Link 0 down: a and b stop, c gets all of link 1.
  rates.set_capacity(0, 0.0);
  CHECK(network.resolve() == all);
  CHECK(rates_now() == std::vector<double>{0.0, 0.0, 200e9});
  CHECK(rates.bottleneck(b) == 0);
  // Set twice before one update: only the last counts, and back where it was is no change.
  rates.set_capacity(0, 7e9);
  rates.set_capacity(0, 0.0);
  CHECK(network.resolve() == none);
  CHECK(rates.last_tracked_links() == 0);
  // Link 0 back up at 10 GB/s.
  rates.set_capacity(0, 10e9);
  CHECK(network.resolve() == all);
  CHECK(rates_now() == std::vector<double>{5e9, 5e9, 195e9});
  // Link 2 binds nobody: more room is no change, nor less while it stays above a's 5 GB/s
  // (it is tracked from 20 GB/s, its capacity over its one flow, where a is settled already).
  rates.set_capacity(2, 80e9);
  CHECK(network.resolve() == none);
  CHECK(rates.last_tracked_links() == 0);
  rates.set_capacity(2, 20e9);
  CHECK(network.resolve() == none);
  CHECK(rates.last_tracked_links() == 1);
  // Below a's rate it binds a at 4; b rises to the 6 left on link 0 and c gives way to b.
  rates.set_capacity(2, 4e9);
  CHECK(network.resolve() == all);
  CHECK(rates_now() == std::vector<double>{4e9, 6e9, 194e9});
  CHECK(rates.bottleneck(a) == 2);
}

}  // namespace flow_incremental_test
