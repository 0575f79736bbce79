#include "topologies/registry.hpp"

#include <string>

#include "topologies/custom_topology.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/rail_optimized.hpp"
#include "topologies/switch_fabric.hpp"
#include "topologies/torus.hpp"

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
ParameterDoc link_bandwidth_doc() {
  return {"link_bytes_per_s", "bytes/s", "nic_bytes_per_s",
          "bandwidth of one switch-to-switch link, one direction"};
}
ParameterDoc routing_doc() {
  return {"routing", "", "ecmp",
          "equal-cost route choice: ecmp (hash of each flow) or d-mod-k (by the destination alone, "
          "InfiniBand's routing; in fat-tree, rail-optimized and switch fabrics the destination index "
          "modulo the candidates per hop)"};
}
ParameterDoc leaf_oversubscription_doc() {
  return {"oversubscription", "ratio", "1",
          "leaf downlink:uplink port ratio (>= 1); down ports = floor(radix*o/(1+o)) clamped to "
          "[radix/2, radix-1]"};
}

}  // namespace

const std::vector<TopologyDoc>& topology_registry() {
  // Immutable table built once; the registry is data, not shared mutable state.
  static const std::vector<TopologyDoc> registry = {
      {"custom",
       "whole network from an edge-list file: lines `a,b,bytes_per_s,latency_s` (# comments), "
       "vertices gpu0..gpuN-1 (global accelerator index) and any other name as a switch; no "
       "implicit scale-up switch or NICs; fewest-hop routing with per-flow ECMP, accelerators "
       "may be transit hops; bisection = max-flow between accelerator halves",
       {{"custom_file", "path", "none (required)",
         "edge-list file; in a scenario, relative to the scenario file"},
        routing_doc()}},
      {"dragonfly",
       "groups of routers with all-to-all local links and global links spread over groups; "
       "NICs fill router terminal ports node-major; minimal local-global-local routing with "
       "per-flow choice among the shortest global links",
       {{"dragonfly_groups", "groups", "none (required)", "number of groups g (>= 1)"},
        {"dragonfly_routers_per_group", "routers", "none (required)", "routers per group a (>= 1)"},
        {"dragonfly_terminals_per_router", "ports", "none (required)",
         "NIC ports per router p (>= 1); g*a*p must hold every NIC"},
        {"dragonfly_global_links_per_router", "ports", "none (required)",
         "inter-group ports per router h; a*h >= g-1, each group pair gets floor(a*h/(g-1)) "
         "cables"},
        nics_per_node_doc(), nic_bandwidth_doc(),
        {"link_bytes_per_s", "bytes/s", "nic_bytes_per_s",
         "bandwidth of one local or global router link, one direction"},
        link_latency_doc(), routing_doc()}},
      {"fat-tree",
       "2- or 3-tier k-ary fat-tree of radix-k switches; NICs fill leaf ports node-major; "
       "oversubscription per tier (leaf, aggregation); fewest-hop routes, per-flow ECMP or d-mod-k",
       {{"tiers", "", "2", "switch tiers: 2 (leaf-spine) or 3 (leaf-aggregation-core)"},
        {"radix", "ports", "64", "ports per switch; even and >= 4"},
        leaf_oversubscription_doc(),
        {"aggregation_oversubscription", "ratio", "1",
         "3 tiers only: aggregation downlink:uplink port ratio (>= 1), split like the leaf's"},
        nics_per_node_doc(), nic_bandwidth_doc(), link_bandwidth_doc(), link_latency_doc(), routing_doc()}},
      {"rail-optimized",
       "NIC i of every node on rail leaf i of its group of nodes, rail leaves joined by one "
       "spine tier (2 tiers); fewest-hop routes, per-flow ECMP or d-mod-k",
       {{"radix", "ports", "64", "ports per switch; even and >= 4"},
        leaf_oversubscription_doc(), nics_per_node_doc(), nic_bandwidth_doc(), link_bandwidth_doc(),
        link_latency_doc(), routing_doc()}},
      {"switch",
       "every NIC on one ideal non-blocking switch (no radix limit)",
       {nics_per_node_doc(), nic_bandwidth_doc(), link_latency_doc(), routing_doc()}},
      {"torus",
       "1D/2D/3D torus with wraparound, one accelerator per coordinate (dimension 0 fastest, "
       "so a node's accelerators run along it), neighbour links and no switches (TPU-style "
       "ICI); no scale-up switch or NICs; dimension-order routing, the shorter way round",
       {{"torus_dims", "accelerators", "none (required)",
         "size of each dimension (1 to 3 entries); product = nodes x accelerators_per_node"},
        {"link_bytes_per_s", "bytes/s", "nic_bytes_per_s",
         "bandwidth of one neighbour link, one direction"},
        {"link_latency_s", "s", "1e-06", "latency of one neighbour hop"}, routing_doc()}},
  };
  return registry;
}

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
  for (const TopologyDoc& doc : topology_registry()) {
    if (!names.empty()) names += ", ";
    names += doc.name;
  }
  return names;
}

}  // namespace clustersim::topologies
