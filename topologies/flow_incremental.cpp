#include "topologies/flow_incremental.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::topologies {

namespace {

// Min-heap order on (level, kind, id); std heap functions keep the largest first, so invert.
constexpr auto heap_order = [](const auto& a, const auto& b) {
  if (a.level_bytes_per_s != b.level_bytes_per_s) return a.level_bytes_per_s > b.level_bytes_per_s;
  return a.key > b.key;
};

// A link that only lost flows or changed capacity is tracked from a hair below the lowest level
// where its course can change, so that a flow whose rate ties that level only up to rounding
// is still looked at.
constexpr double kTrackLevelMargin = 1e-9;

}  // namespace

IncrementalMaxMin::IncrementalMaxMin(std::vector<double> capacity_bytes_per_s)
    : links_(capacity_bytes_per_s.size()) {
  if (links_.size() > kMaxId) {
    throw ConfigError(fmt::format("flow model: {} links, at most {} supported", links_.size(),
                                  kMaxId));
  }
  for (std::size_t l = 0; l < links_.size(); ++l) {
    links_[l].capacity_bytes_per_s = capacity_bytes_per_s[l];
  }
}

void IncrementalMaxMin::grow_flows(std::size_t flow_count) {
  if (flow_count <= flows_.size()) return;
  flows_.resize(flow_count);
  added_pending_.resize(flow_count, 0);
}

void IncrementalMaxMin::flow_added(std::int32_t flow) {
  const auto f = static_cast<std::size_t>(flow);
  if (f >= kMaxId) {
    throw SimulationError(
        fmt::format("flow model: more than {} concurrent flows are not supported", kMaxId));
  }
  grow_flows(f + 1);
  added_pending_[f] = 1;
  flows_[f].bottleneck = kUnsolved;
  added_flows_.push_back(flow);
}

void IncrementalMaxMin::flow_removing(const FlowLinkIncidence& incidence, std::int32_t flow) {
  const auto f = static_cast<std::size_t>(flow);
  if (added_pending_[f] != 0) {  // leaves before it was ever solved: as if never added
    added_pending_[f] = 0;
    return;
  }
  FlowState& state = flows_[f];
  set_bottleneck(state, kUnsolved);
  for (const FlowHop& hop : incidence.hops_of(flow)) {
    LinkState& link = links_[static_cast<std::size_t>(hop.link)];
    if (!link.departure_marked) {
      link.departure_marked = true;
      link.departure_level = state.rate_bytes_per_s;
      departure_links_.push_back(hop.link);
    } else {
      link.departure_level = std::min(link.departure_level, state.rate_bytes_per_s);
    }
  }
}

void IncrementalMaxMin::set_capacity(LinkId link, double capacity_bytes_per_s) {
  LinkState& state = links_[static_cast<std::size_t>(link)];
  if (!state.capacity_marked) {
    state.capacity_marked = true;
    capacity_changes_.push_back({link, state.capacity_bytes_per_s});
  }
  state.capacity_bytes_per_s = capacity_bytes_per_s;
}

void IncrementalMaxMin::set_bottleneck(FlowState& flow, LinkId bottleneck) {
  if (flow.bottleneck >= 0) --links_[static_cast<std::size_t>(flow.bottleneck)].bottlenecked_flows;
  if (bottleneck >= 0) ++links_[static_cast<std::size_t>(bottleneck)].bottlenecked_flows;
  flow.bottleneck = bottleneck;
}

IncrementalMaxMin::Role IncrementalMaxMin::role(std::size_t flow) const {
  const std::uint32_t stamp = flows_[flow].stamp;
  return stamp >> 2U == epoch_ ? static_cast<Role>(stamp & 3U) : Role::kPredicted;
}

void IncrementalMaxMin::set_role(std::size_t flow, Role new_role) {
  flows_[flow].stamp = epoch_ << 2U | static_cast<std::uint32_t>(new_role);
}

void IncrementalMaxMin::push(double level_bytes_per_s, EventKind kind, std::int32_t id,
                             std::uint32_t version) {
  heap_.push_back({level_bytes_per_s, key_of(kind, id), version});
  std::push_heap(heap_.begin(), heap_.end(), heap_order);
}

