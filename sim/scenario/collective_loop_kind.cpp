// The collective-loop workload kind: a synthetic job that repeats one collective over a range
// of accelerators (`jobs: {NAME: {kind: collective-loop, ...}}`).
#include <string>

#include "models/comm/collective_kind.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/synthetic/collective_loop.hpp"

namespace clustersim::scenario {
namespace {

using config::Declarations;
using config::Dimension;
using synthetic::CollectiveLoopSpec;

Declarations<CollectiveLoopSpec> collective_loop_keys() {
  Declarations<platform::Allocation> group;
  group.integer("first", &platform::Allocation::first, "the first accelerator of the group (global, node-major index)")
      .range(0, 1e9)
      .need();
  group.integer("count", &platform::Allocation::count, "accelerators in the group, in ring order from `first`")
      .range(2, 1e9)
      .need();
  Declarations<CollectiveLoopSpec> keys;
  keys.enumeration("collective", &CollectiveLoopSpec::collective,
                   models::collective_names().only({"all-reduce", "all-gather", "reduce-scatter", "all-to-all"}),
                   "the collective repeated back to back (a ring all-reduce, or a pairwise all-to-all, as the tuner "
                   "picks)");
  keys.object("accelerators", &CollectiveLoopSpec::accelerators, group,
              "the accelerators the job runs on; the primary workload gets the accelerators before the first job's")
      .need();
  keys.quantity("bytes", &CollectiveLoopSpec::bytes, Dimension::bytes, "per collective (nccl-tests convention)")
      .positive()
      .need();
  keys.integer("rounds", &CollectiveLoopSpec::rounds, "collectives to run; 0: repeat until the primary workload finishes")
      .range(0, 1e12);
  return keys;
}

/// The group must lie inside the cluster.
void check_group(const WorkloadReadContext& c, CollectiveLoopSpec& spec) {
  const int all = c.platform.cluster.accelerator_count();
  const std::string key = c.key("accelerators.count");
  if (c.platform_ok && !c.problems.any_bad(c.key("accelerators"), "cluster.nodes", "cluster.node.per_node") &&
      spec.accelerators.end() > all) {
    c.problems.add(c.position("accelerators.count"), key,
                   "accelerators " + std::to_string(spec.accelerators.first) + " to " +
                       std::to_string(spec.accelerators.end() - 1) + " are beyond the cluster's " +
                       std::to_string(all) + " accelerators");
  }
}

}  // namespace

WorkloadKind collective_loop_workload_kind() {
  WorkloadKind kind = declared_workload_kind<CollectiveLoopSpec>(
      "collective-loop",
      "a synthetic job repeating one collective over a range of accelerators (a second tenant on the fabric)",
      collective_loop_keys(), check_group);
  // Repeating until "the primary finishes" needs a primary beside it.
  kind.can_be_primary = false;
  return kind;
}

}  // namespace clustersim::scenario
