#pragma once
/// Splits the wall time of one pipeline stage into the StepBreakdown categories.
#include <span>

#include "sim/exec/executor.hpp"
#include "sim/exec/task_graph.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::training {

/// Attributes every picosecond from the run start to the end of the stage's last task:
/// busy time of `compute_stream` by task kind (compute and recompute -> compute_s, tp_comm,
/// cp_comm, optimizer); each idle gap before a compute-stream task by the prerequisite that
/// finished last: a pp_comm transfer -> exposed_pp_s for the part while it was in flight and
/// bubble_s before it started (waiting for the upstream stage), a dp_comm task -> exposed_dp_s,
/// anything else -> bubble_s; the tail after the compute stream's last task by the kind of
/// the stage's last-finishing task (dp_comm -> exposed_dp_s, pp_comm -> exposed_pp_s).
/// The parts add up to the stage's end time (exactly, in picoseconds).
StepBreakdown stage_breakdown(const exec::TaskGraph& graph, const exec::ExecutionResult& run,
                              exec::StreamId compute_stream,
                              std::span<const exec::StreamId> stage_streams);

}  // namespace clustersim::training
