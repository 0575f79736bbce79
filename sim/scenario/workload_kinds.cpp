#include "sim/scenario/workload_kinds.hpp"

#include <algorithm>

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

void WorkloadReadContext::warn_unless(bool effective, std::string_view key, const std::string& why) const {
  if (!effective) warn_no_effect(root, problems, this->key(key), why);
}

void notice_roofline_estimates(const WorkloadReadContext& c, const models::AcceleratorSpec& accelerator,
                               const std::vector<CostedOpClass>& classes) {
  const std::optional<models::CalibrationTable> table = models::read_default_calibration(c.data_dir, accelerator.name);
  for (const CostedOpClass& costed : classes) {
    if (table && models::has_measurement(*table, accelerator.name, costed.op, costed.dtype)) continue;
    std::string op_class(models::op_class_name(costed.op));
    op_class += " " + std::string(models::dtype_name(costed.dtype));
    if (costed.family) op_class += " (" + std::string(models::attention_kernel_family_name(*costed.family)) + ")";
    c.problems.notice("accelerator '" + accelerator.name + "': " + op_class +
                      " time is a roofline estimate (datasheet peak x efficiencies measured elsewhere): no " +
                      std::string(models::op_class_name(costed.op)) + " " +
                      std::string(models::dtype_name(costed.dtype)) + " kernel measurement of " + accelerator.name +
                      " in the library (calibration/" + accelerator.name + ".csv)");
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
    return built;
  }();
  return kinds;
}

}  // namespace clustersim::scenario
