// The platform built once per scenario, its sessions and communication backends, and the
// primary workload's allocation beside pinned jobs.
#include "sim/platform/platform.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "sim/engine/error.hpp"
#include "sim/exec/executor.hpp"
#include "sim/platform/energy.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/workload.hpp"
#include "tests/sim/training/training_test_support.hpp"

namespace platform_test {

using namespace clustersim;
using namespace clustersim::training::testing;

namespace {

/// Symmetric mode, seed 1, at `fidelity`; everything else as SessionOptions has it.
platform::SessionOptions symmetric_options(platform::Fidelity fidelity) {
  platform::SessionOptions options;
  options.fidelity = fidelity;
  options.mode = platform::SimulationMode::symmetric;
  options.seed = 1;
  return options;
}

}  // namespace

TEST_CASE("a platform builds the models of its spec once; stragglers become speed profiles") {
  auto spec = test_platform_spec(test_cluster(2, 4));
  spec.overlap_sms = 33;
  spec.cluster.stragglers = {{1}, 0.75};
  const platform::Platform platform(spec);
  CHECK(platform.accelerator_count() == 8);
  CHECK(platform.topology().accelerator_count() == 8);
  CHECK(platform.compute().spec().name == "test-gpu");
  CHECK(&platform.collectives().topology() == &platform.topology());
  CHECK(platform.compute_rate_while_communicating() == doctest::Approx(1.0 - 33.0 / 132));
  CHECK(platform.has_speed_changes());
  CHECK(platform.accelerator_speed(3) == engine::Profile::constant(1.0));
  CHECK(platform.accelerator_speed(4) == engine::Profile::constant(0.75));
  CHECK_THROWS_WITH_AS(platform.accelerator_speed(8), "accelerator 8 is not in [0, 8)", ConfigError);
  CHECK(platform.scale_out_switches() == 1);  // one switch; the scale-up planes are the nodes'
  CHECK_FALSE(platform::has_power_data(platform));
  spec.overlap_sms = 132;
  CHECK_THROWS_WITH_AS(platform::Platform{spec},
                       "simulation.comm.overlap_sms 132 must be below the accelerator's 132 compute units", ConfigError);
  spec.overlap_sms = 0;
  spec.cluster.stragglers = {{2}, 0.5};
  CHECK_THROWS_WITH_AS(platform::Platform{spec}, "straggler node 2 is not in [0, 2)", ConfigError);
}

TEST_CASE("a session's backend follows the fidelity; both time an uncontended transfer alike") {
  const platform::Platform platform(test_platform_spec(test_cluster(2, 1)));
  const double bytes = 1e9;
  platform::Session analytical(platform, symmetric_options(platform::Fidelity::analytical));
  platform::Session flow(platform, symmetric_options(platform::Fidelity::flow));
  CHECK(analytical.comm().fidelity() == platform::Fidelity::analytical);
  CHECK(flow.comm().fidelity() == platform::Fidelity::flow);
  // The analytical backend fixes the duration when the transfer starts (from what runs beside it).
  exec::TaskGraph closed_graph;
  const auto closed_stream = closed_graph.add_stream("send");
  closed_graph.add_work(closed_stream, analytical.comm().transfer(0, 1, bytes), exec::TaskKind::communication, "send");
  const auto closed = exec::run_graph(analytical.engine(), closed_graph);
  CHECK(closed.makespan_ps == engine::seconds_to_ps(platform.collectives().send_recv_time_s(0, 1, bytes)));
  CHECK(analytical.comm().traffic() == nullptr);
  // The flow backend runs it as flows: the same time when nothing else shares the links.
  exec::TaskGraph graph;
  const auto stream = graph.add_stream("send");
  graph.add_work(stream, flow.comm().transfer(0, 1, bytes), exec::TaskKind::communication, "send");
  const auto result = exec::run_graph(flow.engine(), graph);
  CHECK(result.makespan_ps == doctest::Approx(static_cast<double>(closed.makespan_ps)).epsilon(1e-9));
  REQUIRE(flow.comm().traffic() != nullptr);
  CHECK(flow.comm().flows_started() == 1);
  CHECK_THROWS_WITH_AS(analytical.comm().apply_link_profile(0, engine::Profile::constant(0.5)),
                       "link 0: the analytical fidelity has no links whose capacity could change (use "
                       "simulation.fidelity: flow)",
                       SimulationError);
}

TEST_CASE("the primary workload gets the accelerators before the first pinned job") {
  const std::vector<platform::Allocation> none;
  CHECK(platform::primary_allocation(16, none).count == 16);
  const std::vector<platform::Allocation> tail{{12, 4}, {8, 4}};
  const auto primary = platform::primary_allocation(16, tail);
  CHECK(primary.first == 0);
  CHECK(primary.count == 8);
  const std::vector<platform::Allocation> overlap{{8, 4}, {10, 4}};
  CHECK_THROWS_WITH_AS(platform::primary_allocation(16, overlap),
                       "accelerators [8, 12) and [10, 14) overlap: two jobs cannot share an accelerator", ConfigError);
  const std::vector<platform::Allocation> outside{{14, 4}};
  CHECK_THROWS_WITH_AS(platform::primary_allocation(16, outside),
                       "accelerators [14, 18) are not a range of the platform's 16 accelerators", ConfigError);
  const std::vector<platform::Allocation> all{{0, 16}};
  CHECK_THROWS_WITH_AS(platform::primary_allocation(16, all),
                       "the other jobs take every accelerator: none is left for the workload", ConfigError);
}

TEST_CASE("the flow backend changes a link's capacity over time; transfers across it slow and stall") {
  const platform::Platform platform(test_platform_spec(test_cluster(2, 1)));
  const double bytes = 1e9;
  const auto run = [&](const engine::Profile* profile) {
    platform::Session session(platform, symmetric_options(platform::Fidelity::flow));
    if (profile != nullptr) session.comm().apply_link_profile(platform.topology().path(0, 1).links.front(), *profile);
    exec::TaskGraph graph;
    const auto stream = graph.add_stream("send");
    graph.add_work(stream, session.comm().transfer(0, 1, bytes), exec::TaskKind::communication, "send");
    return engine::ps_to_seconds(exec::run_graph(session.engine(), graph).makespan_ps);
  };
  const double nominal = run(nullptr);
  const double wire_s = bytes / platform.topology().path(0, 1).bottleneck_payload_bytes_per_s;
  // Half capacity from the start: the transfer part takes twice as long.
  const engine::Profile half = engine::Profile::constant(0.5);
  CHECK(run(&half) == doctest::Approx(nominal + wire_s).epsilon(1e-6));
  // Down for the first 5 ms, then nominal: the flow (started after the transfer's fixed
  // latency, which passes during the outage) stalls until 5 ms, then moves all its bytes.
  const engine::Profile outage{0.0, {{engine::seconds_to_ps(5e-3), 1.0}}};
  CHECK(run(&outage) == doctest::Approx(5e-3 + wire_s).epsilon(1e-6).scale(0));
  platform::Session session(platform, symmetric_options(platform::Fidelity::flow));
  CHECK_THROWS_WITH_AS(session.comm().apply_link_profile(0, engine::Profile{1.0, {{10, -1.0}}}),
                       "capacity profile of link 0: the value at 10 ps must be a finite number >= 0, got -1",
                       ConfigError);
}

}  // namespace platform_test
