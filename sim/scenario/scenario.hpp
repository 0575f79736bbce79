#pragma once
/// The typed, validated scenario that one YAML file (plus includes and --set overrides)
/// describes. Built only by the loader (scenario_loader.hpp); every field is checked.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/comm/collective_model.hpp"
#include "models/llm/moe_runtime.hpp"
#include "models/memory/memory_hierarchy.hpp"
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "sim/training/training_config.hpp"
#include "topologies/topology.hpp"

namespace clustersim::scenario {

enum class Fidelity { analytical, flow };
enum class SimulationMode { symmetric, full };
/// Rank to accelerator mapping (accelerators are numbered node-major). `packed`: rank r on
/// accelerator r (a TP group of per-node ranks shares a node). `scattered`: round-robin over
/// the N nodes, rank r on node (r mod N) at local slot floor(r / N), i.e. accelerator
/// (r mod N) x per_node + floor(r / N): consecutive ranks land on consecutive nodes, so every
/// process group of up to N consecutive ranks leaves its node (and crosses leaf switches
/// whenever its nodes hang off different leaves).
enum class Placement { packed, scattered };

/// Nodes whose accelerators compute slower than nominal (`cluster.stragglers`; full mode).
struct Stragglers {
  std::vector<int> nodes;     ///< node indices, each in [0, nodes)
  double compute_speed = 1;  ///< fraction of nominal compute speed, in (0, 1]
};

struct ClusterConfig {
  models::AcceleratorSpec accelerator;       ///< resolved library preset (+ overrides)
  topologies::ClusterNetworkSpec network;    ///< nodes, per-node count, scale-up, scale-out
  /// Memory levels of one accelerator (from the preset's `memory` block); HBM always present.
  std::vector<models::MemoryLevel> memory_levels;
  models::HostLink host_link = models::HostLink::pcie;
  /// Accelerator power (preset `power`) plus NIC/switch power and per-bit link energies
  /// (scenario `power`). tdp_w == 0 means unknown: no power report.
  models::PowerSpec power;
  Placement placement = Placement::packed;  ///< `cluster.placement`
  training::BackgroundTraffic background;    ///< `cluster.background` (gpus 0: none)
  Stragglers stragglers;                     ///< `cluster.stragglers` (no nodes: none)
  int accelerator_count() const { return network.nodes * network.accelerators_per_node; }
};

struct SimulationConfig {
  Fidelity fidelity = Fidelity::analytical;
  SimulationMode mode = SimulationMode::symmetric;
  std::uint64_t seed = 1;
  models::CommConfig comm;  ///< collective-library tunables and algorithm choice (`simulation.comm`)
  /// SMs an overlapped communication kernel occupies (`simulation.comm.overlap_sms`).
  int overlap_sms = 16;
};

/// Memory options of the workload (`workload.offload`, `workload.memory`).
struct MemoryOptions {
  bool offload_optimizer = false;    ///< optimizer state in host memory, streamed each step
  bool offload_activations = false;  ///< stored activations in host memory
  double workspace_bytes = 0;        ///< per device: CUDA context, cuBLAS, NCCL buffers
  double fragmentation = 1.1;        ///< caching-allocator reserved / allocated
  /// ZeRO-3 working set, in parameters (elements), DeepSpeed's defaults: cap on gathered
  /// parameters live at once, parameters prefetched ahead, gradient reduce bucket.
  double zero3_max_live_parameters = 1e9;
  double zero3_prefetch_bucket_parameters = 5e8;
  double zero3_reduce_bucket_parameters = 5e8;
};

/// Power options (`power`).
struct PowerOptions {
  /// Apply the TDP throttle factor to compute time (default: report it only).
  bool apply_throttling = false;
};

struct OutputConfig {
  std::string dir;  ///< empty: print only
};

/// A whole scenario. Only training workloads exist so far (serving is a later issue).
struct Scenario {
  int schema_version = 1;
  std::string name;
  std::string source_file;  ///< the top-level YAML file it came from
  ClusterConfig cluster;
  training::TrainingWorkload training;
  SimulationConfig simulation;
  MemoryOptions memory;
  PowerOptions power;
  models::CostSpec cost;  ///< cost.any() false: no cost report
  OutputConfig output;
};

}  // namespace clustersim::scenario
