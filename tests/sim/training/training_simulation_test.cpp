#include "sim/training/training_simulation.hpp"

#include <doctest/doctest.h>

#include <limits>

#include "tests/relative_approx.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/llm/flop_count.hpp"
#include "sim/training/analytical_step.hpp"
#include "sim/training/data_parallel.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"
#include "tests/sim/training/training_test_support.hpp"

namespace training_simulation_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;
using namespace clustersim::training;
using namespace clustersim::training::testing;
using engine::seconds_to_ps;

namespace {

double breakdown_sum(const StepBreakdown& b) {
  return b.compute_s + b.exposed_tp_s + b.exposed_cp_s + b.exposed_ep_s + b.exposed_pp_s + b.exposed_dp_s + b.bubble_s +
         b.optimizer_s + b.exposed_host_s;
}

// Picoseconds of one op, rounded the way the simulator rounds each task.
engine::TimePs ps(const models::OpEstimate& estimate) { return seconds_to_ps(estimate.time_s); }

}  // namespace

TEST_CASE("single GPU: the step is the sum of every op time times micro-batches plus Adam") {
  const auto model = small_gpt(4, 1024, 32768);
  const Bench bench(test_cluster(1, 1), workload(model, 1, 1, 1, 4));
  const auto& c = bench.compute;
  const std::int64_t s = 2048, h = 1024, f = 4096, V = 32768;
  const double act = static_cast<double>(s * h) * 2;  // one b*s*h bf16 activation
  auto gemm = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    return ps(c.gemm({m, n, k, 1, models::Dtype::bf16}));
  };
  // The wgrad accumulates into the bf16 gradient buffer (GemmShape::accumulate_bytes 2).
  auto wgrad = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    models::GemmShape shape{m, n, k, 1, models::Dtype::bf16};
    shape.accumulate_bytes = 2;
    return ps(c.gemm(shape));
  };
  auto train_gemm = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    return gemm(m, n, k) + gemm(m, k, n) + wgrad(k, n, m);  // forward, dgrad, wgrad
  };
  auto elem = [&](double read, double written) {
    return ps(c.elementwise({read, written, 0})) + ps(c.elementwise({1.5 * read, 1.5 * written, 0}));
  };
  models::AttentionShape attention{1, 16, 16, s, s, 64, true, false, true, models::Dtype::bf16};
  const auto attention_fwd = ps(c.attention(attention));
  attention.backward = true;
  const auto attention_bwd = ps(c.attention(attention));
  const engine::TimePs layer = elem(act, act) + train_gemm(s, 3 * h, h) + attention_fwd + attention_bwd +
                               train_gemm(s, h, h) + elem(2 * act, act) + elem(act, act) +
                               train_gemm(s, f, h) + elem(act * 4, act * 4) + train_gemm(s, h, f) +
                               elem(2 * act, act);
  const double logits = static_cast<double>(s * V) * 4;
  // The lookup's dense weight gradient: a bf16 [V, h] gradient written, then added into the
  // bf16 gradient buffer (read both, write the buffer).
  const double table = static_cast<double>(V * h);
  const engine::TimePs embedding = elem(act, act) + ps(c.elementwise({table * 4, table * 4, 0}));
  const engine::TimePs head = elem(act, act) + train_gemm(s, V, h) + elem(3 * logits, 3 * logits);
  const double params = 4 * model.layer_parameters() + 2.0 * static_cast<double>(V * h) + h;
  // bf16: gradients copied into fp32 main gradients (2 + 4), the norm (4), Adam (16 + 12), the
  // parameters copied back (4 + 2); no fp16 loss scaling.
  const engine::TimePs adam = ps(c.elementwise({params * 26, params * 18, 0}));
  const engine::TimePs expected = 4 * (embedding + 4 * layer + head) + adam;

  const auto result = bench.run();
  CHECK(seconds_to_ps(result.step_time_s) == expected);
  CHECK(result.breakdown.optimizer_s == doctest::Approx(engine::ps_to_seconds(adam)));
  CHECK(result.breakdown.bubble_s == 0);
  CHECK(result.breakdown.exposed_dp_s == 0);
  CHECK(result.breakdown.exposed_tp_s == 0);
  CHECK(result.microbatches == 4);
  CHECK(result.gpus == 1);
  CHECK(result.tokens_per_s == doctest::Approx(4.0 * 2048 / result.step_time_s));
}

