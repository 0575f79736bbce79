#include "topologies/flow_max_min.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace clustersim::topologies {

namespace {

// Min-heap order on (share, key); std heap functions keep the largest first, so invert.
bool later(const auto& a, const auto& b) {
  if (a.bytes_per_s != b.bytes_per_s) return a.bytes_per_s > b.bytes_per_s;
  return a.key > b.key;
}

}  // namespace

MaxMinFairSolver::MaxMinFairSolver(std::vector<double> capacity_bytes_per_s)
    : capacity_bytes_per_s_(std::move(capacity_bytes_per_s)),
      left_bytes_per_s_(capacity_bytes_per_s_.size(), 0.0),
      unfixed_flows_(capacity_bytes_per_s_.size(), 0),
      touched_(capacity_bytes_per_s_.size(), 0) {}

void MaxMinFairSolver::push(double bytes_per_s, std::int64_t key) {
  heap_.push_back({bytes_per_s, key});
  std::push_heap(heap_.begin(), heap_.end(), [](const Share& a, const Share& b) { return later(a, b); });
}

void MaxMinFairSolver::solve(const FlowLinkIncidence& incidence, std::span<const LinkId> links,
                             std::span<const std::int32_t> flows,
                             std::span<const double> cap_by_flow,
                             std::vector<double>& rate_by_flow) {
  const auto heap_order = [](const Share& a, const Share& b) { return later(a, b); };
  heap_.clear();
  for (const LinkId link : links) {
    const auto l = static_cast<std::size_t>(link);
    const auto count = static_cast<std::int32_t>(incidence.flows_on(link).size());
    left_bytes_per_s_[l] = capacity_bytes_per_s_[l];
    unfixed_flows_[l] = count;
    if (count > 0) heap_.push_back({capacity_bytes_per_s_[l] / count, link});
  }
  for (const std::int32_t flow : flows) {
    const auto f = static_cast<std::size_t>(flow);
    if (f >= fixed_.size()) fixed_.resize(f + 1, 0);
    fixed_[f] = 0;
    const double cap = cap_by_flow[f];
    if (std::isfinite(cap)) heap_.push_back({cap, -1 - static_cast<std::int64_t>(flow)});
  }
  std::make_heap(heap_.begin(), heap_.end(), heap_order);

  // Fixes `flow` at `rate` and takes the rate from every link it crosses. Links whose share
  // changed get one new heap entry per drained link (push_touched), not one per fixed flow;
  // the link being drained (`draining`) keeps its share and needs none.
  const auto fix = [&](std::int32_t flow, double rate, std::int64_t draining) {
    fixed_[static_cast<std::size_t>(flow)] = 1;
    rate_by_flow[static_cast<std::size_t>(flow)] = rate;
    for (const FlowHop& hop : incidence.hops_of(flow)) {
      const auto l = static_cast<std::size_t>(hop.link);
      // Rounding may leave a hair below zero once the link is full.
      left_bytes_per_s_[l] = std::max(0.0, left_bytes_per_s_[l] - rate);
      --unfixed_flows_[l];
      if (hop.link != draining && touched_[l] == 0) {
        touched_[l] = 1;
        touched_links_.push_back(hop.link);
      }
    }
  };
  const auto push_touched = [&] {
    for (const LinkId link : touched_links_) {
      const auto l = static_cast<std::size_t>(link);
      touched_[l] = 0;
      if (unfixed_flows_[l] > 0) push(left_bytes_per_s_[l] / unfixed_flows_[l], link);
    }
    touched_links_.clear();
  };

  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), heap_order);
    const Share top = heap_.back();
    heap_.pop_back();
    if (top.key < 0) {
      const auto flow = static_cast<std::int32_t>(-1 - top.key);
      if (fixed_[static_cast<std::size_t>(flow)] == 0) {
        fix(flow, top.bytes_per_s, -1);
        push_touched();
      }
      continue;
    }
    const auto l = static_cast<std::size_t>(top.key);
    const std::int32_t unfixed = unfixed_flows_[l];
    // Stale unless it is the link's current share (a later push holds the current one).
    if (unfixed == 0 || top.bytes_per_s != left_bytes_per_s_[l] / unfixed) continue;
    const double share = top.bytes_per_s;
    for (const LinkUse& use : incidence.flows_on(static_cast<LinkId>(top.key))) {
      if (fixed_[static_cast<std::size_t>(use.flow)] == 0) fix(use.flow, share, top.key);
    }
    push_touched();
  }
}

}  // namespace clustersim::topologies
