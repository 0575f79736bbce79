#include "topologies/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "topologies/flow_incidence.hpp"
#include "topologies/flow_incremental.hpp"

namespace clustersim::topologies {

namespace {

using engine::EventId;
using engine::TimePs;

// Fingerprint tags of the events the flow model schedules ("flow" in ASCII, then a kind).
constexpr std::uint64_t kTagRecompute = 0x666c6f7700000001ULL;
constexpr std::uint64_t kTagLastByte = 0x666c6f7700000002ULL;
constexpr std::uint64_t kTagArrival = 0x666c6f7700000003ULL;
constexpr std::uint64_t kTagCapacityChange = 0x666c6f7700000004ULL;

constexpr double kPsPerSecond = static_cast<double>(engine::kPsPerSecond);
// Latest a completion may be scheduled from now, so that now + delay cannot overflow TimePs.
constexpr double kMaxDelayPs = 4.0e18;
constexpr double kMaxLatencyS = 1.0e6;

std::vector<double> capacities(std::span<const Link> links) {
  std::vector<double> capacity(links.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    const Link& link = links[l];
    if (!(std::isfinite(link.bytes_per_s) && link.bytes_per_s > 0)) {
      throw ConfigError(fmt::format("link {} bytes_per_s must be a finite number > 0, got {}", l,
                                    link.bytes_per_s));
    }
    if (!(std::isfinite(link.latency_s) && link.latency_s >= 0)) {
      throw ConfigError(fmt::format("link {} latency_s must be a finite number >= 0, got {}", l,
                                    link.latency_s));
    }
    capacity[l] = link.payload_bytes_per_s();
  }
  return capacity;
}

}  // namespace

struct FlowNetwork::Impl {
  struct Flow {
    CompletionHandler on_complete;
    double bytes = 0;
    /// Bytes left when the flow took its current path (bytes, unless rerouted): what it carries
    /// on these links is path_bytes - remaining_bytes.
    double path_bytes = 0;
    double remaining_bytes = 0;  ///< as of last_update_ps
    std::uint64_t route_tag = 0;
    bool paused = false;
    std::vector<LinkId> paused_links;  ///< while paused: the path it left
    double rate_bytes_per_s = 0;
    TimePs last_update_ps = 0;
    TimePs latency_ps = 0;
    EventId last_byte_event;  ///< pending while active
    std::uint32_t generation = 0;
    bool active = false;
  };

  /// A link's profile changes not applied yet: changes[next..], the next one scheduled.
  struct PendingProfile {
    std::vector<LinkCapacityChange> changes;
    std::size_t next = 0;
    EventId event;  ///< pending while next < changes.size()
  };

  Impl(engine::Engine& engine_ref, const Topology* topology_ptr, std::span<const Link> links)
      : engine(engine_ref),
        topology(topology_ptr),
        incidence(links.size()),
        rates(capacities(links)),
        link_mark(links.size(), 0),
        delivered_bytes(links.size(), 0.0) {
    traffic.bytes.assign(links.size(), 0.0);
  }

  engine::Engine& engine;
  const Topology* topology;  ///< null for a network over explicit links
  FlowLinkIncidence incidence;
  IncrementalMaxMin rates;
  std::vector<Flow> flows;              ///< by slot
  std::vector<double> cap_bytes_per_s;  ///< by slot
  std::vector<std::int32_t> free_slots;
  std::size_t active_count = 0;
  EventId recompute_event;
  std::vector<std::uint32_t> link_mark;  ///< repeated-link check of start_flow
  std::uint32_t mark_epoch = 0;
  std::vector<double> delivered_bytes;  ///< per link, by flows that have completed
  LinkTraffic traffic;                  ///< snapshot returned by traffic()
  std::vector<PendingProfile> profiles;  ///< by link; empty until the first apply_profile
  /// Payload rate per link at scale 1; empty until the first capacity change, before which
  /// the solver's capacities are these (so a network that never changes one never copies).
  std::vector<double> nominal_bytes_per_s;
  LinkLoadListener* load_listener = nullptr;
  std::vector<double> link_load;         ///< summed flow rate per link, while a listener is set
  std::vector<LinkId> changed_links;     ///< links whose load changed at this instant
  std::vector<std::uint8_t> load_changed;  ///< by link: already in changed_links

