// Training capacity planning (sim/sweep/training_capacity): the smallest and the cheapest
// cluster per accelerator kind that trains a token budget within a deadline.
#include "sim/sweep/training_capacity.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "sim/engine/error.hpp"

namespace training_capacity_test {

using namespace clustersim;

namespace {

const std::string kTiny = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/search/tiny.yaml";

sweep::TrainingCapacityOptions options(double deadline_s, std::vector<std::string> kinds = {"h100-sxm"}) {
  sweep::TrainingCapacityOptions o;
  o.tokens = 1e10;
  o.deadline_s = deadline_s;
  o.accelerators = std::move(kinds);
  o.max_nodes = 16;
  o.threads = 2;
  // A narrow space keeps each cluster size's search small.
  o.space.max_cp = 1;
  o.space.max_vp = 1;
  o.space.zero_stages = {1};
  o.space.recompute_policies = {training::Recompute::none};
  return o;
}

}  // namespace

TEST_CASE("a deadline is a time quantity or days") {
  CHECK(sweep::parse_deadline_s("30 d") == 30 * 86400.0);
  CHECK(sweep::parse_deadline_s("2days") == 2 * 86400.0);
  CHECK(sweep::parse_deadline_s("720 h") == doctest::Approx(30 * 86400.0));
  CHECK(sweep::parse_deadline_s("90 s") == 90);
  CHECK_THROWS_WITH_AS(sweep::parse_deadline_s("-1 h"), doctest::Contains("--deadline must be a time > 0"),
                       ConfigError);
  CHECK_THROWS_AS(sweep::parse_deadline_s("soon"), ConfigError);
}

TEST_CASE("the smallest cluster is the fewest nodes whose best split meets the deadline") {
  // Any deadline: the 1-node trial comes first; its time is tokens / its throughput.
  auto generous = sweep::find_training_capacity(kTiny, {}, options(1e9));
  REQUIRE(generous.kinds.size() == 1);
  const auto& one_node = generous.kinds[0].trials.at(0);
  REQUIRE(one_node.feasible);
  CHECK(one_node.nodes == 1);
  CHECK(one_node.accelerators == 4);
  CHECK(one_node.time_s == doctest::Approx(1e10 / one_node.tokens_per_s));
  REQUIRE(generous.smallest);
  CHECK(generous.smallest->nodes == 1);  // a 1-node cluster already meets it
  CHECK(generous.smallest->split == one_node.split);
  CHECK_FALSE(one_node.cost_usd);  // tiny.yaml has no prices
  CHECK(generous.kinds[0].note.find("no accelerator-hour price") != std::string::npos);
  // The sizes tried: 1, then 2 and 4 for the cheapest (extra_doublings = 2).
  REQUIRE(generous.kinds[0].trials.size() == 3);
  CHECK(generous.kinds[0].trials[2].nodes == 4);

  // An impossible deadline: no answer, a note, every size tried up to the limit.
  auto impossible = sweep::find_training_capacity(kTiny, {}, options(1));
  CHECK_FALSE(impossible.smallest);
  CHECK_FALSE(impossible.cheapest);
  CHECK(impossible.kinds[0].trials.back().nodes == 16);
}

TEST_CASE("sizing one kind by hand: doubling, bisection, the cheapest of the sizes tried, each once") {
  // tokens/s on n nodes of one accelerator: 1000 n up to 4 nodes, then 2000 more per node up
  // to 8 (12000), then flat. 1e6 tokens within 200 s need 5000 tokens/s: 5 nodes or more.
  const auto throughput = [](int n) { return n <= 4 ? 1000.0 * n : n <= 8 ? 4000.0 + 2000.0 * (n - 4) : 12000.0; };
  std::map<int, int> calls;
  sweep::TrainingCapacityOptions o;
  o.deadline_s = 200;
  o.max_nodes = 32;
  o.extra_doublings = 2;
  const auto evaluate = [&](int n) {
    ++calls[n];
    sweep::TrainingCapacityTrial t;
    t.nodes = n;
    t.accelerators = n;
    t.feasible = true;
    t.tokens_per_s = throughput(n);
    t.time_s = 1e6 / t.tokens_per_s;
    t.meets = t.time_s <= o.deadline_s;
    t.cost_usd = 3600.0 * n * t.time_s / 3600;  // 3600 USD per accelerator-hour
    return t;
  };
  const auto kind = sweep::size_kind("x", evaluate, o, true);
  // Doubling: 1, 2, 4 miss, 8 meets; bisection of (4, 8]: 6 meets, 5 meets. Then 10 and 20.
  std::vector<int> sizes;
  for (const auto& t : kind.trials) sizes.push_back(t.nodes);
  CHECK(sizes == std::vector<int>{1, 2, 4, 5, 6, 8, 10, 20});
  for (const auto& [n, count] : calls) CHECK(count == 1);
  REQUIRE(kind.smallest);
  CHECK(kind.smallest->nodes == 5);
  // Cost n x 1e6 / throughput: 5 -> 833, 6 -> 750, 8 -> 667, 10 -> 833, 20 -> 1667 USD.
  REQUIRE(kind.cheapest);
  CHECK(kind.cheapest->nodes == 8);
  CHECK(*kind.cheapest->cost_usd == doctest::Approx(8e6 / 12000));

  // Without a price there is no cheapest, and the note says why.
  const auto unpriced = sweep::size_kind("x", evaluate, o, false);
  CHECK_FALSE(unpriced.cheapest);
  CHECK(unpriced.note.find("no accelerator-hour price") != std::string::npos);

  // A deadline no size meets, with clusters of 16 nodes or more unbuildable: 1, 2, 4, 8, 16.
  o.deadline_s = 10;
  const auto capped = sweep::size_kind(
      "x",
      [&](int n) {
        auto t = evaluate(n);
        t.unbuildable = n >= 16;
        t.reason = t.unbuildable ? "the topology holds 15 nodes" : "";
        return t;
      },
      o, true);
  CHECK_FALSE(capped.smallest);
  CHECK(capped.trials.size() == 5);
  CHECK(capped.note == "the cluster could not grow further: the topology holds 15 nodes");
  // Up to max_nodes otherwise.
  const auto none = sweep::size_kind("x", evaluate, o, true);
  CHECK(none.trials.back().nodes == 32);
  CHECK(none.note == "no cluster of up to 32 nodes meets the deadline");
}

TEST_CASE("the cheapest cluster over accelerator kinds: accelerators x hours x the kind's price") {
  auto o = options(1e9, {"a100-sxm-80gb", "h100-sxm"});
  o.price_per_hour_usd = {{"a100-sxm-80gb", 1.5}, {"h100-sxm", 3.0}};
  const auto result = sweep::find_training_capacity(kTiny, {}, o);
  REQUIRE(result.kinds.size() == 2);
  const sweep::TrainingCapacityTrial* cheapest = nullptr;
  for (const auto& kind : result.kinds) {
    const double price = kind.accelerator == "h100-sxm" ? 3.0 : 1.5;
    REQUIRE(kind.cheapest);
    for (const auto& t : kind.trials) {
      REQUIRE(t.cost_usd);
      CHECK(*t.cost_usd == doctest::Approx(price * t.accelerators * t.time_s / 3600));
      if (t.meets) CHECK(*kind.cheapest->cost_usd <= *t.cost_usd);
      if (t.meets && (cheapest == nullptr || *t.cost_usd < *cheapest->cost_usd)) cheapest = &t;
    }
  }
  REQUIRE(result.cheapest);
  REQUIRE(cheapest != nullptr);
  CHECK(result.cheapest->accelerator == cheapest->accelerator);
  CHECK(result.cheapest->nodes == cheapest->nodes);
  // Both kinds meet the generous deadline on one node: the smallest is 4 accelerators, the
  // faster kind on a tie.
  REQUIRE(result.smallest);
  CHECK(result.smallest->accelerators == 4);
  const double a100 = result.kinds[0].trials[0].time_s;
  const double h100 = result.kinds[1].trials[0].time_s;
  CHECK(result.smallest->accelerator == (h100 < a100 ? "h100-sxm" : "a100-sxm-80gb"));
}

TEST_CASE("training capacity refuses what it cannot answer") {
  CHECK_THROWS_WITH_AS(sweep::find_training_capacity(kTiny, {}, options(0)), doctest::Contains("deadline > 0"),
                       ConfigError);
  auto no_tokens = options(3600);
  no_tokens.tokens = 0;
  CHECK_THROWS_WITH_AS(sweep::find_training_capacity(kTiny, {}, no_tokens), doctest::Contains("token budget"),
                       ConfigError);
  auto priced = options(3600);
  priced.price_per_hour_usd = {{"b200", 5}};
  CHECK_THROWS_WITH_AS(sweep::find_training_capacity(kTiny, {}, priced), doctest::Contains("--price names 'b200'"),
                       ConfigError);
  const std::string serving = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/serving/llama3-8b-chatbot.yaml";
  CHECK_THROWS_AS(sweep::find_training_capacity(serving, {}, options(3600)), ConfigError);
  CHECK_THROWS_WITH_AS(sweep::find_training_capacity(kTiny, {}, options(3600, {"h100-sxn"})),
                       doctest::Contains("h100-sxm"), ConfigError);
}

}  // namespace training_capacity_test
