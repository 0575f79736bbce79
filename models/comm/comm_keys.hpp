#pragma once
/// The collective library's keys (`simulation.comm` of a scenario), each declared once and
/// bound to the CommConfig member it sets; their defaults are TunerParams' initializers
/// (calibrated on nccl-tests, docs/validation.md).
#include "models/comm/collective_model.hpp"
#include "sim/config/declarations.hpp"

namespace clustersim::models {

/// Every key of `simulation.comm` but overlap_sms (a platform setting, sim/scenario).
const config::Declarations<CommConfig>& comm_keys();

}  // namespace clustersim::models
