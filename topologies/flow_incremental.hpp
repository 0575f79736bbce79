#pragma once
/// Incremental max-min fair rates for the flow model (topologies/flow_network.hpp): after flows
/// start or end, or link capacities change, progressive filling is replayed only where its
/// course changes, and flows away from the change keep their rates without being visited.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "topologies/flow_incidence.hpp"

namespace clustersim::topologies {

/// Bottleneck of a flow fixed by its own rate cap rather than by a link.
inline constexpr LinkId kRateCapBottleneck = -1;
/// Bottleneck of a flow not solved yet.
inline constexpr LinkId kUnsolved = -2;

/// Keeps the max-min fair rate and the bottleneck (the link, or the rate cap, that fixed it) of
/// every flow of a FlowLinkIncidence, and restores them after flows are added or removed.
///
/// Progressive filling raises a water level; every unfixed flow's rate equals the level, and a
/// link whose load reaches its capacity fixes its unfixed flows there. A link's load as a
/// function of the level changes only if one of its flows is added, removed or fixed at a
/// different level than before. update() therefore replays the filling lazily. Links of added
/// flows are "tracked" from level 0; a link that only lost flows is tracked from the lowest
/// departed rate (below it nothing could change: the departed flows were still rising there),
/// and only if some flow on it had it as bottleneck (else its lower load binds nobody). Every
/// other flow is predicted to be fixed where it was before. When the level reaches a predicted
/// flow on a tracked link, the prediction holds if its old bottleneck is untracked (its load
/// curve is unchanged) or still fills at that level; otherwise the flow is released and rises
/// on. When a tracked link fills it fixes every flow still rising on it, predicted ones whose
/// old rate was higher included. A flow released or fixed at a new level makes its links
/// tracked from that level on, the first level where their load curves can differ. A link
/// that lost flows is tracked only if it bottlenecked some flow, which relies on accurate
/// bottlenecks: a predicted flow kept at its old rate because another link fills there, or
/// its cap ties it, takes that link or cap as its bottleneck when its old one no longer fills.
///
/// A capacity change leaves a link's load curve alone and moves only the level where the link
/// fills. A link whose capacity fell is tracked from its new capacity divided by its flows (it
/// cannot fill below that level; down to level 0 for a link that went down, which fixes its
/// flows at rate 0); one whose capacity rose is tracked from its old saturation level, and
/// only if some flow had it as bottleneck (else it binds nobody, with more room even less).
///
/// The result is the progressive-filling allocation of the whole network (up to
/// kRateTolerance in deciding ties). An update costs O((H + D) log(H + D)) for H the hops of
/// the flows whose rate changed and D the flows on tracked links; in the worst case, every
/// rate of a connected component changing, that is one full solve of the component with extra
/// bookkeeping, about 1.6x a from-scratch search and MaxMinFairSolver solve of it.
class IncrementalMaxMin {
 public:
  /// Relative tolerance within which a predicted rate and a link's saturation level count as
  /// the same level, so that a prediction that holds up to rounding is kept bit for bit.
  static constexpr double kRateTolerance = 1e-10;

  /// Link ids and flow slots must stay below this (they share an event key with its kind).
  static constexpr std::size_t kMaxId = std::size_t{1} << 30U;

  /// `capacity_bytes_per_s` indexed by LinkId; every entry finite and >= 0 (0: the link is
  /// down and its flows get rate 0). Throws ConfigError for kMaxId links or more.
  explicit IncrementalMaxMin(std::vector<double> capacity_bytes_per_s);

