#pragma once
/// Power of accelerators, nodes and the network from what the devices did: the time a device
/// ran kernels (at a power between its memory-bound and its best-GEMM level, by the share of
/// that time its matrix units would need at their best rate), ran only collectives, or waited
/// between kernels; a board power limit caps the draw in each of them (the kernels' by
/// throttling the clock). One
/// function for training steps and serving windows alike. Defaults and sources: docs/models.md
/// ("Power").
#include <map>
#include <optional>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/dtype.hpp"

namespace clustersim::models {

/// Board power of one accelerator by activity class, W. Each level is the board's draw while
/// the device does only that, at full clock; `compute` may exceed `limit` (the clock then
/// drops until the draw meets the limit).
struct ActivityPower {
  double idle_w = 0;           ///< nothing to do (driver loaded, clocks down)
  double wait_w = 0;           ///< inside a run with no kernel (between kernels, bubbles)
  double memory_w = 0;         ///< bandwidth-bound kernels, matrix units idle
  double compute_w = 0;        ///< the best large GEMM at full clock
  double communication_w = 0;  ///< collectives alone (copy loops over the links)
  double limit_w = 0;          ///< board power limit (TDP unless set lower)
  /// The best GEMM's rate per format (matmul efficiency x peak), FLOP/s: a FLOP count divided
  /// by it is the time the matrix units would need at the `compute` level.
  std::map<Dtype, double> best_flops_per_s;

  /// Throws ConfigError naming the level if any is negative, the limit is not above idle, or the
  /// levels are out of order (idle <= wait <= memory <= compute; idle <= communication).
  void validate() const;
};

/// Measured fractions the levels a preset does not give are derived from (docs/models.md
/// "Power", validation/data/ground_truth_power_components.csv): each is the fraction of the
/// dynamic range (tdp - idle) above idle.
struct ActivityFractions {
  /// H100: 145 W with a context holding memory and no kernel over a 98 W idle (gpu_burn rows).
  double wait = (145.0 - 98.0) / (700.0 - 98.0);
  /// Bandwidth-bound kernels: LLM decode at a batch that keeps the GPU saturated (weights and
  /// KV cache streamed from HBM, matrix units under a fifth of their best rate), the median of
  /// five GPU power measurements of the ML.ENERGY benchmark (H100: Llama 3.1 8B at batch 256,
  /// 70B TP4 at 1024, 405B FP8 TP8 at 256: 0.98 / 0.89 / 0.85 of the range; B200: DeepSeek R1
  /// at 128, Qwen3-Coder-30B-A3B at 1024: 0.87 / 0.96; ground_truth_power_components.csv pc2_*
  /// rows). The same runs at batch 16 draw 0.54-0.74: their iterations leave host gaps, which
  /// the model counts as waiting (docs/models.md "Power").
  double memory = 0.89;
  /// Best GEMM at full clock: the project's H200 ran the 8192^3 bf16 GEMM back to back at
  /// 654.3 of its 770 TFLOP/s short-run rate (0.85) at 690-695 W against its 700 W limit, so
  /// its full-clock draw is idle + (tdp - idle) / 0.85 with power taken proportional to the
  /// clock (docs/validation.md "Sustained clocks"; validation/kernels/results/2026-12-04-nvidia-h200/sustained).
  double compute = 1.0 / 0.85;
};

/// The activity levels of `chip` (its preset's `power` block, the rest from ActivityFractions),
/// with `limit_w` (0: the TDP). nullopt when the chip has no TDP (unknown power).
std::optional<ActivityPower> activity_power(const AcceleratorSpec& chip, double limit_w);

/// What one device did over a period.
struct DeviceActivity {
  double period_s = 0;         ///< wall time, > 0
  double kernel_s = 0;         ///< time kernels ran (compute or bandwidth bound), >= 0
  double communication_s = 0;  ///< time only collectives ran, >= 0; kernel + communication <= period
  std::map<Dtype, double> matrix_flops;  ///< FLOPs the kernels ran on the matrix units, per format
};

/// Energy of one device over the period, J, by activity class (each part above idle), and the
/// power it implies.
struct DeviceEnergy {
  double static_j = 0;         ///< idle power x period
  double wait_j = 0;           ///< (wait - idle) x time with no kernel and no collective
  double memory_j = 0;         ///< (memory - idle) x kernel time, within the limit
  double compute_j = 0;        ///< (compute - memory) x matrix-unit time at the best rate, within the limit
  double communication_j = 0;  ///< (communication - idle) x time of collectives alone
  double total_j = 0;
  double average_power_w = 0;  ///< total / period
  /// The kernels' draw: memory + (compute - memory) x matrix share, capped at the limit.
  double kernel_power_w = 0;
  double unthrottled_kernel_power_w = 0;  ///< the same without the cap
  /// Clock fraction the limit allows while kernels run: (limit - idle) / (unthrottled - idle)
  /// when the draw exceeds the limit, else 1 (dynamic power taken proportional to the clock).
  double throttle_factor = 1;
};

/// The device's energy. The matrix share of kernel time is sum(FLOPs / best rate) / kernel
/// time, at most 1. Throws ConfigError for a non-positive period, negative times or FLOPs,
/// kernel + communication beyond the period, or FLOPs in a format without a best rate.
DeviceEnergy device_energy(const ActivityPower& power, const DeviceActivity& activity);

/// Power of the gear around the accelerators (scenario `power.*`).
struct PowerSpec {
  double accelerator_limit_w = 0;  ///< board power limit of every accelerator (0: its TDP)
  double nic_w = 25;               ///< one NIC (incl. its transceiver), drawn for the whole period
  double switch_w = 1500;          ///< one scale-out switch (incl. its transceivers)
  /// Energy of the optics of every scale-out switch port, pJ per bit at the port's line rate,
  /// drawn for the whole period (lasers do not idle): pluggable transceivers or co-packaged
  /// optics. 0: the optics are in switch_w; set: switch_w is the switch without them.
  double optics_pj_per_bit = 0;
  /// The same for each NIC's port (its transceiver); 0: in nic_w.
  double nic_optics_pj_per_bit = 0;
  /// A node's own draw beyond its accelerators and NICs (CPUs, host memory, fans, storage,
  /// on-board switches), W. 0 in generic scenarios; system presets set their estimate.
  double node_w = 0;
  /// AC to DC efficiency of the nodes' power supplies (1: report DC power).
  double psu_efficiency = 1;

