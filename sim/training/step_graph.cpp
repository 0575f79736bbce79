// Building one training step's task graph (step_graph.hpp).
//
// Data-parallel assumptions (documented in the result notes too):
// * Gradients are reduced over the dp x cp ranks holding the same shard (Megatron's
//   data-parallel-with-context group). ZeRO >= 1 (distributed optimizer): reduce-scatter of
//   the gradients, Adam on 1/(dp*cp) of the parameters, all-gather of the updated parameters
//   (2-byte params, 4 with fp32); ZeRO 0: all-reduce. ZeRO 2 and 3: see build_data_parallel.
// * overlap_grad_reduce enables both of Megatron-Core's --overlap-grad-reduce and
//   --overlap-param-gather: gradients go in buckets of max(40M, 1M x dp) parameters (whole
//   layers, in backward order) reduced as soon as the last micro-batch's backward of the
//   bucket finishes; the parameter all-gather of the previous step's update runs at the start
//   of this step, bucket by bucket in forward order, and the first micro-batch's forward of a
//   layer waits for its bucket (the steady-state picture). Without overlap: one reduction
//   after the last backward and one parameter all-gather after the optimizer, both exposed.
// * Interleaved 1F1B follows Megatron's forward_backward_pipelining_with_interleaving: stage p
//   holds chunks c = 0..vp-1 of num_layers / (pp * vp) layers (virtual stage c * pp + p); the
//   last stage sends chunk c's activations to stage 0's chunk c + 1.
// * P2P sends are asynchronous on per-direction send streams; the receiver's first op of the
//   micro-batch waits for the transfer.
#include "sim/training/step_graph.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/training/data_parallel.hpp"
#include "sim/training/gradient_buckets.hpp"
#include "sim/training/op_kind.hpp"
#include "sim/training/pipeline_schedule.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/training/training_simulation.hpp"

namespace clustersim::training {
namespace {

using exec::StreamId;
using exec::TaskId;

// Task ids and streams of one stage in the graph.
struct StageTasks {
  StreamId compute = -1, send_next = -1, send_prev = -1, data_parallel = -1;
  StreamId context_parallel = -1;  // cp > 1: KV exchanges beside attention
  StreamId tensor_parallel = -1;   // TP-communication overlap: collectives beside their GEMMs
  StreamId tensor_userbuffers = -1;  // TE TP transfers that take no SMs from the compute beside them
  StreamId data_parallel_reduce = -1;  // ZeRO 3: gradient reduce-scatters beside the gathers
  StreamId expert_data_parallel = -1, expert_data_parallel_reduce = -1;  // MoE: the experts' own
  StreamId host_out = -1, host_in = -1, host_optimizer = -1;  // offloading: host-link copies
  StreamId host = -1;  // the rank's host, for its wait before the optimizer (host_op_time > 0)
  std::int64_t issued = 0;  // ops the host has issued (each task's release time)
  // Compute stream: the last two tasks emitted, and overlapped communication tasks the next
  // compute task (after `skip` more) must wait for.
  struct Pending {
    TaskId task = -1;
    int skip = 0;
  };
  TaskId last_task = -1, before_last_task = -1;
  std::vector<Pending> pending;
  std::vector<PipelineStep> steps;  // the stage's schedule
  // [chunk][micro-batch]: first and last task of each forward and backward pass.
  std::vector<std::vector<TaskId>> forward_first, forward_last, backward_first, backward_last;
  TaskId last_backward = -1;  // last task of the stage's last backward pass
  // Parameter units in forward order (embedding, layers of chunk 0, 1, ..., head): parameters,
  // the first task using them in micro-batch 0's forward, the last task of the last
  // micro-batch's backward.
  std::vector<double> unit_parameters;
  std::vector<TaskId> unit_first_use, unit_grad_ready;
  // Per pipeline step (index into `steps`): the parameter units it runs, in execution order,
  // with the first and last task of each (ZeRO-2/3 communicate per micro-batch).
  struct UnitSpan {
    std::size_t unit = 0;
    TaskId first = -1, last = -1;
  };
  std::vector<std::vector<UnitSpan>> step_units;
  TaskId optimizer = -1;
};

class StepBuilder {
 public:
  /// Symmetric mode (`full` false): communication tasks run as `comm` says for every replica
  /// group at once. Full mode: the graph is the template every (tp, cp, dp) replica runs:
  /// collectives are fixed tasks marked for synchronisation, with their group described by
  /// collective(task).
  StepBuilder(const TrainingSetup& setup, const std::vector<StageProgram>& programs, platform::CommRuntime& comm,
              bool full)
      : setup_(setup),
        programs_(programs),
        layout_(setup.workload.parallelism, setup.placement),
        comm_(comm),
        full_(full),
        host_op_ps_(engine::seconds_to_ps(setup.workload.host_op_time_s())) {
    graph_.set_category_names(op_kind_names());
  }

