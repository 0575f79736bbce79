#include "models/power/power_model.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

void power_require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("power model: " + message);
}

}  // namespace

void ActivityPower::validate() const {
  power_require(idle_w >= 0, fmt::format("idle power {:g} W must not be negative", idle_w));
  power_require(limit_w > idle_w, fmt::format("power limit {:g} W must be above idle {:g} W", limit_w, idle_w));
  power_require(wait_w >= idle_w, fmt::format("wait power {:g} W must not be below idle {:g} W", wait_w, idle_w));
  power_require(memory_w >= wait_w, fmt::format("memory-bound power {:g} W must not be below wait {:g} W", memory_w, wait_w));
  power_require(compute_w >= memory_w,
          fmt::format("compute power {:g} W must not be below memory-bound {:g} W", compute_w, memory_w));
  power_require(communication_w >= idle_w,
          fmt::format("communication power {:g} W must not be below idle {:g} W", communication_w, idle_w));
}

std::optional<ActivityPower> activity_power(const AcceleratorSpec& chip, double limit_w) {
  if (!(chip.tdp_w > chip.idle_w)) return std::nullopt;
  const ActivityFractions fractions;
  const double range = chip.tdp_w - chip.idle_w;
  const auto level = [&](double set, double fraction) { return set > 0 ? set : chip.idle_w + fraction * range; };
  ActivityPower p;
  p.idle_w = chip.idle_w;
  p.wait_w = level(chip.wait_w, fractions.wait);
  p.memory_w = level(chip.memory_power_w, fractions.memory);
  p.compute_w = level(chip.compute_power_w, fractions.compute);
  p.communication_w = chip.communication_power_w > 0 ? chip.communication_power_w : p.memory_w;
  p.limit_w = limit_w > 0 ? limit_w : chip.tdp_w;
  for (const auto& [dtype, peak] : chip.peak_flops_per_s) {
    p.best_flops_per_s[dtype] = chip.matmul_efficiency_for(dtype) * peak;
  }
  return p;
}

DeviceEnergy device_energy(const ActivityPower& power, const DeviceActivity& activity) {
  power.validate();
  power_require(activity.period_s > 0, "period must be positive");
  power_require(activity.kernel_s >= 0 && activity.communication_s >= 0, "kernel and communication times must not be negative");
  power_require(activity.kernel_s + activity.communication_s <= activity.period_s * (1 + 1e-9),
          fmt::format("kernel {} s + communication {} s exceed the period {} s", activity.kernel_s,
                      activity.communication_s, activity.period_s));
  double matrix_s = 0;
  for (const auto& [dtype, flops] : activity.matrix_flops) {
    power_require(flops >= 0, "FLOP counts must not be negative");
    if (flops == 0) continue;
    const auto it = power.best_flops_per_s.find(dtype);
    power_require(it != power.best_flops_per_s.end() && it->second > 0,
            fmt::format("no {} matrix rate for {} FLOPs", dtype_name(dtype), flops));
    matrix_s += flops / it->second;
  }
  DeviceEnergy e;
  const double wait_s = std::max(0.0, activity.period_s - activity.kernel_s - activity.communication_s);
  const double share = activity.kernel_s > 0 ? std::min(1.0, matrix_s / activity.kernel_s) : 0.0;
  e.unthrottled_kernel_power_w = power.memory_w + (power.compute_w - power.memory_w) * share;
  e.kernel_power_w = std::min(e.unthrottled_kernel_power_w, power.limit_w);
  if (e.unthrottled_kernel_power_w > power.limit_w) {
    e.throttle_factor = (power.limit_w - power.idle_w) / (e.unthrottled_kernel_power_w - power.idle_w);
  }
  // The kernels' draw above idle, split between its memory-bound part and the matrix units'
  // part, each cut in proportion when the limit caps it.
  const double above_idle = e.unthrottled_kernel_power_w - power.idle_w;
  const double kept = above_idle > 0 ? (e.kernel_power_w - power.idle_w) / above_idle : 1.0;
  // The limit caps the board's draw in every state, not only while kernels run: a collective
  // or a wait that would draw more at full clock runs at the limit.
  const double wait_w = std::min(power.wait_w, power.limit_w);
  const double communication_w = std::min(power.communication_w, power.limit_w);
  e.static_j = power.idle_w * activity.period_s;
  e.wait_j = (wait_w - power.idle_w) * wait_s;
  e.memory_j = (power.memory_w - power.idle_w) * activity.kernel_s * kept;
  e.compute_j = (power.compute_w - power.memory_w) * share * activity.kernel_s * kept;
  e.communication_j = (communication_w - power.idle_w) * activity.communication_s;
  e.total_j = e.static_j + e.wait_j + e.memory_j + e.compute_j + e.communication_j;
  e.average_power_w = e.total_j / activity.period_s;
  return e;
}

void PowerSpec::validate() const {
  power_require(accelerator_limit_w >= 0, "accelerator power limit must not be negative");
  power_require(nic_w >= 0, "NIC power must not be negative");
  power_require(switch_w >= 0, "switch power must not be negative");
  power_require(optics_pj_per_bit >= 0 && nic_optics_pj_per_bit >= 0, "optics energy per bit must not be negative");
  power_require(node_w >= 0, "node power must not be negative");
  power_require(psu_efficiency > 0 && psu_efficiency <= 1, "power-supply efficiency must be in (0, 1]");
}

ClusterEnergy cluster_energy(const std::vector<DeviceGroup>& groups, const PowerSpec& power, double nodes, double nics,
                             double switches, double period_s, double tokens, double model_flops,
                             const OpticalPorts& optics) {
  power.validate();
  power_require(!groups.empty(), "no devices");
  power_require(nodes >= 0 && nics >= 0 && switches >= 0, "node, NIC and switch counts must not be negative");
  power_require(period_s > 0, "period must be positive");
  power_require(tokens > 0, "tokens must be positive");
  power_require(model_flops >= 0, "model FLOPs must not be negative");
  ClusterEnergy c;
  double peak_devices_w = 0;
  for (const DeviceGroup& group : groups) {
    power_require(group.devices >= 0, "device counts must not be negative");
    c.devices_j += group.energy.total_j * group.devices;
    peak_devices_w += group.energy.kernel_power_w * group.devices;
  }
  const double nodes_w = nodes * power.node_w;
  const double nics_w = nics * power.nic_w;
  const double supplied_w = peak_devices_w + nodes_w + nics_w;  // behind the nodes' power supplies
  const double loss = 1.0 / power.psu_efficiency - 1.0;
  c.nodes_j = nodes_w * period_s;
  // The optics of the fabric's ports: on the network's side of the power supplies.
  const double optics_w = optics.watts(power);
  c.network_j = (nics_w + switches * power.switch_w + optics_w) * period_s;
  c.psu_loss_j = (c.devices_j + c.nodes_j + nics_w * period_s) * loss;
  c.total_j = c.devices_j + c.nodes_j + c.network_j + c.psu_loss_j;
  c.average_power_w = c.total_j / period_s;
  c.devices_average_power_w = c.devices_j / period_s;
  c.peak_power_w = supplied_w * (1 + loss) + switches * power.switch_w + optics_w;
  c.energy_per_token_j = c.total_j / tokens;
  c.device_energy_per_token_j = c.devices_j / tokens;
  c.tokens_per_j = tokens / c.total_j;
  c.flops_per_j = model_flops / c.total_j;
  return c;
}

}  // namespace clustersim::models
