#pragma once
/// The keys of an accelerator preset (an entry of a scenario's `accelerators:` map, or a
/// library file in models/data/accelerators), each declared once and bound to the
/// AcceleratorSpec member it sets; their defaults are AcceleratorSpec's initializers.
#include "models/accelerator/accelerator_spec.hpp"
#include "sim/config/declarations.hpp"

namespace clustersim::models {

/// Every key of an accelerator preset.
const config::Declarations<AcceleratorSpec>& accelerator_keys();

}  // namespace clustersim::models
