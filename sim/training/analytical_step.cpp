#include "sim/training/analytical_step.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "sim/engine/error.hpp"
#include "sim/training/data_parallel.hpp"
#include "sim/training/gradient_buckets.hpp"
#include "sim/training/host_dispatch.hpp"
#include "sim/training/pipeline_schedule.hpp"
#include "sim/training/rank_layout.hpp"

namespace clustersim::training {
namespace {

/// Seconds of a stage's ops per micro-batch, by what the time is spent on.
struct PassTimes {
  double compute_s = 0;  ///< kernels, recompute included
  double tp_s = 0;
  double cp_s = 0;
  double ep_s = 0;
  double total() const { return compute_s + tp_s + cp_s + ep_s; }
};

/// Adds `ops` to `times`. An overlapped communication op (StageOp::overlap) runs beside its
/// neighbouring compute op c, which runs at `rate` of full speed while they share the GPU:
/// the pair takes max(comm, c + comm (1 - rate)) when comm < c / rate, else comm; what it adds
/// beyond c is charged to the op's kind. An op that takes no SMs from c (StageOp::engine not
/// shared_sms) leaves it at full speed (rate 1).
void add_ops(PassTimes& times, const std::vector<StageOp>& ops, double compute_rate, double repeats = 1) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StageOp& op = ops[i];
    double seconds = engine::ps_to_seconds(op.duration_ps);
    if (op.overlap != Overlap::none) {
      const double rate = op.engine == CommEngine::shared_sms ? compute_rate : 1.0;
      const std::size_t n = op.overlap == Overlap::with_previous ? i - 1 : i + 1;
      const bool has_neighbour = op.overlap == Overlap::with_previous ? i > 0 : i + 1 < ops.size();
      const double beside_s = has_neighbour ? engine::ps_to_seconds(ops[n].duration_ps) : 0.0;
      seconds = std::max(seconds - beside_s, std::min(seconds, beside_s / rate) * (1 - rate));
    }
    seconds *= repeats;
    if (op.kind == OpKind::tp_comm) {
      times.tp_s += seconds;
    } else if (op.kind == OpKind::cp_comm) {
      times.cp_s += seconds;
    } else if (op.kind == OpKind::ep_comm) {
      times.ep_s += seconds;
    } else {
      times.compute_s += seconds;
    }
  }
}

double total_s(const std::vector<StageOp>& ops, double rate) {
  PassTimes times;
  add_ops(times, ops, rate);
  return times.total();
}

/// One stage's per-micro-batch forward and backward times.
struct StageTimes {
  PassTimes forward, backward;
  double cycle_s() const { return forward.total() + backward.total(); }
};

StageTimes stage_times(const StageProgram& program, double rate) {
  StageTimes t;
  double dense = 0, moe = 0;
  for (const models::LayerKind kind : program.kinds) (kind == models::LayerKind::moe ? moe : dense) += 1;
  add_ops(t.forward, program.embedding_forward, rate);
  if (dense > 0) add_ops(t.forward, program.dense.forward, rate, dense);
  if (moe > 0) add_ops(t.forward, program.moe.forward, rate, moe);
  add_ops(t.forward, program.head_forward, rate);
  add_ops(t.backward, program.head_backward, rate);
  if (dense > 0) add_ops(t.backward, program.dense.backward, rate, dense);
  if (moe > 0) add_ops(t.backward, program.moe.backward, rate, moe);
  add_ops(t.backward, program.embedding_backward, rate);
  return t;
}

/// What the host's dispatch adds to a stage: it issues every op (host_op_time each) in program
/// order, running ahead of the device, which waits where the host falls behind.
struct HostCost {
  /// The stage's ops over the whole step in schedule order, both starting at 0, the device
  /// doing nothing but its ops: when the last one ends minus their device time (what the host
  /// makes the device wait, if it waited for nothing else).
  double delay_s = 0;
  double sync_s = 0;  ///< the host issuing the optimizer after reading back the gradient norm
};