  /// Records that `flow` (a slot) was just added to `incidence`. Throws SimulationError for a
  /// slot >= kMaxId.
  void flow_added(std::int32_t flow);
  /// Records that `flow` is about to be removed from `incidence` (call before removing it).
  void flow_removing(const FlowLinkIncidence& incidence, std::int32_t flow);
  /// Records that `link`'s capacity is `capacity_bytes_per_s` (finite, >= 0) from the next
  /// update on. Several changes before one update count as the last one; a link set back to
  /// the capacity of the last update is no change.
  void set_capacity(LinkId link, double capacity_bytes_per_s);
  /// Capacity of `link` as last set, bytes/s (the next update solves with it).
  double capacity_bytes_per_s(LinkId link) const {
    return links_[static_cast<std::size_t>(link)].capacity_bytes_per_s;
  }
  /// True if flows were added or removed, or capacities set, since the last update.
  bool has_changes() const {
    return !added_flows_.empty() || !departure_links_.empty() || !capacity_changes_.empty();
  }

  /// Restores the max-min allocation after the recorded additions, removals and capacity
  /// changes. A flow crossing a link of capacity 0 gets rate 0. `cap_by_flow[f]`
  /// is flow f's rate cap in bytes/s (> 0, may be infinite), indexed by slot and covering every
  /// slot in use. Returns the flows whose rate was fixed anew (every added flow among them), in
  /// a deterministic order; all other flows kept their rate bit for bit. Equal levels are
  /// resolved by link id and the links' flow order, so the result depends only on the inputs
  /// and the previous allocation. The span is valid until the next update.
  std::span<const std::int32_t> update(const FlowLinkIncidence& incidence,
                                       std::span<const double> cap_by_flow);

  /// Rate of flow slot `flow` after the last update, bytes/s (stale for removed flows).
  double rate_bytes_per_s(std::int32_t flow) const {
    return flows_[static_cast<std::size_t>(flow)].rate_bytes_per_s;
  }
  /// Bottleneck of flow slot `flow` after the last update: a LinkId, kRateCapBottleneck, or
  /// kUnsolved for a flow added since (or removed).
  LinkId bottleneck(std::int32_t flow) const {
    return flows_[static_cast<std::size_t>(flow)].bottleneck;
  }
  /// Links tracked by the last update (a measure of its cost).
  std::size_t last_tracked_links() const { return last_tracked_links_; }

 private:
  /// A flow's role in the current update; flows not yet met are implicitly kPredicted (rate
  /// above the level) or kConfirmed (below it).
  enum class Role : std::uint8_t { kPredicted, kConfirmed, kRising, kFixed };
  static constexpr std::uint32_t kIdBits = 30;
  /// What happens at a level; at equal levels in this order, then by id.
  enum class EventKind : std::uint32_t { kTrack, kPrediction, kCap, kSaturation };
  struct Event {
    double level_bytes_per_s;
    std::uint32_t key;      ///< kind << kIdBits | id: a LinkId, or a flow slot for kCap
    std::uint32_t version;  ///< kSaturation: the link's version when pushed
    EventKind kind() const { return static_cast<EventKind>(key >> kIdBits); }
    std::int32_t id() const { return static_cast<std::int32_t>(key & (kMaxId - 1)); }
  };
  /// A predicted flow, queued on the first tracked link that met it; each link's run of them
  /// is sorted by rate.
  struct Prediction {
    double rate_bytes_per_s;
    std::int32_t flow;
  };

