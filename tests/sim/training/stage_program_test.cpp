#include "sim/training/stage_program.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/accelerator/calibration_table.hpp"
#include "models/accelerator/compute_model.hpp"
#include "sim/engine/time.hpp"

#include "tests/sim/training/training_test_support.hpp"

namespace stage_program_test {

using namespace clustersim;
using namespace clustersim::training;
using namespace clustersim::training::testing;

namespace {
std::vector<std::string> names_of_kind(const std::vector<StageOp>& ops, OpKind kind) {
  std::vector<std::string> names;
  for (const auto& op : ops) {
    if (op.kind == kind) names.push_back(op.name);
  }
  return names;
}

struct Programs {
  explicit Programs(TrainingWorkload w) : bench(test_cluster(2, 8), std::move(w)) {}
  StageProgram stage(int p) const {
    return build_stage_program(bench.workload, bench.compute, bench.collectives,
                               RankLayout(bench.workload.parallelism), p);
  }
  Bench bench;
};
}  // namespace

TEST_CASE("sequence parallelism: all-gather before, reduce-scatter after; mirrored in backward") {
  auto w = workload(small_gpt(4), 2, 2, 4, 16);
  w.parallelism.sequence_parallel = true;
  const Programs programs(w);
  const auto first = programs.stage(0);
  using V = std::vector<std::string>;
  CHECK(names_of_kind(first.dense.forward, OpKind::tp_comm) ==
        V{"tp all-gather", "tp reduce-scatter", "tp all-gather", "tp reduce-scatter"});
  // Backward: each row-parallel GEMM's output gradient gathered; each column-parallel linear's
  // input gathered again for its wgrad (beside the dgrad) and its input gradient reduce-scattered.
  CHECK(names_of_kind(first.dense.backward, OpKind::tp_comm) ==
        V{"tp all-gather", "tp all-gather (wgrad input)", "tp reduce-scatter", "tp all-gather",
          "tp all-gather (wgrad input)", "tp reduce-scatter"});
  for (const char* dgrad : {"fc1 dgrad", "qkv dgrad"}) {
    const auto& ops = first.dense.backward;
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const StageOp& op) { return op.name == dgrad; });
    REQUIRE(it != ops.begin());
    REQUIRE(it != ops.end());
    CHECK(std::prev(it)->name == "tp all-gather (wgrad input)");
    CHECK(std::prev(it)->overlap == Overlap::with_next);
    CHECK(std::prev(it)->collective_bytes == doctest::Approx(2048.0 * 1024 * 2));  // the whole b*s*h input
  }
  CHECK(names_of_kind(first.embedding_forward, OpKind::tp_comm) == V{"tp reduce-scatter"});
  CHECK(first.head_forward.empty());
  const auto last = programs.stage(1);
  CHECK(last.embedding_forward.empty());
  CHECK(names_of_kind(last.head_forward, OpKind::compute) == V{"final ln", "lm head", "cross-entropy"});
  CHECK(names_of_kind(last.head_backward, OpKind::compute) ==
        V{"cross-entropy bwd", "lm head dgrad", "lm head wgrad", "final ln bwd"});
  // 1/t of the b*s*h bf16 activation crosses the pipeline with SP.
  CHECK(first.p2p_bytes == doctest::Approx(2048.0 * 1024 * 2 / 2));
  CHECK(first.p2p_forward_ps > 0);
  CHECK(first.p2p_backward_ps == 0);
  CHECK(last.p2p_backward_ps > 0);
  CHECK(first.chunk_layers == std::vector<int>{2});
  CHECK(last.first_layer(0) == 2);
}

TEST_CASE("without sequence parallelism: one all-reduce per block each way") {
  auto w = workload(small_gpt(4), 2, 2, 4, 16);
  w.parallelism.sequence_parallel = false;
  const auto program = Programs(w).stage(0);
  using V = std::vector<std::string>;
  CHECK(names_of_kind(program.dense.forward, OpKind::tp_comm) == V{"tp all-reduce", "tp all-reduce"});
  CHECK(names_of_kind(program.dense.backward, OpKind::tp_comm) == V{"tp all-reduce", "tp all-reduce"});
  // Backward all-reduce sits after the column-parallel GEMM's dgrad (Megatron's f operator).
  CHECK(program.dense.backward.back().name == "ln1 bwd");
  CHECK(program.dense.backward[program.dense.backward.size() - 2].name == "tp all-reduce");
  CHECK(program.p2p_bytes == doctest::Approx(2048.0 * 1024 * 2));
}