  /// Records `info` for `task`; in full mode also marks it synchronising.
  void record(TaskId task, const GroupCollective& info) {
    const auto t = static_cast<std::size_t>(task);
    if (collectives_.size() <= t) collectives_.resize(t + 1);
    collectives_[t] = info;
    if (full_) graph_.set_sync(task, static_cast<std::uint8_t>(info.dimension));
  }
  /// The built graph, its stages' streams and (full mode) its collectives' groups.
  StepGraph take() {
    StepGraph step;
    for (const StageTasks& stage : stages_) {
      StageStreams streams;
      streams.compute = stage.compute;
      streams.host = stage.host;
      for (StreamId s : {stage.send_next, stage.send_prev}) {
        if (s >= 0) streams.sends.push_back(s);
      }
      for (StreamId s : {stage.compute, stage.send_next, stage.send_prev, stage.data_parallel, stage.context_parallel,
                         stage.tensor_parallel, stage.tensor_userbuffers, stage.data_parallel_reduce,
                         stage.expert_data_parallel, stage.expert_data_parallel_reduce, stage.host_out,
                         stage.host_in, stage.host_optimizer, stage.host}) {
        if (s >= 0) streams.all.push_back(s);
      }
      step.stages.push_back(std::move(streams));
    }
    step.graph = std::move(graph_);
    step.collectives = std::move(collectives_);
    step.kernel_classes = std::move(kernel_classes_);
    return step;
  }

  void build() {
    const auto& par = setup_.workload.parallelism;
    const std::int64_t microbatches = setup_.workload.microbatches_per_pipeline();
    stages_.resize(static_cast<std::size_t>(par.pp));
    for (int p = 0; p < par.pp; ++p) build_stage_compute(p, microbatches);
    for (int p = 0; p < par.pp; ++p) build_p2p(p);
    for (int p = 0; p < par.pp; ++p) build_activation_offload(p);
    for (int p = 0; p < par.pp; ++p) build_data_parallel(p);
  }

 private:
  // Appends `ops` to the stage's compute stream; returns {first, last} task ids. Blocking
  // communication (TP collectives without overlap) sits on the compute stream: a fixed
  // duration (analytical) or flows (flow fidelity). An overlapped op (StageOp::overlap) runs on
  // the stage's side stream of its kind (tp-comm, cp-comm) concurrently with the compute op
  // before it (with_previous) or after it (with_next), and the op following that pair waits
  // for it: exposed = max(0, communication - compute), in both fidelities.
  std::pair<TaskId, TaskId> emit(StageTasks& stage, const std::vector<StageOp>& ops, std::string_view prefix) {
    TaskId first = -1, last = -1;
    for (const StageOp& op : ops) {
      std::string label = fmt::format("{} {}", prefix, op.name);
      if (op.overlap != Overlap::none) {
        const StreamId side = side_stream(stage, op);
        const TaskId prerequisite = op.overlap == Overlap::with_previous ? stage.before_last_task : stage.last_task;
        const TaskId comm = full_ ? graph_.add_task(side, op.duration_ps, traits_of(op), std::move(label))
                                  : graph_.add_work(side, op_work(stage, op), traits_of(op), std::move(label));
        record_collective(comm, op, stage_index(stage));
        if (prerequisite >= 0) graph_.add_dependency(comm, prerequisite);
        issue(stage, comm);
        stage.pending.push_back({comm, op.overlap == Overlap::with_previous ? 0 : 1});
        continue;
      }
      const bool collective = op.kind == OpKind::tp_comm || op.kind == OpKind::ep_comm;
      const TaskId task = !full_ && collective
                              ? graph_.add_work(stage.compute, op_work(stage, op), traits_of(op), std::move(label))
                              : graph_.add_task(stage.compute, op.duration_ps, traits_of(op), std::move(label));
      if (collective) record_collective(task, op, stage_index(stage));
      issue(stage, task);
      if (op.kernel_class != KernelClass::elementwise) {
        const auto t = static_cast<std::size_t>(task);
        if (kernel_classes_.size() <= t) kernel_classes_.resize(t + 1, KernelClass::elementwise);
        kernel_classes_[t] = op.kernel_class;
      }
      for (auto it = stage.pending.begin(); it != stage.pending.end();) {
        if (it->skip == 0) {
          graph_.add_dependency(task, it->task);
          it = stage.pending.erase(it);
        } else {
          --it->skip;
          ++it;
        }
      }
      stage.before_last_task = stage.last_task;
      stage.last_task = task;
      last = task;
      if (first < 0) first = last;
    }
    return {first, last};
  }

  // The stage's host issues `task`'s op after the ones before it, host_op_time each, never
  // waiting for the device (it only waits before the optimizer, after every op is issued): the
  // task starts no earlier than issued x host_op_time after the step's start.
  void issue(StageTasks& stage, TaskId task) {
    if (host_op_ps_ <= 0) return;
    ++stage.issued;
    graph_.set_release(task, stage.issued * host_op_ps_);
  }

  // The stage's side stream for an overlapped communication op: cp-comm, tp-comm, or
  // tp-userbuffers for Transformer Engine's transfers that take no SMs from the compute beside
  // them (copy engines, or SMs the GEMM was already costed without): a stream role that leaves
  // that compute at full speed.
  StreamId side_stream(StageTasks& stage, const StageOp& op) {
    const int p = stage_index(stage);
    const bool context = op.kind == OpKind::cp_comm;
    const bool unshared = !context && op.engine != CommEngine::shared_sms;
    StreamId& stream = context ? stage.context_parallel : unshared ? stage.tensor_userbuffers : stage.tensor_parallel;
    if (stream < 0) {
      stream = graph_.add_stream(
          fmt::format("stage {} {}", p, context ? "cp-comm" : unshared ? "tp-userbuffers" : "tp-comm"), p,
          unshared ? exec::StreamRole::other : exec::StreamRole::communication);
    }
    return stream;
  }