  // Adds `delta` to the load of every link of `slot`'s path (listener only).
  void add_load(std::int32_t slot, double delta) {
    if (load_listener == nullptr || delta == 0) return;
    for (const FlowHop& hop : incidence.hops_of(slot)) {
      const auto l = static_cast<std::size_t>(hop.link);
      link_load[l] += delta;
      if (!load_changed[l]) {
        load_changed[l] = 1;
        changed_links.push_back(hop.link);
      }
    }
  }

  void report_loads() {
    if (load_listener == nullptr || changed_links.empty()) return;
    // Sums of deltas may leave a rounding residue where a link emptied.
    for (const LinkId link : changed_links) {
      double& load = link_load[static_cast<std::size_t>(link)];
      if (load < 1e-9 * rates.capacity_bytes_per_s(link)) load = 0;
      load_changed[static_cast<std::size_t>(link)] = 0;
    }
    load_listener->on_link_loads(engine.now(), changed_links, link_load);
    changed_links.clear();
  }

  std::size_t link_count() const { return link_mark.size(); }

  static FlowId id_of(std::int32_t slot, std::uint32_t generation) {
    return static_cast<FlowId>((static_cast<std::uint64_t>(generation) << 32U) |
                               static_cast<std::uint32_t>(slot));
  }

  const Flow* find_active(FlowId id) const {
    if (id < 0) return nullptr;
    const auto slot = static_cast<std::size_t>(static_cast<std::uint64_t>(id) & 0xffffffffULL);
    const auto generation = static_cast<std::uint32_t>(static_cast<std::uint64_t>(id) >> 32U);
    if (slot >= flows.size()) return nullptr;
    const Flow& flow = flows[slot];
    return flow.active && flow.generation == generation ? &flow : nullptr;
  }

  // `what` names the link's role in the message: "flow", "scaled", ...
  void check_link_id(LinkId link, std::string_view what) const {
    if (link < 0 || static_cast<std::size_t>(link) >= link_count()) {
      throw ConfigError(
          fmt::format("{} link id {} is out of range [0, {})", what, link, link_count()));
    }
  }

  void check_links(std::span<const LinkId> links) {
    if (++mark_epoch == 0) {
      std::fill(link_mark.begin(), link_mark.end(), 0U);
      mark_epoch = 1;
    }
    for (const LinkId link : links) {
      check_link_id(link, "flow");
      std::uint32_t& mark = link_mark[static_cast<std::size_t>(link)];
      if (mark == mark_epoch) throw ConfigError(fmt::format("flow crosses link {} twice", link));
      mark = mark_epoch;
    }
  }

  std::int32_t acquire_slot() {
    if (!free_slots.empty()) {
      const std::int32_t slot = free_slots.back();
      free_slots.pop_back();
      return slot;
    }
    flows.emplace_back();
    cap_bytes_per_s.push_back(0.0);
    return static_cast<std::int32_t>(flows.size() - 1);
  }

  void release_slot(std::int32_t slot) {
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    flow.active = false;
    flow.rate_bytes_per_s = 0;
    ++flow.generation;
    free_slots.push_back(slot);
  }

  // Drains the flow's bytes at its current rate up to `now_ps`.
  static void advance(Flow& flow, TimePs now_ps) {
    if (now_ps == flow.last_update_ps) return;
    // rate * ps first: for round figures (GB/s, ms) the product and quotient stay exact.
    flow.remaining_bytes -=
        flow.rate_bytes_per_s * static_cast<double>(now_ps - flow.last_update_ps) / kPsPerSecond;
    flow.last_update_ps = now_ps;
  }

  static double done_tolerance_bytes(const Flow& flow) { return 1e-6 + 1e-12 * flow.bytes; }

