// The trace workload kind: a Chakra execution trace run on the platform (`workload: {kind:
// trace, trace: FILE-or-PREFIX, ...}`; sim/trace, docs/chakra.md).
#include <string>

#include "models/accelerator/dtype.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/trace/trace_workload.hpp"

namespace clustersim::scenario {
namespace {

using trace::TraceSpec;

const config::Declarations<trace::ProcessGroup>& group_keys() {
  static const config::Declarations<trace::ProcessGroup> keys = [] {
    config::Declarations<trace::ProcessGroup> group;
    group.integer_list("ranks", &trace::ProcessGroup::ranks, "a rank", 0, 1e9,
                       "the trace's ranks (0-based) the group's collectives span")
        .need();
    return group;
  }();
  return keys;
}

config::Declarations<TraceSpec> trace_keys() {
  config::Declarations<TraceSpec> keys;
  keys.file("trace", &TraceSpec::trace,
            "a Chakra execution trace every rank runs (FILE.et), or the prefix of one file per rank (PREFIX.0.et, "
            "PREFIX.1.et, ...: Chakra's and ASTRA-sim's naming)")
      .need();
  keys.integer("ranks", &TraceSpec::ranks,
               "ranks a single trace file is run by (0: every accelerator of the workload); with one file per rank, "
               "the files found")
      .range(0, 1e9);
  keys.enumeration("compute", &TraceSpec::compute, trace::compute_costing_names(),
                   "model: compute nodes costed by the accelerator's calibrated compute model from num_ops, "
                   "tensor_size and the kernel name; recorded: their duration_micros");
  keys.enumeration("dtype", &TraceSpec::dtype, models::dtype_names(),
                   "the format the GEMM-named compute nodes run in (compute: model)");
  keys.map_of_objects("groups", &TraceSpec::groups, group_keys(),
                      "process groups by pg_name: the ranks each one's collectives span (a collective without "
                      "pg_name spans every rank)");
  keys.file("groups_file", &TraceSpec::groups_file,
            "a JSON file of more process groups, {\"pg_name\": [ranks]} (ASTRA-sim's communicator groups; what "
            "--export-chakra writes beside the traces)");
  return keys;
}

void check_trace(const WorkloadReadContext& c, TraceSpec& spec) {
  c.warn_unless(spec.compute == trace::ComputeCosting::model || !c.has("dtype"), "dtype",
                "compute: recorded takes the nodes' recorded durations");
  if (c.accelerators > 0 && spec.ranks > c.accelerators) {
    c.problems.add(c.position("ranks"), c.key("ranks"),
                   "ranks " + std::to_string(spec.ranks) + " is more than the workload's " +
                       std::to_string(c.accelerators) + " accelerators");
  }
}

}  // namespace

WorkloadKind trace_workload_kind() {
  return declared_workload_kind<TraceSpec>(
      "trace", "a Chakra execution trace (one file per rank, or one every rank runs) on the platform", trace_keys(),
      check_trace);
}

}  // namespace clustersim::scenario