void IncrementalMaxMin::track(const FlowLinkIncidence& incidence, LinkId link, double level) {
  LinkState& state = links_[static_cast<std::size_t>(link)];
  if (state.epoch == epoch_) return;
  state.epoch = epoch_;
  ++last_tracked_links_;
  double fixed = 0;
  std::int32_t rising = 0;
  const auto first_prediction = static_cast<std::uint32_t>(predictions_.size());
  for (const LinkUse& use : incidence.flows_on(link)) {
    FlowState& flow = flows_[static_cast<std::size_t>(use.flow)];
    if (flow.stamp >> 2U != epoch_) {
      // Met for the first time. Below the level the filling is unchanged (this link's load
      // curve starts to differ only here), so an old rate below it stands; one above it is
      // predicted, and queued here only: other tracked links that meet it find it queued.
      if (flow.rate_bytes_per_s < level) {
        flow.stamp = epoch_ << 2U | static_cast<std::uint32_t>(Role::kConfirmed);
        fixed += flow.rate_bytes_per_s;
      } else {
        flow.stamp = epoch_ << 2U | static_cast<std::uint32_t>(Role::kPredicted);
        predictions_.push_back({flow.rate_bytes_per_s, use.flow});
        ++rising;
      }
      continue;
    }
    switch (static_cast<Role>(flow.stamp & 3U)) {
      case Role::kPredicted:
      case Role::kRising:
        ++rising;
        break;
      case Role::kConfirmed:
      case Role::kFixed:
        fixed += flow.rate_bytes_per_s;
        break;
    }
  }
  state.fixed_bytes_per_s = fixed;
  state.rising_flows = rising;
  // One heap event per distinct predicted rate on the link rather than one per flow. The
  // order among equal rates is that of the link's flow list (deterministic) and does not
  // change the result, so the sort compares rates only.
  const auto by_rate = [](const Prediction& a, const Prediction& b) {
    return a.rate_bytes_per_s < b.rate_bytes_per_s;
  };
  const auto run_begin = predictions_.begin() + first_prediction;
  if (!std::is_sorted(run_begin, predictions_.end(), by_rate)) {
    std::sort(run_begin, predictions_.end(), by_rate);
  }
  state.next_prediction = first_prediction;
  state.end_prediction = static_cast<std::uint32_t>(predictions_.size());
  push_next_prediction(link);
  touch(link);
}

void IncrementalMaxMin::push_next_prediction(LinkId link) {
  const LinkState& state = links_[static_cast<std::size_t>(link)];
  if (state.next_prediction == state.end_prediction) return;
  push(predictions_[state.next_prediction].rate_bytes_per_s, EventKind::kPrediction, link);
}

void IncrementalMaxMin::touch(LinkId link) {
  LinkState& state = links_[static_cast<std::size_t>(link)];
  if (state.touched) return;
  state.touched = true;
  touched_links_.push_back(link);
}

void IncrementalMaxMin::push_touched(double level, bool heapify) {
  for (const LinkId link : touched_links_) {
    LinkState& state = links_[static_cast<std::size_t>(link)];
    state.touched = false;
    const std::uint32_t version = ++state.version;
    if (state.rising_flows == 0) continue;
    // Rounding may put a link that is already full a hair below the level.
    const double share =
        (state.capacity_bytes_per_s - state.fixed_bytes_per_s) / state.rising_flows;
    heap_.push_back({std::max(level, share), key_of(EventKind::kSaturation, link), version});
    if (!heapify) std::push_heap(heap_.begin(), heap_.end(), heap_order);
  }
  touched_links_.clear();
  if (heapify) std::make_heap(heap_.begin(), heap_.end(), heap_order);
}

void IncrementalMaxMin::settle(const FlowLinkIncidence& incidence, std::int32_t flow,
                               double rate, LinkId draining) {
  for (const FlowHop& hop : incidence.hops_of(flow)) {
    if (hop.link == draining || !tracked(hop.link)) continue;
    LinkState& state = links_[static_cast<std::size_t>(hop.link)];
    --state.rising_flows;
    state.fixed_bytes_per_s += rate;
    touch(hop.link);
  }
}

void IncrementalMaxMin::fix(const FlowLinkIncidence& incidence, std::int32_t flow, double rate,
                            LinkId bottleneck) {
  const auto f = static_cast<std::size_t>(flow);
  FlowState& state = flows_[f];
  state.rate_bytes_per_s = rate;
  set_bottleneck(state, bottleneck);
  set_role(f, Role::kFixed);
  fixed_flows_.push_back(flow);
  for (const FlowHop& hop : incidence.hops_of(flow)) {
    if (hop.link == bottleneck) continue;  // the filling link: settled in bulk by the caller
    if (tracked(hop.link)) {
      LinkState& link = links_[static_cast<std::size_t>(hop.link)];
      --link.rising_flows;
      link.fixed_bytes_per_s += rate;
      touch(hop.link);
    } else {
      // Only a predicted flow can have untracked links. Fixed below its old rate, it changes
      // their load curves from here on: track them, counting it as fixed already.
      track(incidence, hop.link, rate);
    }
  }
}