TEST_CASE("context parallelism: Transformer Engine's ring steps and their merge passes") {
  // seq 8192 over cp 2: 4096 local queries. Step 0: causal 4096 x 4096; step 1: 4096 x 2048.
  auto w = workload(small_gpt(4), 1, 1, 4, 8, 8192);
  w.parallelism.cp = 2;
  const Programs programs(w);
  const auto program = programs.stage(0);
  const auto find = [](const std::vector<StageOp>& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const StageOp& op) { return op.name == name; });
    REQUIRE(it != ops.end());
    return it;
  };
  models::AttentionShape shape;
  shape.batch = 1;
  shape.q_heads = shape.kv_heads = 16;
  shape.head_dim = 64;
  shape.seq_q = shape.seq_kv = 4096;
  shape.causal = true;
  models::AttentionShape step = shape;
  step.causal = false;
  step.seq_kv = 2048;
  const auto& compute = programs.bench.compute;
  for (const bool backward : {false, true}) {
    CAPTURE(backward);
    shape.backward = step.backward = backward;
    const double expected = compute.attention(shape).time_s + compute.attention(step).time_s;
    const auto& ops = backward ? program.dense.backward : program.dense.forward;
    const auto attn = find(ops, backward ? "attn bwd" : "attn");
    CHECK(engine::ps_to_seconds(attn->duration_ps) == doctest::Approx(expected).epsilon(1e-6));
    // The merge runs after the kernels (and the exchange beside them).
    const auto merge = find(ops, backward ? "cp grad accumulation" : "cp out correction");
    CHECK(merge > attn);
    CHECK(merge->duration_ps > 0);
    CHECK(merge->kind == OpKind::compute);
  }
  // Without context parallelism: one causal kernel and no merge.
  auto single = w;
  single.parallelism.cp = 1;
  single.parallelism.dp = 8;
  const auto plain = Programs(single).stage(0);
  CHECK(names_of_kind(plain.dense.forward, OpKind::cp_comm).empty());
  for (const auto& op : plain.dense.forward) CHECK(op.name != "cp out correction");
  for (const auto& op : plain.dense.backward) CHECK(op.name != "cp grad accumulation");
}

TEST_CASE("asynchronous backward TP reduction: beside the column-parallel wgrad, or after it") {
  // Megatron (2022 on) launches a column-parallel linear's input-gradient reduction after its
  // dgrad and runs the wgrad beside it; Megatron 2021 reduced after both GEMMs.
  const auto reduction_after = [](const std::vector<StageOp>& ops, const std::string& wgrad) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const StageOp& op) { return op.name == wgrad; });
    REQUIRE(it != ops.end());
    REQUIRE(std::next(it) != ops.end());
    REQUIRE(it != ops.begin());
    CHECK(std::prev(it)->name == wgrad.substr(0, wgrad.size() - 5) + "dgrad");
    return *std::next(it);
  };
  for (const bool sp : {false, true}) {
    CAPTURE(sp);
    auto w = workload(small_gpt(4), 2, 2, 4, 16);
    w.parallelism.sequence_parallel = sp;
    const std::string reduction = sp ? "tp reduce-scatter" : "tp all-reduce";
    for (const bool async : {true, false}) {
      CAPTURE(async);
      w.tp_async_backward = async;
      const Programs programs(w);
      const auto first = programs.stage(0);
      const Overlap expected = async ? Overlap::with_previous : Overlap::none;
      for (const char* wgrad : {"qkv wgrad", "fc1 wgrad"}) {
        const StageOp op = reduction_after(first.dense.backward, wgrad);
        CHECK(op.name == reduction);
        CHECK(op.overlap == expected);
      }
      // The LM head is a column-parallel linear too; the row-parallel mirrors stay blocking.
      const StageOp head = reduction_after(programs.stage(1).head_backward, "lm head wgrad");
      CHECK(head.name == reduction);
      CHECK(head.overlap == expected);
      for (const auto& op : first.dense.backward) {
        if (op.kind != OpKind::tp_comm || op.name == reduction) continue;
        // SP's re-gather of a column-parallel input runs beside the dgrad either way.
        CHECK(op.overlap == (op.name == "tp all-gather (wgrad input)" ? Overlap::with_next : Overlap::none));
      }
    }
  }
}

