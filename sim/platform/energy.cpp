#include "sim/platform/energy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::platform {

bool has_power_data(const models::AcceleratorSpec& accelerator) { return accelerator.tdp_w > accelerator.idle_w; }

bool has_power_data(const Platform& platform) { return has_power_data(platform.cluster().accelerator); }

models::ActivityPower activity_power(const Platform& platform, const models::AcceleratorSpec& accelerator) {
  const models::PowerSpec& power = platform.cluster().power;
  const auto levels = models::activity_power(accelerator, power.accelerator_limit_w);
  if (!levels) throw ConfigError("power: accelerator '" + accelerator.name + "' has no power.tdp above its idle power");
  return *levels;
}

PeriodEnergy period_energy(const Platform& platform, const std::vector<DeviceWork>& work, double tokens,
                           double model_flops) {
  if (work.empty()) throw ConfigError("power: no devices in the period");
  const ClusterSpec& cluster = platform.cluster();
  PeriodEnergy energy;
  std::vector<models::DeviceGroup> groups;
  for (const DeviceWork& group : work) {
    const models::DeviceEnergy device = models::device_energy(activity_power(platform, *group.accelerator), group.activity);
    energy.throttle_factor = std::min(energy.throttle_factor, device.throttle_factor);
    groups.push_back({device, group.devices});
  }
  energy.device = groups.front().energy;
  const double period_s = work.front().activity.period_s;
  const double nodes = cluster.network.nodes;
  const double nics = nodes * cluster.network.scale_out.nics_per_node;
  energy.cluster = models::cluster_energy(groups, cluster.power, nodes, nics, platform.scale_out_switches(), period_s,
                                          tokens, model_flops, optical_ports(platform));
  const bool priced_groups = std::any_of(work.begin(), work.end(), [](const DeviceWork& g) { return g.hour_usd.has_value(); });
  if (platform.spec().cost.any() || priced_groups) {
    double devices = 0;
    for (const DeviceWork& group : work) devices += group.devices;
    models::CostSpec cost = platform.spec().cost;
    if (priced_groups) {
      // Groups at their own rental price: the cost is that of every group's devices at its price,
      // i.e. all the devices at the device-weighted mean price. A group without a price of its
      // own and no cost.accelerator_hour_usd to fall back on leaves the period unpriced.
      double device_usd = 0;
      bool all_priced = true;
      for (const DeviceWork& group : work) {
        const std::optional<double> price = group.hour_usd ? group.hour_usd : cost.accelerator_hour_usd;
        if (!price) all_priced = false;
        device_usd += group.devices * price.value_or(0.0);
      }
      if (!all_priced) return energy;
      cost.accelerator_hour_usd = device_usd / devices;
    }
    energy.cost = models::step_cost(cost, period_s, devices, energy.cluster.total_j, tokens);
  }
  return energy;
}

std::optional<std::string> power_coverage_note(const Platform& platform) {
  const models::PowerSpec& power = platform.cluster().power;
  std::string missing;
  if (power.node_w == 0) missing = "the nodes' own draw (CPUs, host memory, fans, storage: power.node unset)";
  if (power.psu_efficiency == 1) {
    missing += std::string(missing.empty() ? "" : " and ") + "power-supply losses (power.psu_efficiency 1: DC power)";
  }
  if (missing.empty()) return std::nullopt;
  return "power: the cluster figures cover the accelerators, NICs and switches, not " + missing;
}

models::OpticalPorts optical_ports(const Platform& platform) {
  const topologies::ClusterNetworkSpec& network = platform.cluster().network;
  const double nics = static_cast<double>(network.nodes) * network.scale_out.nics_per_node;
  return {platform.scale_out_switches() * network.scale_out.radix, nics, network.scale_out.nic_bytes_per_s * 8};
}

std::optional<std::string> optics_note(const Platform& platform) {
  const models::PowerSpec& power = platform.cluster().power;
  if (!(power.optics_pj_per_bit > 0) && !(power.nic_optics_pj_per_bit > 0)) return std::nullopt;
  const models::OpticalPorts ports = optical_ports(platform);
  return fmt::format("power: optics of {:.0f} switch ports ({:.0f} switches x {}) at {:g} pJ/bit and {:.0f} NIC ports at "
                     "{:g} pJ/bit, {:g} Gb/s each: {:.1f} kW, in the network's power (power.switch and power.nic "
                     "without their optics)",
                     ports.switch_ports, platform.scale_out_switches(), platform.cluster().network.scale_out.radix,
                     power.optics_pj_per_bit, ports.nic_ports, power.nic_optics_pj_per_bit, ports.bits_per_s / 1e9,
                     ports.watts(power) / 1e3);
}

std::optional<models::StepCost> rental_cost(const Platform& platform, double period_s, double devices, double tokens) {
  if (!platform.spec().cost.accelerator_hour_usd) return std::nullopt;
  return models::step_cost(platform.spec().cost, period_s, devices, 0.0, tokens);
}

}  // namespace clustersim::platform
