#pragma once
/// Power, energy and cost of a period of work on the platform (a training step, a serving
/// window): one average device's activity, scaled to the devices that run it, plus the NICs
/// and scale-out switches of the whole platform. The only place this arithmetic lives: the
/// runner's reports and the parallelism search both call it.
#include <optional>

#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "sim/platform/platform.hpp"

namespace clustersim::platform {

/// What one period cost.
struct PeriodEnergy {
  models::DeviceEnergy device;           ///< one average device
  models::ClusterEnergy cluster;         ///< `devices` devices, all NICs and scale-out switches
  std::optional<models::StepCost> cost;  ///< set when the platform has prices
};

/// True when the accelerator preset has power data (power.tdp).
bool has_power_data(const Platform& platform);

/// Energy and cost of a period of activity.step_time_s on `devices` devices, each doing
/// `activity`, processing `tokens` tokens and `model_flops` model FLOPs in all. Precondition:
/// has_power_data(platform). Throws ConfigError for bad inputs (models::device_energy).
PeriodEnergy period_energy(const Platform& platform, const models::DeviceActivity& activity, double devices,
                           double tokens, double model_flops);

/// The rental cost of a period without power data (pricing by accelerator-hour needs no
/// energy); nullopt when the platform has no rental price.
std::optional<models::StepCost> rental_cost(const Platform& platform, double period_s, double devices, double tokens);

}  // namespace clustersim::platform