void IncrementalMaxMin::release(const FlowLinkIncidence& incidence, std::int32_t flow,
                                double level, double cap_bytes_per_s) {
  set_role(static_cast<std::size_t>(flow), Role::kRising);
  if (std::isfinite(cap_bytes_per_s)) {
    push(std::max(level, cap_bytes_per_s), EventKind::kCap, flow);
  }
  for (const FlowHop& hop : incidence.hops_of(flow)) track(incidence, hop.link, level);
}

bool IncrementalMaxMin::still_binds(LinkId bottleneck, double level) const {
  return !tracked(bottleneck) || saturated_at(bottleneck, level);
}

bool IncrementalMaxMin::saturated_at(LinkId link, double level) const {
  const LinkState& state = links_[static_cast<std::size_t>(link)];
  // The level at which the link would fill is (capacity - fixed) / rising; compare it with
  // `level` relatively, so the test does not depend on how much of the link is fixed.
  return state.capacity_bytes_per_s - state.fixed_bytes_per_s <=
         state.rising_flows * level * (1 + kRateTolerance);
}

void IncrementalMaxMin::process_predictions(const FlowLinkIncidence& incidence, LinkId link,
                                            double level, std::span<const double> cap_by_flow) {
  // The level reached the old rate of the link's next predicted flows. Each is fixed there
  // again if what fixed it before still does: its cap, an untouched bottleneck, or one that
  // fills right here. Settling one at this level leaves the others' saturation tests
  // unchanged, so their order does not matter.
  LinkState& state = links_[static_cast<std::size_t>(link)];
  while (state.next_prediction != state.end_prediction &&
         predictions_[state.next_prediction].rate_bytes_per_s <= level) {
    const std::int32_t flow = predictions_[state.next_prediction++].flow;
    const auto f = static_cast<std::size_t>(flow);
    if (role(f) != Role::kPredicted) continue;
    const LinkId bottleneck = flows_[f].bottleneck;
    const bool old_holds = bottleneck == kRateCapBottleneck || still_binds(bottleneck, level);
    const double cap = cap_by_flow[f];
    const bool cap_holds = cap <= level * (1 + kRateTolerance);
    if (old_holds || cap_holds) {
      set_role(f, Role::kConfirmed);
      // Its old link no longer fills here, but its cap (which tied it) does.
      if (!old_holds) set_bottleneck(flows_[f], kRateCapBottleneck);
      settle(incidence, flow, flows_[f].rate_bytes_per_s, kRateCapBottleneck);
    } else {
      release(incidence, flow, level, cap);
    }
  }
  push_next_prediction(link);
}

void IncrementalMaxMin::process_saturation(const FlowLinkIncidence& incidence, LinkId link,
                                           double level) {
  // The link is full: every flow still rising on it stops here. A predicted flow whose old
  // rate is this level up to rounding keeps it bit for bit.
  for (const LinkUse& use : incidence.flows_on(link)) {
    const auto f = static_cast<std::size_t>(use.flow);
    const Role flow_role = role(f);
    if (flow_role == Role::kRising) {
      fix(incidence, use.flow, level, link);
    } else if (flow_role == Role::kPredicted) {
      FlowState& flow = flows_[f];
      if (flow.rate_bytes_per_s <= level * (1 + kRateTolerance)) {
        set_role(f, Role::kConfirmed);
        // If what fixed it before no longer fills at this level, this link holds it now; a
        // stale bottleneck would hide it from this link's later changes.
        if (flow.bottleneck >= 0 && !still_binds(flow.bottleneck, level)) {
          set_bottleneck(flow, link);
        }
        settle(incidence, use.flow, flow.rate_bytes_per_s, link);
      } else {
        fix(incidence, use.flow, level, link);
      }
    }
  }
  // Every flow on the link is fixed now; it is full, whatever rounding says.
  LinkState& state = links_[static_cast<std::size_t>(link)];
  state.rising_flows = 0;
  state.fixed_bytes_per_s = state.capacity_bytes_per_s;
  touch(link);
}