HostCost host_cost(const StageProgram& program, const TrainingWorkload& w, int stage) {
  HostCost cost;
  const double host_op_s = w.host_op_time_s();
  if (!(host_op_s > 0)) return cost;
  const auto& par = w.parallelism;
  const auto fold = [host_op_s](const std::vector<StageOp>& ops) {
    HostDispatch run;
    for (const StageOp& op : ops) {
      // An overlapped collective runs beside the compute stream; the host issues it all the same.
      const double op_s = op.overlap == Overlap::none ? engine::ps_to_seconds(op.duration_ps) : 0.0;
      run = run.then(HostDispatch::op(op_s, host_op_s));
    }
    return run;
  };
  // Each layer kind's ops folded once, then each chunk's forward and backward (host_dispatch.hpp).
  const HostDispatch dense_forward = fold(program.dense.forward), dense_backward = fold(program.dense.backward);
  const HostDispatch moe_forward = fold(program.moe.forward), moe_backward = fold(program.moe.backward);
  const auto is_moe = [&](int local) { return program.kinds[static_cast<std::size_t>(local)] == models::LayerKind::moe; };
  std::vector<HostDispatch> forward(static_cast<std::size_t>(program.chunks));
  std::vector<HostDispatch> backward(static_cast<std::size_t>(program.chunks));
  for (int chunk = 0; chunk < program.chunks; ++chunk) {
    const int offset = program.local_offset(chunk);
    const int layers = program.layers(chunk);
    const bool first = chunk == 0 && !program.embedding_forward.empty();
    const bool last = chunk == program.chunks - 1 && !program.head_forward.empty();
    HostDispatch f = first ? fold(program.embedding_forward) : HostDispatch{};
    for (int l = 0; l < layers;) {  // runs of one kind at a time
      int run = 1;
      while (l + run < layers && is_moe(offset + l + run) == is_moe(offset + l)) ++run;
      f = f.then((is_moe(offset + l) ? moe_forward : dense_forward).repeated(run));
      l += run;
    }
    if (last) f = f.then(fold(program.head_forward));
    HostDispatch b = last ? fold(program.head_backward) : HostDispatch{};
    for (int l = layers - 1; l >= 0;) {
      int run = 1;
      while (l - run >= 0 && is_moe(offset + l - run) == is_moe(offset + l)) ++run;
      b = b.then((is_moe(offset + l) ? moe_backward : dense_backward).repeated(run));
      l -= run;
    }
    if (first) b = b.then(fold(program.embedding_backward));
    forward[static_cast<std::size_t>(chunk)] = f;
    backward[static_cast<std::size_t>(chunk)] = b;
  }
  const HostDispatch step =
      compose_schedule(par.schedule, par.pp, stage, w.microbatches_per_pipeline(), par.vp, forward, backward);
  cost.delay_s = step.delay_s(host_op_s);
  cost.sync_s = host_op_s;
  return cost;
}

/// Data-parallel time of one stage that its compute does not hide.
struct DataParallelCost {
  double after_backward_s = 0;   ///< reduction left after the last backward (before Adam)
  double after_optimizer_s = 0;  ///< parameter all-gather after Adam (no overlap, ZeRO >= 1)
  double before_forward_s = 0;   ///< first bucket's parameter all-gather (overlap, ZeRO >= 1)
  double per_cycle_s = 0;        ///< ZeRO 2/3: stall added to every micro-batch's fwd + bwd
};

/// What the data-parallel cost of a stage is computed from.
struct DataParallelContext {
  const TrainingSetup& setup;
  const std::vector<DataParallelPart>& parts;
  models::ZeroSharding sharding;          ///< every part of a stage shards by the same stage
  models::CollectiveKind reduce_kind{};   ///< the gradient reduction
  std::vector<double> unit_forward_s, unit_backward_s;  ///< per unit, one micro-batch
  double part_comm_s(const DataParallelPart& part, models::CollectiveKind kind, double bytes) const {
    if (!(bytes > 0)) return 0.0;
    for (const PartCurve& known : curves) {
      if (known.part == &part && known.kind == kind) return known.curve.time_s(bytes);
    }
    curves.push_back({&part, kind, setup.collectives.curve(kind, part.group)});
    return curves.back().curve.time_s(bytes);
  }

