// The flow solver's invariant: an active flow's rate is finite and >= 0, and > 0 unless a link
// of its path is down (topologies/flow_network.hpp, flow_rate_violation). FlowNetwork checks
// every rate it solves; these cases are the violations it reports and the rates it accepts.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "topologies/flow_network.hpp"

namespace flow_rate_invariant_test {

using clustersim::topologies::flow_rate_violation;

TEST_CASE("the flow-rate invariant rejects zero, negative and non-finite rates on a live path") {
  CHECK(flow_rate_violation(0.0, 50e9) ==
        "it got no bandwidth although every link of its path is up (the smallest capacity is 50000000000 bytes/s)");
  CHECK(flow_rate_violation(-1.0, 50e9) == "its rate -1 bytes/s is negative");
  CHECK(flow_rate_violation(-1.0, 0.0) == "its rate -1 bytes/s is negative");  // down or not
  CHECK(flow_rate_violation(std::nan(""), 50e9) == "its rate is NaN");
  CHECK(flow_rate_violation(std::numeric_limits<double>::infinity(), 50e9) == "its rate is inf bytes/s");
}

TEST_CASE("the flow-rate invariant accepts a positive rate, and zero behind a down link") {
  CHECK(flow_rate_violation(25e9, 50e9).empty());
  CHECK(flow_rate_violation(1e-300, 50e9).empty());
  CHECK(flow_rate_violation(0.0, 0.0).empty());  // a down link stalls the flow
}

}  // namespace flow_rate_invariant_test