TEST_CASE("fp8: Transformer Engine's casts around every layer GEMM; LM head and router stay bf16") {
  auto w = workload(small_gpt(4), 2, 2, 4, 16);
  w.parallelism.sequence_parallel = true;
  const auto bf16 = Programs(w).stage(1);
  w.precision = models::Dtype::fp8;
  const auto fp8 = Programs(w).stage(1);
  using V = std::vector<std::string>;
  const auto compute = names_of_kind(fp8.dense.forward, OpKind::compute);
  // The cast precedes the TP all-gather that feeds the GEMM (TE gathers fp8), so the
  // all-gather stays next to the GEMM it may overlap.
  CHECK(fp8.dense.forward[1].name == "qkv fp8 cast");
  CHECK(fp8.dense.forward[2].name == "tp all-gather");
  CHECK(fp8.dense.forward[3].name == "qkv");
  for (const char* gemm : {"qkv", "proj", "fc1", "fc2"}) {
    CAPTURE(gemm);
    CHECK(std::count(compute.begin(), compute.end(), std::string(gemm) + " fp8 cast") == 1);
    const auto backward = names_of_kind(fp8.dense.backward, OpKind::compute);
    CHECK(std::count(backward.begin(), backward.end(), std::string(gemm) + " grad fp8 cast") == 1);
  }
  // Cast bytes: the input m x k at 2 bytes read and 2 written (fp8 and its transpose); the
  // proj input is 2048 tokens x 1024 / t (t = 2) wide.
  const auto proj_cast = std::find_if(fp8.dense.forward.begin(), fp8.dense.forward.end(),
                                      [](const StageOp& op) { return op.name == "proj fp8 cast"; });
  REQUIRE(proj_cast != fp8.dense.forward.end());
  const auto& c = Programs(w).bench.compute;
  models::ElementwiseShape shape;
  shape.bytes_read = shape.bytes_written = 2048.0 * 512 * 2;
  CHECK(proj_cast->duration_ps == engine::seconds_to_ps(c.elementwise(shape).time_s));
  CHECK(proj_cast->flops == 0);
  // Model FLOPs are unchanged; the layer GEMMs get faster, the LM head does not.
  auto flops = [](const std::vector<StageOp>& ops) {
    double sum = 0;
    for (const auto& op : ops) sum += op.flops;
    return sum;
  };
  CHECK(flops(fp8.dense.forward) == doctest::Approx(flops(bf16.dense.forward)));
  const auto head_time = [](const StageProgram& p, const std::string& name) {
    for (const auto& op : p.head_forward) {
      if (op.name == name) return op.duration_ps;
    }
    return engine::TimePs{-1};
  };
  CHECK(head_time(fp8, "lm head") == head_time(bf16, "lm head"));
  CHECK(names_of_kind(fp8.head_forward, OpKind::compute) == V{"final ln", "lm head", "cross-entropy"});
}

TEST_CASE("RoPE: one fused pass over the local queries and keys each way, only when the model has it") {
  auto model = small_gpt(4);  // hidden 1024, 16 heads of 64
  model.num_key_value_heads = 4;
  auto w = workload(model, 2, 1, 8, 16);
  const auto plain = Programs(w).stage(0);
  const auto names = names_of_kind(plain.dense.forward, OpKind::compute);
  CHECK(std::count(names.begin(), names.end(), std::string("rope")) == 0);
  w.model.rope_theta = 500000;
  const Programs programs(w);
  const auto rotary = programs.stage(0);
  const auto find = [](const std::vector<StageOp>& ops, const std::string& name) {
    return std::find_if(ops.begin(), ops.end(), [&](const StageOp& op) { return op.name == name; });
  };
  const auto fwd = find(rotary.dense.forward, "rope");
  REQUIRE(fwd != rotary.dense.forward.end());
  CHECK(std::prev(fwd)->name == "qkv");  // after the projection, before the attention
  // 2048 tokens x (8 query + 2 key heads per TP rank) x 64 x 2 bytes, read and written.
  models::ElementwiseShape shape;
  shape.bytes_read = shape.bytes_written = 2048.0 * (8 + 2) * 64 * 2;
  CHECK(fwd->duration_ps == engine::seconds_to_ps(programs.bench.compute.elementwise(shape).time_s));
  const auto bwd = find(rotary.dense.backward, "rope bwd");
  REQUIRE(bwd != rotary.dense.backward.end());
  CHECK(bwd->duration_ps == fwd->duration_ps);  // the gradients rotated back: the same pass
  // Then (sequence parallelism) the re-gather of the qkv input beside its dgrad.
  CHECK(std::next(bwd)->name == "tp all-gather (wgrad input)");
  CHECK(std::next(bwd, 2)->name == "qkv dgrad");
}