double IncrementalMaxMin::saturation_level(const FlowLinkIncidence& incidence,
                                           LinkId link) const {
  double level = std::numeric_limits<double>::infinity();
  for (const LinkUse& use : incidence.flows_on(link)) {
    const FlowState& flow = flows_[static_cast<std::size_t>(use.flow)];
    if (flow.bottleneck == link) level = std::min(level, flow.rate_bytes_per_s);
  }
  return level;
}

void IncrementalMaxMin::push_change_tracks(const FlowLinkIncidence& incidence) {
  // Links of added flows are tracked from level 0 already.
  for (const LinkId link : departure_links_) {
    LinkState& state = links_[static_cast<std::size_t>(link)];
    state.departure_marked = false;
    // Below the lowest departed rate the link's load curve is unchanged, and a lighter load
    // can only matter to the flows it bottlenecked.
    if (state.bottlenecked_flows > 0 && state.epoch != epoch_) {
      push(state.departure_level * (1 - kTrackLevelMargin), EventKind::kTrack, link);
    }
  }
  departure_links_.clear();
  for (const auto& [link, solved_capacity] : capacity_changes_) {
    LinkState& state = links_[static_cast<std::size_t>(link)];
    state.capacity_marked = false;
    if (state.epoch == epoch_) continue;
    const double capacity = state.capacity_bytes_per_s;
    if (capacity < solved_capacity) {
      // Each flow adds at most the level to the load, so the link cannot fill below this.
      const std::size_t flow_count = incidence.flows_on(link).size();
      if (flow_count > 0) {
        push(capacity / static_cast<double>(flow_count) * (1 - kTrackLevelMargin),
             EventKind::kTrack, link);
      }
    } else if (capacity > solved_capacity && state.bottlenecked_flows > 0) {
      push(saturation_level(incidence, link) * (1 - kTrackLevelMargin), EventKind::kTrack,
           link);
    }
  }
  capacity_changes_.clear();
}

std::span<const std::int32_t> IncrementalMaxMin::update(const FlowLinkIncidence& incidence,
                                                        std::span<const double> cap_by_flow) {
  grow_flows(cap_by_flow.size());
  if (++epoch_ == kEpochLimit) {  // wrapped: old marks could alias the new epoch
    epoch_ = 1;
    for (FlowState& flow : flows_) flow.stamp = 0;
    for (LinkState& link : links_) link.epoch = 0;
  }
  fixed_flows_.clear();
  heap_.clear();
  predictions_.clear();
  last_tracked_links_ = 0;

  // Added flows rise from level 0, and their links' load curves differ from level 0 on.
  for (const std::int32_t flow : added_flows_) {
    const auto f = static_cast<std::size_t>(flow);
    if (added_pending_[f] == 0 || incidence.hops_of(flow).empty()) continue;
    set_role(f, Role::kRising);
    const double cap = cap_by_flow[f];
    if (std::isfinite(cap)) push(cap, EventKind::kCap, flow);
  }
  for (const std::int32_t flow : added_flows_) {
    const auto f = static_cast<std::size_t>(flow);
    if (added_pending_[f] == 0) continue;  // removed again, or listed twice
    added_pending_[f] = 0;
    for (const FlowHop& hop : incidence.hops_of(flow)) track(incidence, hop.link, 0.0);
  }
  added_flows_.clear();
  push_change_tracks(incidence);
  push_touched(0.0, /*heapify=*/true);  // the first entries are cheaper heapified at once

  double level = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), heap_order);
    const Event event = heap_.back();
    heap_.pop_back();
    level = std::max(level, event.level_bytes_per_s);
    switch (event.kind()) {
      case EventKind::kTrack:
        track(incidence, event.id(), level);
        break;
      case EventKind::kPrediction:
        process_predictions(incidence, event.id(), level, cap_by_flow);
        break;
      case EventKind::kCap:
        if (role(static_cast<std::size_t>(event.id())) == Role::kRising) {
          fix(incidence, event.id(), event.level_bytes_per_s, kRateCapBottleneck);
        }
        break;
      case EventKind::kSaturation: {
        const LinkState& state = links_[static_cast<std::size_t>(event.id())];
        if (event.version == state.version && state.rising_flows > 0) {
          process_saturation(incidence, event.id(), level);
        }
        break;
      }
    }
    // New saturation levels are >= this level, so while predictions at this very level remain
    // (they go first) the pushes can wait and cover several of them at once.
    if (!heap_.empty() && heap_.front().kind() == EventKind::kPrediction &&
        heap_.front().level_bytes_per_s == level) {
      continue;
    }
    push_touched(level, /*heapify=*/false);
  }
  return fixed_flows_;
}

}  // namespace clustersim::topologies
