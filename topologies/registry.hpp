#pragma once
/// Name -> builder lookup for the scale-out topologies (private to topologies/).
#include <string>
#include <string_view>

#include "topologies/scale_out_fabric.hpp"

namespace clustersim::topologies {

/// The builder registered as `name`, or nullptr when none is.
ScaleOutBuilder find_scale_out_builder(std::string_view name);

/// Registered names joined by ", " in name order (for error messages).
std::string registered_topology_names();

}  // namespace clustersim::topologies