  // Executor traits of a stage op: its kind, FLOPs and (communication) bytes.
  static exec::TaskTraits traits_of(const StageOp& op) {
    return op_traits(op.kind, op.flops, is_communication(op.kind) ? op.collective_bytes : 0.0);
  }

  void record_collective(TaskId task, const StageOp& op, int stage) {
    const GroupDimension dimension = op.kind == OpKind::tp_comm   ? GroupDimension::tensor
                                     : op.kind == OpKind::cp_comm ? GroupDimension::context
                                                                  : GroupDimension::expert;
    record(task, {dimension, op.collective, op.collective_bytes, stage, -1});
  }

  int stage_index(const StageTasks& stage) const { return static_cast<int>(&stage - stages_.data()); }

  // Accelerator groups of a collective along one parallel dimension for every replica:
  // `member(i, a, b)` gives the accelerator of index i of the group of replica (a, b).
  // Replica groups other than the representative's (a = b = 0) that stay inside one scale-up
  // domain are skipped (disjoint NVLink ports).
  template <class Member>
  std::vector<std::vector<int>> replica_groups(int size, int replicas_a, int replicas_b, Member member) const {
    std::vector<std::vector<int>> groups;
    for (int b = 0; b < replicas_b; ++b) {
      for (int a = 0; a < replicas_a; ++a) {
        std::vector<int> group;
        for (int i = 0; i < size; ++i) group.push_back(member(i, a, b));
        const bool representative = a == 0 && b == 0;
        if (!representative && in_one_domain(group)) continue;
        groups.push_back(std::move(group));
      }
    }
    return groups;
  }

  bool in_one_domain(const std::vector<int>& group) const {
    const int domain = setup_.topology.scale_up_domain_of(group.front());
    return std::all_of(group.begin(), group.end(),
                       [&](int a) { return setup_.topology.scale_up_domain_of(a) == domain; });
  }

  // How a TP, CP or EP op of `stage` runs for every replica group (cached per op).
  exec::Work op_work(const StageTasks& stage, const StageOp& op) {
    auto it = op_work_.find(&op);
    if (it == op_work_.end()) {
      const int p = stage_index(stage);
      const auto& par = setup_.workload.parallelism;
      std::vector<std::vector<int>> groups;
      if (op.kind == OpKind::tp_comm) {
        groups = replica_groups(par.tp, par.cp, par.dp, [&](int i, int c, int d) { return layout_.rank(i, c, d, p); });
      } else if (op.kind == OpKind::ep_comm) {
        // Expert-parallel groups: ep consecutive ranks of the gradient group, for every tp index.
        groups = replica_groups(par.ep, par.tp, par.dp * par.cp / par.ep,
                                [&](int i, int t, int b) { return layout_.gradient_rank(t, b * par.ep + i, p); });
      } else {
        groups = replica_groups(par.cp, par.tp, par.dp, [&](int i, int t, int d) { return layout_.rank(t, i, d, p); });
      }
      it = op_work_.emplace(&op, comm_.collective(op.collective, groups, op.collective_bytes)).first;
    }
    return it->second;
  }

  // Pipeline send from stage p to stage q by every (tp, cp, dp) replica (cached per pair).
  exec::Work p2p_work(int p, int q, double bytes) {
    const auto key = std::make_pair(p, q);
    auto it = p2p_work_.find(key);
    if (it == p2p_work_.end()) {
      const auto& par = setup_.workload.parallelism;
      std::vector<std::vector<int>> groups;
      for (int d = 0; d < par.dp; ++d) {
        for (int c = 0; c < par.cp; ++c) {
          for (int t = 0; t < par.tp; ++t) {
            std::vector<int> pair{layout_.rank(t, c, d, p), layout_.rank(t, c, d, q)};
            if ((t != 0 || c != 0 || d != 0) && in_one_domain(pair)) continue;
            groups.push_back(std::move(pair));
          }
        }
      }
      it = p2p_work_.emplace(key, comm_.collective(models::CollectiveKind::send_recv, groups, bytes)).first;
    }
    return it->second;
  }

  // Pipeline send task: the template's fixed duration (full mode) or the runtime's work.
  TaskId add_send(StreamId stream, engine::TimePs duration_ps, int p, int q, double bytes, std::string label,
                  TaskId after) {
    const exec::TaskTraits traits = op_traits(OpKind::pp_comm, 0, bytes);
    if (full_) {
      const TaskId task = graph_.add_task(stream, duration_ps, traits, std::move(label), {after});
      record(task, {GroupDimension::pipeline, models::CollectiveKind::send_recv, bytes, p, q});
      return task;
    }
    return graph_.add_work(stream, p2p_work(p, q, bytes), traits, std::move(label), {after});
  }

