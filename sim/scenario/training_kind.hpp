#pragma once
/// The training workload kind's keys (`workload.*` with `kind: training`), declared once and
/// bound to training::TrainingWorkload (training_kind.cpp; the kind itself is
/// training_workload_kind() in workload_kinds.hpp).
#include "sim/config/declarations.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::scenario {

/// Every key of a training workload (the model, a preset lookup, is declared and read by the
/// kind's own function).
const config::Declarations<training::TrainingWorkload>& training_keys();

}  // namespace clustersim::scenario
