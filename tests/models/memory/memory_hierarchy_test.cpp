#include "models/memory/memory_hierarchy.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"

namespace memory_hierarchy_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;
using namespace clustersim::models;

namespace {

MemoryLevel level(MemoryLevelKind kind, double capacity, double bandwidth, double latency = 0) {
  return MemoryLevel{kind, capacity, bandwidth, latency};
}

MemoryHierarchy h100_like() {
  return MemoryHierarchy({level(MemoryLevelKind::hbm, 80e9, 3.35e12), level(MemoryLevelKind::l2, 50.0 * 1024 * 1024, 10e12),
                          level(MemoryLevelKind::host, 1e12, 64e9, 1e-6)});
}

}  // namespace

TEST_CASE("an L2-resident working set reads at L2 bandwidth, a larger one at HBM bandwidth") {
  const MemoryHierarchy memory = h100_like();
  CHECK(memory.serving_level(40.0 * 1024 * 1024) == MemoryLevelKind::l2);
  CHECK(memory.effective_read_bytes_per_s(40.0 * 1024 * 1024) == 10e12);
  CHECK(memory.effective_read_bytes_per_s(50.0 * 1024 * 1024) == 10e12);
  CHECK(memory.serving_level(60.0 * 1024 * 1024) == MemoryLevelKind::hbm);
  CHECK(memory.effective_read_bytes_per_s(60.0 * 1024 * 1024) == 3.35e12);
  // Without an L2 level everything streams from HBM.
  const MemoryHierarchy no_l2({level(MemoryLevelKind::hbm, 80e9, 3.35e12)});
  CHECK(no_l2.effective_read_bytes_per_s(1024) == 3.35e12);
  CHECK_THROWS_WITH(memory.serving_level(-1), doctest::Contains("negative working set"));
}

TEST_CASE("levels are ordered nearest first and looked up by kind") {
  const MemoryHierarchy memory = h100_like();
  REQUIRE(memory.levels().size() == 3);
  CHECK(memory.levels()[0].kind == MemoryLevelKind::l2);
  CHECK(memory.levels()[2].kind == MemoryLevelKind::host);
  CHECK(memory.has(MemoryLevelKind::host));
  CHECK_FALSE(memory.has(MemoryLevelKind::cxl));
  CHECK_THROWS_WITH(memory.level(MemoryLevelKind::cxl), doctest::Contains("no 'cxl' level (levels: l2, hbm, host)"));
}

TEST_CASE("offload transfers cost latency plus bytes over the host link") {
  const MemoryHierarchy memory = h100_like();
  CHECK(memory.offload_transfer_time_s(64e9, MemoryLevelKind::host) == relative_approx(1.0 + 1e-6));
  CHECK(memory.offload_transfer_time_s(0, MemoryLevelKind::host) == 0);
  CHECK_THROWS_WITH(memory.offload_transfer_time_s(1, MemoryLevelKind::cxl),
                    doctest::Contains("needs the accelerator preset's memory.cxl_bandwidth"));
  CHECK_THROWS_WITH(memory.offload_transfer_time_s(1, MemoryLevelKind::l2), doctest::Contains("must be 'host', 'cxl' or 'ssd'"));
  CHECK_THROWS_WITH(memory.offload_transfer_time_s(-1, MemoryLevelKind::host), doctest::Contains("negative byte count"));
}

TEST_CASE("invalid hierarchies are rejected") {
  CHECK_THROWS_WITH(MemoryHierarchy({level(MemoryLevelKind::l2, 1, 1)}), doctest::Contains("'hbm' level is required"));
  CHECK_THROWS_WITH(MemoryHierarchy({level(MemoryLevelKind::hbm, 1, 1), level(MemoryLevelKind::hbm, 2, 2)}),
                    doctest::Contains("level 'hbm' appears twice"));
  CHECK_THROWS_WITH(MemoryHierarchy({level(MemoryLevelKind::hbm, 0, 1)}), doctest::Contains("'hbm' needs a positive capacity"));
  CHECK_THROWS_WITH(MemoryHierarchy({level(MemoryLevelKind::hbm, 1, 0)}), doctest::Contains("'hbm' needs a positive bandwidth"));
  CHECK_THROWS_WITH(MemoryHierarchy({level(MemoryLevelKind::hbm, 1, 1, -1)}), doctest::Contains("negative latency"));
}

}  // namespace memory_hierarchy_test