  void build_stage_compute(int p, std::int64_t microbatches) {
    const StageProgram& program = programs_[static_cast<std::size_t>(p)];
    StageTasks& stage = stages_[static_cast<std::size_t>(p)];
    const auto& par = setup_.workload.parallelism;
    const int chunks = program.chunks;
    stage.compute = graph_.add_stream(fmt::format("stage {} compute", p), p, exec::StreamRole::compute);
    if (host_op_ps_ > 0) stage.host = graph_.add_stream(fmt::format("stage {} host", p), p, exec::StreamRole::other);
    if (par.pp > 1 && (p + 1 < par.pp || chunks > 1)) {
      stage.send_next = graph_.add_stream(fmt::format("stage {} send-next", p), p, exec::StreamRole::communication);
    }
    if (par.pp > 1 && (p > 0 || chunks > 1)) {
      stage.send_prev = graph_.add_stream(fmt::format("stage {} send-prev", p), p, exec::StreamRole::communication);
    }
    const std::vector<TaskId> unset(static_cast<std::size_t>(microbatches), -1);
    stage.forward_first.assign(static_cast<std::size_t>(chunks), unset);
    stage.forward_last = stage.backward_first = stage.backward_last = stage.forward_first;
    const bool has_embedding = !program.embedding_forward.empty();
    const bool has_head = !program.head_forward.empty();
    // Unit index of layer l of chunk c: layer_base + local_offset(c) + l.
    const std::size_t layer_base = has_embedding ? 1 : 0;
    stage.unit_parameters = parameter_units_forward(program);
    const std::size_t head_unit = stage.unit_parameters.size() - 1;
    stage.unit_first_use.assign(stage.unit_parameters.size(), -1);
    stage.unit_grad_ready.assign(stage.unit_parameters.size(), -1);

    stage.steps = pipeline_steps(par.schedule, par.pp, p, microbatches, par.vp);
    stage.step_units.assign(stage.steps.size(), {});
    for (std::size_t step_index = 0; step_index < stage.steps.size(); ++step_index) {
      const PipelineStep& step = stage.steps[step_index];
      const auto mb = static_cast<std::size_t>(step.microbatch);
      const auto c = static_cast<std::size_t>(step.chunk);
      const bool record_use = !step.backward && step.microbatch == 0;
      const bool record_ready = step.backward && step.microbatch == microbatches - 1;
      const bool embedding_here = has_embedding && step.chunk == 0;
      const bool head_here = has_head && step.chunk == chunks - 1;
      TaskId first = -1, last = -1;
      auto note = [&](std::pair<TaskId, TaskId> span, std::size_t unit) {
        if (span.first < 0) return;
        if (first < 0) first = span.first;
        last = span.second;
        if (record_use) stage.unit_first_use[unit] = span.first;
        if (record_ready) stage.unit_grad_ready[unit] = span.second;
        stage.step_units[step_index].push_back({unit, span.first, span.second});
      };
      const int chunk_offset = program.local_offset(step.chunk);
      auto layer_unit = [&](int l) { return layer_base + static_cast<std::size_t>(chunk_offset + l); };
      const std::string chunk_label = chunks > 1 ? fmt::format(" chunk{}", step.chunk) : "";
      if (!step.backward) {
        const std::string prefix = fmt::format("fwd mb{}{}", step.microbatch, chunk_label);
        if (embedding_here) note(emit(stage, program.embedding_forward, prefix), 0);
        for (int l = 0; l < program.layers(step.chunk); ++l) {
          note(emit(stage, program.layer(chunk_offset + l).forward,
                    fmt::format("{} layer{}", prefix, program.first_layer(step.chunk) + l)),
               layer_unit(l));
        }
        if (head_here) note(emit(stage, program.head_forward, prefix), head_unit);
        stage.forward_first[c][mb] = first;
        stage.forward_last[c][mb] = last;
      } else {
        const std::string prefix = fmt::format("bwd mb{}{}", step.microbatch, chunk_label);
        if (head_here) note(emit(stage, program.head_backward, prefix), head_unit);
        for (int l = program.layers(step.chunk) - 1; l >= 0; --l) {
          note(emit(stage, program.layer(chunk_offset + l).backward,
                    fmt::format("{} layer{}", prefix, program.first_layer(step.chunk) + l)),
               layer_unit(l));
        }
        if (embedding_here) note(emit(stage, program.embedding_backward, prefix), 0);
        stage.backward_first[c][mb] = first;
        stage.backward_last[c][mb] = last;
        stage.last_backward = last;
      }
    }
  }

