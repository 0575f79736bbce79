#include "models/power/cost_model.hpp"

#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

void cost_require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("cost model: " + message);
}

constexpr double kSecondsPerHour = 3600.0;
constexpr double kHoursPerYear = 8766.0;  // 365.25 days
constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace

std::optional<config::RuleProblem> CostSpec::basis_problem() const {
  if (!(accelerator_hour_usd && capex_usd_per_accelerator)) return std::nullopt;
  return config::RuleProblem{"capex_usd_per_accelerator",
                             "set either cost.accelerator_hour_usd or cost.capex_usd_per_accelerator, not both"};
}

void CostSpec::validate() const {
  cost_require(any(), "set cost.accelerator_hour_usd, or cost.capex_usd_per_accelerator with electricity_usd_per_kwh");
  if (const auto problem = basis_problem()) cost_require(false, problem->message);
  if (accelerator_hour_usd) cost_require(*accelerator_hour_usd >= 0, "accelerator_hour_usd must not be negative");
  if (capex_usd_per_accelerator) cost_require(*capex_usd_per_accelerator >= 0, "capex_usd_per_accelerator must not be negative");
  cost_require(amortization_years > 0, "amortization_years must be positive");
  cost_require(electricity_usd_per_kwh >= 0, "electricity_usd_per_kwh must not be negative");
  cost_require(pue >= 1.0, "pue must be >= 1 (facility power / IT power)");
}

StepCost step_cost(const CostSpec& cost, double step_time_s, double accelerators, double it_energy_j,
                   double tokens_per_step) {
  cost.validate();
  cost_require(step_time_s > 0, "step time must be positive");
  cost_require(accelerators > 0, "accelerator count must be positive");
  cost_require(it_energy_j >= 0, "energy must not be negative");
  cost_require(tokens_per_step > 0, "tokens per step must be positive");
  StepCost c;
  const double device_hours = accelerators * step_time_s / kSecondsPerHour;
  if (cost.accelerator_hour_usd) {
    c.capital_or_rental_usd = device_hours * *cost.accelerator_hour_usd;
  } else {
    c.capital_or_rental_usd = device_hours * *cost.capex_usd_per_accelerator / (cost.amortization_years * kHoursPerYear);
    c.electricity_usd = it_energy_j * cost.pue / kJoulesPerKwh * cost.electricity_usd_per_kwh;
  }
  c.total_usd = c.capital_or_rental_usd + c.electricity_usd;
  c.usd_per_million_tokens = c.total_usd / tokens_per_step * 1e6;
  return c;
}

}  // namespace clustersim::models
