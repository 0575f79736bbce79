#include "sim/platform/platform.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/comm/comm_tuning.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::platform {
namespace {

double sharing_rate(const PlatformSpec& spec) {
  const int units = spec.cluster.accelerator.compute_units;
  if (units <= 0 || spec.overlap_sms <= 0) return 1.0;
  if (spec.overlap_sms >= units) {
    throw ConfigError(fmt::format("simulation.comm.overlap_sms {} must be below the accelerator's {} compute units",
                                  spec.overlap_sms, units));
  }
  return 1.0 - static_cast<double>(spec.overlap_sms) / units;
}

}  // namespace

Platform::Platform(PlatformSpec spec) : spec_(std::move(spec)) {
  const ClusterSpec& cluster = spec_.cluster;
  topology_ = std::make_unique<topologies::Topology>(topologies::Topology::build(cluster.network));
  link_faults_ = topologies::resolve_link_faults(*topology_, cluster.network.scale_out);
  compute_ = spec_.calibration.rows.empty()
                 ? std::make_unique<models::ComputeModel>(cluster.accelerator)
                 : std::make_unique<models::ComputeModel>(cluster.accelerator, spec_.calibration);
  collectives_ = std::make_unique<models::CollectiveModel>(*topology_, spec_.comm,
                                                           models::collective_hardware(cluster.accelerator));
  memory_ = std::make_unique<models::MemoryHierarchy>(cluster.memory_levels, cluster.host_link);
  compute_rate_while_communicating_ = sharing_rate(spec_);
  accelerator_speed_.assign(static_cast<std::size_t>(accelerator_count()), engine::Profile::constant(1.0));
  const Stragglers& stragglers = cluster.stragglers;
  const int per_node = cluster.network.accelerators_per_node;
  for (const int node : stragglers.nodes) {
    if (node < 0 || node >= cluster.network.nodes) {
      throw ConfigError(fmt::format("straggler node {} is not in [0, {})", node, cluster.network.nodes));
    }
    for (int a = node * per_node; a < (node + 1) * per_node; ++a) {
      accelerator_speed_[static_cast<std::size_t>(a)] = engine::Profile::constant(stragglers.compute_speed);
    }
  }
  for (const engine::Profile& profile : accelerator_speed_) {
    engine::check_profile(profile, "accelerator speed", 0.0, true);
    has_speed_changes_ = has_speed_changes_ || !(profile == engine::Profile::constant(1.0));
  }
}

const engine::Profile& Platform::accelerator_speed(int accelerator) const {
  if (accelerator < 0 || accelerator >= accelerator_count()) {
    throw ConfigError(fmt::format("accelerator {} is not in [0, {})", accelerator, accelerator_count()));
  }
  return accelerator_speed_[static_cast<std::size_t>(accelerator)];
}

double Platform::scale_out_switches() const {
  if (!scale_out_switches_) {
    // One scale-up switch plane per node is part of the node (its power is the node's).
    scale_out_switches_ = static_cast<double>(
        std::max<std::int64_t>(0, topology_->summary().switches - spec_.cluster.network.nodes));
  }
  return *scale_out_switches_;
}

}  // namespace clustersim::platform