  // Sends, in the order the stage produces them (FIFO send streams), to the next virtual
  // stage (forward) and the previous one (backward); the receiver's pass waits for them.
  void build_p2p(int p) {
    const StageProgram& program = programs_[static_cast<std::size_t>(p)];
    StageTasks& stage = stages_[static_cast<std::size_t>(p)];
    const int pp = setup_.workload.parallelism.pp;
    const int chunks = program.chunks;
    for (const PipelineStep& step : stage.steps) {
      const auto mb = static_cast<std::size_t>(step.microbatch);
      const auto c = static_cast<std::size_t>(step.chunk);
      const std::string chunk_label = chunks > 1 ? fmt::format(" chunk{}", step.chunk) : "";
      if (!step.backward) {
        if (p == pp - 1 && step.chunk == chunks - 1) continue;  // the last virtual stage
        const int to = (p + 1) % pp;
        const auto to_chunk = static_cast<std::size_t>(p == pp - 1 ? step.chunk + 1 : step.chunk);
        const TaskId send = add_send(
            stage.send_next, program.p2p_forward_ps, p, to, program.p2p_bytes,
            fmt::format("send act mb{}{} stage {}->{}", step.microbatch, chunk_label, p, to),
            stage.forward_last[c][mb]);
        graph_.add_dependency(stages_[static_cast<std::size_t>(to)].forward_first[to_chunk][mb], send);
      } else {
        if (p == 0 && step.chunk == 0) continue;  // the first virtual stage
        const int to = (p + pp - 1) % pp;
        const auto to_chunk = static_cast<std::size_t>(p == 0 ? step.chunk - 1 : step.chunk);
        const TaskId send = add_send(
            stage.send_prev, program.p2p_backward_ps, p, to, program.p2p_bytes,
            fmt::format("send grad mb{}{} stage {}->{}", step.microbatch, chunk_label, p, to),
            stage.backward_last[c][mb]);
        graph_.add_dependency(stages_[static_cast<std::size_t>(to)].backward_first[to_chunk][mb], send);
      }
    }
  }

  // Activation offloading, double-buffered as the memory footprint assumes (the pass being
  // computed and the one in transfer stay on the device): a forward pass's stored activations
  // are copied to host memory after it (host-out stream) when another forward pass runs on the
  // stage before its backward (else they are still on the device when it comes, as on the last
  // stage of 1F1B), and copied back (host-in stream), prefetched once the stage's previous
  // backward pass starts; the backward waits for its copy. The two directions of the host link
  // run at once; copies overlap compute, so only what they do not hide shows (offload time).
  void build_activation_offload(int p) {
    const StageProgram& program = programs_[static_cast<std::size_t>(p)];
    if (program.activation_offload_ps.empty()) return;
    StageTasks& stage = stages_[static_cast<std::size_t>(p)];
    stage.host_out = graph_.add_stream(fmt::format("stage {} host-out", p), p, exec::StreamRole::other);
    stage.host_in = graph_.add_stream(fmt::format("stage {} host-in", p), p, exec::StreamRole::other);
    const std::vector<TaskId> unset(stage.forward_first.front().size(), -1);
    std::vector<std::vector<TaskId>> copied_out(stage.forward_first.size(), unset);
    TaskId previous_backward = -1;
    const exec::TaskTraits traits = op_traits(OpKind::offload);
    for (std::size_t k = 0; k < stage.steps.size(); ++k) {
      const PipelineStep& step = stage.steps[k];
      const auto mb = static_cast<std::size_t>(step.microbatch);
      const auto c = static_cast<std::size_t>(step.chunk);
      const engine::TimePs copy_ps = program.activation_offload_ps[c];
      if (!step.backward) {
        if (!evicted(stage.steps, k)) continue;
        copied_out[c][mb] = graph_.add_task(stage.host_out, copy_ps, traits,
                                            fmt::format("offload act mb{} chunk{}", step.microbatch, step.chunk),
                                            {stage.forward_last[c][mb]});
        continue;
      }
      if (copied_out[c][mb] < 0) {
        previous_backward = stage.backward_first[c][mb];
        continue;
      }
      const TaskId back = graph_.add_task(stage.host_in, copy_ps, traits,
                                          fmt::format("reload act mb{} chunk{}", step.microbatch, step.chunk),
                                          {copied_out[c][mb]});
      if (previous_backward >= 0) graph_.add_dependency(back, previous_backward);
      graph_.add_dependency(stage.backward_first[c][mb], back);
      previous_backward = stage.backward_first[c][mb];
    }
  }

  // Whether the forward pass at `forward` (an index of the stage's steps) has another forward
  // pass after it before its own backward.
  static bool evicted(const std::vector<PipelineStep>& steps, std::size_t forward) {
    const PipelineStep& pass = steps[forward];
    for (std::size_t k = forward + 1; k < steps.size(); ++k) {
      if (!steps[k].backward) return true;
      if (steps[k].microbatch == pass.microbatch && steps[k].chunk == pass.chunk) return false;
    }
    return false;
  }

  // Optimizer offloading: the stage's optimizer state streams in and out over the full-duplex
  // host link once the gradients are reduced, and the optimizer step waits for it (DeepSpeed's
  // ZeRO-Offload pattern; one transfer time, the directions overlapping).
  void build_optimizer_offload(int p, StageTasks& stage, const std::vector<TaskId>& reductions) {
    const StageProgram& program = programs_[static_cast<std::size_t>(p)];
    if (program.optimizer_offload_ps <= 0) return;
    stage.host_optimizer = graph_.add_stream(fmt::format("stage {} host-optimizer", p), p, exec::StreamRole::other);
    const TaskId state = graph_.add_task(stage.host_optimizer, program.optimizer_offload_ps, op_traits(OpKind::offload),
                                         "optimizer state in/out", {stage.last_backward});
    for (const TaskId r : reductions) graph_.add_dependency(state, r);
    graph_.add_dependency(stage.optimizer, state);
  }