TEST_CASE("ZeRO-3 per-tensor collectives: a layer's parameter tensors and their shares") {
  auto model = small_gpt(4);  // hidden 1024, 16 heads, 4h GeLU MLP, MHA
  auto w = workload(model, 2, 2, 4, 16);
  w.parallelism.zero = 3;
  const auto layer = Programs(w).stage(0);
  CHECK(layer.dense.tensor_shares == std::vector<double>{1.0});  // default: one collective per layer
  w.parallelism.zero3_granularity = Zero3Granularity::tensor;
  const auto plain = Programs(w).stage(0);
  // norm h, QKV 3h^2/t, proj h^2/t, norm h, fc1 4h^2/t, fc2 4h^2/t (t = 2)
  const double h = 1024, t = 2;
  const std::vector<double> sizes{h, 3 * h * h / t, h * h / t, h, 4 * h * h / t, 4 * h * h / t};
  double total = 0;
  for (const double s : sizes) total += s;
  REQUIRE(plain.dense.tensor_shares.size() == 6);
  for (std::size_t i = 0; i < sizes.size(); ++i) CHECK(plain.dense.tensor_shares[i] == doctest::Approx(sizes[i] / total));
  CHECK(plain.embedding_tensor_shares == std::vector<double>{1.0});
  const auto last = Programs(w).stage(1);  // pp 2: the head holds the final norm and the LM head
  CHECK(last.head_tensor_shares.size() == 2);
  w.model.linear_bias = true;  // Megatron GPT: every linear and norm has a bias: 12 tensors
  const auto biased = Programs(w).stage(0);
  CHECK(biased.dense.tensor_shares.size() == 12);
  CHECK(Programs(w).stage(1).head_tensor_shares.size() == 3);
  double sum = 0;
  for (const double share : biased.dense.tensor_shares) sum += share;
  CHECK(sum == doctest::Approx(1.0));
}

TEST_CASE("recompute policies") {
  auto w = workload(small_gpt(4), 2, 2, 4, 16);
  w.recompute = Recompute::none;
  const auto none = Programs(w).stage(0);
  CHECK(names_of_kind(none.dense.backward, OpKind::recompute).empty());
  CHECK(model_flops(none.dense.backward) == doctest::Approx(2 * model_flops(none.dense.forward)));
  w.recompute = Recompute::selective;
  const auto selective = Programs(w).stage(0);
  CHECK(names_of_kind(selective.dense.backward, OpKind::recompute) ==
        std::vector<std::string>{"attn recompute"});
  // Megatron's convention: attention forward 4 b s^2 h / t FLOPs (non-causal).
  const double attention = 4.0 * 2048 * 2048 * 1024 / 2;
  CHECK(hardware_flops(selective.dense.backward) - model_flops(selective.dense.backward) ==
        doctest::Approx(attention));
  w.recompute = Recompute::full;
  const auto full = Programs(w).stage(0);
  CHECK(hardware_flops(full.dense.backward) - model_flops(full.dense.backward) ==
        doctest::Approx(hardware_flops(full.dense.forward)));
  CHECK(full.dense.backward.front().name == "recompute ln1");
  CHECK(full.dense.backward.size() == none.dense.backward.size() + full.dense.forward.size());
  // torchtitan's per-op policy (GELU MLP, MHA): of wq wk wv wo fc1 fc2 it saves the 1st, 3rd
  // and 5th outputs and the attention kernel's, so K (h^2 of the 3h^2 QKV GEMM), the output
  // projection (h^2) and fc2 (4h^2) run again: 12 of the 24 h^2 FLOPs per token of the
  // forward's matmuls, and the attention core is not replayed.
  w.recompute = Recompute::op;
  const auto op = Programs(w).stage(0);
  const auto replayed = names_of_kind(op.dense.backward, OpKind::recompute);
  CHECK(std::find(replayed.begin(), replayed.end(), "recompute qkv") != replayed.end());
  CHECK(std::find(replayed.begin(), replayed.end(), "recompute fc2") != replayed.end());
  CHECK(std::find(replayed.begin(), replayed.end(), "recompute fc1") == replayed.end());
  for (const auto& name : replayed) CHECK(name.find("attn") == std::string::npos);
  CHECK(hardware_flops(op.dense.backward) - model_flops(op.dense.backward) ==
        doctest::Approx((model_flops(none.dense.forward) - attention) / 2).epsilon(1e-12));
}

