#pragma once
/// One platform, many workloads: the models of a scenario's hardware, built once from its
/// PlatformSpec and shared by every workload (training, serving, synthetic jobs) and command
/// (run, ops, search, collective, validate) that uses it.
#include <memory>
#include <optional>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "models/memory/memory_hierarchy.hpp"
#include "sim/engine/profile.hpp"
#include "sim/platform/platform_spec.hpp"
#include "topologies/link_faults.hpp"
#include "topologies/topology.hpp"

namespace clustersim::platform {

/// The built models. Not thread-safe (the topology's path cache and the compute and collective
/// models' memos mutate in const methods): build one per thread. Neither copyable nor movable
/// (the collective model refers to the topology).
class Platform {
 public:
  /// Builds the topology, compute model, collective model and memory hierarchy. Throws
  /// ConfigError naming the bad parameter.
  explicit Platform(PlatformSpec spec);
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  const PlatformSpec& spec() const { return spec_; }
  const ClusterSpec& cluster() const { return spec_.cluster; }
  const topologies::Topology& topology() const { return *topology_; }
  const models::ComputeModel& compute() const { return *compute_; }
  const models::CollectiveModel& collectives() const { return *collectives_; }
  const models::MemoryHierarchy& memory() const { return *memory_; }
  int accelerator_count() const { return spec_.cluster.accelerator_count(); }

  /// 1 - overlap_sms / the accelerator's compute units: the speed of compute while a
  /// communication kernel shares the GPU (1 when either is unset).
  double compute_rate_while_communicating() const { return compute_rate_while_communicating_; }

  /// Compute speed of `accelerator` over time, relative to nominal (cluster.stragglers: a
  /// constant below 1 on their nodes). Throws ConfigError for an index out of range.
  const engine::Profile& accelerator_speed(int accelerator) const;
  /// True if some accelerator's speed is not a constant 1.
  bool has_speed_changes() const { return has_speed_changes_; }

  /// The degraded and failed cables and switches of `cluster.network.faults`, resolved on the
  /// topology (empty: none). Sessions of the flow fidelity apply them (Session).
  const topologies::NetworkFaultPlan& link_faults() const { return link_faults_; }

  /// Scale-out switches (the switches beyond one scale-up plane per node, which is part of the
  /// node's power), for the network's power. Computed on first use.
  double scale_out_switches() const;

 private:
  PlatformSpec spec_;
  std::unique_ptr<topologies::Topology> topology_;
  std::unique_ptr<models::ComputeModel> compute_;
  std::unique_ptr<models::CollectiveModel> collectives_;
  std::unique_ptr<models::MemoryHierarchy> memory_;
  double compute_rate_while_communicating_ = 1;
  std::vector<engine::Profile> accelerator_speed_;
  bool has_speed_changes_ = false;
  topologies::NetworkFaultPlan link_faults_;
  mutable std::optional<double> scale_out_switches_;
};

}  // namespace clustersim::platform