  // Data parallelism over the stage's gradient group (dp x cp ranks of the same shard):
  // * ZeRO 0: all-reduce of the gradients; ZeRO 1 (Megatron's distributed optimizer):
  //   reduce-scatter, Adam on the shard, all-gather of the updated parameters. With
  //   overlap_grad_reduce both go in buckets: reductions during the last micro-batch's
  //   backward, parameter gathers before the first micro-batch's forward of their layers.
  // * ZeRO 2 (DeepSpeed stage 2): gradients are sharded too, so every micro-batch's backward
  //   reduce-scatters its buckets as they become ready; parameters as ZeRO 1.
  // * ZeRO 3 (FSDP): parameters are sharded as well: every micro-batch all-gathers each unit
  //   (layer, embedding, head) before its forward and again before its backward, prefetched one
  //   unit ahead on a gather stream, and reduce-scatters its gradients after its backward on a
  //   reduce stream; nothing is left after the optimizer.
  void build_data_parallel(int p) {
    const TrainingWorkload& w = setup_.workload;
    const auto& par = w.parallelism;
    const StageProgram& program = programs_[static_cast<std::size_t>(p)];
    StageTasks& stage = stages_[static_cast<std::size_t>(p)];
    std::vector<TaskId> reductions;
    for (DataParallelPart& shared : data_parallel_parts(w, program, layout_)) {
      PartRun part;
      static_cast<DataParallelPart&>(part) = std::move(shared);
      part.name = part.experts ? "expert " : "";
      if (!full_ && !part.experts) {
        // The dense part over the gradient (dp x cp) group of every tp index.
        part.replicas = replica_groups(par.dp * par.cp, par.tp, 1,
                                       [&](int i, int t, int) { return layout_.gradient_rank(t, i, p); });
      } else if (!full_) {
        // The routed experts over the expert-data-parallel group of every (tp, ep) index.
        part.replicas = replica_groups(par.dp * par.cp / par.ep, par.tp, par.ep, [&](int i, int t, int e) {
          return layout_.gradient_rank(t, e + par.ep * i, p);
        });
      }
      const auto r = part.experts ? build_data_parallel_part(stage, p, part, stage.expert_data_parallel,
                                                             stage.expert_data_parallel_reduce, "dp-expert")
                                  : build_data_parallel_part(stage, p, part, stage.data_parallel,
                                                             stage.data_parallel_reduce, "dp");
      reductions.insert(reductions.end(), r.begin(), r.end());
    }
    stage.optimizer = graph_.add_task(stage.compute, program.optimizer_ps, op_traits(OpKind::optimizer), "optimizer");
    for (TaskId r : reductions) graph_.add_dependency(stage.optimizer, r);
    if (stage.host >= 0) {
      // The host waits for the gradients (Megatron's clip_grad_norm reads the norm back with
      // .item()), then issues the optimizer step.
      const TaskId issued = graph_.add_task(stage.host, host_op_ps_, op_traits(OpKind::host), "issue optimizer after "
                                            "grad-norm sync", {stage.last_backward});
      for (TaskId r : reductions) graph_.add_dependency(issued, r);
      graph_.add_dependency(stage.optimizer, issued);
    }
    build_optimizer_offload(p, stage, reductions);
    // ZeRO 1/2 without overlap: the updated parameters are gathered after the optimizer. With
    // overlap (ZeRO 1) the gathers are the next step's, started at this step's start; ZeRO 2
    // gathers after the optimizer, as DeepSpeed does.
    const bool gather_after =
        models::dense_sharding(par.zero, par.dp, par.cp).gathers_after_optimizer(w.overlap_grad_reduce);
    if (gather_after) {
      for (auto& [stream, kind_group, bytes, label] : after_optimizer_gathers_) {
        dp_collective(stream, models::CollectiveKind::all_gather, kind_group, bytes, label, {stage.optimizer});
      }
    }
    after_optimizer_gathers_.clear();
  }

  // A part and the replica groups the runtime runs beside the representative's (symmetric
  // mode), named in labels ("" or "expert ").
  struct PartRun : DataParallelPart {
    std::string name;
    std::vector<std::vector<int>> replicas;
  };
  struct PendingGather {
    StreamId stream;
    const PartRun* part;
    double bytes;
    std::string label;
  };

  // A data-parallel collective of `part` on `stream`: the template's fixed duration (full
  // mode), or the runtime's run of every replica group.
  TaskId dp_collective(StreamId stream, models::CollectiveKind kind, const PartRun* part, double bytes,
                       const std::string& label, std::initializer_list<TaskId> after) {
    const exec::TaskTraits traits = op_traits(OpKind::dp_comm, 0, bytes);
    if (full_) {
      const auto ps = engine::seconds_to_ps(comm_.time_s(kind, part->group, bytes));
      const TaskId task = graph_.add_task(stream, ps, traits, label, after);
      record(task, {part->name.empty() ? GroupDimension::data : GroupDimension::expert_data, kind, bytes,
                    graph_.stream_device(stream), -1});
      return task;
    }
    return graph_.add_work(stream, comm_.collective(kind, part->replicas, bytes), traits, label, after);
  }

