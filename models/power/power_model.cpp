#include "models/power/power_model.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("power model: " + message);
}

}  // namespace

void PowerSpec::validate() const {
  require(tdp_w > 0, "tdp must be positive");
  require(idle_w >= 0, "idle power must not be negative");
  require(idle_w < tdp_w, fmt::format("idle power {} W must be below tdp {} W", idle_w, tdp_w));
  for (const auto& [dtype, joules] : energy_j_per_flop) {
    require(joules >= 0, fmt::format("energy per {} FLOP must not be negative", dtype_name(dtype)));
  }
  for (const auto& [kind, joules] : energy_j_per_bit) {
    (void)kind;
    require(joules >= 0, "energy per bit must not be negative");
  }
  require(nic_w >= 0, "NIC power must not be negative");
  require(switch_w >= 0, "switch power must not be negative");
}

void set_accelerator_power(const AcceleratorSpec& chip, PowerSpec& power) {
  power.tdp_w = chip.tdp_w;
  power.idle_w = chip.idle_w;
  power.energy_j_per_flop = chip.energy_j_per_flop;
  if (!(chip.tdp_w > chip.idle_w)) return;
  for (const auto& [dtype, peak] : chip.peak_flops_per_s) {
    if (!power.energy_j_per_flop.count(dtype)) {
      power.energy_j_per_flop[dtype] = 0.8 * (chip.tdp_w - chip.idle_w) / (chip.matmul_efficiency_for(dtype) * peak);
    }
  }
}

double PowerSpec::flop_energy_j(Dtype dtype) const {
  const auto it = energy_j_per_flop.find(dtype);
  if (it != energy_j_per_flop.end()) return it->second;
  std::string present;
  for (const auto& [d, joules] : energy_j_per_flop) {
    (void)joules;
    present += (present.empty() ? "" : ", ") + std::string(dtype_name(d));
  }
  throw ConfigError(fmt::format("power model: no energy per FLOP for {} (formats with one: {})", dtype_name(dtype),
                                present.empty() ? "none" : present));
}

double DeviceEnergy::memory_total_j() const {
  double sum = 0;
  for (const auto& [kind, joules] : memory_j) {
    (void)kind;
    sum += joules;
  }
  return sum;
}

DeviceEnergy device_energy(const PowerSpec& power, const MemoryHierarchy& memory, const DeviceActivity& activity) {
  power.validate();
  require(activity.step_time_s > 0, "step time must be positive");
  require(activity.compute_busy_s > 0 && activity.compute_busy_s <= activity.step_time_s * (1 + 1e-12),
          fmt::format("compute busy time {} s must be in (0, step time {} s]", activity.compute_busy_s,
                      activity.step_time_s));
  DeviceEnergy e;
  e.static_j = power.idle_w * activity.step_time_s;
  for (const auto& [dtype, flops] : activity.flops) {
    require(flops >= 0, "FLOP counts must not be negative");
    e.compute_j += flops * power.flop_energy_j(dtype);
  }
  for (const auto& [kind, bytes] : activity.bytes) {
    require(bytes >= 0, "byte counts must not be negative");
    e.memory_j[kind] = bytes * memory.level(kind).energy_j_per_byte;
  }
  for (const auto& [kind, bytes] : activity.bytes_sent) {
    require(bytes >= 0, "link byte counts must not be negative");
    const auto it = power.energy_j_per_bit.find(kind);
    require(it != power.energy_j_per_bit.end() || bytes == 0,
            kind == LinkKind::scale_up ? "no energy per bit for scale-up links" : "no energy per bit for scale-out links");
    if (it != power.energy_j_per_bit.end()) e.link_j += bytes * 8.0 * it->second;
  }
  e.total_j = e.static_j + e.compute_j + e.memory_total_j() + e.link_j;
  e.average_power_w = e.total_j / activity.step_time_s;
  const double busy_dynamic_w = (e.compute_j + e.memory_total_j()) / activity.compute_busy_s;
  e.unthrottled_peak_power_w = power.idle_w + busy_dynamic_w;
  const double headroom_w = power.tdp_w - power.idle_w;
  e.throttle_factor = busy_dynamic_w > headroom_w ? headroom_w / busy_dynamic_w : 1.0;
  e.peak_power_w = std::min(e.unthrottled_peak_power_w, power.tdp_w);
  return e;
}

ClusterEnergy cluster_energy(const std::vector<DeviceEnergy>& per_stage, double devices_per_stage,
                             const PowerSpec& power, double nics, double switches, double step_time_s,
                             double tokens_per_step, double model_flops_per_step) {
  require(!per_stage.empty(), "no pipeline stages");
  require(devices_per_stage > 0, "devices per stage must be positive");
  require(nics >= 0 && switches >= 0, "NIC and switch counts must not be negative");
  require(step_time_s > 0, "step time must be positive");
  require(tokens_per_step > 0, "tokens per step must be positive");
  require(model_flops_per_step >= 0, "model FLOPs must not be negative");
  ClusterEnergy c;
  double peak_devices_w = 0;
  for (const DeviceEnergy& e : per_stage) {
    c.devices_j += e.total_j * devices_per_stage;
    peak_devices_w += e.peak_power_w * devices_per_stage;
  }
  const double network_w = nics * power.nic_w + switches * power.switch_w;
  c.network_j = network_w * step_time_s;
  c.total_j = c.devices_j + c.network_j;
  c.average_power_w = c.total_j / step_time_s;
  c.peak_power_w = peak_devices_w + network_w;
  c.energy_per_token_j = c.total_j / tokens_per_step;
  c.tokens_per_j = tokens_per_step / c.total_j;
  c.flops_per_j = model_flops_per_step / c.total_j;
  return c;
}

}  // namespace clustersim::models
