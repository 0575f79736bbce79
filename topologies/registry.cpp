#include "topologies/registry.hpp"

#include <string>

#include "topologies/fat_tree.hpp"
#include "topologies/switch_fabric.hpp"

namespace clustersim::topologies {
namespace {

ParameterDoc nics_per_node_doc() {
  return {"nics_per_node", "NICs", "8",
          "scale-out NICs per node; must divide accelerators_per_node. NIC j serves a "
          "contiguous block of accelerators; fewer NICs than accelerators are reached through "
          "the scale-up switch"};
}
ParameterDoc nic_bandwidth_doc() {
  return {"nic_bytes_per_s", "bytes/s", "none (required with more than one node)",
          "bandwidth of one NIC, one direction; every scale-out link runs at this speed"};
}
ParameterDoc link_latency_doc() {
  return {"link_latency_s", "s", "1e-06",
          "latency of one scale-out hop (cable plus switch traversal)"};
}

}  // namespace

const std::vector<TopologyDoc>& topology_registry() {
  // Immutable table built once; the registry is data, not shared mutable state.
  static const std::vector<TopologyDoc> registry = {
      {"fat-tree",
       "2- or 3-tier k-ary fat-tree of radix-k switches; NICs fill leaf ports node-major; "
       "oversubscription only at the leaf tier; ECMP-like fewest-hop routing",
       {{"tiers", "", "2", "switch tiers: 2 (leaf-spine) or 3 (leaf-aggregation-core)"},
        {"radix", "ports", "64", "ports per switch; even and >= 4"},
        {"oversubscription", "ratio", "1",
         "leaf downlink:uplink port ratio (>= 1); down ports = floor(radix*o/(1+o))"},
        nics_per_node_doc(), nic_bandwidth_doc(), link_latency_doc()}},
      {"switch",
       "every NIC on one ideal non-blocking switch (no radix limit)",
       {nics_per_node_doc(), nic_bandwidth_doc(), link_latency_doc()}},
  };
  return registry;
}

ScaleOutBuilder find_scale_out_builder(std::string_view name) {
  if (name == "fat-tree") return &build_fat_tree;
  if (name == "switch") return &build_switch_fabric;
  return nullptr;
}

std::string registered_topology_names() {
  std::string names;
  for (const TopologyDoc& doc : topology_registry()) {
    if (!names.empty()) names += ", ";
    names += doc.name;
  }
  return names;
}

}  // namespace clustersim::topologies
