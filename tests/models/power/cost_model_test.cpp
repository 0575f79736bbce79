#include "models/power/cost_model.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"

namespace cost_model_test {

using namespace clustersim;
using namespace clustersim::models;

TEST_CASE("rental cost: accelerator-hours times the hourly price") {
  CostSpec cost;
  cost.accelerator_hour_usd = 2.5;
  const StepCost c = step_cost(cost, 3600, 1024, 1e9, 1e9);
  CHECK(c.capital_or_rental_usd == doctest::Approx(2560));
  CHECK(c.electricity_usd == 0);  // included in the rental price
  CHECK(c.usd_per_million_tokens == doctest::Approx(2.56));
}

TEST_CASE("owned cost: amortized capex plus electricity with PUE") {
  CostSpec cost;
  cost.capex_usd_per_accelerator = 30000;
  cost.amortization_years = 4;
  cost.electricity_usd_per_kwh = 0.1;
  cost.pue = 1.2;
  const StepCost c = step_cost(cost, 3600, 1, 3.6e6, 1e6);
  CHECK(c.capital_or_rental_usd == doctest::Approx(30000.0 / (4 * 8766)));
  CHECK(c.electricity_usd == doctest::Approx(0.12));  // 1 kWh x 1.2 x $0.1
  CHECK(c.total_usd == doctest::Approx(30000.0 / (4 * 8766) + 0.12));
}

TEST_CASE("bad cost inputs are rejected with the field named") {
  CostSpec cost;
  CHECK_THROWS_WITH(cost.validate(), doctest::Contains("set cost.accelerator_hour_usd, or cost.capex_usd_per_accelerator"));
  cost.accelerator_hour_usd = 2;
  cost.capex_usd_per_accelerator = 1;
  CHECK_THROWS_WITH(cost.validate(), doctest::Contains("not both"));
  cost.capex_usd_per_accelerator.reset();
  cost.pue = 0.9;
  CHECK_THROWS_WITH(cost.validate(), doctest::Contains("pue must be >= 1"));
  cost.pue = 1;
  CHECK_THROWS_WITH(step_cost(cost, 0, 1, 1, 1), doctest::Contains("step time must be positive"));
  cost.accelerator_hour_usd = -1;
  CHECK_THROWS_WITH(cost.validate(), doctest::Contains("accelerator_hour_usd must not be negative"));
}

}  // namespace cost_model_test
