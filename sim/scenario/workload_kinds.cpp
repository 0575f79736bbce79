#include "sim/scenario/workload_kinds.hpp"

#include <algorithm>

#include "sim/engine/error.hpp"

namespace clustersim::scenario {

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
