#pragma once
/// Power, energy and cost of a period of work on the platform (a training step, a serving
/// window): what each group of devices did (models::DeviceActivity: kernels, collectives alone,
/// waiting), the nodes, NICs and scale-out switches of the whole platform, and the price: the
/// path training steps, serving windows and the parallelism search take. One caller asks
/// models/power directly, for one accelerator with no platform around it: `validate kernels
/// --clock sustained` (a kernel's throttle factor, sim/cli/calibration_commands.cpp).
#include <optional>
#include <string>
#include <vector>

#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "sim/platform/platform.hpp"

namespace clustersim::platform {

/// Devices of one accelerator kind that each did `activity`.
struct DeviceWork {
  const models::AcceleratorSpec* accelerator = nullptr;  ///< non-null
  models::DeviceActivity activity;
  double devices = 0;
  /// This group's rental price, $ per accelerator-hour; unset: cost.accelerator_hour_usd.
  std::optional<double> hour_usd;
};

/// What one period cost.
struct PeriodEnergy {
  models::DeviceEnergy device;           ///< one device of the first group
  models::ClusterEnergy cluster;         ///< every group, the nodes, NICs and scale-out switches
  std::optional<models::StepCost> cost;  ///< set when the platform has prices
  double throttle_factor = 1;            ///< the lowest of the groups'
};

/// True when `accelerator` (default: the cluster's) has power data (power.tdp).
bool has_power_data(const Platform& platform);
bool has_power_data(const models::AcceleratorSpec& accelerator);

/// The activity levels of `accelerator` on this platform (its preset, the scenario's power
/// limit). Precondition: has_power_data(accelerator).
models::ActivityPower activity_power(const Platform& platform, const models::AcceleratorSpec& accelerator);

/// Energy and cost of a period: every group's activity (the same period), processing `tokens`
/// tokens and `model_flops` model FLOPs in all. Precondition: every group's accelerator has
/// power data. Throws ConfigError for bad inputs (models::device_energy, cluster_energy).
PeriodEnergy period_energy(const Platform& platform, const std::vector<DeviceWork>& work, double tokens,
                           double model_flops);

/// What the cluster figures leave out, for the run's notes: the nodes' own draw when
/// `power.node` is unset (0), the power supplies' losses when `power.psu_efficiency` is 1.
/// nullopt when both are modelled.
std::optional<std::string> power_coverage_note(const Platform& platform);

/// The scale-out fabric's optical ports: every NIC port and every port of every scale-out switch
/// (radix each), at the NIC's line rate.
models::OpticalPorts optical_ports(const Platform& platform);
/// When power.optics_pj_per_bit is set: how many ports, at what rate, what power (a note).
std::optional<std::string> optics_note(const Platform& platform);

/// The rental cost of a period without power data (pricing by accelerator-hour needs no
/// energy); nullopt when the platform has no rental price.
std::optional<models::StepCost> rental_cost(const Platform& platform, double period_s, double devices, double tokens);

}  // namespace clustersim::platform
