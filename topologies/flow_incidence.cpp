#include "topologies/flow_incidence.hpp"

#include <algorithm>

namespace clustersim::topologies {

FlowLinkIncidence::FlowLinkIncidence(std::size_t link_count)
    : link_flows_(link_count), link_mark_(link_count, 0) {}

void FlowLinkIncidence::add(std::int32_t flow, std::span<const LinkId> links) {
  const auto slot = static_cast<std::size_t>(flow);
  if (slot >= flow_hops_.size()) {
    flow_hops_.resize(slot + 1);
    flow_mark_.resize(slot + 1, 0);
  }
  std::vector<FlowHop>& hops = flow_hops_[slot];
  hops.clear();
  hops.reserve(links.size());
  for (std::size_t h = 0; h < links.size(); ++h) {
    std::vector<LinkUse>& on_link = link_flows_[static_cast<std::size_t>(links[h])];
    hops.push_back({links[h], static_cast<std::int32_t>(on_link.size())});
    on_link.push_back({flow, static_cast<std::int32_t>(h)});
  }
}

void FlowLinkIncidence::remove(std::int32_t flow) {
  std::vector<FlowHop>& hops = flow_hops_[static_cast<std::size_t>(flow)];
  for (const FlowHop& hop : hops) {
    // Swap-remove: the last flow of the list takes this flow's place.
    std::vector<LinkUse>& on_link = link_flows_[static_cast<std::size_t>(hop.link)];
    const LinkUse moved = on_link.back();
    on_link[static_cast<std::size_t>(hop.index_in_link)] = moved;
    flow_hops_[static_cast<std::size_t>(moved.flow)][static_cast<std::size_t>(moved.hop)]
        .index_in_link = hop.index_in_link;
    on_link.pop_back();
  }
  hops.clear();
}

void FlowLinkIncidence::collect_component(std::span<const LinkId> seed_links,
                                          std::vector<LinkId>& links_out,
                                          std::vector<std::int32_t>& flows_out) {
  if (++epoch_ == 0) {  // wrapped: old marks could alias the new epoch
    std::fill(link_mark_.begin(), link_mark_.end(), 0U);
    std::fill(flow_mark_.begin(), flow_mark_.end(), 0U);
    epoch_ = 1;
  }
  std::size_t next = links_out.size();
  for (const LinkId seed : seed_links) {
    std::uint32_t& mark = link_mark_[static_cast<std::size_t>(seed)];
    if (mark == epoch_) continue;
    mark = epoch_;
    links_out.push_back(seed);
  }
  // links_out doubles as the search queue.
  while (next < links_out.size()) {
    const LinkId link = links_out[next++];
    for (const LinkUse& use : link_flows_[static_cast<std::size_t>(link)]) {
      std::uint32_t& flow_mark = flow_mark_[static_cast<std::size_t>(use.flow)];
      if (flow_mark == epoch_) continue;
      flow_mark = epoch_;
      flows_out.push_back(use.flow);
      for (const FlowHop& hop : flow_hops_[static_cast<std::size_t>(use.flow)]) {
        std::uint32_t& link_mark = link_mark_[static_cast<std::size_t>(hop.link)];
        if (link_mark == epoch_) continue;
        link_mark = epoch_;
        links_out.push_back(hop.link);
      }
    }
  }
}

}  // namespace clustersim::topologies
