#pragma once
/// What a training op or task does, as the step breakdown and `clustersim ops` split time: the
/// training workload's task category (exec::TaskTraits::category) on top of the executor's
/// general kind.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/exec/task_graph.hpp"

namespace clustersim::training {

enum class OpKind : std::uint8_t {
  compute,    ///< forward/backward kernels
  recompute,  ///< activation recomputation kernels (hardware FLOPs, not model FLOPs)
  tp_comm,    ///< tensor-parallel collective
  cp_comm,    ///< context-parallel exchange
  ep_comm,    ///< expert-parallel all-to-all (MoE token dispatch / combine)
  pp_comm,    ///< pipeline point-to-point transfer
  dp_comm,    ///< data-parallel gradient reduction or parameter gather
  optimizer,  ///< optimizer step
  offload,    ///< a host-link transfer of offloaded optimizer state or activations
  host,       ///< the host dispatching an op (framework, dispatcher, launch): gates the kernel's start
  other,      ///< anything else (copies, host transfers)
};

/// The class of a compute kernel, whose time varies from run to run with its own coefficient
/// of variation (platform::VariabilitySpec).
enum class KernelClass : std::uint8_t {
  elementwise,  ///< bandwidth-bound kernels and everything not below: norms, activations, optimizer
  gemm,         ///< matrix multiplications
  attention,    ///< attention kernels (forward and backward)
};

/// True for the communication kinds (tp, cp, ep, pp, dp).
constexpr bool is_communication(OpKind kind) {
  return kind == OpKind::tp_comm || kind == OpKind::cp_comm || kind == OpKind::ep_comm || kind == OpKind::pp_comm ||
         kind == OpKind::dp_comm;
}

/// Lower-case name ("compute", "tp_comm", ...).
std::string_view op_kind_name(OpKind kind);

/// The names of every OpKind in enum order (exec::TaskGraph::set_category_names).
std::vector<std::string> op_kind_names();

/// Executor traits of a task of `kind`: general kind communication for the communication
/// kinds, compute otherwise; category = the OpKind.
exec::TaskTraits op_traits(OpKind kind, double flops = 0, double bytes = 0);

/// The OpKind of a task's traits (its category).
inline OpKind op_kind_of(const exec::TaskTraits& traits) { return static_cast<OpKind>(traits.category); }

}  // namespace clustersim::training
