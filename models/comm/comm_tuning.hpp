#pragma once
/// Algorithms, NCCL protocols and the tunables of the algorithm-selecting collective models.
///
/// Calibration (docs/validation.md, "Collectives vs nccl-tests"): the defaults below are shared
/// by every GPU type; only the fabric (link bandwidth and latency from the scenario) and the
/// NVLS capability differ between an 8xA100, 8xH100 and 8xH200 node.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/name_table.hpp"

#include "models/accelerator/accelerator_spec.hpp"

namespace clustersim::models {

/// Collective algorithms (NCCL's names where NCCL has them).
enum class Algorithm {
  ring,              ///< pipelined ring: one phase of neighbour flows
  tree,              ///< double binary tree (all-reduce), single binary tree (broadcast, reduce)
  halving_doubling,  ///< recursive halving (reduce-scatter) then doubling (all-gather); 2^k ranks
  hierarchical,      ///< scale-up reduce-scatter, scale-out all-reduce per rail, scale-up all-gather
  nvls,              ///< NVLink SHARP: reduction in the NVSwitch (one NVSwitch domain)
  sharp,             ///< SHARP in the scale-out switches, NVLink reduce-scatter/all-gather around it
  torus_rings,       ///< one ring per torus dimension, reduce-scatter then all-gather
  pairwise,          ///< all-to-all in n-1 phases: rank i sends to rank i+k in phase k
};

/// The names of the algorithms, "auto" (nullopt: the tuner chooses) first, then "ring", "tree",
/// "halving-doubling", "hierarchical", "nvls", "sharp", "torus-rings", "pairwise".
const config::NameTable<std::optional<Algorithm>>& algorithm_names();
/// "ring", "tree", "halving-doubling", "hierarchical", "nvls", "sharp", "torus-rings", "pairwise".
std::string_view algorithm_name(Algorithm algorithm);
/// Every algorithm, in declaration order.
const std::vector<Algorithm>& all_algorithms();
/// Parses a fixed algorithm's name. Throws ConfigError listing the valid names (and "auto")
/// for an unknown name, and for "auto", which names none.
Algorithm parse_algorithm(std::string_view name);

/// NCCL protocols. LL carries 4 data bytes per 8-byte flagged line, LL128 120 data bytes per
/// 128-byte line; both avoid the per-step memory fence that Simple needs, so their per-step
/// latency is lower.
enum class Protocol { ll, ll128, simple };
/// "LL", "LL128", "Simple".
std::string_view protocol_name(Protocol protocol);

/// Payload fraction of the bytes a protocol puts on the wire: LL 1/2 (4 data bytes per 8-byte
/// flagged line), LL128 120/128, Simple 1. The link's own efficiency (topologies::Link) comes
/// on top of it.
double protocol_payload_fraction(Protocol protocol);

/// Collective-library tunables with documented defaults (docs/validation.md, "Collectives vs
/// nccl-tests"). One set serves every GPU type: what differs between an 8xA100, 8xH100 and
/// 8xH200 node is the fabric (link bandwidth, efficiency and latency from the system preset)
/// and the accelerator's CollectiveHardware. Calibrated once against the three nccl-tests
/// all-reduce curves together (worst error from 1 MiB); the link efficiencies and the NVLS
/// efficiency are anchored on independent large-message measurements instead.
struct TunerParams {
  /// Kernel launch plus the final completion sync of one collective, seconds, per protocol
  /// (NCCL's "base latency"; NVLS and SHARP use Simple's).
  double ll_base_latency_s = 6.0e-6;
  double ll128_base_latency_s = 7.0e-6;
  double simple_base_latency_s = 16.0e-6;
  /// Software latency per algorithm step, seconds, on top of the step's wire (path) latency.
  /// LL needs no memory fence and is the quickest; LL128 fences per 128-byte line group;
  /// Simple synchronises a whole chunk per step: its 12.8 us is about the store-and-forward
  /// time of one 256 KiB chunk at a channel's ~20 GB/s (NCCL's own tuning notes model
  /// Tree/Simple that way).
  double ll_step_latency_s = 0.6e-6;
  double ll128_step_latency_s = 0.9e-6;
  double simple_step_latency_s = 12.8e-6;
  /// NVLS: fraction of the achievable NVLink payload rate (link bytes_per_s x efficiency) at
  /// which every GPU sends S into and receives S from the NVSwitch; the switch's multimem
  /// reduction limits it. 0.73 x 0.822 = 0.60 of the 450 GB/s line rate: algbw ~270 GB/s on
  /// 8 x H100 (NVIDIA/nccl#1455).
  double nvls_efficiency = 0.73;
  /// NVLS latency per step (2 steps: reduce, multicast), seconds.
  double nvls_step_latency_s = 27e-6;

  /// The base latency of `protocol`.
  double base_latency_s(Protocol protocol) const;
  /// Whether the scale-out switches support SHARP in-network reduction (off by default: most
  /// fabrics in the library do not enable it).
  bool scale_out_sharp = false;
  /// Torus dimension sizes for `torus-rings` (product = group size); empty: not a torus.
  std::vector<int> torus_dims;
};

/// What the accelerator's collective library can do on it (accelerator preset `collectives`).
struct CollectiveHardware {
  bool nvls = false;  ///< NVLink SHARP (NVSwitch gen 3+)
  /// Ceiling of the LL128 protocol's payload throughput per GPU (all channels together),
  /// bytes/s; 0 = none. LL128 is SM-bound: each warp stores 128-byte lines with a flag.
  double ll128_max_bytes_per_s = 0;
};

/// Throws ConfigError naming the first parameter outside its range (latencies >= 0,
/// efficiencies in (0, 1], torus dimensions >= 2).
void check_tuner_params(const TunerParams& params);

/// Throws ConfigError unless ll128_max_bytes_per_s is finite and >= 0.
void check_collective_hardware(const CollectiveHardware& hardware);

/// The accelerator preset's collective capabilities.
CollectiveHardware collective_hardware(const AcceleratorSpec& accelerator);

}  // namespace clustersim::models
