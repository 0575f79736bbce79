#include "topologies/registry.hpp"

#include <string>

#include "topologies/custom_topology.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/rail_optimized.hpp"
#include "topologies/switch_fabric.hpp"
#include "topologies/topology_keys.hpp"
#include "topologies/torus.hpp"

namespace clustersim::topologies {

ScaleOutBuilder find_scale_out_builder(std::string_view name) {
  if (name == "dragonfly") return &build_dragonfly;
  if (name == "fat-tree") return &build_fat_tree;
  if (name == "rail-optimized") return &build_rail_optimized;
  if (name == "switch") return &build_switch_fabric;
  return nullptr;
}

DirectBuilder find_direct_builder(std::string_view name) {
  if (name == "custom") return &build_custom;
  if (name == "torus") return &build_torus;
  return nullptr;
}

std::string registered_topology_names() {
  std::string names;
  for (const TopologyKind& kind : topology_kinds()) {
    if (!names.empty()) names += ", ";
    names += kind.name;
  }
  return names;
}

}  // namespace clustersim::topologies
