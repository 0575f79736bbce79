#include "topologies/topology_keys.hpp"

#include "topologies/link_faults.hpp"

#include <algorithm>

namespace clustersim::topologies {
namespace {

using config::Declarations;
using config::Dimension;
using config::NameTable;

/// The `topology` choices: every kind's name.
NameTable<std::string> topology_names() {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const TopologyKind& kind : topology_kinds()) entries.emplace_back(kind.name, kind.name);
  return NameTable<std::string>("topology", std::move(entries));
}

Declarations<ScaleOutSpec> nic_keys() {
  Declarations<ScaleOutSpec> keys;
  keys.integer("per_node", &ScaleOutSpec::nics_per_node,
               "NICs per node, dividing cluster.node.per_node (NIC j serves a contiguous block of accelerators; "
               "fewer NICs than accelerators are reached through the scale-up switch); unset: cluster.node.per_node")
      .range(1, 1e6)
      .optional();
  keys.quantity("bandwidth", &ScaleOutSpec::nic_bytes_per_s, Dimension::bytes_per_s,
                "per NIC, one direction; required with more than one node (torus: the link default; custom: unused)")
      .positive()
      .optional();
  keys.number("efficiency", &ScaleOutSpec::efficiency,
              "achievable payload fraction of every scale-out link (NIC, switch, torus and custom links)")
      .positive()
      .range(0, 1);
  return keys;
}

Declarations<ScaleOutSpec> link_keys() {
  Declarations<ScaleOutSpec> keys;
  keys.quantity("latency", &ScaleOutSpec::link_latency_s, Dimension::seconds,
                "per hop (cable plus switch traversal; torus: neighbour hop)");
  keys.quantity("bandwidth", &ScaleOutSpec::link_bytes_per_s, Dimension::bytes_per_s,
                "switch-to-switch link (dragonfly: local and global router links; torus: chip-to-chip ICI "
                "link), one direction; unset: nic.bandwidth")
      .positive()
      .optional();
  return keys;
}

/// The keys of one `cluster.network.faults` entry.
const Declarations<LinkFaultSpec>& link_fault_keys() {
  static const Declarations<LinkFaultSpec> keys = [] {
    Declarations<LinkFaultSpec> k;
    k.string("link", &LinkFaultSpec::link,
             "the cable, by its two ends as the topology names them: `leaf0-spine1` (fat-tree: gpuN, nicE, leafI, "
             "spineI or aggI, coreI; nvswitchD (ualinkD, pciD); switch0; routerI; a custom network's names); every parallel cable "
             "between them; one of link and switch");
    k.string("switch", &LinkFaultSpec::switch_name,
             "a switch whose every cable goes down (e.g. `spine0`); one of link and switch");
    k.quantity("at", &LinkFaultSpec::at_s, Dimension::seconds,
               "when the fault starts, from the start of the simulated step (run)")
        .range(0, 1e6)
        .need();
    k.quantity("until", &LinkFaultSpec::until_s, Dimension::seconds,
               "a degraded cable's recovery (after `at`); unset: degraded to the end. A failed element stays down")
        .range(0, 1e6)
        .optional();
    k.number("bandwidth_fraction", &LinkFaultSpec::bandwidth_fraction,
             "capacity left as a fraction of the nominal: 0 = down (its flows stall, then reroute after "
             "reroute_delay), 0.5 = degraded to half")
        .range(0, 1);
    return k;
  }();
  return keys;
}

}  // namespace