TEST_CASE("host dispatch: the device waits for ops the host has not issued yet") {
  // One GPU, 4 micro-batches: the host issues op i (0-based, in program order) at (i + 1) h.
  auto w = workload(small_gpt(4, 1024, 32768), 1, 1, 1, 4);
  const Bench free_host(test_cluster(1, 1), w);
  const TrainingResult base = free_host.run();
  const StageProgram program =
      build_stage_programs(TrainingSetup{free_host.workload, free_host.compute, free_host.collectives,
                                         free_host.topology, 1})
          .front();
  std::int64_t ops = 0;
  engine::TimePs shortest = std::numeric_limits<engine::TimePs>::max();
  for (const auto* pass : {&program.embedding_forward, &program.head_forward, &program.head_backward,
                           &program.embedding_backward, &program.dense.forward, &program.dense.backward}) {
    const std::int64_t repeats = pass == &program.dense.forward || pass == &program.dense.backward ? 4 : 1;
    ops += repeats * static_cast<std::int64_t>(pass->size());
    for (const StageOp& op : *pass) shortest = std::min(shortest, op.duration_ps);
  }
  ops *= 4;
  const engine::TimePs adam = program.optimizer_ps;

  SUBCASE("a host faster than every kernel: the first op waits one issue, the optimizer one more") {
    const engine::TimePs h = shortest / 2;
    w.host_op_time = engine::ps_to_seconds(h);
    const TrainingResult r = Bench(test_cluster(1, 1), w).run();
    CHECK(seconds_to_ps(r.step_time_s) == seconds_to_ps(base.step_time_s) + 2 * h);
    CHECK(seconds_to_ps(r.breakdown.exposed_host_s) == 2 * h);
    CHECK(r.breakdown.compute_s == doctest::Approx(base.breakdown.compute_s).epsilon(1e-12));
    CHECK(breakdown_sum(r.breakdown) == doctest::Approx(r.step_time_s).epsilon(1e-9));
  }
  SUBCASE("a host slower than every kernel: the step is its issue time, the last kernel, the sync and Adam") {
    const engine::TimePs h = engine::seconds_to_ps(10e-3);
    w.host_op_time = engine::ps_to_seconds(h);
    const TrainingResult r = Bench(test_cluster(1, 1), w).run();
    const engine::TimePs last = program.embedding_backward.back().duration_ps;
    CHECK(seconds_to_ps(r.step_time_s) == (ops + 1) * h + last + adam);
    CHECK(r.breakdown.exposed_host_s == doctest::Approx(r.step_time_s - r.breakdown.compute_s - r.breakdown.optimizer_s)
                                           .epsilon(1e-12));
    CHECK(breakdown_sum(r.breakdown) == doctest::Approx(r.step_time_s).epsilon(1e-9));
    const auto has = [&](std::string_view text) {
      return std::any_of(r.notes.begin(), r.notes.end(),
                         [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    CHECK(has("host dispatch: each rank's host issues every op in program order, 10000 us each (workload.host_op_time)"));
  }
  SUBCASE("the framework's default applies when the workload leaves it unset") {
    w.host_op_time = -1;
    CHECK(w.host_op_time_s() == kFrameworkHostOpTimeS);
    const TrainingResult r = Bench(test_cluster(1, 1), w).run();
    CHECK(r.step_time_s > base.step_time_s);
  }
}

TEST_CASE("model FLOPs match Megatron's 72 B s L h^2 (1 + s/6h + V/12Lh) formula") {
  const auto model = small_gpt(4, 1024, 32768);
  const double B = 16, s = 2048, L = 4, h = 1024, V = 32768;
  const double formula = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  SUBCASE("no recompute, tp2 pp2 dp4") {
    const Bench bench(test_cluster(2, 8), workload(model, 2, 2, 4, 16));
    const auto result = bench.run();
    CHECK(result.model_flops_per_step == doctest::Approx(formula).epsilon(1e-9));
    CHECK(result.model_flops_per_step ==
          doctest::Approx(B * s * models::model_flops_per_token_training(model, 2048)).epsilon(1e-9));
    CHECK(result.hardware_flops_per_step == doctest::Approx(result.model_flops_per_step).epsilon(1e-12));
    const double expected_mfu = formula / result.step_time_s / 16 / 1e15;
    CHECK(result.mfu == doctest::Approx(expected_mfu).epsilon(1e-9));
    CHECK(result.peak_tflops_per_gpu == doctest::Approx(1000.0));
  }
  SUBCASE("full recompute adds one forward of the layers (SC21 eq. 3)") {
    auto w = workload(model, 2, 2, 4, 16);
    w.recompute = Recompute::full;
    const Bench bench(test_cluster(2, 8), w);
    const auto result = bench.run();
    const double hardware = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
    CHECK(result.model_flops_per_step == doctest::Approx(formula).epsilon(1e-9));
    CHECK(result.hardware_flops_per_step == doctest::Approx(hardware).epsilon(1e-9));
    CHECK(result.hfu > result.mfu);
  }
}

TEST_CASE("1F1B bubble on a uniform 4-stage pipeline is (p-1)/m of the compute") {
  // Tiny vocabulary and a free network: stages are nearly identical and transfers cost ~0.
  const auto model = small_gpt(8, 2048, 256);
  auto run = [&](std::int64_t microbatches, PipelineSchedule schedule) {
    auto w = workload(model, 1, 4, 1, microbatches);
    w.parallelism.schedule = schedule;
    const Bench bench(test_cluster(1, 4, true), w, true);
    return bench.run();
  };
  const auto m8 = run(8, PipelineSchedule::one_f_one_b);
  const auto m16 = run(16, PipelineSchedule::one_f_one_b);
  const double active8 = m8.step_time_s - m8.breakdown.optimizer_s;
  // (p-1)/(m+p-1) of the step is bubble.
  CHECK(m8.breakdown.bubble_s / active8 == doctest::Approx(3.0 / 11.0).epsilon(0.03));
  const double ratio8 = m8.breakdown.bubble_s / m8.breakdown.compute_s;
  const double ratio16 = m16.breakdown.bubble_s / m16.breakdown.compute_s;
  CHECK(ratio8 == doctest::Approx(3.0 / 8.0).epsilon(0.03));
  CHECK(ratio16 / ratio8 == doctest::Approx(0.5).epsilon(0.03));  // doubling m halves it
  CHECK(m8.breakdown.exposed_pp_s < 1e-3 * m8.step_time_s);

  SUBCASE("GPipe takes the same time as 1F1B when transfers are free") {
    const auto gpipe = run(8, PipelineSchedule::gpipe);
    CHECK(gpipe.step_time_s == doctest::Approx(m8.step_time_s).epsilon(0.005));
    CHECK(gpipe.fingerprint != m8.fingerprint);  // a different schedule ran
  }
}

TEST_CASE("breakdown parts add up to the step time") {
  const auto model = small_gpt(4, 1024, 32768);
  for (bool overlap : {false, true}) {
    for (int zero : {0, 1}) {
      for (bool sp : {false, true}) {
        CAPTURE(overlap);
        CAPTURE(zero);
        CAPTURE(sp);
        auto w = workload(model, 2, 2, 4, 32);
        w.overlap_grad_reduce = overlap;
        w.parallelism.zero = zero;
        w.parallelism.sequence_parallel = sp;
        w.recompute = Recompute::selective;
        const Bench bench(test_cluster(2, 8), w);
        const auto result = bench.run();
        CHECK(breakdown_sum(result.breakdown) == doctest::Approx(result.step_time_s).epsilon(1e-9));
        CHECK(result.breakdown.exposed_tp_s > 0);
        CHECK(result.breakdown.bubble_s > 0);
        CHECK(result.breakdown.exposed_pp_s > 0);
      }
    }
  }
}

TEST_CASE("ZeRO-3 per tensor: the same bytes in more collectives, each paying its latency") {
  auto model = small_gpt(4, 1024, 32768);
  model.linear_bias = true;
  auto w = workload(model, 1, 1, 16, 32);
  w.parallelism.zero = 3;
  const auto layer = Bench(test_cluster(2, 8), w).run();
  w.parallelism.zero3_granularity = Zero3Granularity::tensor;
  const Bench bench(test_cluster(2, 8), w);
  const auto tensor = bench.run();
  CHECK(breakdown_sum(tensor.breakdown) == doctest::Approx(tensor.step_time_s).epsilon(1e-9));
  CHECK(tensor.model_flops_per_step == layer.model_flops_per_step);
  CHECK(tensor.breakdown.compute_s == doctest::Approx(layer.breakdown.compute_s).epsilon(1e-9));
  CHECK(tensor.breakdown.exposed_dp_s > layer.breakdown.exposed_dp_s);
  CHECK(tensor.step_time_s > layer.step_time_s);
  // A lower bound by hand: every layer's 12 tensors are gathered twice per micro-batch (forward,
  // backward) on one stream; each gather costs at least its collective's time alone.
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  const auto programs = build_stage_programs(setup);
  const auto group = RankLayout(bench.workload.parallelism, setup.placement).gradient_group(0);
  double layer_gathers_s = 0;
  for (const double share : programs[0].dense.tensor_shares) {
    layer_gathers_s +=
        bench.collectives.time_s(models::CollectiveKind::all_gather, group, programs[0].dense.parameters * share * 2.0);
  }
  const double microbatches = 2;  // 32 sequences / dp 16
  CHECK(tensor.step_time_s > 2 * microbatches * 4 * layer_gathers_s);
  // MoE layers are not split into tensors: an error that says so.
  auto moe = workload(small_moe(), 1, 1, 16, 32);
  moe.parallelism.zero = 3;
  moe.parallelism.zero3_granularity = Zero3Granularity::tensor;
  CHECK_THROWS_WITH_AS(Bench(test_cluster(2, 8), moe).run(),
                       "zero3_granularity tensor is modelled for dense MHA/GQA layers; model 'test-moe' has "
                       "mixture-of-experts layers",
                       ConfigError);
}

TEST_CASE("ZeRO-3 list-form all-gathers: one copy per rank after each gather, on the gather stream") {
  auto model = small_gpt(4, 1024, 32768);
  model.linear_bias = true;
  auto w = workload(model, 1, 1, 16, 32);
  w.parallelism.zero = 3;
  w.parallelism.zero3_granularity = Zero3Granularity::tensor;
  const Bench flat(test_cluster(2, 8), w);
  w.parallelism.zero3_list_gathers = true;
  const Bench list(test_cluster(2, 8), w);
  TrainingSetup flat_setup{flat.workload, flat.compute, flat.collectives, flat.topology, 1};
  TrainingSetup setup{list.workload, list.compute, list.collectives, list.topology, 1};
  // 16 copies of 1e8 / 16 bytes each: a launch (4 us) and a read and a write at 3e12 x 0.85 B/s.
  CHECK(zero3_gather_copies_s(setup, 1e8, 16) == relative_approx(16 * 4e-6 + 2 * 1e8 / (3e12 * 0.85)));
  CHECK(zero3_gather_copies_s(flat_setup, 1e8, 16) == 0.0);  // the flat all_gather_into_tensor
  const auto a = flat.run();
  const auto b = list.run();
  CHECK(b.breakdown.compute_s == doctest::Approx(a.breakdown.compute_s).epsilon(1e-9));
  CHECK(b.step_time_s > a.step_time_s);
  CHECK(b.breakdown.exposed_dp_s > a.breakdown.exposed_dp_s);
  CHECK(breakdown_sum(b.breakdown) == doctest::Approx(b.step_time_s).epsilon(1e-9));
  // At most every gather's copies added to the step: 12 tensors a layer, 4 layers, gathered
  // before forward and backward of each of the 2 micro-batches, plus the embedding and head.
  const auto programs = build_stage_programs(setup);
  double layer_copies_s = 0;
  for (const double share : programs[0].dense.tensor_shares) {
    layer_copies_s += zero3_gather_copies_s(setup, programs[0].dense.parameters * share * 2.0, 16);
  }
  CHECK(b.step_time_s - a.step_time_s <= 2 * 2 * (4 * layer_copies_s + 2 * zero3_gather_copies_s(setup, 1e9, 16)));
  // The closed form charges the same copies.
  CHECK(estimate_training_step(setup).step_time_s == doctest::Approx(b.step_time_s).epsilon(0.03));
}

TEST_CASE("context parallelism halves each rank's tokens and keeps the breakdown consistent") {
  const auto model = small_gpt(4, 1024, 32768);
  auto w = workload(model, 2, 1, 4, 8, 8192);
  w.parallelism.cp = 2;
  const Bench bench(test_cluster(2, 8), w);
  const auto result = bench.run();
  CHECK(breakdown_sum(result.breakdown) == doctest::Approx(result.step_time_s).epsilon(1e-9));
  const double B = 8, s = 8192, L = 4, h = 1024, V = 32768;
  CHECK(result.model_flops_per_step ==
        doctest::Approx(72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))).epsilon(1e-9));
}

TEST_CASE("the same inputs give the same fingerprint; another seed or split does not") {
  const auto model = small_gpt(4, 1024, 32768);
  const Bench bench(test_cluster(2, 8), workload(model, 2, 2, 4, 16));
  const auto a = bench.run(5);
  const auto b = bench.run(5);
  CHECK(a.fingerprint == b.fingerprint);
  CHECK(a.events == b.events);
  CHECK(a.step_time_s == b.step_time_s);
  CHECK(a.events > 0);
  CHECK(bench.run(6).fingerprint != a.fingerprint);
  const Bench other(test_cluster(2, 8), workload(model, 4, 2, 2, 16));
  CHECK(other.run(5).fingerprint != a.fingerprint);
}

TEST_CASE("overlapping the gradient reduction with the backward hides data-parallel time") {
  const auto model = small_gpt(8, 2048, 32768);
  for (int zero : {0, 1}) {
    CAPTURE(zero);
    // One long micro-batch per rank, so the backward is long enough to hide the reduction
    // (Megatron reduces only during the last micro-batch's backward).
    auto w = workload(model, 2, 1, 8, 32, 4096);
    w.micro_batch = 4;
    w.parallelism.zero = zero;
    w.overlap_grad_reduce = false;
    const Bench plain(test_cluster(2, 8), w);
    w.overlap_grad_reduce = true;
    const Bench overlapped(test_cluster(2, 8), w);
    const auto a = plain.run();
    const auto b = overlapped.run();
    CHECK(a.breakdown.exposed_dp_s > 0);
    MESSAGE("exposed dp without/with overlap: " << a.breakdown.exposed_dp_s << " / " << b.breakdown.exposed_dp_s);
    CHECK(b.breakdown.exposed_dp_s < 0.5 * a.breakdown.exposed_dp_s);
    CHECK(b.step_time_s < a.step_time_s);
    CHECK(breakdown_sum(b.breakdown) == doctest::Approx(b.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-1 shards the optimizer over the data-parallel ranks") {
  const auto model = small_gpt(4, 1024, 32768);
  auto w = workload(model, 2, 1, 8, 32);
  w.parallelism.zero = 0;
  const Bench replicated(test_cluster(2, 8), w);
  w.parallelism.zero = 1;
  const Bench sharded(test_cluster(2, 8), w);
  const double ratio = replicated.run().breakdown.optimizer_s / sharded.run().breakdown.optimizer_s;
  CHECK(ratio > 4);  // 8x fewer bytes, minus the fixed launch cost
  CHECK(ratio <= 8);
}

TEST_CASE("invalid splits are rejected with a message naming the numbers") {
  const auto model = small_gpt(4, 1024, 32768);
  auto expect = [&](TrainingWorkload w, const std::string& message, int nodes = 2) {
    const Bench bench(test_cluster(nodes, 8), std::move(w));
    CHECK_THROWS_WITH_AS(bench.run(), message.c_str(), ConfigError);
  };
  expect(workload(model, 2, 2, 4, 10), "global_batch 10 is not divisible by dp x micro_batch = 4 x 1");
  expect(workload(small_gpt(6), 2, 4, 2, 16), "6 layers do not divide evenly over pp x vp = 4 x 1 virtual stages; give stage_layers for an uneven split");
  auto heads = workload(model, 16, 1, 1, 16);
  heads.model.num_attention_heads = 8;
  heads.model.num_key_value_heads = 8;
  expect(heads, "num_attention_heads 8 is not divisible by tp 16");
  expect(workload(model, 2, 2, 2, 16),
         "tp * pp * dp * cp = 2 * 2 * 2 * 1 = 8 does not match the topology's 16 accelerators");
  auto cp = workload(model, 2, 1, 4, 16, 2049);
  cp.parallelism.cp = 2;
  expect(cp, "seq_len 2049 is not divisible by 2 x cp = 4 (context parallelism splits each sequence into 2 x cp chunks)");
  auto mb = workload(model, 2, 2, 4, 16);
  mb.micro_batch = 0;
  expect(mb, "micro_batch must be >= 1, got 0");
  auto vp = workload(model, 2, 2, 4, 16);
  vp.parallelism.vp = 2;
  expect(vp, "vp = 2 needs schedule 'interleaved', got '1f1b'");
}

TEST_CASE("interleaved 1F1B divides the bubble by the number of chunks") {
  const auto model = small_gpt(8, 2048, 256);
  auto run = [&](PipelineSchedule schedule, int vp) {
    auto w = workload(model, 1, 4, 1, 8);
    w.parallelism.schedule = schedule;
    w.parallelism.vp = vp;
    const Bench bench(test_cluster(1, 4, true), w, true);
    return bench.run();
  };
  const auto plain = run(PipelineSchedule::one_f_one_b, 1);
  const auto interleaved = run(PipelineSchedule::interleaved, 2);
  // Megatron: bubble / ideal = (p - 1) / (m * vp) = 3 / 16.
  CHECK(interleaved.breakdown.bubble_s / interleaved.breakdown.compute_s == doctest::Approx(3.0 / 16).epsilon(0.05));
  CHECK(interleaved.step_time_s < plain.step_time_s);
  CHECK(interleaved.model_flops_per_step == doctest::Approx(plain.model_flops_per_step).epsilon(1e-12));
  CHECK(interleaved.breakdown.compute_s == doctest::Approx(plain.breakdown.compute_s).epsilon(1e-6));
  CHECK(breakdown_sum(interleaved.breakdown) == doctest::Approx(interleaved.step_time_s).epsilon(1e-9));
}

TEST_CASE("interleaved on a real network, with data parallelism, adds up") {
  auto w = workload(small_gpt(8), 2, 2, 4, 16);
  w.parallelism.schedule = PipelineSchedule::interleaved;
  w.parallelism.vp = 2;
  const Bench bench(test_cluster(2, 8), w);
  const auto result = bench.run();
  CHECK(breakdown_sum(result.breakdown) == doctest::Approx(result.step_time_s).epsilon(1e-9));
  CHECK(result.breakdown.exposed_pp_s > 0);
  w.parallelism.vp = 3;
  const Bench uneven(test_cluster(2, 8), w);
  CHECK_THROWS_WITH_AS(uneven.run(),
                       "8 layers do not divide evenly over pp x vp = 2 x 3 virtual stages; give stage_layers for an "
                       "uneven split",
                       ConfigError);
}

TEST_CASE("Llama-3-70B on 1024 GPUs (tp8 pp4 dp32, 32 micro-batches) simulates with a plausible MFU") {
  models::TransformerSpec llama;
  llama.name = "llama-3-70b";
  llama.hidden_size = 8192;
  llama.num_hidden_layers = 80;
  llama.num_attention_heads = 64;
  llama.num_key_value_heads = 8;
  llama.intermediate_size = 28672;
  llama.vocab_size = 128256;
  llama.hidden_act = models::Activation::swiglu;
  auto w = workload(llama, 8, 4, 32, 1024, 8192);
  w.recompute = Recompute::selective;
  topologies::ClusterNetworkSpec cluster = test_cluster(128, 8);
  cluster.scale_out.topology = "fat-tree";
  const Bench bench(cluster, w);
  const auto result = bench.run();
  CHECK(result.microbatches == 32);
  CHECK(result.gpus == 1024);
  // Published Megatron runs of this size reach 35-50 % MFU on H100; a sane model lands in 20-70 %.
  CHECK(result.mfu > 0.2);
  CHECK(result.mfu < 0.7);
  CHECK(breakdown_sum(result.breakdown) == doctest::Approx(result.step_time_s).epsilon(1e-9));
}

TEST_CASE("TP-communication overlap runs as Transformer Engine's ring exchange, pipeline and bulk methods") {
  const auto model = small_gpt(4, 4096, 32768);
  auto w = workload(model, 4, 1, 1, 4, 4096);
  w.parallelism.sequence_parallel = true;
  w.tp_async_backward = false;  // only Transformer Engine's collectives overlap
  const Bench plain(test_cluster(1, 4), w);
  w.tp_comm_overlap = true;
  const Bench overlapped(test_cluster(1, 4), w);
  TrainingSetup plain_setup{plain.workload, plain.compute, plain.collectives, plain.topology, 1};
  TrainingSetup setup{overlapped.workload, overlapped.compute, overlapped.collectives, overlapped.topology, 1};
  const auto before = build_stage_programs(plain_setup).front();
  const auto program = build_stage_programs(setup).front();
  const auto find = [](const std::vector<StageOp>& ops, std::string_view name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const StageOp& op) { return op.name == name; });
    REQUIRE(it != ops.end());
    return it;
  };
  const auto seconds = [](const StageOp& op) { return engine::ps_to_seconds(op.duration_ps); };
  const double hidden_bytes = 4096.0 * 4096.0 * 2.0;
  const double launch = overlapped.compute.spec().kernel_launch_s;
  const double margin = 132.0 / (132.0 - 16.0);  // 16 SMs reserved for pipeline and bulk transfers

  // Forward: ring-exchange all-gather beside qkv (whole tensor, copy engines, nothing exposed),
  // qkv in tp chunks; proj in 4 splits on the SMs the pipelined reduce-scatter leaves, 3/4 of
  // it beside proj and the last split exposed.
  const auto& fwd = program.dense.forward;
  const auto ring = find(fwd, "tp all-gather (ring exchange)");
  CHECK(ring->overlap == Overlap::with_next);
  CHECK(ring->engine == CommEngine::copy_engine);
  CHECK(ring->collective_bytes == doctest::Approx(hidden_bytes));
  CHECK((ring + 1)->name == "qkv (4 chunks)");
  CHECK(seconds(*(ring + 1)) == doctest::Approx(seconds(*find(before.dense.forward, "qkv")) + 3 * launch));
  const auto proj = find(fwd, "proj (4 chunks)");
  CHECK(seconds(*proj) ==
        doctest::Approx((seconds(*find(before.dense.forward, "proj")) + 3 * launch) * margin).epsilon(1e-6));
  CHECK((proj + 1)->name == "tp reduce-scatter (pipelined)");
  CHECK((proj + 1)->overlap == Overlap::with_previous);
  CHECK((proj + 1)->engine == CommEngine::reserved_sms);
  CHECK((proj + 1)->collective_bytes == doctest::Approx(0.75 * hidden_bytes));
  CHECK((proj + 2)->name == "tp reduce-scatter (last split)");
  CHECK((proj + 2)->overlap == Overlap::none);
  CHECK((proj + 2)->collective_bytes == doctest::Approx(0.25 * hidden_bytes));
  std::size_t exposed = 0;
  for (const auto& op : fwd) exposed += op.kind == OpKind::tp_comm && op.overlap == Overlap::none;
  CHECK(exposed == 2);  // the last split of each reduce-scatter

  // Backward: the ring exchange feeds proj's dgrad (in chunks); qkv's dgrad runs beside the bulk
  // wgrad-input gather and its wgrad beside the bulk reduce-scatter, both on the SMs left.
  const auto& bwd = program.dense.backward;
  const auto proj_dgrad = find(bwd, "proj dgrad (4 chunks)");
  CHECK(std::prev(proj_dgrad)->name == "tp all-gather (ring exchange)");
  const auto qkv_dgrad = find(bwd, "qkv dgrad");
  CHECK(std::prev(qkv_dgrad)->name == "tp all-gather (wgrad input)");
  CHECK(std::prev(qkv_dgrad)->engine == CommEngine::reserved_sms);
  CHECK(seconds(*qkv_dgrad) == doctest::Approx(seconds(*find(before.dense.backward, "qkv dgrad")) * margin));
  const auto qkv_wgrad = find(bwd, "qkv wgrad");
  CHECK((qkv_wgrad + 1)->name == "tp reduce-scatter (bulk)");
  CHECK((qkv_wgrad + 1)->overlap == Overlap::with_previous);
  CHECK((qkv_wgrad + 1)->engine == CommEngine::reserved_sms);

  const auto a = plain.run();
  const auto b = overlapped.run();
  CHECK(b.breakdown.exposed_tp_s < 0.5 * a.breakdown.exposed_tp_s);
  CHECK(b.step_time_s < a.step_time_s);
  CHECK(breakdown_sum(b.breakdown) == doctest::Approx(b.step_time_s).epsilon(1e-9));
  // None of these transfers takes SMs from the compute beside it: a lower sharing rate for
  // NCCL-style kernels leaves the step unchanged, in both the event and the closed-form model.
  setup.compute_rate_while_communicating = 0.7;
  CHECK(run_alone(setup).step_time_s == doctest::Approx(b.step_time_s).epsilon(1e-9));
  const double estimated = estimate_training_step(setup).step_time_s;
  setup.compute_rate_while_communicating = 1.0;
  CHECK(estimated == doctest::Approx(estimate_training_step(setup).step_time_s).epsilon(1e-9));
  // The flow fidelity runs the same overlapped structure: uncontended, the same step.
  CHECK(run_alone(setup, platform::Fidelity::flow).step_time_s == doctest::Approx(b.step_time_s).epsilon(1e-6));
}

TEST_CASE("Transformer Engine's overlap gathers fp8 under an fp8 recipe") {
  const auto model = small_gpt(2, 4096, 32768);
  auto w = workload(model, 4, 1, 1, 4, 4096);
  w.parallelism.sequence_parallel = true;
  w.tp_comm_overlap = true;
  w.precision = models::Dtype::fp8;
  const Bench fp8(test_cluster(1, 4), w);
  TrainingSetup setup{fp8.workload, fp8.compute, fp8.collectives, fp8.topology, 1};
  const auto program = build_stage_programs(setup).front();
  const double hidden_bytes = 4096.0 * 4096.0 * 2.0;  // bf16 activations
  int gathers = 0, scatters = 0;
  for (const auto& ops : {program.dense.forward, program.dense.backward}) {
    for (const auto& op : ops) {
      if (op.kind != OpKind::tp_comm) continue;
      if (op.collective == models::CollectiveKind::all_gather) {
        ++gathers;  // 1-byte elements: ring exchanges and the wgrad-input gathers
        CHECK(op.collective_bytes == doctest::Approx(hidden_bytes / 2));
      } else {
        ++scatters;  // bf16: the pipelined 3/4 and last 1/4 forward, the whole tensor in bulk backward
        const double share = op.collective_bytes / hidden_bytes;
        CHECK((share == doctest::Approx(0.75) || share == doctest::Approx(0.25) || share == doctest::Approx(1.0)));
      }
    }
  }
  CHECK(gathers == 6);
  CHECK(scatters == 6);
}

TEST_CASE("overlapped communication slows the compute it shares the GPU with") {
  // DP reduction overlapped with the backward: at 80 % compute speed while it runs, compute
  // takes longer by what the reduction overlapped, and never less than without sharing.
  const auto model = small_gpt(8, 2048, 32768);
  auto w = workload(model, 2, 1, 8, 32, 4096);
  w.micro_batch = 4;
  const Bench bench(test_cluster(2, 8), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  const auto full_speed = run_alone(setup);
  setup.compute_rate_while_communicating = 0.8;
  const auto shared = run_alone(setup);
  CHECK(shared.breakdown.compute_s > full_speed.breakdown.compute_s);
  CHECK(shared.step_time_s > full_speed.step_time_s);
  // At most every overlapped DP second stretched compute by 1/0.8 - 1 = 25 %.
  CHECK(shared.breakdown.compute_s - full_speed.breakdown.compute_s <= 0.25 * shared.step_time_s);
  CHECK(breakdown_sum(shared.breakdown) == doctest::Approx(shared.step_time_s).epsilon(1e-9));
  // The closed-form estimate charges the same sharing.
  const auto estimated = estimate_training_step(setup);
  CHECK(estimated.step_time_s == doctest::Approx(shared.step_time_s).epsilon(0.03));
}

TEST_CASE("ZeRO 2 reduces every micro-batch and ZeRO 3 also gathers every layer twice per micro-batch") {
  // dp 16 over two nodes (tp 1), 4 micro-batches, no pipeline. Data-parallel bytes per step
  // on the dp stream(s): ZeRO 1 reduces once and gathers once; ZeRO 2 reduces 4 times and
  // gathers once; ZeRO 3 gathers 2 x 4 times and reduces 4 times.
  const auto model = small_gpt(4, 1024, 32768);
  std::vector<TrainingResult> results;
  std::vector<std::size_t> dp_tasks;
  for (int zero : {1, 2, 3}) {
    auto w = workload(model, 1, 1, 16, 64, 1024);
    w.parallelism.zero = zero;
    const Bench bench(test_cluster(2, 8), w);
    TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
    results.push_back(run_alone(setup));
    CHECK(breakdown_sum(results.back().breakdown) == doctest::Approx(results.back().step_time_s).epsilon(1e-9));
  }
  CHECK(results[1].step_time_s >= results[0].step_time_s * (1 - 1e-9));
  CHECK(results[2].step_time_s > results[1].step_time_s);
  CHECK(results[2].breakdown.exposed_dp_s > results[0].breakdown.exposed_dp_s);
  bool noted = false;
  for (const auto& n : results[2].notes) noted = noted || n.rfind("ZeRO 3 (FSDP)", 0) == 0;
  CHECK(noted);
}

TEST_CASE("a relu2 (squared-ReLU) MLP costs what a gelu MLP of the same width costs") {
  // Both are two GEMMs with one elementwise pass over the up-projection in between.
  auto model = small_gpt(4, 1024, 32768);
  const Bench gelu(test_cluster(1, 8), workload(model, 2, 1, 4, 16));
  model.hidden_act = models::Activation::relu2;
  const Bench relu2(test_cluster(1, 8), workload(model, 2, 1, 4, 16));
  const auto a = gelu.run();
  const auto b = relu2.run();
  CHECK(b.step_time_s == doctest::Approx(a.step_time_s).epsilon(1e-12));
  CHECK(b.model_flops_per_step == doctest::Approx(a.model_flops_per_step).epsilon(1e-12));
}

TEST_CASE("an uneven pipeline split puts fewer layers where the embedding and LM head sit") {
  const auto model = small_gpt(8, 1024, 131072);  // a large vocabulary makes the head heavy
  auto even = workload(model, 1, 4, 1, 16, 1024);
  auto uneven = even;
  uneven.parallelism.stage_layers = {1, 3, 3, 1};
  const Bench a(test_cluster(1, 4), even);
  const Bench b(test_cluster(1, 4), uneven);
  TrainingSetup setup{b.workload, b.compute, b.collectives, b.topology, 1};
  const auto programs = build_stage_programs(setup);
  REQUIRE(programs.size() == 4);
  CHECK(programs[0].layers(0) == 1);
  CHECK(programs[1].layers(0) == 3);
  CHECK(programs[2].first_layer(0) == 4);
  CHECK(programs[3].first_layer(0) == 7);
  CHECK(programs[1].stage_parameters == doctest::Approx(3 * programs[1].dense.parameters));
  const auto even_result = a.run();
  const auto uneven_result = b.run();
  CHECK(breakdown_sum(uneven_result.breakdown) == doctest::Approx(uneven_result.step_time_s).epsilon(1e-9));
  // Same total work, but the heavy end stages now carry fewer layers: a shorter step.
  CHECK(uneven_result.model_flops_per_step == doctest::Approx(even_result.model_flops_per_step).epsilon(1e-12));
  CHECK(uneven_result.step_time_s < even_result.step_time_s);
  auto wrong = uneven;
  wrong.parallelism.stage_layers = {2, 2, 2, 1};
  CHECK_THROWS_WITH_AS(Bench(test_cluster(1, 4), wrong).run(), "stage_layers sum to 7, the model has 8 layers",
                       ConfigError);
  wrong.parallelism.stage_layers = {4, 4};
  CHECK_THROWS_WITH_AS(Bench(test_cluster(1, 4), wrong).run(), "stage_layers lists 2 counts, pp is 4", ConfigError);
}

TEST_CASE("interleaved with an uneven split: per-stage or per-virtual-stage counts") {
  const auto model = small_gpt(16, 1024, 131072);  // a large vocabulary makes the head heavy
  auto even = workload(model, 1, 4, 1, 16, 1024);
  even.parallelism.schedule = PipelineSchedule::interleaved;
  even.parallelism.vp = 2;
  const Bench even_bench(test_cluster(1, 4), even);
  const auto even_result = even_bench.run();

  SUBCASE("the even split written out is the even split") {
    auto same = even;
    same.parallelism.stage_layers = {4, 4, 4, 4};
    const auto a = Bench(test_cluster(1, 4), same).run();
    CHECK(a.step_time_s == even_result.step_time_s);
    same.parallelism.stage_layers = std::vector<int>(8, 2);
    const auto b = Bench(test_cluster(1, 4), same).run();
    CHECK(b.step_time_s == even_result.step_time_s);
  }
  SUBCASE("Llama 3's split: one layer fewer on the first and the last virtual stage") {
    auto w = even;
    w.model.num_hidden_layers = 14;
    w.parallelism.stage_layers = {1, 2, 2, 2, 2, 2, 2, 1};  // virtual stage k = chunk x pp + stage
    const Bench bench(test_cluster(1, 4), w);
    TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
    const auto programs = build_stage_programs(setup);
    REQUIRE(programs.size() == 4);
    CHECK(programs[0].chunk_layers == std::vector<int>{1, 2});
    CHECK(programs[0].chunk_first_layer == std::vector<int>{0, 7});
    CHECK(programs[1].chunk_first_layer == std::vector<int>{1, 9});
    CHECK(programs[3].chunk_layers == std::vector<int>{2, 1});
    CHECK(programs[3].chunk_first_layer == std::vector<int>{5, 13});
    CHECK(programs[0].local_layers() == 3);
    CHECK(programs[0].local_offset(1) == 1);
    CHECK(programs[0].stage_parameters ==
          doctest::Approx(programs[0].embedding_parameters + 3 * programs[0].dense.parameters));
    const auto result = bench.run();
    CHECK(breakdown_sum(result.breakdown) == doctest::Approx(result.step_time_s).epsilon(1e-9));
    // The same 14 layers under 1F1B, as evenly as they go: the same work, a larger bubble.
    auto plain = w;
    plain.parallelism.schedule = PipelineSchedule::one_f_one_b;
    plain.parallelism.vp = 1;
    plain.parallelism.stage_layers = {3, 4, 4, 3};
    const auto one_f_one_b = Bench(test_cluster(1, 4), plain).run();
    CHECK(result.model_flops_per_step == doctest::Approx(one_f_one_b.model_flops_per_step).epsilon(1e-12));
    CHECK(result.breakdown.bubble_s < one_f_one_b.breakdown.bubble_s);
    CHECK(result.step_time_s < one_f_one_b.step_time_s);
    setup.mode = platform::SimulationMode::full;
    const auto full = run_alone(setup);
    CHECK(full.step_time_s == doctest::Approx(result.step_time_s).epsilon(0.01));
  }
  SUBCASE("a per-stage count that does not split over the chunks, or a wrong length, is an error") {
    auto w = even;
    w.parallelism.stage_layers = {3, 5, 4, 4};
    CHECK_THROWS_WITH_AS(Bench(test_cluster(1, 4), w).run(),
                         "stage 0 has 3 layers, which do not split evenly over its vp = 2 chunks; give pp x vp = 8 "
                         "counts, one per virtual stage, instead",
                         ConfigError);
    w.parallelism.stage_layers = {4, 4, 8};
    CHECK_THROWS_WITH_AS(Bench(test_cluster(1, 4), w).run(),
                         "stage_layers lists 3 counts; give pp = 4 (one per pipeline stage) or pp x vp = 8 (one per "
                         "virtual stage, chunk-major: chunk c of stage p is entry c x pp + p)",
                         ConfigError);
  }
}

namespace {

/// 4 layers, the first dense, then 3 MoE layers of 8 experts (top-2, one shared expert).
std::vector<std::string> names(const std::vector<StageOp>& ops) {
  std::vector<std::string> out;
  for (const auto& op : ops) out.push_back(op.name);
  return out;
}

}  // namespace

TEST_CASE("MoE layers: router, dispatch, grouped experts sized by the busiest rank, combine") {
  auto w = workload(small_moe(), 1, 1, 8, 16, 1024);
  w.parallelism.ep = 8;
  const Bench bench(test_cluster(1, 8), w);
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  const auto program = build_stage_programs(setup).front();
  REQUIRE(program.kinds.size() == 4);
  CHECK(program.kinds[0] == models::LayerKind::dense);
  CHECK(program.kinds[1] == models::LayerKind::moe);
  const auto fwd = names(program.moe.forward);
  for (const char* name : {"router", "ep dispatch", "experts fc1", "experts fc2", "ep combine", "shared fc1"}) {
    CAPTURE(name);
    CHECK(std::find(fwd.begin(), fwd.end(), name) != fwd.end());
  }
  // One expert per rank (8 experts over ep 8), 1024 tokens x top-2 = 2048 copies over 8
  // experts: 256 per expert when balanced. Model FLOPs of the layer = flop_count's per token.
  const double per_token = models::layer_flops_per_token_fwd(w.model, w.seq_len, models::LayerKind::moe);
  CHECK(model_flops(program.moe.forward) == doctest::Approx(per_token * static_cast<double>(w.seq_len)).epsilon(1e-9));
  CHECK(program.moe.expert_parameters == doctest::Approx(w.model.routed_expert_parameters() / 8));
  // Expert parallel all-to-all shows up as exposed EP time; imbalance slows the experts.
  const auto balanced = bench.run();
  CHECK(balanced.breakdown.exposed_ep_s > 0);
  CHECK(breakdown_sum(balanced.breakdown) == doctest::Approx(balanced.step_time_s).epsilon(1e-9));
  auto skewed = w;
  skewed.moe.imbalance = 2.0;
  const auto slower = Bench(test_cluster(1, 8), skewed).run();
  CHECK(slower.step_time_s > balanced.step_time_s);
  CHECK(slower.model_flops_per_step == doctest::Approx(balanced.model_flops_per_step).epsilon(1e-9));
  // Flow fidelity runs the same all-to-alls as flows; the closed form agrees too.
  CHECK(run_alone(setup, platform::Fidelity::flow).step_time_s == doctest::Approx(balanced.step_time_s).epsilon(0.02));
  CHECK(estimate_training_step(setup).step_time_s == doctest::Approx(balanced.step_time_s).epsilon(0.03));
  // EP needs an MoE model and must divide the experts.
  auto dense = workload(small_gpt(), 1, 1, 8, 16, 1024);
  dense.parallelism.ep = 2;
  CHECK_THROWS_WITH_AS(Bench(test_cluster(1, 8), dense).run(),
                       "expert parallelism needs a mixture-of-experts model (ep = 2; model 'test-gpt' sets no num_local_experts / "
                       "n_routed_experts)", ConfigError);
}

TEST_CASE("the notes say what the run did: its mode, how TP communication sits beside compute, the DP reduction") {
  const auto has = [](const std::vector<std::string>& notes, std::string_view text) {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  auto w = workload(small_gpt(4, 4096, 32768), 4, 1, 2, 8, 4096);
  w.parallelism.sequence_parallel = true;
  w.tp_comm_overlap = true;
  const Bench overlapped(test_cluster(1, 8), w);
  TrainingSetup setup{overlapped.workload, overlapped.compute, overlapped.collectives, overlapped.topology, 1};
  const TrainingResult symmetric = run_alone(setup);
  REQUIRE_FALSE(symmetric.notes.empty());
  CHECK(symmetric.notes.front().rfind("symmetric mode: one representative rank per pipeline stage", 0) == 0);
  CHECK_FALSE(has(symmetric.notes, "no TP-comm overlap"));
  CHECK(has(symmetric.notes, "TP-comm overlap (Transformer Engine userbuffers): each layer's TP all-gathers run as "
                             "ring exchanges on the copy engines beside the GEMM they feed, forward reduce-scatters "
                             "pipelined with their GEMM in 4 splits (the last split exposed)"));
  setup.mode = platform::SimulationMode::full;
  const TrainingResult full = run_alone(setup);
  CHECK_FALSE(has(full.notes, "symmetric mode"));
  CHECK(full.notes.front() ==
        "full mode: all 8 (tp, cp, dp) replicas of the 1-stage pipeline simulated (8 ranks); collectives start when "
        "every member rank reaches them");
  CHECK(has(full.notes, "TP-comm overlap (Transformer Engine userbuffers)"));

  // Without Transformer Engine's overlap: what still runs beside compute (sequence parallelism's
  // wgrad-input gather, Megatron's asynchronous backward reduction) and what blocks it.
  w.tp_comm_overlap = false;
  const auto blocking = [](const std::vector<std::string>& notes) {
    const auto it = std::find_if(notes.begin(), notes.end(),
                                 [](const std::string& n) { return n.rfind("no TP-comm overlap", 0) == 0; });
    return it == notes.end() ? std::string() : *it;
  };
  const std::string prefix = "no TP-comm overlap (workload.tp_comm_overlap: false): TP collectives block the compute stream";
  CHECK(blocking(assumption_notes(w, platform::SimulationMode::symmetric)) ==
        prefix + ", except the wgrad-input all-gather beside the dgrad GEMM and the input-gradient reduce-scatter of "
                 "column-parallel linears beside their wgrad GEMM (tp_async_backward)");
  w.parallelism.sequence_parallel = false;
  CHECK(blocking(assumption_notes(w, platform::SimulationMode::symmetric)) ==
        prefix + ", except the input-gradient all-reduce of column-parallel linears beside their wgrad GEMM "
                 "(tp_async_backward)");
  w.tp_async_backward = false;
  CHECK(blocking(assumption_notes(w, platform::SimulationMode::symmetric)) == prefix);
  // tp 1: no TP collectives, so no TP note at all.
  w.parallelism.tp = 1;
  CHECK_FALSE(has(assumption_notes(w, platform::SimulationMode::symmetric), "TP"));
  // torchtitan's memory conventions and per-op checkpointing say so.
  CHECK_FALSE(has(assumption_notes(w, platform::SimulationMode::symmetric), "framework torchtitan"));
  w.framework = TrainingFramework::torchtitan;
  w.recompute = Recompute::op;
  CHECK(has(assumption_notes(w, platform::SimulationMode::symmetric), "framework torchtitan: the memory footprint"));
  CHECK(has(assumption_notes(w, platform::SimulationMode::symmetric), "recompute op (torchtitan's per-op"));
  w.framework = TrainingFramework::megatron;
  w.recompute = Recompute::selective;

  // The DP note follows the ZeRO stage: a parameter all-gather only with the distributed
  // optimizer (ZeRO 1), none of it for ZeRO 2 and 3 (their own notes), nothing without DP.
  w.overlap_grad_reduce = true;
  w.parallelism.zero = 0;
  auto notes = assumption_notes(w, platform::SimulationMode::symmetric);
  CHECK(has(notes, "gradient reduction overlapped with the last backward"));
  CHECK_FALSE(has(notes, "parameter all-gather"));
  w.parallelism.zero = 1;
  CHECK(has(assumption_notes(w, platform::SimulationMode::symmetric),
            "; parameter all-gather overlapped with the step's first forward"));
  w.overlap_grad_reduce = false;
  CHECK(has(assumption_notes(w, platform::SimulationMode::symmetric),
            "gradient reduction after the last backward, not overlapped; parameter all-gather after the optimizer"));
  w.parallelism.zero = 2;
  notes = assumption_notes(w, platform::SimulationMode::symmetric);
  CHECK_FALSE(has(notes, "gradient reduction"));
  CHECK(has(notes, "ZeRO 2: gradients reduce-scattered every micro-batch"));
  w.parallelism.dp = 1;
  w.parallelism.zero = 1;
  CHECK_FALSE(has(assumption_notes(w, platform::SimulationMode::symmetric), "gradient reduction"));
}

TEST_CASE("full mode simulates every rank and reproduces symmetric mode on a homogeneous cluster") {
  // tp2 pp2 dp4 on 2 x 8 GPUs with overlapped DP: 4 replica instances of each stage graph.
  auto w = workload(small_gpt(), 2, 2, 4, 16);
  w.overlap_grad_reduce = true;
  const Bench bench(test_cluster(2, 8), w);
  for (const auto fidelity : {platform::Fidelity::analytical, platform::Fidelity::flow}) {
    CAPTURE(static_cast<int>(fidelity));
    TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
    const auto symmetric = run_alone(setup, fidelity);
    setup.mode = platform::SimulationMode::full;
    const auto full = run_alone(setup, fidelity);
    CHECK(symmetric.mode == "symmetric");
    CHECK(full.mode == "full");
    CHECK(full.step_time_s == doctest::Approx(symmetric.step_time_s).epsilon(0.01));
    CHECK(breakdown_sum(full.breakdown) == doctest::Approx(full.step_time_s).epsilon(1e-9));
    CHECK(full.model_flops_per_step == doctest::Approx(symmetric.model_flops_per_step).epsilon(1e-12));
  }
}

TEST_CASE("a straggler holds up its groups in full mode; symmetric mode cannot see it") {
  for (const int pp : {1, 2}) {
    CAPTURE(pp);
    auto w = workload(small_gpt(), 2, pp, 8 / pp, 32);
    const Bench bench(test_cluster(2, 8), w);
    TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
    setup.mode = platform::SimulationMode::full;
    const auto nominal = run_alone(setup);
    // One accelerator of the last stage at 80 % speed: its TP group waits on it every layer,
    // its pipeline peers wait on its sends and its DP groups wait at the gradient reduction,
    // so the step goes at the straggler's pace: its compute is 1/0.8 of nominal.
    setup.accelerator_speed.assign(16, engine::Profile::constant(1.0));
    setup.accelerator_speed[15] = engine::Profile::constant(0.8);
    const auto slowed = run_alone(setup);
    const double extra_compute = nominal.breakdown.compute_s * (1 / 0.8 - 1);
    CHECK(slowed.step_time_s - nominal.step_time_s > 0.9 * extra_compute);
    CHECK(slowed.step_time_s < nominal.step_time_s / 0.8 * 1.001);
    CHECK(breakdown_sum(slowed.breakdown) == doctest::Approx(slowed.step_time_s).epsilon(1e-9));
    // A straggler on the first stage delays the pipeline less when the last stage is the
    // heavier one (it holds the LM head), but never speeds it up.
    setup.accelerator_speed.assign(16, engine::Profile::constant(1.0));
    setup.accelerator_speed[0] = engine::Profile::constant(0.8);
    CHECK(run_alone(setup).step_time_s > nominal.step_time_s);
  }
  // Speeds need full mode, one entry per accelerator, each in (0, 1].
  const Bench bench(test_cluster(2, 8), workload(small_gpt(), 2, 2, 4, 16));
  TrainingSetup setup{bench.workload, bench.compute, bench.collectives, bench.topology, 1};
  setup.accelerator_speed.assign(16, engine::Profile::constant(1.0));
  setup.accelerator_speed[3] = engine::Profile::constant(0.9);
  CHECK_THROWS_WITH_AS(run_alone(setup),
                       doctest::Contains("need simulation mode 'full'"), ConfigError);
  setup.mode = platform::SimulationMode::full;
  setup.accelerator_speed.assign(3, engine::Profile::constant(1.0));
  CHECK_THROWS_WITH_AS(run_alone(setup), "accelerator_speed lists 3 accelerators, the topology has 16",
                       ConfigError);
  setup.accelerator_speed.assign(16, engine::Profile::constant(1.5));
  CHECK_THROWS_WITH_AS(run_alone(setup), "accelerator compute speed must be in (0, 1], got 1.5",
                       ConfigError);
}

TEST_CASE("FP8 primary weights gather the layers' weights as fp8 and keep the rest in the working precision") {
  auto w = workload(small_gpt(4, 1024, 32768), 1, 1, 16, 32);
  w.precision = models::Dtype::fp8;
  const Bench bf16_gather(test_cluster(2, 8), w);
  w.fp8_params = true;
  const Bench fp8_gather(test_cluster(2, 8), w);
  for (const Bench* bench : {&bf16_gather, &fp8_gather}) {
    TrainingSetup setup{bench->workload, bench->compute, bench->collectives, bench->topology, 1};
    const auto programs = build_stage_programs(setup);
    const RankLayout layout(bench->workload.parallelism, setup.placement);
    const auto parts = data_parallel_parts(bench->workload, programs.front(), layout);
    REQUIRE(parts.size() == 1);
    const DataParallelPart& part = parts.front();
    // Units: embedding, 4 layers, head.
    REQUIRE(part.units.size() == 6);
    const double layer_bytes = bench->workload.fp8_params ? 1.0 : 2.0;
    CHECK(part.unit_gather_bytes.front() == 2.0);
    CHECK(part.unit_gather_bytes.back() == 2.0);
    for (std::size_t u = 1; u < 5; ++u) CHECK(part.unit_gather_bytes[u] == layer_bytes);
    double expected = 0;
    for (std::size_t u = 0; u < 6; ++u) expected += part.units[u] * (u == 0 || u == 5 ? 2.0 : layer_bytes);
    CHECK(part.stage_gather_bytes() == doctest::Approx(expected).epsilon(1e-12));
  }
  // The step's exposed data-parallel time can only shrink with half the gathered bytes.
  CHECK(fp8_gather.run().breakdown.exposed_dp_s <= bf16_gather.run().breakdown.exposed_dp_s);
}

}  // namespace training_simulation_test
