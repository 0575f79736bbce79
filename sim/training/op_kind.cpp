#include "sim/training/op_kind.hpp"

namespace clustersim::training {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::compute: return "compute";
    case OpKind::recompute: return "recompute";
    case OpKind::tp_comm: return "tp_comm";
    case OpKind::cp_comm: return "cp_comm";
    case OpKind::ep_comm: return "ep_comm";
    case OpKind::pp_comm: return "pp_comm";
    case OpKind::dp_comm: return "dp_comm";
    case OpKind::optimizer: return "optimizer";
    case OpKind::offload: return "offload";
    case OpKind::host: return "host";
    case OpKind::other: return "other";
  }
  return "other";
}

std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (int k = 0; k <= static_cast<int>(OpKind::other); ++k) names.emplace_back(op_kind_name(static_cast<OpKind>(k)));
  return names;
}

exec::TaskTraits op_traits(OpKind kind, double flops, double bytes) {
  const exec::TaskKind general = is_communication(kind)     ? exec::TaskKind::communication
                                 : kind == OpKind::offload ? exec::TaskKind::memory_transfer
                                 : kind == OpKind::host    ? exec::TaskKind::host
                                                           : exec::TaskKind::compute;
  return {general,
          static_cast<std::uint8_t>(kind), flops, bytes};
}

}  // namespace clustersim::training
