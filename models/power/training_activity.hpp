#pragma once
/// What an average device does in one training step, for the energy model: FLOPs, HBM bytes
/// and bytes sent per link class. Traffic figures are analytical estimates (docs/models.md).
#include "models/accelerator/dtype.hpp"
#include "models/memory/memory_footprint.hpp"
#include "models/power/power_model.hpp"

namespace clustersim::models {

/// Bytes one device sends per step, per link class, averaged over pipeline stages:
/// TP: (8, or 12 with full recompute) collectives per layer per micro-batch, each sending
/// (t-1)/t of the 2 s b h activation (s = seq_len / cp); DP: ring all-reduce (or
/// reduce-scatter + all-gather), 2 (d-1)/d x stage parameters x `gradient_reduce_bytes`;
/// PP: one 2 s b h / t (SP) or 2 s b h activation forward and its gradient backward per
/// micro-batch. A group is scale-up when all its ranks sit in one node of
/// `accelerators_per_node` (ranks ordered tp, cp, dp, pp), else scale-out.
std::map<LinkKind, double> estimated_step_link_bytes(const FootprintInputs& inputs, int accelerators_per_node,
                                                     double gradient_reduce_bytes);

/// Activity of an average device: `hardware_flops` in `precision`, HBM bytes from
/// estimated_step_hbm_bytes averaged over stages, link bytes from estimated_step_link_bytes.
/// Throws ConfigError for a bad footprint input or non-positive times.
DeviceActivity estimate_training_activity(const FootprintInputs& inputs, int accelerators_per_node,
                                          double gradient_reduce_bytes, double hardware_flops, Dtype precision,
                                          double step_time_s, double compute_busy_s);

}  // namespace clustersim::models