  /// Throws ConfigError naming the field for a negative power or an efficiency outside (0, 1].
  void validate() const;
};

/// Whole-cluster power and energy over a period.
struct ClusterEnergy {
  double devices_j = 0;   ///< accelerators (board power, DC)
  double nodes_j = 0;     ///< the nodes' own draw (node_w x nodes x period), DC
  double network_j = 0;   ///< NICs and switches x period
  double psu_loss_j = 0;  ///< (devices + nodes + NICs) x (1 / psu_efficiency - 1); switches have their own
  double total_j = 0;
  double average_power_w = 0;          ///< total / period
  double devices_average_power_w = 0;  ///< devices alone / period: what nvidia-smi sums to
  double peak_power_w = 0;             ///< every device at its kernel power plus the rest
  double energy_per_token_j = 0;
  double device_energy_per_token_j = 0;
  double tokens_per_j = 0;
  double flops_per_j = 0;  ///< model FLOPs per joule (performance per watt, FLOP/s per W)
};

/// Devices that each spent `energy` (one kind of accelerator doing one kind of work).
struct DeviceGroup {
  DeviceEnergy energy;
  double devices = 0;
};

/// Sums the device groups with `nodes` nodes, `nics` NICs and `switches` switches over
/// `period_s`. Throws ConfigError for no group, non-positive period or tokens, or negative
/// counts.
/// The optical ports of a scale-out fabric and their line rate (PowerSpec::optics_pj_per_bit,
/// nic_optics_pj_per_bit).
struct OpticalPorts {
  double switch_ports = 0;
  double nic_ports = 0;
  double bits_per_s = 0;
  /// Their power under `power`'s energies per bit, W.
  double watts(const PowerSpec& power) const {
    return 1e-12 * bits_per_s * (power.optics_pj_per_bit * switch_ports + power.nic_optics_pj_per_bit * nic_ports);
  }
};

ClusterEnergy cluster_energy(const std::vector<DeviceGroup>& groups, const PowerSpec& power, double nodes, double nics,
                             double switches, double period_s, double tokens, double model_flops,
                             const OpticalPorts& optics = {});

}  // namespace clustersim::models
