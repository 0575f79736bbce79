#pragma once
/// What a scenario's hardware is, as the scenario describes it: the accelerator, the nodes and
/// their networks, the memory hierarchy, power and prices, the collective library's settings.
/// Built by the scenario loader; Platform (platform.hpp) builds the models from it once.
#include <vector>

#include "sim/config/name_table.hpp"

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/calibration_table.hpp"
#include "models/comm/collective_model.hpp"
#include "models/memory/memory_hierarchy.hpp"
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "topologies/topology.hpp"

namespace clustersim::platform {

/// Rank to accelerator mapping of a job (accelerators are numbered node-major). `packed`: rank
/// r on accelerator r (a TP group of per-node ranks shares a node). `scattered`: round-robin
/// over the job's N nodes, rank r on node (r mod N) at local slot floor(r / N), i.e.
/// accelerator (r mod N) x per_node + floor(r / N): consecutive ranks land on consecutive
/// nodes, so every process group of up to N consecutive ranks leaves its node (and crosses
/// leaf switches whenever its nodes hang off different leaves).
enum class Placement { packed, scattered };
/// "packed", "scattered".
const config::NameTable<Placement>& placement_names();

/// Nodes whose accelerators compute slower than nominal (`cluster.stragglers`): the listed
/// nodes in every step, and any node, independently, with `probability` in each step.
struct Stragglers {
  std::vector<int> nodes;     ///< node indices, each in [0, nodes)
  double compute_speed = 1;  ///< fraction of nominal compute speed, in (0, 1]
  /// Per node and step: the chance that the node is slow (at compute_speed) for that whole
  /// step, drawn afresh each iteration from the scenario seed; 0: only the listed nodes.
  double probability = 0;
};

/// Memory pools shared by groups of accelerators (`cluster.memory_pool`): a CXL memory box
/// behind a switch, or a Grace CPU's LPDDR5X shared by its GPUs over NVLink-C2C. One pool per
/// `accelerators` consecutive accelerators (global, node-major index). An accelerator reaches
/// its pool over its own link; the pool's port carries every transfer of its accelerators, so
/// they contend (memory_pool.hpp).
struct MemoryPoolSpec {
  int accelerators = 0;         ///< accelerators sharing one pool; 0: no pools
  double capacity_bytes = 0;    ///< of one pool
  double bytes_per_s = 0;       ///< the pool's port (its memory or its links together), each direction
  double link_bytes_per_s = 0;  ///< one accelerator's link to it, each direction
  double latency_s = 1e-6;      ///< setup of one transfer
  bool on() const { return accelerators > 0; }
  int pool_of(int accelerator) const { return accelerator / accelerators; }
};

/// The hardware (`cluster`).
struct ClusterSpec {
  models::AcceleratorSpec accelerator;     ///< resolved library preset (+ overrides)
  topologies::ClusterNetworkSpec network;  ///< nodes, per-node count, scale-up, scale-out
  /// Memory levels of one accelerator (from the preset's `memory` block); HBM always present.
  std::vector<models::MemoryLevel> memory_levels;
  models::HostLink host_link = models::HostLink::pcie;
  /// Accelerator power (preset `power`) plus the power limit and the NIC, switch and node power
  /// (scenario `power`). tdp_w == 0 means unknown: no power report.
  models::PowerSpec power;
  Placement placement = Placement::packed;  ///< `cluster.placement`
  Stragglers stragglers;                    ///< `cluster.stragglers` (no nodes: none)
  MemoryPoolSpec memory_pool;               ///< `cluster.memory_pool` (off: none)
  int accelerator_count() const { return network.nodes * network.accelerators_per_node; }
};

/// A whole platform: the cluster, the collective library, power options and prices.
struct PlatformSpec {
  ClusterSpec cluster;
  models::CommConfig comm;    ///< collective-library tunables and algorithm (`simulation.comm`)
  /// SMs an overlapped communication kernel occupies (`simulation.comm.overlap_sms`).
  int overlap_sms = 16;
  /// Slow compute by the TDP throttle factor in the timeline (`power.apply_throttling`);
  /// false: report the factor only.
  bool apply_throttling = false;
  models::CostSpec cost;  ///< cost.any() false: no cost report
  /// Kernel measurements the compute model uses before its roofline (`simulation.calibration`:
  /// a calibration CSV or a folder of them, path as written, resolved); "" = none.
  std::string calibration_path;
  /// The kernel stack whose efficiencies the accelerators run with (`simulation.kernel_stack`,
  /// models/data/stacks; applied to the presets by the scenario loader); "preset": the presets'.
  std::string kernel_stack = "preset";
  /// The rows of calibration_path, read by the scenario loader: the cluster's accelerator's and
  /// any other (a serving pool's); each compute model uses its own accelerator's.
  models::CalibrationTable calibration;
};

}  // namespace clustersim::platform
