#pragma once
/// Closed-form estimate of one training step from the same costed per-stage programs as the
/// event simulation, without building or running a task graph: what the parallelism search
/// and large sweeps evaluate first (target: <= 0.2 ms per configuration).
///
/// With c_p = forward + backward time of one micro-batch on stage p (TP collectives included),
/// m micro-batches, v virtual stages and P pipeline stages:
///   pipeline = (m - 1) * max_p c_p + max_p c_p + (sum_p c_p - max_p c_p) / v
///              + (P - 1) * (activation send + gradient send)
/// which is (m + P - 1) c for uniform 1F1B and m c + (P - 1) c / v for interleaved stages.
/// Stage p's last backward ends earlier than stage 0's by the backward passes and gradient
/// sends between them; its exposed data-parallel time is then added:
///   no overlap: the whole gradient reduction (+ the parameter all-gather after the optimizer
///               with a distributed optimizer);
///   overlap:    the last bucket's reduction, or more if the earlier buckets do not fit in
///               the stage's last backward pass; plus the first bucket's parameter all-gather,
///               which the step's first forward waits for.
/// The step ends when the slowest stage has run its optimizer. Agreement with the event
/// simulation is tested (tests/sim/training/analytical_step_test.cpp).
#include "sim/training/training_result.hpp"
#include "sim/training/training_simulation.hpp"

namespace clustersim::training {

/// Estimates one step; the breakdown is that of the critical stage (compute, exposed TP/CP,
/// pipeline p2p, bubble, exposed DP, optimizer). Fingerprint and events are 0 (no engine).
/// Throws as TrainingStep does for invalid setups.
TrainingResult estimate_training_step(const TrainingSetup& setup);

}  // namespace clustersim::training