  void schedule_last_byte(std::int32_t slot) {
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    if (!(flow.rate_bytes_per_s > 0)) {
      throw SimulationError(fmt::format(
          "flow model: a flow with {} bytes left got no bandwidth (rate {} bytes/s)",
          flow.remaining_bytes, flow.rate_bytes_per_s));
    }
    const double delay_ps = flow.remaining_bytes * kPsPerSecond / flow.rate_bytes_per_s;
    if (!(delay_ps < kMaxDelayPs)) {
      throw SimulationError(fmt::format(
          "flow model: {} bytes at {} bytes/s would end beyond the representable time",
          flow.remaining_bytes, flow.rate_bytes_per_s));
    }
    // Ceiling, so a flow never ends before its last byte; the relative 1e-14 (far above the
    // rounding of the few operations behind delay_ps) keeps a quotient that is a whole number
    // up to rounding from landing one picosecond late.
    const TimePs delay =
        delay_ps <= 0 ? 0 : static_cast<TimePs>(std::ceil(delay_ps - delay_ps * 1e-14));
    const std::uint32_t generation = flow.generation;
    Impl* self = this;
    flow.last_byte_event = engine.schedule_at(
        flow.last_update_ps + delay,
        [self, slot, generation](engine::Engine&) { self->on_last_byte(slot, generation); },
        kTagLastByte);
  }

  void request_recompute() {
    if (recompute_event.valid()) return;
    Impl* self = this;
    recompute_event = engine.schedule_at(
        engine.now(),
        [self](engine::Engine&) {
          self->recompute_event = {};
          self->recompute();
        },
        kTagRecompute);
  }

  // Runs a pending recompute now instead of in its event.
  void flush() {
    if (!recompute_event.valid()) return;
    engine.cancel(recompute_event);
    recompute_event = {};
    recompute();
  }

  void recompute() {
    if (!rates.has_changes()) {
      report_loads();
      return;
    }
    const std::span<const std::int32_t> solved = rates.update(incidence, cap_bytes_per_s);
    const TimePs now_ps = engine.now();
    for (const std::int32_t slot : solved) {
      Flow& flow = flows[static_cast<std::size_t>(slot)];
      const double rate = rates.rate_bytes_per_s(slot);
      const bool scheduled = flow.last_byte_event.valid();
      if (!(rate > 0) || !std::isfinite(rate)) check_rate(slot, rate);
      // Unchanged: a moving flow keeps its completion event, a stalled one stays without.
      if (rate == flow.rate_bytes_per_s && (scheduled || rate == 0)) continue;
      advance(flow, now_ps);
      add_load(slot, rate - flow.rate_bytes_per_s);
      flow.rate_bytes_per_s = rate;
      if (scheduled) engine.cancel(flow.last_byte_event);
      if (rate > 0) {
        schedule_last_byte(slot);
      } else {  // behind a down link: stalled until a recompute gives it bandwidth again
        flow.last_byte_event = {};
      }
    }
    report_loads();
  }

  // A rate that is not positive and finite is valid only for a flow behind a down link.
  void check_rate(std::int32_t slot, double rate) const {
    double min_capacity = std::numeric_limits<double>::infinity();
    for (const FlowHop& hop : incidence.hops_of(slot)) {
      min_capacity = std::min(min_capacity, rates.capacity_bytes_per_s(hop.link));
    }
    const std::string violation = flow_rate_violation(rate, min_capacity);
    if (!violation.empty()) {
      throw SimulationError(fmt::format("flow model: the solver broke its invariant for an active flow with {} bytes "
                                        "left at {} ps: {}",
                                        flows[static_cast<std::size_t>(slot)].remaining_bytes, engine.now(), violation));
    }
  }

  void set_scale(LinkId link, double scale) {
    if (nominal_bytes_per_s.empty()) {
      nominal_bytes_per_s.resize(link_count());
      for (std::size_t l = 0; l < link_count(); ++l) {
        nominal_bytes_per_s[l] = rates.capacity_bytes_per_s(static_cast<LinkId>(l));
      }
    }
    rates.set_capacity(link, nominal_bytes_per_s[static_cast<std::size_t>(link)] * scale);
    request_recompute();
  }