const std::vector<TopologyKind>& topology_kinds() {
  static const std::vector<TopologyKind> kinds = {
      {"custom",
       "whole network from an edge-list file: lines `a,b,bytes_per_s,latency_s` (# comments), vertices "
       "gpu0..gpuN-1 (global accelerator index) and any other name as a switch; no implicit scale-up switch or "
       "NICs; fewest-hop routing with per-flow ECMP, accelerators may be transit hops; bisection = max-flow "
       "between accelerator halves",
       {"file", "nic.efficiency", "routing", "faults", "reroute", "reroute_delay"},
       {"file"},
       true},
      {"dragonfly",
       "groups of routers with all-to-all local links and global links spread over groups (each group pair gets "
       "floor(routers_per_group x global_links_per_router / (groups - 1)) cables); NICs fill router terminal "
       "ports node-major; minimal local-global-local routing with per-flow choice among the shortest global "
       "links",
       {"groups", "routers_per_group", "terminals_per_router", "global_links_per_router", "nic.per_node",
        "nic.bandwidth", "nic.efficiency", "link.bandwidth", "link.latency", "routing", "faults"},
       {"groups", "routers_per_group", "terminals_per_router", "global_links_per_router"},
       false},
      {"fat-tree",
       "2- or 3-tier k-ary fat-tree of radix-k switches (even radix >= 4); NICs fill leaf ports node-major; "
       "oversubscription per tier (leaf, aggregation): down ports = floor(radix x o / (1 + o)) clamped to "
       "[radix / 2, radix - 1]; fewest-hop routes, per-flow ECMP or d-mod-k",
       {"tiers", "radix", "oversubscription", "aggregation_oversubscription", "nic.per_node", "nic.bandwidth",
        "nic.efficiency", "link.bandwidth", "link.latency", "routing", "faults", "reroute", "reroute_delay"},
       {},
       false},
      {"rail-optimized",
       "NIC i of every node on rail leaf i of its group of nodes, rail leaves joined by one spine tier (2 "
       "tiers) or by rail-aligned aggregation pods and cores (3 tiers); fewest-hop routes, per-flow ECMP or d-mod-k",
       {"tiers", "radix", "oversubscription", "aggregation_oversubscription", "nic.per_node", "nic.bandwidth",
        "nic.efficiency", "link.bandwidth", "link.latency", "routing", "pxn", "faults", "reroute", "reroute_delay"},
       {},
       false},
      {"switch",
       "every NIC on one ideal non-blocking switch (no radix limit)",
       {"nic.per_node", "nic.bandwidth", "nic.efficiency", "link.latency", "routing", "faults", "reroute",
        "reroute_delay"},
       {},
       false},
      {"torus",
       "1D/2D/3D torus with wraparound, one accelerator per coordinate (dimension 0 fastest, so a node's "
       "accelerators run along it), neighbour links and no switches (TPU-style ICI); no scale-up switch or "
       "NICs (nic.bandwidth is the link default); dimension-order routing, the shorter way round",
       {"dims", "link.bandwidth", "link.latency", "nic.bandwidth", "nic.efficiency", "routing", "faults"},
       {"dims"},
       true},
  };
  return kinds;
}

const TopologyKind* find_topology_kind(std::string_view name) {
  const auto& kinds = topology_kinds();
  const auto it = std::find_if(kinds.begin(), kinds.end(), [&](const TopologyKind& kind) { return kind.name == name; });
  return it == kinds.end() ? nullptr : &*it;
}

const Declarations<ScaleOutSpec>& scale_out_keys() {
  static const Declarations<ScaleOutSpec> keys = [] {
    Declarations<ScaleOutSpec> k;
    k.enumeration("topology", &ScaleOutSpec::topology, topology_names(),
                  "scale-out topology (`clustersim describe NAME` lists each one's keys); torus and custom "
                  "describe the whole network: no NVSwitch, no NICs");
    k.enumeration("routing", &ScaleOutSpec::routing,
                  NameTable<std::string>("routing", {{"d-mod-k", "d-mod-k"}, {"ecmp", "ecmp"}, {"spray", "spray"}}),
                  "equal-cost route choice: ecmp = hash of each flow (Ethernet/RoCE); d-mod-k = by the destination "
                  "alone (InfiniBand): in fat-tree, rail-optimized and switch fabrics the destination NIC's index "
                  "modulo the candidates at each hop; the DGX presets set it; spray = packet spraying (Ultra "
                  "Ethernet, Spectrum-X adaptive routing): each flow between nodes split into spray_paths subflows "
                  "on independently hashed equal-cost routes");
    k.string("projected", &ScaleOutSpec::projected,
             "not a shipping fabric (a feasibility preset): what is projected and from which announcement; a run "
             "says so in a notice");
    k.integer("spray_paths", &ScaleOutSpec::spray_paths,
              "routing spray: subflows per flow between nodes (more: a closer spread, more flows to solve)")
        .range(1, 256);
    k.boolean("pxn", &ScaleOutSpec::pxn,
              "rail-optimized: a transfer between different rails of different nodes crosses NVLink to its "
              "node's GPU on the destination's rail first and stays in one rail plane (NCCL's PXN, its default "
              "since 2.12); false: it crosses rails in the fabric");
    k.integer("tiers", &ScaleOutSpec::tiers, "fat-tree tiers: 2 (leaf-spine) or 3 (leaf-aggregation-core); "
                                             "rail-optimized: 2 (rail leaf-spine) or 3 (rail leaf, a rail's "
                                             "aggregation pod, core)")
        .range(1, 3);
    k.integer("radix", &ScaleOutSpec::radix, "ports per switch (fat-tree, rail-optimized)").range(2, 1e6);
    k.number("oversubscription", &ScaleOutSpec::oversubscription,
             "leaf (rail-optimized: rail leaf) downlink:uplink port ratio")
        .range(1, 1e6);
    k.number("aggregation_oversubscription", &ScaleOutSpec::aggregation_oversubscription,
             "3-tier fat-tree: aggregation downlink:uplink port ratio")
        .range(1, 1e6);
    k.integer_list("dims", &ScaleOutSpec::torus_dims, "torus dimension size", 1, 1e6,
                   "torus: size of each dimension, 1 to 3 integers >= 1 (e.g. [4, 4, 4]) whose product is the "
                   "accelerator count; accelerator a sits at x0 = a mod d0, x1 = (a / d0) mod d1, ...");
    k.integer("groups", &ScaleOutSpec::dragonfly_groups, "dragonfly: number of groups").range(1, 1e6).optional();
    k.integer("routers_per_group", &ScaleOutSpec::dragonfly_routers_per_group,
              "dragonfly: routers per group (all-to-all local links)")
        .range(1, 1e6)
        .optional();
    k.integer("terminals_per_router", &ScaleOutSpec::dragonfly_terminals_per_router,
              "dragonfly: NIC ports per router; groups x routers_per_group x this must hold every NIC")
        .range(1, 1e6)
        .optional();
    k.integer("global_links_per_router", &ScaleOutSpec::dragonfly_global_links_per_router,
              "dragonfly: inter-group ports per router; routers_per_group x this >= groups - 1")
        .range(0, 1e6)
        .optional();
    k.file("file", &ScaleOutSpec::custom_file,
           "custom: edge-list file, relative to the file that sets it; lines `a,b,bytes_per_s,latency_s` over "
           "vertices gpu0..gpuN-1 and named switches");
    k.object("nic", nic_keys(),
             "network interfaces; required with more than one node, except for torus (where nic.bandwidth is the "
             "link default) and custom");
    k.object("link", link_keys(), "scale-out links");
    k.map_of_objects("faults", &ScaleOutSpec::faults, link_fault_keys(),
                     "degraded and failed cables and switches, by a name of your choice (flow fidelity; "
                     "docs/reliability.md, \"Degraded and failed links\")");
    k.enumeration("reroute", &ScaleOutSpec::reroute,
                  NameTable<std::string>("reroute policy", {{"ecmp", "ecmp"}, {"subnet-manager", "subnet-manager"}}),
                  "how traffic leaves a failed cable or switch: ecmp = each switch re-hashes the flows over the "
                  "equal-cost next hops that survive (BGP/BFD reconvergence); subnet-manager = the InfiniBand subnet "
                  "manager recomputes d-mod-k over the survivors; unset: ecmp with routing ecmp, subnet-manager with "
                  "d-mod-k")
        .optional();
    k.quantity("reroute_delay", &ScaleOutSpec::reroute_delay_s, Dimension::seconds,
               "from a failure to the rerouted paths (its flows stall meanwhile); unset: 300 ms with ecmp (BFD "
               "detection at 50 ms x 6, within RFC 7938's sub-second BGP convergence), 10 s with subnet-manager "
               "(OpenSM's default sweep interval)")
        .range(0, 1e6)
        .optional();
    return k;
  }();
  return keys;
}

