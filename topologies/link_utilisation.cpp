#include "topologies/link_utilisation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::topologies {
namespace {

void check_window(engine::TimePs from_ps, engine::TimePs to_ps) {
  if (to_ps <= from_ps) {
    throw ConfigError(fmt::format("utilisation window [{} ps, {} ps) is empty", from_ps, to_ps));
  }
}

}  // namespace

double TierUtilisationSeries::mean(std::size_t tier_index, engine::TimePs from_ps, engine::TimePs to_ps) const {
  const std::vector<double> one = binned(tier_index, from_ps, to_ps, 1);
  return one.front();
}

double TierUtilisationSeries::peak(std::size_t tier_index, engine::TimePs from_ps, engine::TimePs to_ps) const {
  check_window(from_ps, to_ps);
  const std::vector<double>& values = utilisation.at(tier_index);
  double highest = 0;
  for (std::size_t i = 0; i < times_ps.size(); ++i) {
    const engine::TimePs end = i + 1 < times_ps.size() ? times_ps[i + 1] : engine::kTimeNever;
    if (times_ps[i] >= to_ps) break;
    if (end > from_ps) highest = std::max(highest, values[i]);
  }
  return highest;
}

double TierUtilisationSeries::peak_link(std::size_t tier_index, engine::TimePs to_ps) const {
  const std::vector<double>& values = changed_link_peak.at(tier_index);
  double highest = 0;
  for (std::size_t i = 0; i < times_ps.size() && times_ps[i] < to_ps; ++i) highest = std::max(highest, values[i]);
  return highest;
}

std::vector<double> TierUtilisationSeries::binned(std::size_t tier_index, engine::TimePs from_ps,
                                                  engine::TimePs to_ps, std::size_t bins) const {
  check_window(from_ps, to_ps);
  if (bins == 0) throw ConfigError("utilisation bins must be >= 1");
  const std::vector<double>& values = utilisation.at(tier_index);
  std::vector<double> weighted(bins, 0.0);
  const double span_ps = static_cast<double>(to_ps - from_ps);
  const double bin_ps = span_ps / static_cast<double>(bins);
  for (std::size_t i = 0; i < times_ps.size(); ++i) {
    const engine::TimePs start = std::max(times_ps[i], from_ps);
    const engine::TimePs end = std::min(i + 1 < times_ps.size() ? times_ps[i + 1] : to_ps, to_ps);
    if (end <= start || values[i] == 0) continue;
    // Spread the sample's [start, end) over the bins it covers.
    double a = static_cast<double>(start - from_ps);
    const double b = static_cast<double>(end - from_ps);
    while (a < b) {
      const auto bin = std::min(static_cast<std::size_t>(a / bin_ps), bins - 1);
      const double bin_end = bin + 1 == bins ? b : std::min(b, static_cast<double>(bin + 1) * bin_ps);
      weighted[bin] += values[i] * (bin_end - a);
      if (bin_end <= a) break;  // rounding at a bin edge
      a = bin_end;
    }
  }
  for (double& value : weighted) value /= bin_ps;
  return weighted;
}

TierUtilisationRecorder::TierUtilisationRecorder(std::span<const Link> links)
    : tier_index_(links.size()), line_bytes_per_s_(links.size()), link_load_(links.size(), 0.0) {
  std::map<int, double> line_by_tier;
  for (const Link& link : links) line_by_tier[link.tier] += link.bytes_per_s;
  for (const auto& [tier, line] : line_by_tier) {
    series_.tiers.push_back(tier);
    series_.tier_line_bytes_per_s.push_back(line);
  }
  for (std::size_t l = 0; l < links.size(); ++l) {
    const auto found = std::lower_bound(series_.tiers.begin(), series_.tiers.end(), links[l].tier);
    tier_index_[l] = static_cast<std::size_t>(found - series_.tiers.begin());
    line_bytes_per_s_[l] = links[l].bytes_per_s;
  }
  tier_load_.assign(series_.tiers.size(), 0.0);
  series_.utilisation.resize(series_.tiers.size());
  series_.changed_link_peak.resize(series_.tiers.size());
}

void TierUtilisationRecorder::on_link_loads(engine::TimePs now_ps, std::span<const LinkId> changed,
                                            std::span<const double> load_bytes_per_s) {
  const std::size_t tiers = series_.tiers.size();
  std::vector<double>& link_peak = link_peak_;
  link_peak.assign(tiers, 0.0);
  for (const LinkId link : changed) {
    const auto l = static_cast<std::size_t>(link);
    const double load = load_bytes_per_s[l];
    tier_load_[tier_index_[l]] += load - link_load_[l];
    link_load_[l] = load;
    link_peak[tier_index_[l]] = std::max(link_peak[tier_index_[l]], load / line_bytes_per_s_[l]);
  }
  const bool same_instant = !series_.times_ps.empty() && series_.times_ps.back() == now_ps;
  bool differs = series_.times_ps.empty();
  for (std::size_t t = 0; t < tiers && !differs; ++t) {
    const double last = series_.utilisation[t].back();
    differs = link_peak[t] > series_.changed_link_peak[t].back() ||
              std::abs(tier_load_[t] / series_.tier_line_bytes_per_s[t] - last) > 1e-12;
  }
  if (!differs) return;
  if (!same_instant) {
    series_.times_ps.push_back(now_ps);
    for (std::size_t t = 0; t < tiers; ++t) {
      series_.utilisation[t].push_back(0.0);
      series_.changed_link_peak[t].push_back(0.0);
    }
  }
  for (std::size_t t = 0; t < tiers; ++t) {
    // Summed deltas may leave a rounding residue below 0 where a tier emptied.
    series_.utilisation[t].back() = std::max(0.0, tier_load_[t] / series_.tier_line_bytes_per_s[t]);
    series_.changed_link_peak[t].back() = std::max(series_.changed_link_peak[t].back(), link_peak[t]);
  }
}

}  // namespace clustersim::topologies
