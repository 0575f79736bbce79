#pragma once
/// Energy and power of accelerators and the network: static power x time, energy per FLOP by
/// dtype, energy per byte at each memory level, energy per bit on each link type; dynamic
/// power above TDP throttles the clock. Defaults and sources: docs/models.md ("Power").
#include <map>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/dtype.hpp"
#include "models/memory/memory_hierarchy.hpp"

namespace clustersim::models {

/// Link classes with their own energy per bit.
enum class LinkKind { scale_up, scale_out };

/// Power figures of one accelerator and of the network gear around it.
struct PowerSpec {
  double tdp_w = 0;   ///< board power limit, > 0
  double idle_w = 0;  ///< static power, drawn whenever the device is on, 0 <= idle < tdp
  std::map<Dtype, double> energy_j_per_flop;  ///< dynamic energy of one FLOP per format
  /// Dynamic energy per bit sent, per link class (estimates, docs/models.md "Power"):
  /// NVLink-class 1.3 pJ, NIC-to-switch 5 pJ (written as the units parser reads "1.3 pJ", so the
  /// default and the value written in a scenario are the same double).
  std::map<LinkKind, double> energy_j_per_bit{{LinkKind::scale_up, 1.3 * 1e-12}, {LinkKind::scale_out, 5e-12}};
  double nic_w = 25;      ///< one NIC (incl. its transceiver), drawn for the whole step
  double switch_w = 1500;  ///< one scale-out switch (incl. its transceivers)

  /// Throws ConfigError naming the field if tdp is not positive, idle is negative or not
  /// below tdp, or an energy or power is negative.
  void validate() const;
  /// Energy per FLOP of `dtype`; throws ConfigError listing the formats present if absent.
  double flop_energy_j(Dtype dtype) const;
};

/// Sets the accelerator's part of `power` from its preset: tdp, idle and energy per FLOP. A
/// format with a peak but no energy per FLOP in the preset gets 0.8 x (tdp - idle) /
/// (matmul efficiency x peak): a best-efficiency GEMM is taken to draw the board's TDP with
/// 80 % of the dynamic power in the math units (assumption, docs/models.md "Power"); none when
/// tdp <= idle (unknown power).
void set_accelerator_power(const AcceleratorSpec& chip, PowerSpec& power);

/// What one device did during one step.
struct DeviceActivity {
  double step_time_s = 0;     ///< wall time of the step, > 0
  double compute_busy_s = 0;  ///< time its math units ran kernels, 0 < busy <= step
  std::map<Dtype, double> flops;                 ///< FLOPs executed per format
  std::map<MemoryLevelKind, double> bytes;       ///< bytes moved at each memory level
  std::map<LinkKind, double> bytes_sent;         ///< bytes sent per link class
};

/// Energy of one device for one step and the power it implies.
struct DeviceEnergy {
  double static_j = 0;   ///< idle_w x step time
  double compute_j = 0;  ///< sum over formats of FLOPs x energy per FLOP
  std::map<MemoryLevelKind, double> memory_j;  ///< per level: bytes x energy per byte
  double link_j = 0;     ///< sum over link classes of bits x energy per bit
  double total_j = 0;    ///< static + compute + memory + link
  double average_power_w = 0;  ///< total / step time
  /// idle + (compute + memory) energy / busy time, capped at TDP: the draw while kernels run.
  double peak_power_w = 0;
  /// Power the busy phase would draw without the cap: idle + (compute + memory) / busy.
  double unthrottled_peak_power_w = 0;
  /// Clock fraction the TDP cap allows, (tdp - idle) / (unthrottled peak - idle), <= 1.
  /// Energy per operation is held constant, so dynamic power scales with the clock and busy
  /// time scales with 1 / throttle_factor.
  double throttle_factor = 1;
  double memory_total_j() const;
};

/// Energy of `activity` under `power` with memory energies from `memory`. Throws ConfigError
/// for a bad spec, a non-positive step time, busy time outside (0, step], negative counts, a
/// dtype without an energy, or bytes at a level the hierarchy lacks.
DeviceEnergy device_energy(const PowerSpec& power, const MemoryHierarchy& memory, const DeviceActivity& activity);

/// Whole-cluster power and energy for one step.
struct ClusterEnergy {
  double devices_j = 0;   ///< accelerators
  double network_j = 0;   ///< NICs and switches x step time
  double total_j = 0;
  double average_power_w = 0;  ///< total / step time
  double peak_power_w = 0;     ///< every device at its peak plus NICs and switches
  double energy_per_token_j = 0;
  double tokens_per_j = 0;
  double flops_per_j = 0;  ///< model FLOPs per joule (performance per watt, FLOP/s per W)
};

/// Sums `per_stage` device energies (one representative device per pipeline stage, each
/// standing for `devices_per_stage` devices) with `nics` NICs and `switches` switches.
/// Throws ConfigError for empty stages, non-positive step time, tokens or counts < 0.
ClusterEnergy cluster_energy(const std::vector<DeviceEnergy>& per_stage, double devices_per_stage,
                             const PowerSpec& power, double nics, double switches, double step_time_s,
                             double tokens_per_step, double model_flops_per_step);

}  // namespace clustersim::models
