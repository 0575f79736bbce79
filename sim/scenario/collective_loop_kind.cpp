// The collective-loop workload kind: a synthetic job that repeats one collective over a range
// of accelerators (`jobs: {NAME: {kind: collective-loop, ...}}`).
#include <string>

#include "models/comm/collective_kind.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/synthetic/collective_loop.hpp"

namespace clustersim::scenario {

using config::Dimension;
using config::Field;
using config::enum_field;
using config::integer_field;
using config::object_field;
using config::quantity_field;
namespace {

std::vector<Field> collective_loop_fields() {
  return {
      enum_field("collective", {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"},
                 "the collective repeated back to back (a ring all-reduce, or a pairwise all-to-all, as the tuner "
                 "picks)")
          .def("all-reduce"),
      object_field("accelerators",
                   {integer_field("first", "the first accelerator of the group (global, node-major index)")
                        .range(0, 1e9)
                        .need(),
                    integer_field("count", "accelerators in the group, in ring order from `first`").range(2, 1e9).need()},
                   "the accelerators the job runs on; the primary workload gets the accelerators before the first "
                   "job's")
          .need(),
      quantity_field("bytes", Dimension::bytes, "per collective (nccl-tests convention)").positive().need(),
      integer_field("rounds", "collectives to run; 0: repeat until the primary workload finishes")
          .range(0, 1e12)
          .def("0"),
  };
}

std::shared_ptr<const platform::WorkloadSpec> read_collective_loop(const WorkloadReadContext& c) {
  auto spec = std::make_shared<synthetic::CollectiveLoopSpec>();
  spec->collective = models::parse_collective(c.reader.string(c.key("collective")).value_or("all-reduce"));
  spec->accelerators.first = static_cast<int>(c.reader.integer(c.key("accelerators.first")).value_or(0));
  spec->accelerators.count = static_cast<int>(c.reader.integer(c.key("accelerators.count")).value_or(2));
  spec->bytes = c.reader.quantity(c.key("bytes")).value_or(0.0);
  spec->rounds = static_cast<int>(c.reader.integer(c.key("rounds")).value_or(0));
  const int all = c.platform.cluster.accelerator_count();
  const std::string key = c.key("accelerators.count");
  if (c.platform_ok && !c.problems.any_bad(c.key("accelerators"), "cluster.nodes", "cluster.node.per_node") &&
      spec->accelerators.end() > all) {
    c.problems.add(c.reader.position(key), key,
                   "accelerators " + std::to_string(spec->accelerators.first) + " to " +
                       std::to_string(spec->accelerators.end() - 1) + " are beyond the cluster's " +
                       std::to_string(all) + " accelerators");
  }
  return spec;
}

}  // namespace

WorkloadKind collective_loop_workload_kind() {
  WorkloadKind kind;
  kind.name = "collective-loop";
  kind.help = "a synthetic job repeating one collective over a range of accelerators (a second tenant on the fabric)";
  kind.fields = collective_loop_fields();
  kind.read = read_collective_loop;
  // Repeating until "the primary finishes" needs a primary beside it.
  kind.can_be_primary = false;
  return kind;
}

}  // namespace clustersim::scenario
