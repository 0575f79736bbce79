#pragma once
/// Name -> builder lookup for the scale-out topologies (private to topologies/).
#include <string>
#include <string_view>

#include "topologies/direct_network.hpp"
#include "topologies/scale_out_fabric.hpp"

namespace clustersim::topologies {

/// The scale-out builder registered as `name` (built on top of scale-up domains and NICs),
/// or nullptr when none is.
ScaleOutBuilder find_scale_out_builder(std::string_view name);

/// The whole-cluster builder registered as `name` (torus, custom: no scale-up switch and no
/// NICs), or nullptr when none is.
DirectBuilder find_direct_builder(std::string_view name);

/// Registered names joined by ", " in name order (for error messages).
std::string registered_topology_names();

}  // namespace clustersim::topologies