  /// The collectives' curves of each part, looked up once (a ZeRO-3 stage costs hundreds of
  /// units over the same group; a few (part, kind) pairs in all).
  struct PartCurve {
    const DataParallelPart* part;
    models::CollectiveKind kind;
    models::CollectiveModel::Curve curve;
  };
  mutable std::vector<PartCurve> curves{};  // filled by part_comm_s
};

/// ZeRO-3: each part gathers on its own stream, prefetching one unit ahead: the gather of unit
/// u starts when the part's previous unit (the last one with parameters of that part, maybe in
/// the pass before) starts computing, so it hides behind the compute from there to u. A unit
/// waits for the slower part.
DataParallelCost zero3_cost(const DataParallelContext& c) {
  DataParallelCost cost;
  const TrainingSetup& setup = c.setup;
  const TrainingWorkload& w = setup.workload;
  const auto& parts = c.parts;
  const auto& unit_forward_s = c.unit_forward_s;
  const auto& unit_backward_s = c.unit_backward_s;
  const auto reduce_kind = c.reduce_kind;
  const auto part_comm_s = [&c](const DataParallelPart& part, models::CollectiveKind kind, double bytes) {
    return c.part_comm_s(part, kind, bytes);
  };
  // Each part gathers on its own stream, prefetching one unit ahead: the gather of unit u
  // starts when the part's previous unit (the last one with parameters of that part, maybe
  // in the pass before) starts computing, so it hides behind the compute from there to u.
  // A unit waits for the slower part.
  const std::size_t n = unit_forward_s.size();
  // A unit's collectives, one per share (the whole unit without shares), back to back on the
  // part's stream: the sum of `time_of` over their bytes.
  const auto over_shares = [](const DataParallelPart& part, std::size_t u, double bytes_per_parameter,
                              const auto& time_of) {
    if (u >= part.unit_shares.size()) return time_of(part.units[u] * bytes_per_parameter);
    double total = 0;
    for (const double share : part.unit_shares[u]) total += time_of(part.units[u] * share * bytes_per_parameter);
    return total;
  };
  const auto unit_comm_s = [&](const DataParallelPart& part, models::CollectiveKind kind, std::size_t u,
                               double bytes_per_parameter) {
    return over_shares(part, u, bytes_per_parameter, [&](double bytes) { return part_comm_s(part, kind, bytes); });
  };
  // A gather and, with list-form all-gathers, the per-rank copies after it (0 otherwise).
  const auto gather_s = [&](const DataParallelPart& part, std::size_t u) {
    return over_shares(part, u, part.unit_gather_bytes[u], [&](double bytes) {
      return part_comm_s(part, models::CollectiveKind::all_gather, bytes) +
             zero3_gather_copies_s(setup, bytes, part.group.size());
    });
  };
  // One pass (forward: units 0..n-1; backward: n-1..0) preceded by the other direction.
  const auto pass_stall = [&](bool backward) {
    std::vector<std::size_t> order;
    std::vector<double> compute;
    for (std::size_t k = 0; k < n; ++k) {  // the pass before
      const std::size_t u = backward ? k : n - 1 - k;
      order.push_back(u);
      compute.push_back(backward ? unit_forward_s[u] : unit_backward_s[u]);
    }
    for (std::size_t k = 0; k < n; ++k) {  // this pass
      const std::size_t u = backward ? n - 1 - k : k;
      order.push_back(u);
      compute.push_back(backward ? unit_backward_s[u] : unit_forward_s[u]);
    }
    double stall = 0;
    for (std::size_t position = n; position < 2 * n; ++position) {
      double wait = 0;
      for (const auto& part : parts) {
        if (part.units[order[position]] <= 0) continue;
        double window = 0;
        for (std::size_t j = position; j-- > 0;) {
          window += compute[j];
          if (part.units[order[j]] > 0) break;
        }
        wait = std::max(wait, gather_s(part, order[position]) - window);
      }
      stall += std::max(0.0, wait);
    }
    return stall;
  };
  cost.per_cycle_s = pass_stall(false) + pass_stall(true);
  const auto unit_gather_s = [&](std::size_t u) {
    double t = 0;
    for (const auto& part : parts) t = std::max(t, gather_s(part, u));
    return t;
  };
  cost.before_forward_s = unit_gather_s(0);
  double backward_s = 0;
  for (const double unit_s : unit_backward_s) backward_s += unit_s;
  for (const auto& part : parts) {
    double reduce_s = 0;
    for (std::size_t u = 0; u < part.units.size(); ++u) {
      reduce_s += unit_comm_s(part, reduce_kind, u, w.grad_bytes_per_param);
    }
    // The last unit's reduction (the first layer) is left after the last backward, more if
    // the stream falls behind.
    cost.after_backward_s = std::max(
        {cost.after_backward_s, unit_comm_s(part, reduce_kind, 0, w.grad_bytes_per_param), reduce_s - backward_s});
  }
  return cost;
  return cost;
}