  // Data parallelism over one part's group:
  // * ZeRO 0: all-reduce of the gradients; ZeRO 1 (Megatron's distributed optimizer):
  //   reduce-scatter, Adam on the shard, all-gather of the updated parameters. With
  //   overlap_grad_reduce both go in buckets: reductions during the last micro-batch's
  //   backward, parameter gathers before the first micro-batch's forward of their layers.
  // * ZeRO 2 (DeepSpeed stage 2): gradients are sharded too, so every micro-batch's backward
  //   reduce-scatters its buckets as they become ready; parameters as ZeRO 1.
  // * ZeRO 3 (FSDP): parameters are sharded as well: every micro-batch all-gathers each unit
  //   (layer, embedding, head) before its forward and again before its backward, prefetched one
  //   unit ahead on a gather stream, and reduce-scatters its gradients after its backward on a
  //   reduce stream; nothing is left after the optimizer.
  // Returns the reductions the optimizer waits for.
  std::vector<TaskId> build_data_parallel_part(StageTasks& stage, int p, PartRun& stored_part,
                                               StreamId& stream, StreamId& reduce_stream, const char* stream_name) {
    const TrainingWorkload& w = setup_.workload;
    parts_.push_back(std::move(stored_part));
    const PartRun* part = &parts_.back();
    std::vector<TaskId> reductions;
    if (part->group.size() < 2) return reductions;
    const models::ZeroSharding& sharding = part->sharding;
    const bool sharded_optimizer = sharding.gathers_parameters();
    const auto reduce_kind = sharding.gradient_reduction();
    const auto gather_kind = models::CollectiveKind::all_gather;
    const auto bucket_size = megatron_bucket_parameters(static_cast<int>(part->group.size()));
    stream = graph_.add_stream(fmt::format("stage {} {}", p, stream_name), p, exec::StreamRole::communication);
    const std::string& n = part->name;
    if (sharding.gathers_every_pass()) {
      reduce_stream =
          graph_.add_stream(fmt::format("stage {} {}-reduce", p, stream_name), p, exec::StreamRole::communication);
      TaskId previous_start = -1;
      for (std::size_t step_index = 0; step_index < stage.steps.size(); ++step_index) {
        const PipelineStep& step = stage.steps[step_index];
        const char* pass = step.backward ? "bwd" : "fwd";
        for (const auto& span : stage.step_units[step_index]) {
          const double parameters = part->units[span.unit];
          if (parameters <= 0) continue;
          // One collective per share of the unit (one, or one per parameter tensor), queued on
          // the stream; the first waits for the prefetch point, the unit for the last.
          const std::vector<double> whole{1.0};
          const std::vector<double>& shares = span.unit < part->unit_shares.size() ? part->unit_shares[span.unit] : whole;
          TaskId gather = -1;
          for (std::size_t i = 0; i < shares.size(); ++i) {
            const std::string label =
                shares.size() == 1
                    ? fmt::format("{}param all-gather {} mb{} unit {}", n, pass, step.microbatch, span.unit)
                    : fmt::format("{}param all-gather {} mb{} unit {} tensor {}", n, pass, step.microbatch, span.unit, i);
            const double bytes = parameters * shares[i] * part->unit_gather_bytes[span.unit];
            gather = i == 0 && previous_start >= 0
                         ? dp_collective(stream, gather_kind, part, bytes, label, {previous_start})
                         : dp_collective(stream, gather_kind, part, bytes, label, {});
            // List-form all-gather: the per-rank copies follow on the same stream.
            if (const double copies_s = zero3_gather_copies_s(setup_, bytes, part->group.size()); copies_s > 0) {
              gather = graph_.add_task(stream, engine::seconds_to_ps(copies_s),
                                       {exec::TaskKind::memory_transfer, static_cast<std::uint8_t>(OpKind::dp_comm)},
                                       label + " per-rank copies", {gather});
            }
          }
          graph_.add_dependency(span.first, gather);
          previous_start = span.first;
          if (step.backward) {
            for (std::size_t i = 0; i < shares.size(); ++i) {
              const std::string label =
                  shares.size() == 1
                      ? fmt::format("{}grad reduce-scatter mb{} unit {}", n, step.microbatch, span.unit)
                      : fmt::format("{}grad reduce-scatter mb{} unit {} tensor {}", n, step.microbatch, span.unit, i);
              reductions.push_back(dp_collective(reduce_stream, reduce_kind, part,
                                                 parameters * shares[i] * w.grad_bytes_per_param, label, {span.last}));
            }
          }
        }
      }
      return reductions;
    }
    if (sharding.reduces_every_microbatch()) {
      // Per micro-batch: the units of each backward step, bucketed in the order they finish.
      for (std::size_t step_index = 0; step_index < stage.steps.size(); ++step_index) {
        const PipelineStep& step = stage.steps[step_index];
        if (!step.backward) continue;
        std::vector<const StageTasks::UnitSpan*> spans;
        std::vector<double> parameters;
        for (const auto& span : stage.step_units[step_index]) {
          if (part->units[span.unit] <= 0) continue;
          spans.push_back(&span);
          parameters.push_back(part->units[span.unit]);
        }
        const auto buckets = form_gradient_buckets(parameters, bucket_size);
        for (std::size_t b = 0; b < buckets.size(); ++b) {
          const auto* ready = spans[static_cast<std::size_t>(buckets[b].units.back())];
          reductions.push_back(dp_collective(stream, reduce_kind, part, buckets[b].parameters * w.grad_bytes_per_param,
                                             fmt::format("{}grad reduce-scatter mb{} bucket {}", n, step.microbatch, b),
                                             {ready->last}));
        }
      }
      after_optimizer_gathers_.push_back({stream, part, part->stage_gather_bytes(), n + "param all-gather"});
      return reductions;
    }
    if (!w.overlap_grad_reduce) {
      reductions.push_back(dp_collective(stream, reduce_kind, part, part->stage_parameters * w.grad_bytes_per_param,
                                         fmt::format("{}grad {}", n, models::collective_name(reduce_kind)),
                                         {stage.last_backward}));
      if (sharded_optimizer) {
        after_optimizer_gathers_.push_back({stream, part, part->stage_gather_bytes(), n + "param all-gather"});
      }
      return reductions;
    }
    // Units in backward order: the order their gradients become ready.
    std::vector<std::size_t> backward_units;
    std::vector<double> parameters;
    for (std::size_t u = part->units.size(); u-- > 0;) {
      if (part->units[u] <= 0) continue;
      backward_units.push_back(u);
      parameters.push_back(part->units[u]);
    }
    const auto buckets = form_gradient_buckets(parameters, bucket_size);
    if (sharded_optimizer) {
      for (std::size_t b = buckets.size(); b-- > 0;) {
        std::vector<std::size_t> bucket_units;
        for (int i : buckets[b].units) bucket_units.push_back(backward_units[static_cast<std::size_t>(i)]);
        const TaskId gather = dp_collective(stream, gather_kind, part, part->gather_bytes(bucket_units),
                                            fmt::format("{}param all-gather bucket {}", n, b), {});
        for (int i : buckets[b].units) {
          graph_.add_dependency(stage.unit_first_use[backward_units[static_cast<std::size_t>(i)]], gather);
        }
      }
    }
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const std::size_t ready_unit = backward_units[static_cast<std::size_t>(buckets[b].units.back())];
      reductions.push_back(dp_collective(stream, reduce_kind, part, buckets[b].parameters * w.grad_bytes_per_param,
                                         fmt::format("{}grad {} bucket {}", n, models::collective_name(reduce_kind), b),
                                         {stage.unit_grad_ready[ready_unit]}));
    }
    return reductions;
  }