const Declarations<ScaleUpSpec>& scale_up_keys() {
  static const Declarations<ScaleUpSpec> keys = [] {
    Declarations<ScaleUpSpec> k;
    k.enumeration("fabric", &ScaleUpSpec::fabric,
                  NameTable<std::string>("scale-up fabric", {{"ethernet-mesh", "ethernet-mesh"},
                                                             {"nvswitch", "nvswitch"},
                                                             {"pcie", "pcie"},
                                                             {"ualink", "ualink"},
                                                             {"xgmi-mesh", "xgmi-mesh"}}),
                  "scale-up fabric, the one the accelerator has (its scale_up_fabric): nvswitch = NVSwitch or "
                  "NVLink switch trays (NVLS where the chip supports it); ualink = UALink switches (a switch per "
                  "domain, no in-switch reduction); pcie = the PCIe switch tree as one switch; xgmi-mesh = AMD Infinity Fabric full mesh, ethernet-mesh = Gaudi's all-to-all RoCE "
                  "ports: one point-to-point link per pair at bandwidth / (domain_size - 1), rings on n - 1 "
                  "disjoint Hamiltonian cycles, no NVLS; not for torus/custom (they are the whole network)");
    k.quantity("bandwidth", &ScaleUpSpec::bytes_per_s, Dimension::bytes_per_s,
               "per accelerator, one direction, over all its scale-up links (a mesh: each pair's link gets "
               "bandwidth / (domain_size - 1)); unset: the accelerator's scale_up_bandwidth")
        .positive()
        .optional();
    k.quantity("latency", &ScaleUpSpec::latency_s, Dimension::seconds,
               "accelerator to accelerator (through the switch, or over one mesh link)");
    k.number("efficiency", &ScaleUpSpec::efficiency,
             "achievable payload fraction of the bandwidth (protocol overhead, SM-driven copies)")
        .positive()
        .range(0, 1);
    k.integer("domain_size", &ScaleUpSpec::domain_size,
              "accelerators per NVLink domain: a multiple of per_node that divides the cluster, e.g. 72 for NVL72 "
              "over 18 nodes of 4; accelerators of one domain talk over its NVLink switch, not a NIC; unset: "
              "per_node (not for torus/custom)")
        .range(1, 1e7)
        .optional();
    return k;
  }();
  return keys;
}

}  // namespace clustersim::topologies
