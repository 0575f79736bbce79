#pragma once
/// Closed-form (alpha-beta) collectives over the real topology: ring algorithms whose
/// bandwidth term uses the slowest link on any ring hop's path (the `analytical` fidelity).
#include <span>
#include <string_view>

#include "topologies/topology.hpp"

namespace clustersim::models {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, send_recv };
std::string_view collective_name(CollectiveKind kind);

/// Tunables of the collective library (NCCL-like), with documented defaults.
struct CommParams {
  double step_latency_s = 2e-6;       ///< per ring step software/sync latency (added to path latency)
  double bandwidth_efficiency = 0.85; ///< achieved fraction of link bandwidth (protocol overhead)
};

/// Time of collectives among accelerators, given by global accelerator index.
class CollectiveModel {
 public:
  CollectiveModel(const topologies::Topology& topology, CommParams params);

  /// `bytes` follows nccl-tests: the per-rank buffer for all-reduce, the full output for
  /// all-gather, the full input for reduce-scatter, the message for send/recv.
  /// `group` lists the participants in ring order; a group of one costs nothing.
  double time_s(CollectiveKind kind, std::span<const int> group, double bytes) const;

  /// Point-to-point transfer of `bytes` from `src` to `dst`.
  double send_recv_time_s(int src, int dst, double bytes) const;

  const CommParams& params() const { return params_; }

 private:
  const topologies::Topology* topology_;
  CommParams params_;
};

}  // namespace clustersim::models
