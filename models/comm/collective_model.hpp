#pragma once
/// Closed-form (alpha-beta) collectives over the real topology: ring algorithms whose
/// bandwidth term uses the slowest link on any ring hop's path (the `analytical` fidelity).
///
/// A ring over group g[0..n) has hops g[i] -> g[(i+1) mod n], all sending at once. Each hop
/// follows Topology::path. Hops of THIS collective that cross the same directed link share
/// it: with c(l) = number of hops whose path uses link l,
///   B     = bandwidth_efficiency * min over hops h, links l on h of bytes_per_s(l) / c(l)
///   alpha = max over hops of path latency + step_latency_s
/// so a ring over 8 GPUs of two nodes interleaved across one shared NIC per node gets 1/8 of
/// the NIC. With S = `bytes`:
///   all-reduce:                    2(n-1)/n * S / B + 2(n-1) * alpha
///   all-gather, reduce-scatter:      (n-1)/n * S / B +  (n-1) * alpha
///   send-recv (src -> dst):        latency + step_latency_s + S / (bottleneck * efficiency)
///   all-to-all:                      (n-1)/n * S / B +  (n-1) * alpha  (ring-equivalent volume)
///   broadcast, reduce:                       S / B +  (n-1) * alpha  (pipelined chain)
/// This is the ring algorithm with the CommParams of the scenario; the algorithm-selecting
/// models (collective_tuner.hpp) are used by `clustersim collective`. The training step keeps
/// this model so that existing predictions do not move.
/// Other collectives' traffic is not seen (no contention between collectives: that is the
/// `flow` fidelity's job).
#include <span>
#include <string_view>

#include "models/comm/collective_kind.hpp"
#include "topologies/topology.hpp"

namespace clustersim::models {

/// Tunables of the collective library (NCCL-like), with documented defaults.
struct CommParams {
  double step_latency_s = 2e-6;       ///< per ring step software/sync latency (added to path latency)
  double bandwidth_efficiency = 0.85; ///< achieved fraction of link bandwidth (protocol overhead)
};

/// Time of collectives among accelerators, given by global accelerator index.
class CollectiveModel {
 public:
  /// Keeps a reference to `topology`, which must outlive the model. Throws ConfigError
  /// unless step_latency_s >= 0 and 0 < bandwidth_efficiency <= 1.
  CollectiveModel(const topologies::Topology& topology, CommParams params);

  /// Seconds. `bytes` follows nccl-tests: the per-rank buffer for all-reduce, the full output
  /// for all-gather, the full input for reduce-scatter, the message for send/recv.
  /// `group` lists the participants in ring order; a group of one costs nothing; send_recv
  /// needs exactly two (source, destination). Throws ConfigError for an empty group, a
  /// repeated or out-of-range accelerator, or negative or non-finite bytes.
  double time_s(CollectiveKind kind, std::span<const int> group, double bytes) const;

  /// Seconds for a point-to-point transfer of `bytes` from `src` to `dst` (0 when src == dst).
  double send_recv_time_s(int src, int dst, double bytes) const;

  const CommParams& params() const { return params_; }

 private:
  const topologies::Topology* topology_;
  CommParams params_;
};

}  // namespace clustersim::models
