#include "models/power/training_activity.hpp"

#include <algorithm>

#include "models/memory/zero_sharding.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::models {

std::map<LinkKind, double> estimated_step_link_bytes(const FootprintInputs& in, int accelerators_per_node,
                                                     double gradient_reduce_bytes) {
  in.validate();
  if (accelerators_per_node < 1) throw ConfigError("link traffic: accelerators per node must be >= 1");
  const double t = in.tp, d = static_cast<double>(in.dp) * in.cp;
  const double mbs = static_cast<double>(in.microbatches);
  const double activation = 2.0 * static_cast<double>(in.seq_len / in.cp) * static_cast<double>(in.micro_batch) *
                            static_cast<double>(in.model.hidden_size) * (in.activation_bytes_per_element / 2.0);
  const double stage_layers = static_cast<double>(in.model.num_hidden_layers) / in.pp;
  const double collectives = in.recompute == RecomputePolicy::full ? 12.0 : 8.0;
  const double tp_bytes = in.tp > 1 ? collectives * (t - 1) / t * activation * stage_layers * mbs : 0.0;
  double stage_parameters = 0;
  for (int p = 0; p < in.pp; ++p) {
    const StageFootprint fp = stage_footprint(in, p);
    if (in.weight_bytes_per_param > 0) {
      stage_parameters += fp.weights_bytes / in.weight_bytes_per_param * dense_sharding(in.zero, in.dp, in.cp).weight_divisor();
    }
  }
  stage_parameters /= in.pp;
  const double dp_bytes = d > 1 ? 2.0 * (d - 1) / d * stage_parameters * gradient_reduce_bytes : 0.0;
  const double pp_bytes = in.pp > 1 ? 2.0 * mbs * (in.sequence_parallel ? activation / t : activation) : 0.0;

  const auto within_node = [accelerators_per_node](double group_span) { return group_span <= accelerators_per_node; };
  std::map<LinkKind, double> bytes{{LinkKind::scale_up, 0.0}, {LinkKind::scale_out, 0.0}};
  bytes[within_node(t) ? LinkKind::scale_up : LinkKind::scale_out] += tp_bytes;
  bytes[within_node(t * d) ? LinkKind::scale_up : LinkKind::scale_out] += dp_bytes;
  bytes[within_node(t * d * in.pp) ? LinkKind::scale_up : LinkKind::scale_out] += pp_bytes;
  return bytes;
}

DeviceActivity estimate_training_activity(const FootprintInputs& in, int accelerators_per_node,
                                          double gradient_reduce_bytes, double hardware_flops, Dtype precision,
                                          double step_time_s, double compute_busy_s) {
  if (!(step_time_s > 0) || !(compute_busy_s > 0)) throw ConfigError("training activity: times must be positive");
  DeviceActivity a;
  a.step_time_s = step_time_s;
  a.compute_busy_s = std::min(compute_busy_s, step_time_s);
  a.flops[precision] = hardware_flops;
  double hbm = 0;
  for (int p = 0; p < in.pp; ++p) hbm += estimated_step_hbm_bytes(in, p);
  a.bytes[MemoryLevelKind::hbm] = hbm / in.pp;
  a.bytes_sent = estimated_step_link_bytes(in, accelerators_per_node, gradient_reduce_bytes);
  return a;
}

}  // namespace clustersim::models
