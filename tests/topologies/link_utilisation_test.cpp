#include "topologies/link_utilisation.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "sim/engine/error.hpp"
#include "topologies/flow_network.hpp"

namespace link_utilisation_test {

using namespace clustersim::topologies;
using clustersim::engine::Engine;
using clustersim::engine::TimePs;

namespace {

constexpr double kGBps = 1e9;
constexpr TimePs kPsPerS = clustersim::engine::kPsPerSecond;

/// L0: tier 0, L1 and L2: tier 1; 10 GB/s each, no latency.
std::vector<Link> three_links() {
  return {{0, 1, 10 * kGBps, 0.0, 0}, {1, 2, 10 * kGBps, 0.0, 1}, {2, 3, 10 * kGBps, 0.0, 1}};
}

/// Flow A (1 GB over L0 and L1) and flow B (1 GB over L1) from time 0: L1 splits 5 + 5 GB/s,
/// both end at 0.2 s.
void run_two_flows(Engine& engine, FlowNetwork& network) {
  const std::vector<LinkId> a{0, 1}, b{1};
  network.start_flow(a, 1e9, 0.0, {});
  network.start_flow(b, 1e9, 0.0, {});
  engine.run();
}

}  // namespace

TEST_CASE("tier utilisation over time follows the flows' rates, by hand") {
  Engine engine;
  const auto links = three_links();
  FlowNetwork network(engine, links);
  TierUtilisationRecorder recorder(links);
  network.set_load_listener(&recorder);
  run_two_flows(engine, network);
  const TierUtilisationSeries& s = recorder.series();
  REQUIRE(s.tiers == std::vector<int>{0, 1});
  CHECK(s.tier_line_bytes_per_s == std::vector<double>{10 * kGBps, 20 * kGBps});
  REQUIRE(s.times_ps == std::vector<TimePs>{0, kPsPerS / 5});
  // Tier 0: A's 5 GB/s of 10; tier 1: A + B = 10 GB/s of 20 (L1 full, L2 idle).
  CHECK(s.utilisation[0] == std::vector<double>{0.5, 0.0});
  CHECK(s.utilisation[1] == std::vector<double>{0.5, 0.0});
  CHECK(s.changed_link_peak[1][0] == 1.0);
  CHECK(s.peak(1, 0, kPsPerS) == 0.5);
  CHECK(s.peak_link(1, kPsPerS) == 1.0);
  CHECK(s.peak_link(0, kPsPerS) == 0.5);
  CHECK(s.peak_link(1, 0) == 0.0);  // nothing before time 0
  CHECK(s.mean(1, 0, 2 * kPsPerS / 5) == doctest::Approx(0.25));
  CHECK(s.binned(0, 0, 2 * kPsPerS / 5, 4) == std::vector<double>{0.5, 0.5, 0.0, 0.0});
  CHECK(s.peak(1, kPsPerS / 5, kPsPerS) == 0.0);  // after both ended
}

TEST_CASE("listening to link loads does not change the run") {
  const auto links = three_links();
  Engine quiet, watched;
  FlowNetwork quiet_network(quiet, links), watched_network(watched, links);
  TierUtilisationRecorder recorder(links);
  watched_network.set_load_listener(&recorder);
  run_two_flows(quiet, quiet_network);
  run_two_flows(watched, watched_network);
  CHECK(quiet.fingerprint() == watched.fingerprint());
  CHECK(quiet.events_fired() == watched.events_fired());
}

TEST_CASE("an empty window or no bins is refused") {
  const auto links = three_links();
  TierUtilisationRecorder recorder(links);
  CHECK_THROWS_WITH_AS(recorder.series().mean(0, 5, 5), "utilisation window [5 ps, 5 ps) is empty",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(recorder.series().binned(0, 0, 5, 0), "utilisation bins must be >= 1", clustersim::ConfigError);
  CHECK(recorder.series().binned(1, 0, 10, 2) == std::vector<double>{0.0, 0.0});  // never loaded
}

}  // namespace link_utilisation_test