TEST_CASE("parameters per rank and the optimizer shard") {
  auto w = workload(small_gpt(4), 2, 2, 4, 16);
  const Programs programs(w);
  const auto first = programs.stage(0);
  const auto last = programs.stage(1);
  const double layer = 12.0 * 1024 * 1024 + 2 * 1024;  // 4h MLP + attention + two norms
  CHECK(first.dense.parameters == doctest::Approx(layer / 2));
  CHECK(first.embedding_parameters == doctest::Approx(32768.0 * 1024 / 2));
  CHECK(last.head_parameters == doctest::Approx(32768.0 * 1024 / 2 + 1024));
  CHECK(first.stage_parameters == doctest::Approx(2 * layer / 2 + 32768.0 * 1024 / 2));
  w.parallelism.zero = 0;
  const auto replicated = Programs(w).stage(0);
  CHECK(replicated.optimizer_ps > 3 * first.optimizer_ps);
}

TEST_CASE("the optimizer step's memory traffic follows the optimizer state's layout") {
  auto w = workload(small_gpt(4), 2, 2, 4, 16);  // bf16 parameters, bf16 gradients, ZeRO-1 over dp 4
  const auto expected_ps = [&](double read_per_param, double written_per_param) {
    const Programs programs(w);
    const double shard = programs.stage(0).stage_parameters / 4;
    models::ElementwiseShape adam;
    adam.bytes_read = shard * read_per_param;
    adam.bytes_written = shard * written_per_param;
    return engine::seconds_to_ps(programs.bench.compute.elementwise(adam).time_s);
  };
  // fp32 master + fp32 m, v: copy the bf16 gradient into fp32 (read 2, write 4), the norm
  // (read 4), Adam (read master, gradient, m, v: 16; write master, m, v: 12), the bf16 copy
  // back (read 4, write 2).
  CHECK(Programs(w).stage(0).optimizer_ps == expected_ps(2 + 4 + 16 + 4, 4 + 12 + 2));
  // Apex DistributedFusedAdam's remainders: the bf16 parameter and its 16-bit remainder are read
  // and written as the master (4), no copy back.
  w.optimizer.master_bytes = 2;
  CHECK(Programs(w).stage(0).optimizer_ps == expected_ps(2 + 4 + (4 + 4 + 8), 4 + (4 + 8)));
  // No master, bf16 moments: the bf16 parameter is updated in place.
  w.optimizer.master_bytes = 0;
  w.optimizer.moment_bytes = 2;
  CHECK(Programs(w).stage(0).optimizer_ps == expected_ps(2 + 4 + (2 + 4 + 4), 4 + (2 + 4)));
}

namespace {

/// Every op of the stage's program (embedding, each layer kind, head), forward and backward.
std::vector<const StageOp*> every_op(const StageProgram& program) {
  std::vector<const StageOp*> ops;
  for (const auto* list : {&program.embedding_forward, &program.embedding_backward, &program.dense.forward,
                           &program.dense.backward, &program.moe.forward, &program.moe.backward,
                           &program.head_forward, &program.head_backward}) {
    for (const auto& op : *list) ops.push_back(&op);
  }
  return ops;
}

/// Rows of a calibration CSV (kCalibrationHeader's columns): a bf16 GEMM or a forward
/// attention kernel of test-gpu measured at `time_s`.
std::string gemm_row(std::int64_t m, std::int64_t n, std::int64_t k, double time_s) {
  return fmt::format("test-gpu,gemm,bf16,{},{},{},,,,,,,,,,{:.17g},0,10,test\n", m, n, k, time_s);
}
std::string attention_row(const models::AttentionShape& shape, double time_s) {
  return fmt::format("test-gpu,attention,bf16,,,,{},{},{},{},{},{},{},0,,{:.17g},0,10,test\n", shape.batch,
                     shape.q_heads, shape.kv_heads, shape.seq_q, shape.seq_kv, shape.head_dim, shape.causal ? 1 : 0,
                     time_s);
}

}  // namespace

