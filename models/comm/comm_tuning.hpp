#pragma once
/// Algorithms, NCCL protocols and the tunables of the algorithm-selecting collective models.
///
/// Calibration (docs/validation.md, "Collectives vs nccl-tests"): the defaults below are shared
/// by every GPU type; only the fabric (link bandwidth and latency from the scenario) and the
/// NVLS capability differ between an 8xA100, 8xH100 and 8xH200 node.
#include <string>
#include <string_view>
#include <vector>

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

/// "ring", "tree", "halving-doubling", "hierarchical", "nvls", "sharp", "torus-rings", "pairwise".
std::string_view algorithm_name(Algorithm algorithm);
/// Every algorithm, in declaration order.
const std::vector<Algorithm>& all_algorithms();
/// Parses an algorithm name. Throws ConfigError listing the valid names (and "auto").
Algorithm parse_algorithm(std::string_view name);

/// NCCL protocols. LL carries 4 data bytes per 8-byte flagged line (efficiency 1/2 of Simple),
/// LL128 carries 120 data bytes per 128-byte line (15/16 of Simple); both avoid the per-step
/// memory fence that Simple needs, so their per-step latency is lower.
enum class Protocol { ll, ll128, simple };
/// "LL", "LL128", "Simple".
std::string_view protocol_name(Protocol protocol);

/// Tunables with documented defaults. Why these values: they are the least-squares-style fit
/// (one set for all GPU types) of the public nccl-tests all-reduce curves of 8xA100 (ring),
/// 8xH100 and 8xH200 (NVLS) in validation/data/ground_truth_kernels.csv; see docs/validation.md.
struct TunerParams {
  /// Kernel launch plus the final completion sync of one collective, seconds (NCCL's "base
  /// latency"; the ~25-45 us floor of every small-message nccl-tests row is this plus steps).
  double base_latency_s = 10e-6;
  /// Fraction of link bandwidth that Simple achieves on NVLink (SM-driven copies, 8 steps of
  /// buffering per channel). LL and LL128 scale it by their payload fraction (1/2, 15/16).
  double simple_efficiency = 0.80;
  /// Software latency per algorithm step, seconds, on top of the path's wire latency.
  double ll_step_latency_s = 0.3e-6;
  double ll128_step_latency_s = 11.5e-6;
  double simple_step_latency_s = 18e-6;
  /// NVLS: fraction of NVLink bandwidth achieved when every GPU sends S to and receives S from
  /// the NVSwitch (multimem loads/stores are limited by the switch's reduction throughput).
  double nvls_efficiency = 0.59;
  /// NVLS latency per step (2 steps: reduce, multicast), seconds.
  double nvls_step_latency_s = 17e-6;
  /// Whether the scale-out switches support SHARP in-network reduction (off by default: most
  /// fabrics in the library do not enable it).
  bool scale_out_sharp = false;
  /// Torus dimension sizes for `torus-rings` (product = group size); empty: not a torus.
  std::vector<int> torus_dims;
};

/// Throws ConfigError naming the first parameter outside its range (latencies >= 0,
/// efficiencies in (0, 1], torus dimensions >= 2).
void check_tuner_params(const TunerParams& params);

/// Whether an accelerator (library name) supports NVLS (NVLink SHARP, NVSwitch gen 3+).
/// Table: h100-sxm, h200-sxm, b200 -> yes (Hopper/Blackwell with NVSwitch 3/4); a100-sxm-80gb
/// (NVSwitch gen 2), mi300x, gaudi3, tpu-v5p and anything unknown -> no.
bool accelerator_supports_nvls(std::string_view accelerator_name);

}  // namespace clustersim::models
