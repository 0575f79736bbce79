#pragma once
/// Money: from a rental price per accelerator-hour, or from capital cost amortized over a
/// lifetime plus electricity (with the data centre's PUE).
#include <optional>

#include "sim/config/problems.hpp"

namespace clustersim::models {

/// Prices. Set `accelerator_hour_usd`, or `capex_usd_per_accelerator` with
/// `amortization_years` and `electricity_usd_per_kwh`; not both.
struct CostSpec {
  std::optional<double> accelerator_hour_usd;       ///< rental, $ per accelerator-hour (all-in)
  std::optional<double> capex_usd_per_accelerator;  ///< purchase incl. its share of servers/network, $
  double amortization_years = 4;                    ///< straight-line lifetime, years
  double electricity_usd_per_kwh = 0;               ///< $ per kWh at the meter
  double pue = 1.2;                                 ///< facility power / IT power, >= 1
  bool any() const { return accelerator_hour_usd.has_value() || capex_usd_per_accelerator.has_value(); }
  /// Both price bases set (key: capex_usd_per_accelerator, relative to `cost`); the loader and
  /// validate() report the same text.
  std::optional<config::RuleProblem> basis_problem() const;
  /// Throws ConfigError naming the field for negative prices, both or neither price basis,
  /// non-positive amortization or PUE below 1.
  void validate() const;
};

/// Cost of one step, dollars.
struct StepCost {
  double capital_or_rental_usd = 0;  ///< rental, or amortized capex, for the step's duration
  double electricity_usd = 0;        ///< IT energy x PUE x price (0 for rental: included)
  double total_usd = 0;
  double usd_per_million_tokens = 0;
};

/// Cost of a step of `step_time_s` on `accelerators` devices using `it_energy_j` joules
/// (accelerators + network) that processes `tokens_per_step` tokens. Throws ConfigError on a
/// bad spec or non-positive time, devices or tokens, or negative energy.
StepCost step_cost(const CostSpec& cost, double step_time_s, double accelerators, double it_energy_j,
                   double tokens_per_step);

}  // namespace clustersim::models