TEST_CASE("provenance: compute ops carry the compute model's estimator, communication the collective model") {
  auto w = workload(small_gpt(4), 2, 2, 2, 16);
  w.parallelism.cp = 2;
  w.parallelism.sequence_parallel = true;
  w.recompute = Recompute::selective;
  const Programs programs(w);
  for (const int stage : {0, 1}) {
    const StageProgram program = programs.stage(stage);
    std::size_t communication = 0;
    for (const StageOp* op : every_op(program)) {
      CAPTURE(op->name);
      const bool comm = training::is_communication(op->kind);
      communication += comm;
      // Uncalibrated: every compute estimate is the roofline.
      CHECK(op->provenance == (comm ? models::Provenance::collective_model : models::Provenance::roofline));
    }
    CHECK(communication > 0);  // tp and cp collectives
    CHECK(program.optimizer_provenance == models::Provenance::roofline);
  }
}

TEST_CASE("provenance: a calibrated compute model's measured GEMMs; ring attention takes its least trusted step") {
  // One layer, seq 2048 over cp 2 on two GPUs: 1,024 local tokens, 16 heads of 64.
  auto w = workload(small_gpt(1, 1024, 32768), 1, 1, 1, 4);
  w.parallelism.cp = 2;
  const auto topology = topologies::Topology::build(test_cluster(1, 2));
  const models::ComputeModel roofline(test_accelerator());
  // The four forward GEMMs of the layer measured at 1.25 x their roofline, and the causal
  // ring step 0 (1,024 queries over their 1,024 keys) too; not the non-causal steps.
  std::string csv = std::string(models::kCalibrationHeader) + "\n";
  for (const auto& [n, k] : {std::pair<std::int64_t, std::int64_t>{3072, 1024}, {1024, 1024}, {4096, 1024},
                             {1024, 4096}}) {
    csv += gemm_row(1024, n, k, 1.25 * roofline.gemm({1024, n, k, 1, models::Dtype::bf16}).time_s);
  }
  models::AttentionShape step0{1, 16, 16, 1024, 1024, 64, true, false, true, models::Dtype::bf16};
  csv += attention_row(step0, 1.25 * roofline.attention(step0).time_s);
  const models::ComputeModel calibrated(test_accelerator(), models::parse_calibration_csv(csv, "test.csv"));
  const models::CollectiveModel collectives(topology, models::CommConfig{}, models::CollectiveHardware{});
  const StageProgram program = build_stage_program(w, calibrated, collectives, RankLayout(w.parallelism), 0);
  const auto find = [](const std::vector<StageOp>& ops, const std::string& name) -> const StageOp& {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const StageOp& op) { return op.name == name; });
    REQUIRE(it != ops.end());
    return *it;
  };
  for (const char* name : {"qkv", "proj", "fc1", "fc2"}) {
    CAPTURE(name);
    CHECK(find(program.dense.forward, name).provenance == models::Provenance::measured_table);
  }
  // No bandwidth rows: elementwise ops stay on the roofline.
  CHECK(find(program.dense.forward, "ln1").provenance == models::Provenance::roofline);
  // Step 0 is measured; the non-causal steps (1,024 queries over 512 keys) are not, so the
  // attention op is only as trusted as they are.
  models::AttentionShape ring = step0;
  ring.causal = false;
  ring.seq_kv = 512;
  REQUIRE(calibrated.attention(step0).provenance == models::Provenance::measured_table);
  const models::Provenance ring_provenance = calibrated.attention(ring).provenance;
  REQUIRE(ring_provenance != models::Provenance::measured_table);
  CHECK(find(program.dense.forward, "attn").provenance == ring_provenance);

  // Per step (4 micro-batches): the ops' times by estimator add up to every op x 4 + the optimizer.
  const ProvenanceSeconds seconds = step_seconds_by_provenance(program, 4);
  double expected_s = engine::ps_to_seconds(program.optimizer_ps);
  double measured_s = 0;
  for (const StageOp* op : every_op(program)) {
    expected_s += 4 * engine::ps_to_seconds(op->duration_ps);
    if (op->provenance == models::Provenance::measured_table) measured_s += 4 * engine::ps_to_seconds(op->duration_ps);
  }
  CHECK(seconds.total_s() == doctest::Approx(expected_s).epsilon(1e-12));
  CHECK(seconds[models::Provenance::measured_table] == doctest::Approx(measured_s).epsilon(1e-12));
  CHECK(seconds[models::Provenance::measured_table] > 0);
  CHECK(seconds[models::Provenance::collective_model] > 0);  // the CP exchange
}

}  // namespace stage_program_test
