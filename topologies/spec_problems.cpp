#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/rail_optimized.hpp"
#include "topologies/torus.hpp"
#include "topologies/registry.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {
namespace {

bool positive(double x) { return std::isfinite(x) && x > 0; }
bool non_negative(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace

std::vector<std::string> spec_problems(const ClusterNetworkSpec& spec) {
  std::vector<std::string> problems;
  if (spec.nodes < 1) problems.push_back(fmt::format("nodes must be >= 1, got {}", spec.nodes));
  if (spec.accelerators_per_node < 1) {
    problems.push_back(
        fmt::format("accelerators_per_node must be >= 1, got {}", spec.accelerators_per_node));
  }
  if (spec.nodes >= 1 && spec.accelerators_per_node >= 1 &&
      static_cast<std::int64_t>(spec.nodes) * spec.accelerators_per_node >
          std::numeric_limits<std::int32_t>::max()) {
    problems.push_back(fmt::format("nodes * accelerators_per_node must be <= {}, got {} * {}",
                                   std::numeric_limits<std::int32_t>::max(), spec.nodes,
                                   spec.accelerators_per_node));
  }

  const ScaleOutSpec& out = spec.scale_out;
  const bool direct = find_direct_builder(out.topology) != nullptr;
  const ScaleUpSpec& up = spec.scale_up;
  if (!ScaleUpSpec::known_fabric(up.fabric)) {
    problems.push_back(fmt::format(
        "scale_up.fabric must be one of: ethernet-mesh, nvswitch, pcie, ualink, xgmi-mesh; got '{}'", up.fabric));
  }
  // A mesh has no switch for shared NICs to hang off: every accelerator needs its own NIC.
  if (up.is_mesh() && !direct && spec.nodes > 1 && out.nics_per_node != spec.accelerators_per_node) {
    problems.push_back(fmt::format(
        "scale_up.fabric {} has no switch to share a NIC through: scale_out.nics_per_node must equal "
        "accelerators_per_node ({}), got {}",
        up.fabric, spec.accelerators_per_node, out.nics_per_node));
  }
  const std::int64_t accelerators = static_cast<std::int64_t>(spec.nodes) * spec.accelerators_per_node;
  bool domain_ok = true;
  if (up.domain_size != 0 && spec.accelerators_per_node >= 1 && spec.nodes >= 1 &&
      (up.domain_size < 0 || up.domain_size % spec.accelerators_per_node != 0 ||
       accelerators % up.domain_size != 0)) {
    problems.push_back(fmt::format(
        "scale_up.domain_size must be a multiple of accelerators_per_node ({}) that divides the "
        "accelerator count ({}), got {}",
        spec.accelerators_per_node, accelerators, up.domain_size));
    domain_ok = false;
  }
  if (direct && up.domain_size != 0 && up.domain_size != spec.accelerators_per_node) {
    problems.push_back(fmt::format(
        "scale_up.domain_size does not apply to the '{}' topology (it has no scale-up switch), got {}",
        out.topology, up.domain_size));
  }
  const int domain_size = up.domain_size > 0 && domain_ok ? up.domain_size : spec.accelerators_per_node;
  if (!direct && domain_size > 1 && !positive(up.bytes_per_s)) {
    problems.push_back(
        fmt::format("scale_up.bytes_per_s must be a finite number > 0, got {}", up.bytes_per_s));
  }
  if (!(up.efficiency > 0 && up.efficiency <= 1)) {
    problems.push_back(fmt::format("scale_up.efficiency must be in (0, 1], got {}", up.efficiency));
  }
  if (!(spec.scale_out.efficiency > 0 && spec.scale_out.efficiency <= 1)) {
    problems.push_back(fmt::format("scale_out.efficiency must be in (0, 1], got {}", spec.scale_out.efficiency));
  }
  if (!non_negative(up.latency_s)) {
    problems.push_back(
        fmt::format("scale_up.latency_s must be a finite number >= 0, got {}", up.latency_s));
  }

  if (find_scale_out_builder(out.topology) == nullptr && !direct) {
    problems.push_back(fmt::format("unknown scale-out topology '{}'; valid: {}", out.topology,
                                   registered_topology_names()));
  }
  if (out.routing != "ecmp" && out.routing != "d-mod-k" && out.routing != "spray") {
    problems.push_back(fmt::format("unknown scale-out routing '{}'; valid: d-mod-k, ecmp, spray", out.routing));
  }
  if (out.spray_paths < 1) problems.push_back(fmt::format("spray_paths must be >= 1, got {}", out.spray_paths));
  if (out.topology == "fat-tree") check_fat_tree_parameters(out, problems);
  if (out.topology == "rail-optimized") check_rail_optimized_parameters(spec, problems);
  if (out.topology == "dragonfly") check_dragonfly_parameters(spec, problems);
  if (out.topology == "torus") check_torus_parameters(spec, problems);
  if (out.topology == "custom" && out.custom_file.empty()) {
    problems.push_back("custom topology needs an edge-list file (scale_out.custom_file)");
  }
  if (!(non_negative(out.link_bytes_per_s))) {
    problems.push_back(fmt::format(
        "scale_out.link_bytes_per_s must be a finite number >= 0 (0: nic_bytes_per_s), got {}",
        out.link_bytes_per_s));
  }
  if (direct) {
    if (!non_negative(out.link_latency_s)) {
      problems.push_back(fmt::format("scale_out.link_latency_s must be a finite number >= 0, got {}",
                                     out.link_latency_s));
    }
    return problems;
  }
  if (out.nics_per_node < 1 ||
      (spec.accelerators_per_node >= 1 && spec.accelerators_per_node % out.nics_per_node != 0)) {
    problems.push_back(fmt::format(
        "scale_out.nics_per_node must be >= 1 and divide accelerators_per_node ({}), got {}",
        spec.accelerators_per_node, out.nics_per_node));
  }
  if (spec.nodes > 1 && !positive(out.nic_bytes_per_s)) {
    problems.push_back(fmt::format("scale_out.nic_bytes_per_s must be a finite number > 0, got {}",
                                   out.nic_bytes_per_s));
  }
  if (!non_negative(out.link_latency_s)) {
    problems.push_back(fmt::format("scale_out.link_latency_s must be a finite number >= 0, got {}",
                                   out.link_latency_s));
  }
  // The fat-tree's capacity is known from the NIC count: check it before anything is built
  // (800,000 accelerators used to build their scale-up graph first).
  if (problems.empty() && out.topology == "fat-tree" && spec.nodes > 1) {
    try {
      (void)fat_tree_shape(out, static_cast<std::int64_t>(spec.nodes) * out.nics_per_node);
    } catch (const ConfigError& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

}  // namespace clustersim::topologies
