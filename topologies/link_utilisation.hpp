#pragma once
/// Link utilisation per network tier over time, from a FlowNetwork's link loads
/// (LinkLoadListener): for each tier (topologies::Link::tier: 0 = scale-up, 1 = accelerator/NIC
/// to leaf, 2 = leaf to spine, ...), the tier's summed flow rate over its summed line rate
/// (the aggregate utilisation, a step function of time) and the highest utilisation any one
/// of its links reached. Utilisation is against the line rate (Link::bytes_per_s), as the
/// step's mean utilisation (training::TierUtilisation) is, so a link at its payload limit
/// reads its efficiency, not 1.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/time.hpp"
#include "topologies/flow_network.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// The recorded utilisation of every tier, sample by sample. Sample i holds from times_ps[i]
/// until times_ps[i + 1] (the last until the run ends); before the first sample every link
/// was idle.
struct TierUtilisationSeries {
  std::vector<int> tiers;                  ///< the tier numbers, ascending
  std::vector<double> tier_line_bytes_per_s;  ///< by tier index: summed line rate of its links
  std::vector<engine::TimePs> times_ps;    ///< ascending, one sample per instant
  /// [tier index][sample]: the tier's summed load / its summed line rate, in [0, 1].
  std::vector<std::vector<double>> utilisation;
  /// [tier index][sample]: the highest load / line rate of a link of the tier whose load
  /// changed at that sample (so the maximum over samples up to t is the busiest any link
  /// of the tier was up to t).
  std::vector<std::vector<double>> changed_link_peak;

  /// Time-weighted mean of tier `tier_index`'s aggregate utilisation over [from_ps, to_ps)
  /// (to_ps > from_ps).
  double mean(std::size_t tier_index, engine::TimePs from_ps, engine::TimePs to_ps) const;
  /// Highest aggregate utilisation of the tier over [from_ps, to_ps).
  double peak(std::size_t tier_index, engine::TimePs from_ps, engine::TimePs to_ps) const;
  /// Highest utilisation of any one link of the tier reached before `to_ps`.
  double peak_link(std::size_t tier_index, engine::TimePs to_ps) const;
  /// `bins` time-weighted means of the aggregate utilisation over equal parts of
  /// [from_ps, to_ps) (for charts: every sample a step chart would need, at a fixed size).
  std::vector<double> binned(std::size_t tier_index, engine::TimePs from_ps, engine::TimePs to_ps,
                             std::size_t bins) const;
};

/// A LinkLoadListener that keeps TierUtilisationSeries: per instant, one sample (an instant
/// reported twice keeps the last loads and the higher link peak). A sample equal to the
/// previous one in every tier is not stored.
class TierUtilisationRecorder final : public LinkLoadListener {
 public:
  /// For the links of a network (their tiers and line rates; copied).
  explicit TierUtilisationRecorder(std::span<const Link> links);
  void on_link_loads(engine::TimePs now_ps, std::span<const LinkId> changed,
                     std::span<const double> load_bytes_per_s) override;
  const TierUtilisationSeries& series() const { return series_; }

 private:
  std::vector<std::size_t> tier_index_;  ///< by link
  std::vector<double> line_bytes_per_s_;   ///< by link
  std::vector<double> link_load_;          ///< by link: the load last reported
  std::vector<double> tier_load_;          ///< by tier index: summed load now
  std::vector<double> link_peak_;          ///< by tier index: this instant's busiest changed link (reused)
  TierUtilisationSeries series_;
};

}  // namespace clustersim::topologies