  void schedule_next_change(LinkId link) {
    PendingProfile& profile = profiles[static_cast<std::size_t>(link)];
    if (profile.next == profile.changes.size()) {
      profile.event = {};
      return;
    }
    Impl* self = this;
    profile.event = engine.schedule_at(
        profile.changes[profile.next].at_ps,
        [self, link](engine::Engine&) { self->on_profile_change(link); }, kTagCapacityChange);
  }

  void on_profile_change(LinkId link) {
    PendingProfile& profile = profiles[static_cast<std::size_t>(link)];
    const double scale = profile.changes[profile.next++].scale;
    set_scale(link, scale);
    schedule_next_change(link);  // one pending event per profile: the changes are in order
  }

  void apply_profile(LinkId link, const LinkProfile& profile) {
    check_link_id(link, "profiled");
    check_link_profile(profile, link, engine.now());
    if (profiles.empty()) profiles.resize(link_count());
    PendingProfile& pending = profiles[static_cast<std::size_t>(link)];
    if (pending.event.valid()) engine.cancel(pending.event);
    pending.changes = profile.changes;
    pending.next = 0;
    schedule_next_change(link);
  }

  void on_last_byte(std::int32_t slot, std::uint32_t generation) {
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    if (!flow.active || flow.generation != generation) return;  // defensive: always cancelled
    flow.last_byte_event = {};
    advance(flow, engine.now());
    if (flow.remaining_bytes > done_tolerance_bytes(flow)) {  // rounding left a few bytes
      schedule_last_byte(slot);
      return;
    }
    for (const FlowHop& hop : incidence.hops_of(slot)) {
      delivered_bytes[static_cast<std::size_t>(hop.link)] += flow.path_bytes;
    }
    add_load(slot, -flow.rate_bytes_per_s);
    rates.flow_removing(incidence, slot);
    incidence.remove(slot);
    --active_count;
    CompletionHandler handler = std::move(flow.on_complete);
    const TimePs latency_ps = flow.latency_ps;
    release_slot(slot);
    if (handler) engine.schedule_after(latency_ps, std::move(handler), kTagArrival);
    request_recompute();
  }

  FlowId start(std::span<const LinkId> links, double bytes, double latency_s,
               CompletionHandler on_complete, double rate_cap_bytes_per_s, std::uint64_t route_tag) {
    if (!(std::isfinite(bytes) && bytes > 0)) {
      throw ConfigError(fmt::format("flow bytes must be a finite number > 0, got {}", bytes));
    }
    if (!(std::isfinite(latency_s) && latency_s >= 0 && latency_s <= kMaxLatencyS)) {
      throw ConfigError(fmt::format(
          "flow latency_s must be a finite number in [0, {}], got {}", kMaxLatencyS, latency_s));
    }
    if (!(rate_cap_bytes_per_s > 0)) {
      throw ConfigError(
          fmt::format("flow rate_cap_bytes_per_s must be > 0, got {}", rate_cap_bytes_per_s));
    }
    check_links(links);
    const TimePs latency_ps = engine::seconds_to_ps(latency_s);
    const std::int32_t slot = acquire_slot();
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    const FlowId id = id_of(slot, flow.generation);
    if (links.empty()) {  // same endpoint: only the latency
      release_slot(slot);
      if (on_complete) engine.schedule_after(latency_ps, std::move(on_complete), kTagArrival);
      return id;
    }
    flow.on_complete = std::move(on_complete);
    flow.bytes = bytes;
    flow.path_bytes = bytes;
    flow.route_tag = route_tag;
    flow.paused = false;
    flow.paused_links.clear();
    flow.remaining_bytes = bytes;
    flow.rate_bytes_per_s = 0;
    flow.last_update_ps = engine.now();
    flow.latency_ps = latency_ps;
    flow.last_byte_event = {};
    flow.active = true;
    cap_bytes_per_s[static_cast<std::size_t>(slot)] = rate_cap_bytes_per_s;
    incidence.add(slot, links);
    rates.flow_added(slot);
    ++active_count;
    request_recompute();
    return id;
  }