/// ZeRO 0-2: gradient buckets reduced during the last backward (every micro-batch's with ZeRO
/// 2), parameter gathers at the step's start (ZeRO 1 with overlap) or after the optimizer.
DataParallelCost bucketed_cost(const DataParallelContext& c) {
  DataParallelCost cost;
  const TrainingWorkload& w = c.setup.workload;
  const auto& parts = c.parts;
  const auto& unit_forward_s = c.unit_forward_s;
  const auto& unit_backward_s = c.unit_backward_s;
  const auto reduce_kind = c.reduce_kind;
  const models::ZeroSharding& sharding = c.sharding;
  const bool distributed_optimizer = sharding.gathers_parameters();
  const auto part_comm_s = [&c](const DataParallelPart& part, models::CollectiveKind kind, double bytes) {
    return c.part_comm_s(part, kind, bytes);
  };
  std::vector<double> ready_s(unit_forward_s.size(), 0.0);  // unit u's parameters gathered (ZeRO >= 1)
  const auto cost_of = [&](const DataParallelPart& part) {
    DataParallelCost part_cost;
    if (!w.overlap_grad_reduce && !sharding.reduces_every_microbatch()) {
      part_cost.after_backward_s = part_comm_s(part, reduce_kind, part.stage_parameters * w.grad_bytes_per_param);
      if (distributed_optimizer) {
        part_cost.after_optimizer_s = part_comm_s(part, models::CollectiveKind::all_gather, part.stage_gather_bytes());
      }
      return part_cost;
    }
    // Gradients become ready unit by unit during the (last) micro-batch's backward pass; the
    // buckets queue on one data-parallel stream, as in the event simulation.
    std::vector<double> backward_params(part.units.rbegin(), part.units.rend());
    std::vector<double> backward_s(unit_backward_s.rbegin(), unit_backward_s.rend());
    const auto buckets = form_gradient_buckets(backward_params, megatron_bucket_parameters(static_cast<int>(part.group.size())));
    // Time 0 is the start of the last backward pass; it ends at `pass_s`.
    const double pass_s = std::accumulate(backward_s.begin(), backward_s.end(), 0.0);
    std::vector<double> gradient_ready_s(backward_s.size());
    std::partial_sum(backward_s.begin(), backward_s.end(), gradient_ready_s.begin());
    double stream_free_s = 0, reduce_s = 0;
    for (const GradientBucket& bucket : buckets) {
      const double ready = gradient_ready_s[static_cast<std::size_t>(bucket.units.back())];
      const double bucket_s = part_comm_s(part, reduce_kind, bucket.parameters * w.grad_bytes_per_param);
      stream_free_s = std::max(stream_free_s, ready) + bucket_s;
      reduce_s += bucket_s;
    }
    part_cost.after_backward_s = std::max(0.0, stream_free_s - pass_s);
    if (sharding.reduces_every_microbatch()) {
      // Every micro-batch reduces; the stream keeps up unless a micro-batch's reductions take
      // longer than its forward and backward.
      const double cycle_s = std::accumulate(unit_forward_s.begin(), unit_forward_s.end(), 0.0) + pass_s;
      part_cost.per_cycle_s = std::max(0.0, reduce_s - cycle_s);
      part_cost.after_optimizer_s = part_comm_s(part, models::CollectiveKind::all_gather, part.stage_gather_bytes());
      return part_cost;
    }
    if (distributed_optimizer && !buckets.empty()) {
      // The step's parameter all-gathers go out bucket by bucket in forward order (the last
      // bucket in backward order holds the stage's first layers) on the part's stream at the
      // step's start; a unit's first forward waits for its bucket.
      double gathered_s = 0;
      for (std::size_t b = buckets.size(); b-- > 0;) {
        std::vector<std::size_t> bucket_units;
        for (const int i : buckets[b].units) bucket_units.push_back(part.units.size() - 1 - static_cast<std::size_t>(i));
        gathered_s += part_comm_s(part, models::CollectiveKind::all_gather, part.gather_bytes(bucket_units));
        for (const int i : buckets[b].units) {
          const std::size_t u = part.units.size() - 1 - static_cast<std::size_t>(i);
          ready_s[u] = std::max(ready_s[u], gathered_s);
        }
      }
    }
    return part_cost;
  };
  for (const auto& part : parts) {
    const DataParallelCost part_cost = cost_of(part);
    cost.after_backward_s = std::max(cost.after_backward_s, part_cost.after_backward_s);
    cost.after_optimizer_s = std::max(cost.after_optimizer_s, part_cost.after_optimizer_s);
    cost.per_cycle_s = std::max(cost.per_cycle_s, part_cost.per_cycle_s);
  }
  // The first forward pass runs unit by unit, each when its parameters are gathered: what it
  // waits in all delays the step's start.
  double t = 0, compute = 0;
  for (std::size_t u = 0; u < unit_forward_s.size(); ++u) {
    t = std::max(t, ready_s[u]) + unit_forward_s[u];
    compute += unit_forward_s[u];
  }
  cost.before_forward_s = t - compute;
  return cost;
}

