#include "sim/scenario/workload_kinds.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/accelerator/calibration_table.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::scenario {

void warn_no_effect(const config::ConfigNode& root, config::Problems& problems, const std::string& key_path,
                    const std::string& why) {
  const config::ConfigNode* node = root.find_path(key_path);
  if (node == nullptr || node->is_null()) return;
  const std::string value = node->is_scalar() ? node->text : node->is_sequence() ? "the list" : "the mapping";
  problems.warn(node->position, key_path, value + " has no effect: " + why);
}

void warn_idle_fault_settings(const config::ConfigNode& root, config::Problems& problems,
                              const platform::SessionOptions& simulation, const platform::Stragglers* stragglers,
                              const std::string& why_off) {
  if (stragglers != nullptr && stragglers->nodes.empty() && !(stragglers->probability > 0)) {
    warn_no_effect(root, problems, "cluster.stragglers.compute_speed",
                   "cluster.stragglers lists no nodes and its probability is 0, so no node is slow");
  }
  if (stragglers != nullptr && stragglers->compute_speed == 1.0) {
    for (const char* key : {"cluster.stragglers.nodes", "cluster.stragglers.probability"}) {
      warn_no_effect(root, problems, key, "cluster.stragglers.compute_speed is 1, so a straggler is not slow");
    }
  }
  const platform::VariabilitySpec& v = simulation.variability;
  if (v.host_noise_rate_per_s > 0 && !(v.host_noise_delay_s > 0)) {
    warn_no_effect(root, problems, "simulation.variability.host_noise_rate",
                   "simulation.variability.host_noise_delay is 0, so an interruption costs nothing");
  }
  if (v.host_noise_delay_s > 0 && !(v.host_noise_rate_per_s > 0)) {
    warn_no_effect(root, problems, "simulation.variability.host_noise_delay",
                   "simulation.variability.host_noise_rate is 0, so no interruption happens");
  }
  if (!simulation.failures.enabled) {
    for (const char* key : {"gpu_mtbf", "host_mtbf", "nic_mtbf", "network_mtbf", "software_mtbf",
                            "checkpoint_interval", "storage_bandwidth", "node_bandwidth", "restart_time"}) {
      warn_no_effect(root, problems, std::string("simulation.failures.") + key,
                     "simulation.failures.enabled is false, so " + why_off);
    }
  }
}

void WorkloadReadContext::warn_unless(bool effective, std::string_view key, const std::string& why) const {
  if (!effective) warn_no_effect(root, problems, this->key(key), why);
}

void notice_roofline_estimates(const WorkloadReadContext& c, const models::AcceleratorSpec& accelerator,
                               const std::vector<CostedOpClass>& classes) {
  const std::optional<models::CalibrationTable> table = models::read_default_calibration(c.data_dir, accelerator.name);
  for (const CostedOpClass& costed : classes) {
    if (table && models::has_measurement(*table, accelerator.name, costed.op, costed.dtype)) continue;
    if (models::has_measurement(c.platform.calibration, accelerator.name, costed.op, costed.dtype)) continue;
    const std::string family =
        costed.family ? fmt::format(" ({})", models::attention_kernel_family_name(*costed.family)) : std::string();
    // fmt rather than std::string operator+: GCC 12 warns (-Wrestrict, a false positive) on the latter here.
    c.problems.notice(fmt::format(
        "accelerator '{0}': {1} {2}{3} time is a roofline estimate (datasheet peak x efficiencies measured "
        "elsewhere): no {1} {2} kernel measurement of {0} in the library (calibration/{0}.csv) or in "
        "simulation.calibration",
        accelerator.name, models::op_class_name(costed.op), models::dtype_name(costed.dtype), family));
  }
}

void WorkloadKinds::add(WorkloadKind kind) {
  if (find(kind.name) != nullptr) throw ConfigError("workload kind '" + kind.name + "' is declared twice");
  kinds_.push_back(std::move(kind));
}

const WorkloadKind* WorkloadKinds::find(std::string_view name) const {
  const auto it = std::find_if(kinds_.begin(), kinds_.end(), [&](const WorkloadKind& k) { return k.name == name; });
  return it == kinds_.end() ? nullptr : &*it;
}

std::vector<std::string> WorkloadKinds::names() const {
  std::vector<std::string> names;
  for (const WorkloadKind& kind : kinds_) names.push_back(kind.name);
  return names;
}

const WorkloadKinds& builtin_workload_kinds() {
  // Built once, never mutated: a constant table, like the schema's declarations.
  static const WorkloadKinds kinds = [] {
    WorkloadKinds built;
    built.add(training_workload_kind());
    built.add(serving_workload_kind());
    built.add(collective_loop_workload_kind());
    built.add(trace_workload_kind());
    return built;
  }();
  return kinds;
}

}  // namespace clustersim::scenario
