#include "sim/platform/comm_runtime.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/comm/plan_evaluators.hpp"

#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"

namespace clustersim::platform {

exec::Work AnalyticalComm::collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                      double bytes) {
  if (groups.empty()) return {};
  if (time_s(kind, groups.front(), bytes) == 0) return {};
  const int handle = prepare(kind, groups, bytes);
  exec::Work work;
  work.start = [this, handle](engine::Engine& engine, exec::DoneCallback done) {
    const engine::TimePs duration = engine::seconds_to_ps(duration_s(handle));
    const Running run{handle, engine.now() + duration, starts_++};
    for (const auto& [link, load] : prepared_[static_cast<std::size_t>(handle)].load) {
      running_on_link_[static_cast<std::size_t>(link)].push_back(run);
    }
    engine.schedule_after(duration, std::move(done));
  };
  return work;
}

int AnalyticalComm::prepare(models::CollectiveKind kind, std::span<const std::vector<int>> groups, double bytes) {
  if (const auto known = index_.find(kind, groups, bytes)) return *known;
  Prepared p;
  p.alone_s = time_s(kind, groups.front(), bytes);
  p.shared_s = p.alone_s;
  const auto replicas = std::count_if(groups.begin(), groups.end(), [](const auto& g) { return g.size() >= 2; });
  if (groups.front().size() >= 2 && bytes > 0) {
    p.plans = collectives().replica_plans(kind, groups, bytes);
    // Send-recv replicas are independent pipeline sends: the first group's transfer ends the
    // communication and the others only load the links (as FlowComm); collectives synchronise.
    p.gating = kind == models::CollectiveKind::send_recv ? 1 : p.plans.size();
    const topologies::Topology& topology = collectives().topology();
    p.plans_s = models::shared_analytical_time_s(p.plans, p.gating, topology);
    if (replicas >= 2) {
      const double plan_alone_s = models::analytical_time_s(p.plans.front(), topology);
      if (plan_alone_s > 0) p.shared_s = p.alone_s * p.plans_s / plan_alone_s;
    }
    p.load = models::link_load(p.plans, topology);
  }
  const int handle = static_cast<int>(prepared_.size());
  index_.insert(kind, groups, bytes, handle);
  prepared_.push_back(std::move(p));
  return handle;
}

double AnalyticalComm::busy_s(int handle, std::span<const Running> running) {
  const Prepared& p = prepared_[static_cast<std::size_t>(handle)];
  std::vector<int> key;
  key.reserve(running.size() + 1);
  key.push_back(handle);
  for (const Running& r : running) key.push_back(r.handle);
  std::sort(key.begin() + 1, key.end());
  if (const auto met = met_.find(key); met != met_.end()) return met->second;
  std::vector<const models::LinkLoad*> loads;
  for (std::size_t i = 1; i < key.size(); ++i) loads.push_back(&prepared_[static_cast<std::size_t>(key[i])].load);
  const double busy = models::shared_analytical_time_s(p.plans, p.gating, collectives().topology(),
                                                       models::summed_link_load(loads));
  const double seconds = p.plans_s > 0 ? p.shared_s * busy / p.plans_s : p.shared_s;
  met_.emplace(std::move(key), seconds);
  return seconds;
}

double AnalyticalComm::duration_s(int handle) {
  const Prepared& p = prepared_[static_cast<std::size_t>(handle)];
  const engine::TimePs now = engine_->now();
  if (p.load.empty()) return p.shared_s;
  // Only those that cross a link of this one slow it: the running ones on its links, once each.
  if (running_on_link_.empty()) running_on_link_.resize(collectives().topology().links().size());
  meeting_.clear();
  for (const auto& [link, load] : p.load) {
    std::vector<Running>& on_link = running_on_link_[static_cast<std::size_t>(link)];
    std::erase_if(on_link, [now](const Running& r) { return r.end_ps <= now; });
    meeting_.insert(meeting_.end(), on_link.begin(), on_link.end());
  }
  if (meeting_.empty()) return p.shared_s;
  std::sort(meeting_.begin(), meeting_.end(), [](const Running& a, const Running& b) { return a.serial < b.serial; });
  meeting_.erase(std::unique(meeting_.begin(), meeting_.end(),
                             [](const Running& a, const Running& b) { return a.serial == b.serial; }),
                 meeting_.end());
  // Piecewise: at the rate the still-running communications leave it until the first of them
  // ends, then at the rate the rest leave, and so on; alone once they are all done.
  std::sort(meeting_.begin(), meeting_.end(), [](const Running& a, const Running& b) { return a.end_ps < b.end_ps; });
  const double now_s = engine::ps_to_seconds(now);
  double t_s = now_s, left = 1.0;  // the share of the communication still to run
  for (std::size_t first = 0; first < meeting_.size(); ++first) {
    const double rate_s = busy_s(handle, std::span<const Running>(meeting_).subspan(first));
    const double window_s = engine::ps_to_seconds(meeting_[first].end_ps) - t_s;
    if (left * rate_s <= window_s) return t_s + left * rate_s - now_s;
    left -= window_s / rate_s;
    t_s += window_s;
  }
  return t_s + left * p.shared_s - now_s;
}

double AnalyticalComm::sharing_factor(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                      double bytes) {
  if (groups.empty() || time_s(kind, groups.front(), bytes) == 0) return 1.0;
  const Prepared& p = prepared_[static_cast<std::size_t>(prepare(kind, groups, bytes))];
  return p.alone_s > 0 ? p.shared_s / p.alone_s : 1.0;
}

void AnalyticalComm::apply_link_profile(topologies::LinkId link, const engine::Profile& /*profile*/) {
  throw SimulationError(fmt::format("link {}: the analytical fidelity has no links whose capacity could change "
                                    "(use simulation.fidelity: flow)",
                                    link));
}

void AnalyticalComm::apply_link_faults(const topologies::NetworkFaultPlan& plan) {
  throw SimulationError(fmt::format("cluster.network.faults ({}): the analytical fidelity has no links to degrade or fail "
                                    "(use simulation.fidelity: flow)",
                                    plan.faults.empty() ? "none" : plan.faults.front().element));
}

}  // namespace clustersim::platform
