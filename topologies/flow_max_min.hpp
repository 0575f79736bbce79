#pragma once
/// Max-min fair rates by progressive filling, from scratch, for one connected component of flows
/// and links. The flow model restores rates incrementally instead (flow_incremental.hpp); this
/// plain solve is the reference its tests compare against.
#include <cstdint>
#include <span>
#include <vector>

#include "topologies/flow_incidence.hpp"

namespace clustersim::topologies {

/// Progressive filling with a min-heap of link fair shares: the link whose remaining capacity
/// divided by its unfixed flows is smallest fixes those flows at that share, which is taken
/// from every other link they cross; repeat. A flow's rate cap acts as a private link of that
/// capacity. Shares only grow as flows are fixed, so stale heap entries are skipped when popped
/// and a solve costs O((links + hops) log(links + flows)).
class MaxMinFairSolver {
 public:
  /// `capacity_bytes_per_s` indexed by LinkId; every entry finite and >= 0 (a link of
  /// capacity 0 fixes its flows at rate 0).
  explicit MaxMinFairSolver(std::vector<double> capacity_bytes_per_s);

  /// Sets `rate_by_flow[f]` (bytes/s) for every flow f of `flows`, which with `links` must be a
  /// union of whole components of `incidence` (as FlowLinkIncidence::collect_component gives).
  /// `cap_by_flow[f]` is the flow's rate cap in bytes/s (> 0, may be infinite). Both vectors are
  /// indexed by flow slot; `rate_by_flow` must be large enough. Ties between equal shares are
  /// broken by link id, then flow slot, so the result depends only on the inputs.
  void solve(const FlowLinkIncidence& incidence, std::span<const LinkId> links,
             std::span<const std::int32_t> flows, std::span<const double> cap_by_flow,
             std::vector<double>& rate_by_flow);

 private:
  struct Share {
    double bytes_per_s;
    std::int64_t key;  ///< LinkId >= 0, or -1 - flow slot for a rate cap
  };
  void push(double bytes_per_s, std::int64_t key);

  std::vector<double> capacity_bytes_per_s_;
  // Scratch per link and per flow, valid for the links and flows of the current solve.
  std::vector<double> left_bytes_per_s_;
  std::vector<std::int32_t> unfixed_flows_;
  std::vector<std::uint8_t> fixed_;
  std::vector<std::uint8_t> touched_;  ///< per link: share changed since its last heap entry
  std::vector<LinkId> touched_links_;
  std::vector<Share> heap_;
};

}  // namespace clustersim::topologies