DataParallelCost data_parallel_cost(const TrainingSetup& setup, const StageProgram& program,
                                    const std::vector<DataParallelPart>& parts) {
  if (parts.empty()) return {};
  DataParallelContext c{setup, parts, parts.front().sharding,
                        parts.front().sharding.gradient_reduction(), {}, {}, {}};
  const double rate = setup.compute_rate_while_communicating;
  // Unit compute times (forward order) of one micro-batch.
  if (!program.embedding_forward.empty()) {
    c.unit_forward_s.push_back(total_s(program.embedding_forward, rate));
    c.unit_backward_s.push_back(total_s(program.embedding_backward, rate));
  }
  for (int l = 0; l < program.local_layers(); ++l) {
    c.unit_forward_s.push_back(total_s(program.layer(l).forward, rate));
    c.unit_backward_s.push_back(total_s(program.layer(l).backward, rate));
  }
  if (!program.head_forward.empty()) {
    c.unit_forward_s.push_back(total_s(program.head_forward, rate));
    c.unit_backward_s.push_back(total_s(program.head_backward, rate));
  }
  return c.sharding.gathers_every_pass() ? zero3_cost(c) : bucketed_cost(c);
}

/// Host-link time of offloading a stage does not hide: the optimizer state's transfer before
/// its optimizer step, all of it; the activation copies, one direction's per step (both
/// directions run at once) beyond the stage's compute, which they overlap.
double offload_exposed_s(const StageProgram& program, const StageTimes& times, double microbatches) {
  double copies_s = 0;
  for (const engine::TimePs ps : program.activation_offload_ps) copies_s += engine::ps_to_seconds(ps);
  const double compute_s = microbatches * (times.forward.compute_s + times.backward.compute_s);
  return engine::ps_to_seconds(program.optimizer_offload_ps) + std::max(0.0, microbatches * copies_s - compute_s);
}

}  // namespace