  const TrainingSetup& setup_;
  const std::vector<StageProgram>& programs_;
  RankLayout layout_;
  platform::CommRuntime& comm_;
  bool full_ = false;
  engine::TimePs host_op_ps_ = 0;  // host time to issue one op; 0: the host is not modelled
  std::vector<GroupCollective> collectives_;  // by task id
  std::vector<KernelClass> kernel_classes_;   // by task id (compute ops of a stage program)
  std::map<const StageOp*, exec::Work> op_work_;
  std::map<std::pair<int, int>, exec::Work> p2p_work_;
  std::deque<PartRun> parts_;  // stable addresses: tasks keep pointers to them
  std::vector<PendingGather> after_optimizer_gathers_;
  exec::TaskGraph graph_;
  std::vector<StageTasks> stages_;
};

}  // namespace

std::vector<int> group_members(const ParallelismConfig& par, const RankLayout& layout, const GroupCollective& info,
                               int instance) {
  const ReplicaIndex r = replica_of(par, instance);
  const int stage = info.stage;
  const int gradient_index = r.c + par.cp * r.d;
  std::vector<int> members;
  switch (info.dimension) {
    case GroupDimension::tensor:
      for (int j = 0; j < par.tp; ++j) members.push_back(layout.rank(j, r.c, r.d, stage));
      break;
    case GroupDimension::context:
      for (int j = 0; j < par.cp; ++j) members.push_back(layout.rank(r.t, j, r.d, stage));
      break;
    case GroupDimension::expert: {
      const int block = gradient_index / par.ep;
      for (int j = 0; j < par.ep; ++j) members.push_back(layout.gradient_rank(r.t, block * par.ep + j, stage));
      break;
    }
    case GroupDimension::data:
      for (int j = 0; j < par.dp * par.cp; ++j) members.push_back(layout.gradient_rank(r.t, j, stage));
      break;
    case GroupDimension::expert_data:
      for (int j = gradient_index % par.ep; j < par.dp * par.cp; j += par.ep) {
        members.push_back(layout.gradient_rank(r.t, j, stage));
      }
      break;
    case GroupDimension::pipeline:
      members = {layout.rank(r.t, r.c, r.d, stage), layout.rank(r.t, r.c, r.d, info.to_stage)};
      break;
    case GroupDimension::none: break;
  }
  return members;
}

StepGraph build_step_graph(const TrainingSetup& setup, const std::vector<StageProgram>& programs,
                           platform::CommRuntime& comm, bool full) {
  StepBuilder builder(setup, programs, comm, full);
  builder.build();
  return builder.take();
}

}  // namespace clustersim::training
