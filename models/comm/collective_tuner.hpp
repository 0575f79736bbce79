#pragma once
/// `auto` algorithm and protocol selection, the way NCCL's tuner does it: every candidate
/// (algorithm, protocol) the fabric allows is costed with the analytical model and the
/// fastest wins. Candidates are NCCL's: ring; tree when the group spans more than one
/// scale-up domain; nvls when the group sits in one NVSwitch domain of an NVLS-capable
/// accelerator; sharp when the scale-out switches support it; torus-rings on a torus;
/// pairwise for all-to-all. Halving-doubling and hierarchical run only when asked for.
#include <optional>
#include <span>

#include "models/comm/collective_plan.hpp"

namespace clustersim::models {

/// A chosen plan and its analytical time.
struct TunedPlan {
  CollectivePlan plan;
  double analytical_time_s = 0;
};

class CollectiveTuner {
 public:
  /// See CollectiveLowering for the arguments and errors.
  CollectiveTuner(const topologies::Topology& topology, TunerParams params, CollectiveHardware hardware);

  /// `algorithm` empty means auto. With a fixed algorithm the fastest protocol is chosen,
  /// unless `protocol` fixes it too. Throws ConfigError for a bad group or bytes, or an
  /// algorithm (protocol) that cannot run `kind` on `group` (listing those that can).
  TunedPlan choose(CollectiveKind kind, std::optional<Algorithm> algorithm, std::span<const int> group,
                   double bytes, std::optional<Protocol> protocol = std::nullopt) const;

  /// The algorithms `auto` considers for `kind` on `group` (applicable ones only).
  std::vector<Algorithm> auto_candidates(CollectiveKind kind, std::span<const int> group) const;

  const CollectiveLowering& lowering() const { return lowering_; }

 private:
  CollectiveLowering lowering_;
};

}  // namespace clustersim::models