  void grow_flows(std::size_t flow_count);
  Role role(std::size_t flow) const;
  void set_role(std::size_t flow, Role role);
  bool tracked(LinkId link) const {
    return links_[static_cast<std::size_t>(link)].epoch == epoch_;
  }
  static std::uint32_t key_of(EventKind kind, std::int32_t id) {
    return static_cast<std::uint32_t>(kind) << kIdBits | static_cast<std::uint32_t>(id);
  }
  void push(double level_bytes_per_s, EventKind kind, std::int32_t id, std::uint32_t version = 0);
  /// Pushes the kTrack events of the links that lost flows or changed capacity since the last
  /// update, at the lowest level where each link's course can change.
  void push_change_tracks(const FlowLinkIncidence& incidence);
  /// Level at which `link` filled in the last update: the rate of a flow it bottlenecked.
  double saturation_level(const FlowLinkIncidence& incidence, LinkId link) const;
  /// Starts following `link`'s load from `level` on, counting its flows as rising or fixed.
  void track(const FlowLinkIncidence& incidence, LinkId link, double level);
  /// Pushes the prediction event of `link`'s next predicted flow, if any.
  void push_next_prediction(LinkId link);
  void touch(LinkId link);
  /// Pushes a fresh saturation event for every link whose counts changed; with `heapify` it
  /// appends them all and restores the heap once.
  void push_touched(double level, bool heapify);
  /// Moves `flow` from rising to fixed at `rate` on its tracked links other than `draining`.
  void settle(const FlowLinkIncidence& incidence, std::int32_t flow, double rate,
              LinkId draining);
  /// Fixes a rising or predicted flow at a new rate, tracking the links it did not touch yet.
  /// The counts of the `bottleneck` link itself are left to the caller.
  void fix(const FlowLinkIncidence& incidence, std::int32_t flow, double rate, LinkId bottleneck);
  /// Lets a predicted flow rise past its old rate: its links are tracked from `level`.
  void release(const FlowLinkIncidence& incidence, std::int32_t flow, double level,
               double cap_bytes_per_s);
  bool saturated_at(LinkId link, double level) const;
  /// True if `bottleneck`, a link that fixed a predicted flow at `level` before, still fills
  /// there: untracked (its course below is unchanged) or saturated at `level`.
  bool still_binds(LinkId bottleneck, double level) const;
  void process_predictions(const FlowLinkIncidence& incidence, LinkId link, double level,
                           std::span<const double> cap_by_flow);
  void process_saturation(const FlowLinkIncidence& incidence, LinkId link, double level);

  /// What update() keeps per flow slot, and its role in the current update.
  struct FlowState {
    double rate_bytes_per_s = 0;
    LinkId bottleneck = kUnsolved;  ///< counted in its link's bottlenecked_flows when >= 0
    std::uint32_t stamp = 0;        ///< epoch_ << 2 | Role, valid when its epoch is epoch_
  };
  /// Sets `flow`'s bottleneck, keeping the links' bottlenecked_flows counts.
  void set_bottleneck(FlowState& flow, LinkId bottleneck);
  /// Per link: its capacity, the changes recorded since the last update, and its counts while
  /// tracked (epoch equals epoch_).
  struct LinkState {
    double capacity_bytes_per_s = 0;
    double fixed_bytes_per_s = 0;    ///< sum of the fixed rates on the link
    double departure_level = 0;      ///< lowest rate of a flow that left since the last update
    std::int32_t rising_flows = 0;
    std::int32_t bottlenecked_flows = 0;  ///< flows whose bottleneck it is
    std::uint32_t epoch = 0;
    std::uint32_t version = 0;  ///< bumped whenever its saturation level may have changed
    // Its queued predictions are predictions_[next_prediction, end_prediction).
    std::uint32_t next_prediction = 0;
    std::uint32_t end_prediction = 0;
    bool touched = false;
    bool departure_marked = false;
    bool capacity_marked = false;  ///< in capacity_changes_
  };
  /// A link whose capacity was set since the last update, with its capacity then. Kept apart
  /// from LinkState, which every network allocates for every link, so that the per-link
  /// record does not grow for a field few links ever use.
  struct CapacityChange {
    LinkId link;
    double solved_capacity_bytes_per_s;
  };

  std::vector<FlowState> flows_;
  std::vector<LinkState> links_;
  // Changes recorded since the last update.
  std::vector<std::int32_t> added_flows_;
  std::vector<std::uint8_t> added_pending_;  ///< per flow: in added_flows_, not yet solved
  std::vector<LinkId> departure_links_;
  std::vector<CapacityChange> capacity_changes_;  ///< in call order, one per link
  // State of the current update.
  std::vector<Prediction> predictions_;
  std::vector<LinkId> touched_links_;
  static constexpr std::uint32_t kEpochLimit = 1U << 30U;
  std::uint32_t epoch_ = 0;
  std::vector<Event> heap_;
  std::vector<std::int32_t> fixed_flows_;  ///< result of the current update
  std::size_t last_tracked_links_ = 0;
};

}  // namespace clustersim::topologies
