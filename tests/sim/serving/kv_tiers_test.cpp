// The KV-cache tiers' bookkeeping by hand (issue 34 part 1): which prefixes each tier holds,
// what a full tier hands down, what is dropped, and the time of a load.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include "sim/engine/error.hpp"
#include "sim/serving/kv_tiers.hpp"

namespace kv_tiers_test {

using ::clustersim::tolerance::relative_approx;
using namespace clustersim;
using serving::KvTierStore;

namespace {

// Blocks of 4 tokens, 1,000 bytes per token on each accelerator. Host: 4 blocks (16 tokens) at
// 1 GB/s, 1 us; SSD: 8 blocks (32 tokens) at 0.5 GB/s, 100 us.
KvTierStore two_tiers() {
  return KvTierStore({{"host", 4, 1e9, 1e-6}, {"ssd", 8, 0.5e9, 100e-6}}, 4, 1000.0);
}

}  // namespace

TEST_CASE("a full tier hands its least recently used prefix down; the last one drops it") {
  KvTierStore tiers = two_tiers();
  tiers.store(1, 8);  // host: 1 (2 blocks)
  tiers.store(2, 8);  // host: 1, 2 (4 blocks, full)
  tiers.store(3, 4);  // needs 1 block: 1, the least recently used, goes to the SSD
  CHECK(tiers.find(1).tier == 1);
  CHECK(tiers.find(1).tokens == 8);
  CHECK(tiers.find(2).tier == 0);
  CHECK(tiers.find(3).tier == 0);
  CHECK(tiers.used_blocks(0) == 3);
  CHECK(tiers.used_blocks(1) == 2);
  CHECK(tiers.stats(0).stored_tokens == 20);
  CHECK(tiers.stats(0).evicted_tokens == 8);
  CHECK(tiers.stats(1).stored_tokens == 8);

  tiers.store(2, 13);  // grows to 12 tokens (whole blocks): one more block, host full again
  CHECK(tiers.find(2).tokens == 12);
  CHECK(tiers.used_blocks(0) == 4);
  CHECK(tiers.stats(0).stored_tokens == 24);

  tiers.store(4, 20);  // 5 blocks: more than the whole host tier, so the SSD takes it
  CHECK(tiers.find(4).tier == 1);
  CHECK(tiers.used_blocks(1) == 7);

  tiers.store(1, 8);  // the SSD holds all of it: nothing moves
  CHECK(tiers.stats(1).stored_tokens == 28);

  // 1 grows to 12 tokens: the host takes the whole prefix (the SSD's shorter copy is dropped)
  // and frees 3 blocks: 3 (1 block, least recent) and then 2 (3 blocks) go down. The SSD, at
  // 5 of 8 blocks with 4, takes 3 (6) and, for 2, lets its least recently used go: 4 (5 blocks),
  // dropped.
  tiers.store(1, 12);
  CHECK(tiers.find(1).tier == 0);
  CHECK(tiers.find(1).tokens == 12);
  CHECK(tiers.find(3).tier == 1);
  CHECK(tiers.find(2).tier == 1);
  CHECK(tiers.find(4).tier == -1);
  CHECK(tiers.used_blocks(0) == 3);
  CHECK(tiers.used_blocks(1) == 4);
  CHECK(tiers.stats(0).evicted_tokens == 8 + 4 + 12);
  CHECK(tiers.stats(1).evicted_tokens == 20);  // 4 (1's superseded copy is no eviction)
  CHECK(tiers.stats(1).stored_tokens == 28 + 4 + 12);
}

TEST_CASE("a load takes latency plus the bytes over the tier's link, and renews the prefix") {
  KvTierStore tiers = two_tiers();
  tiers.store(1, 8);
  tiers.store(2, 8);
  // 8 tokens x 1,000 B at 1 GB/s after 1 us.
  CHECK(tiers.load(0, 1, 8) == relative_approx(1e-6 + 8e-6));
  CHECK(tiers.stats(0).hits == 1);
  CHECK(tiers.stats(0).loaded_tokens == 8);
  CHECK(tiers.stats(0).load_s == relative_approx(9e-6));
  // 1 was just read: 2 is the least recently used and goes down first.
  tiers.store(3, 4);
  CHECK(tiers.find(2).tier == 1);
  CHECK(tiers.find(1).tier == 0);
  // From the SSD: 100 us + 8,000 B at 0.5 GB/s.
  CHECK(tiers.transfer_s(1, 8) == relative_approx(100e-6 + 16e-6));
  CHECK_THROWS_AS(tiers.load(1, 2, 12), SimulationError);  // it holds 8 tokens of 2
  tiers.clear();
  CHECK(tiers.find(1).tier == -1);
  CHECK(tiers.used_blocks(0) == 0);
}

TEST_CASE("a tier that holds no block, or has no link, is refused") {
  CHECK_THROWS_WITH_AS(KvTierStore({{"cxl", 0, 1e9, 0}}, 16, 1000.0),
                       doctest::Contains("tier 'cxl' holds no block of 16 tokens"), ConfigError);
  CHECK_THROWS_WITH_AS(KvTierStore({{"host", 4, 0, 0}}, 16, 1000.0),
                       doctest::Contains("needs a positive bandwidth"), ConfigError);
}

}  // namespace kv_tiers_test