  static std::int32_t slot_of(FlowId id) {
    return static_cast<std::int32_t>(static_cast<std::uint64_t>(id) & 0xffffffffULL);
  }

  // Takes `slot` off its path now: its carried bytes are counted on the path's links, it leaves
  // the solver and loses its completion event.
  void leave_path(std::int32_t slot) {
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    advance(flow, engine.now());
    for (const FlowHop& hop : incidence.hops_of(slot)) {
      delivered_bytes[static_cast<std::size_t>(hop.link)] += flow.path_bytes - flow.remaining_bytes;
    }
    flow.path_bytes = flow.remaining_bytes;
    if (flow.last_byte_event.valid()) engine.cancel(flow.last_byte_event);
    flow.last_byte_event = {};
    add_load(slot, -flow.rate_bytes_per_s);
    flow.rate_bytes_per_s = 0;
    rates.flow_removing(incidence, slot);
    incidence.remove(slot);
    request_recompute();
  }

  void pause(FlowId id) {
    if (find_active(id) == nullptr) throw ConfigError(fmt::format("flow {} to pause is not active", id));
    const std::int32_t slot = slot_of(id);
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    if (flow.paused) return;
    flow.paused_links.clear();
    for (const FlowHop& hop : incidence.hops_of(slot)) flow.paused_links.push_back(hop.link);
    leave_path(slot);
    flow.paused = true;
  }

  void reroute(FlowId id, std::span<const LinkId> links) {
    if (find_active(id) == nullptr) throw ConfigError(fmt::format("flow {} to reroute is not active", id));
    if (links.empty()) throw ConfigError(fmt::format("flow {} cannot be rerouted onto no links", id));
    check_links(links);
    const std::int32_t slot = slot_of(id);
    Flow& flow = flows[static_cast<std::size_t>(slot)];
    if (flow.paused) {
      flow.paused = false;
      flow.paused_links.clear();
      flow.last_update_ps = engine.now();  // it carried nothing while paused
    } else {
      leave_path(slot);
    }
    incidence.add(slot, links);
    rates.flow_added(slot);
    request_recompute();
  }

  void snapshot_traffic() {
    traffic.bytes = delivered_bytes;
    const TimePs now_ps = engine.now();
    for (std::size_t slot = 0; slot < flows.size(); ++slot) {
      const Flow& flow = flows[slot];
      if (!flow.active) continue;
      const double left = flow.remaining_bytes - flow.rate_bytes_per_s *
                                                     static_cast<double>(now_ps - flow.last_update_ps) /
                                                     kPsPerSecond;
      const double carried = std::clamp(flow.path_bytes - left, 0.0, flow.path_bytes);
      for (const FlowHop& hop : incidence.hops_of(static_cast<std::int32_t>(slot))) {
        traffic.bytes[static_cast<std::size_t>(hop.link)] += carried;
      }
    }
  }

