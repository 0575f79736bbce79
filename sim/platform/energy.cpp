#include "sim/platform/energy.hpp"

namespace clustersim::platform {

bool has_power_data(const Platform& platform) { return platform.cluster().power.tdp_w > 0; }

PeriodEnergy period_energy(const Platform& platform, const models::DeviceActivity& activity, double devices,
                           double tokens, double model_flops) {
  const ClusterSpec& cluster = platform.cluster();
  PeriodEnergy energy;
  energy.device = models::device_energy(cluster.power, platform.memory(), activity);
  const double nics = static_cast<double>(cluster.network.nodes) * cluster.network.scale_out.nics_per_node;
  energy.cluster = models::cluster_energy({energy.device}, devices, cluster.power, nics, platform.scale_out_switches(),
                                          activity.step_time_s, tokens, model_flops);
  if (platform.spec().cost.any()) {
    energy.cost = models::step_cost(platform.spec().cost, activity.step_time_s, devices, energy.cluster.total_j, tokens);
  }
  return energy;
}

std::optional<models::StepCost> rental_cost(const Platform& platform, double period_s, double devices, double tokens) {
  if (!platform.spec().cost.accelerator_hour_usd) return std::nullopt;
  return models::step_cost(platform.spec().cost, period_s, devices, 0.0, tokens);
}

}  // namespace clustersim::platform
