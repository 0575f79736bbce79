#include "sim/scenario/scenario.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::scenario {

const training::TrainingWorkload& Scenario::training() const {
  const auto* training = dynamic_cast<const training::TrainingWorkload*>(workload.get());
  if (training == nullptr) {
    throw ConfigError(fmt::format("scenario '{}': the workload is of kind '{}', not training", name,
                                  workload ? workload->kind() : std::string_view("none")));
  }
  return *training;
}

platform::Allocation Scenario::primary_allocation() const {
  if (workload) {
    if (const auto range = workload->pinned()) return *range;
  }
  std::vector<platform::Allocation> pinned;
  for (const NamedWorkload& job : jobs) {
    if (const auto range = job.spec->pinned()) pinned.push_back(*range);
  }
  return platform::primary_allocation(platform.cluster.accelerator_count(), pinned);
}

void Scenario::set_training(training::TrainingWorkload training) {
  workload = std::make_shared<const training::TrainingWorkload>(std::move(training));
}

}  // namespace clustersim::scenario