  ~Impl() {
    if (recompute_event.valid()) engine.cancel(recompute_event);
    for (const PendingProfile& profile : profiles) {
      if (profile.event.valid()) engine.cancel(profile.event);
    }
    for (const Flow& flow : flows) {
      if (flow.active && flow.last_byte_event.valid()) engine.cancel(flow.last_byte_event);
    }
  }
};

FlowNetwork::FlowNetwork(engine::Engine& engine, const Topology& topology)
    : impl_(std::make_unique<Impl>(engine, &topology, topology.links())) {}

FlowNetwork::FlowNetwork(engine::Engine& engine, std::span<const Link> links)
    : impl_(std::make_unique<Impl>(engine, nullptr, links)) {}

FlowNetwork::~FlowNetwork() = default;

FlowId FlowNetwork::start_flow(std::span<const LinkId> links, double bytes, double latency_s,
                               CompletionHandler on_complete, double rate_cap_bytes_per_s, std::uint64_t route_tag) {
  return impl_->start(links, bytes, latency_s, std::move(on_complete), rate_cap_bytes_per_s, route_tag);
}

std::vector<FlowNetwork::CrossingFlow> FlowNetwork::flows_crossing(const std::function<bool(LinkId)>& crossed) const {
  std::vector<CrossingFlow> found;
  for (std::size_t slot = 0; slot < impl_->flows.size(); ++slot) {
    const Impl::Flow& flow = impl_->flows[slot];
    if (!flow.active) continue;
    const auto hops = impl_->incidence.hops_of(static_cast<std::int32_t>(slot));
    const bool crossing =
        flow.paused ? std::any_of(flow.paused_links.begin(), flow.paused_links.end(), crossed)
                    : std::any_of(hops.begin(), hops.end(), [&](const FlowHop& hop) { return crossed(hop.link); });
    if (crossing) {
      found.push_back({Impl::id_of(static_cast<std::int32_t>(slot), flow.generation), flow.route_tag});
    }
  }
  return found;
}

void FlowNetwork::pause_flow(FlowId flow) { impl_->pause(flow); }

bool FlowNetwork::paused(FlowId flow) const {
  const Impl::Flow* found = impl_->find_active(flow);
  return found != nullptr && found->paused;
}

void FlowNetwork::reroute_flow(FlowId flow, std::span<const LinkId> links) { impl_->reroute(flow, links); }

FlowId FlowNetwork::start_flow_between(int src, int dst, double bytes,
                                       CompletionHandler on_complete,
                                       double rate_cap_bytes_per_s) {
  if (impl_->topology == nullptr) {
    throw ConfigError("start_flow_between needs a FlowNetwork built on a Topology");
  }
  const Path& path = impl_->topology->path(src, dst);
  return impl_->start(path.links, bytes, path.latency_s, std::move(on_complete),
                      rate_cap_bytes_per_s, 0);
}

void FlowNetwork::set_link_scale(LinkId link, double scale) {
  impl_->check_link_id(link, "scaled");
  if (!valid_link_scale(scale)) {
    throw ConfigError(
        fmt::format("link {} scale must be a finite number >= 0, got {}", link, scale));
  }
  impl_->set_scale(link, scale);
}

void FlowNetwork::apply_profile(LinkId link, const LinkProfile& profile) {
  impl_->apply_profile(link, profile);
}

double FlowNetwork::link_capacity_bytes_per_s(LinkId link) const {
  impl_->check_link_id(link, "queried");
  return impl_->rates.capacity_bytes_per_s(link);
}

double FlowNetwork::rate_bytes_per_s(FlowId flow) const {
  impl_->flush();
  const Impl::Flow* found = impl_->find_active(flow);
  return found == nullptr ? 0.0 : found->rate_bytes_per_s;
}

std::size_t FlowNetwork::active_flows() const { return impl_->active_count; }

void FlowNetwork::set_load_listener(LinkLoadListener* listener) {
  impl_->load_listener = listener;
  impl_->link_load.assign(listener == nullptr ? 0 : impl_->link_count(), 0.0);
  impl_->load_changed.assign(listener == nullptr ? 0 : impl_->link_count(), 0);
  impl_->changed_links.clear();
}

const LinkTraffic& FlowNetwork::traffic() const {
  impl_->snapshot_traffic();
  return impl_->traffic;
}

std::string flow_rate_violation(double rate_bytes_per_s, double path_min_capacity_bytes_per_s) {
  if (std::isnan(rate_bytes_per_s)) return "its rate is NaN";
  if (!std::isfinite(rate_bytes_per_s)) return fmt::format("its rate is {} bytes/s", rate_bytes_per_s);
  if (rate_bytes_per_s < 0) return fmt::format("its rate {} bytes/s is negative", rate_bytes_per_s);
  if (rate_bytes_per_s == 0 && path_min_capacity_bytes_per_s > 0) {
    return fmt::format("it got no bandwidth although every link of its path is up (the smallest capacity is {} "
                       "bytes/s)",
                       path_min_capacity_bytes_per_s);
  }
  return "";
}

}  // namespace clustersim::topologies
