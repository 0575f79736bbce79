#pragma once
/// The typed, validated scenario that one YAML file (plus includes and --set overrides)
/// describes. Built only by the loader (scenario_loader.hpp); every field is checked.
#include <cstdint>
#include <string>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/comm/collective_model.hpp"
#include "sim/training/training_config.hpp"
#include "topologies/topology.hpp"

namespace clustersim::scenario {

enum class Fidelity { analytical, flow };
enum class SimulationMode { symmetric, full };

struct ClusterConfig {
  models::AcceleratorSpec accelerator;       ///< resolved library preset (+ overrides)
  topologies::ClusterNetworkSpec network;    ///< nodes, per-node count, scale-up, scale-out
  int accelerator_count() const { return network.nodes * network.accelerators_per_node; }
};

struct SimulationConfig {
  Fidelity fidelity = Fidelity::analytical;
  SimulationMode mode = SimulationMode::symmetric;
  std::uint64_t seed = 1;
  models::CommParams comm;  ///< collective-library tunables
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
  OutputConfig output;
};

}  // namespace clustersim::scenario