TrainingResult estimate_training_step(const TrainingSetup& setup) {
  validate_training_setup(setup);
  const TrainingWorkload& w = setup.workload;
  const auto& par = w.parallelism;
  const RankLayout layout(par, setup.placement);
  const std::vector<StageProgram> programs = build_stage_programs(setup);
  const double m = static_cast<double>(w.microbatches_per_pipeline());
  const double v = static_cast<double>(par.schedule == PipelineSchedule::interleaved ? par.vp : 1);
  const auto stages = static_cast<std::size_t>(par.pp);

  std::vector<StageTimes> times;
  std::vector<DataParallelCost> dp;
  std::vector<HostCost> host;
  for (const StageProgram& program : programs) {
    times.push_back(stage_times(program, setup.compute_rate_while_communicating));
    dp.push_back(data_parallel_cost(setup, program, data_parallel_parts(w, program, layout)));
    host.push_back(host_cost(program, w, program.stage));
  }
  double max_cycle_s = 0, sum_cycle_s = 0;
  for (std::size_t p = 0; p < stages; ++p) {
    const double cycle_s = times[p].cycle_s() + dp[p].per_cycle_s;
    max_cycle_s = std::max(max_cycle_s, cycle_s);
    sum_cycle_s += cycle_s;
  }
  const double p2p_forward_s = engine::ps_to_seconds(programs.front().p2p_forward_ps);
  const double p2p_backward_s = stages > 1 ? engine::ps_to_seconds(programs[1].p2p_backward_ps) : 0.0;
  const double p2p_s = static_cast<double>(par.pp - 1) * (p2p_forward_s + p2p_backward_s);
  const double start_s = dp.front().before_forward_s;  // the pipeline starts when stage 0 may
  const double pipeline_s = start_s + (m - 1) * max_cycle_s + max_cycle_s + (sum_cycle_s - max_cycle_s) / v + p2p_s;

  // Stage p finishes its last backward before stage 0 by the backward passes (one chunk's
  // worth when interleaved) and gradient sends between them.
  std::size_t critical = 0;
  double step_s = 0;
  std::vector<double> backward_end_s(stages);
  double offset_s = 0;
  // The host's delay shows where the stage does not already wait (its start, bubbles, sends):
  // the host runs ahead while the device waits for anything else.
  std::vector<double> host_extra_s(stages, 0.0);
  for (std::size_t p = 0; p < stages; ++p) {
    backward_end_s[p] = pipeline_s - offset_s;
    offset_s += times[p].backward.total() / v + p2p_backward_s;
    const double busy_s = m * (times[p].cycle_s() + dp[p].per_cycle_s);
    host_extra_s[p] = std::max(0.0, host[p].delay_s - std::max(0.0, backward_end_s[p] - busy_s));
    const double end_s = backward_end_s[p] + host_extra_s[p] + dp[p].after_backward_s +
                         offload_exposed_s(programs[p], times[p], m) + host[p].sync_s +
                         engine::ps_to_seconds(programs[p].optimizer_ps) + dp[p].after_optimizer_s;
    if (end_s > step_s) {
      step_s = end_s;
      critical = p;
    }
  }
  if (!(step_s > 0)) throw SimulationError("training step estimated at zero time: every op was costed at 0 s");

  TrainingResult result;
  result.step_time_s = step_s;
  fill_step_metrics(setup, programs, result);
  const StageTimes& t = times[critical];
  StepBreakdown& b = result.breakdown;
  b.compute_s = m * (t.forward.compute_s + t.backward.compute_s);
  b.exposed_tp_s = m * (t.forward.tp_s + t.backward.tp_s);
  b.exposed_cp_s = m * (t.forward.cp_s + t.backward.cp_s);
  b.exposed_ep_s = m * (t.forward.ep_s + t.backward.ep_s);
  b.optimizer_s = engine::ps_to_seconds(programs[critical].optimizer_ps);
  b.exposed_dp_s = start_s + dp[critical].after_backward_s + dp[critical].after_optimizer_s;
  b.exposed_host_s = host_extra_s[critical] + host[critical].sync_s;
  b.offload_s = offload_exposed_s(programs[critical], t, m);
  const double stalls_s = m * dp[critical].per_cycle_s;
  b.exposed_dp_s += stalls_s;
  const double busy_s = b.compute_s + b.exposed_tp_s + b.exposed_cp_s + b.exposed_ep_s + stalls_s;
  const double idle_s = std::max(0.0, backward_end_s[critical] - start_s - busy_s);
  b.exposed_pp_s = std::min(idle_s, p2p_s);
  b.bubble_s = idle_s - b.exposed_pp_s;
  result.notes.push_back("closed-form estimate (no event simulation): 1F1B pipeline formula over the "
                         "costed stage programs");
  return result;
}

}  // namespace clustersim::training
