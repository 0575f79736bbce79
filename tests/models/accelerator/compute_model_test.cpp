#include "models/accelerator/compute_model.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <string>

#include "sim/engine/error.hpp"
#include "tests/models/accelerator/accelerator_test_spec.hpp"

namespace compute_model_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;
using namespace clustersim::models;

namespace {

// Round numbers so the expectations below can be checked by hand.
AcceleratorSpec test_accelerator(int compute_units) { return testing::round_number_accelerator(compute_units); }

GemmShape gemm_shape(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1,
                     Dtype dtype = Dtype::bf16) {
  GemmShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.batch = batch;
  shape.dtype = dtype;
  return shape;
}

AttentionShape attention_shape(std::int64_t kv_heads, bool causal, bool backward) {
  AttentionShape shape;
  shape.batch = 2;
  shape.q_heads = 16;
  shape.kv_heads = kv_heads;
  shape.seq_q = 4096;
  shape.seq_kv = 4096;
  shape.head_dim = 128;
  shape.causal = causal;
  shape.backward = backward;
  return shape;
}

std::string message_of(const auto& call) {
  try {
    call();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "<no ConfigError>";
}

}  // namespace

TEST_CASE("large square GEMM is compute bound at peak x efficiency, plus its epilogue store") {
  // 8192^3 on 128 units: 64 x 32 = 2048 tiles of 128x256 = 16 full waves (no wave loss).
  // compute = 2*8192^3 / (1e15 * 0.8) * (8192 + 64) / 8192 = 1.385127 ms; operands (wave
  // panels, no L2 given) 0.597 ms < compute; store C = 8192^2 * 2 B / 1.8e12 = 74.565 us.
  const ComputeModel model(test_accelerator(128));
  const OpEstimate estimate = model.gemm(gemm_shape(8192, 8192, 8192));
  CHECK(estimate.flops == doctest::Approx(1.099511627776e12));
  CHECK(estimate.bytes == doctest::Approx(3.0 * 8192.0 * 8192.0 * 2.0));
  CHECK(estimate.compute_bound);
  const double compute_s = 2.0 * 8192.0 * 8192.0 * 8192.0 / 0.8e15 * 8256.0 / 8192.0;
  const double store_s = 8192.0 * 8192.0 * 2.0 / 1.8e12;
  CHECK(estimate.time_s == doctest::Approx(compute_s + store_s + 4e-6).epsilon(1e-9).scale(0));
  CHECK(estimate.provenance == Provenance::roofline);
  CHECK(provenance_name(estimate.provenance) == "roofline");
  CHECK(model.gemm_schedule(gemm_shape(8192, 8192, 8192)).describe() == "128x256");
}

TEST_CASE("an accumulating GEMM reads and writes its fp32 accumulator in the epilogue") {
  // The 8192^3 GEMM above, accumulating into fp32 (weight gradient into main_grad): the
  // epilogue moves 8192^2 x (4 + 4) bytes instead of writing 8192^2 x 2 bytes, i.e. 6 extra
  // bytes per element at 1.8e12 B/s = 223.696 us more.
  const ComputeModel model(test_accelerator(128));
  const OpEstimate plain = model.gemm(gemm_shape(8192, 8192, 8192));
  GemmShape shape = gemm_shape(8192, 8192, 8192);
  shape.accumulate_bytes = 4;
  const OpEstimate accumulating = model.gemm(shape);
  const double extra_bytes = 8192.0 * 8192.0 * 6.0;
  CHECK(accumulating.time_s - plain.time_s == doctest::Approx(extra_bytes / 1.8e12).epsilon(1e-9));
  CHECK(accumulating.bytes - plain.bytes == doctest::Approx(extra_bytes));
  CHECK(accumulating.flops == plain.flops);
  // A bf16 accumulator: read 2 + write 2 instead of write 2.
  shape.accumulate_bytes = 2;
  CHECK(model.gemm(shape).time_s - plain.time_s == doctest::Approx(8192.0 * 8192.0 * 2.0 / 1.8e12).epsilon(1e-9).scale(0));
}

TEST_CASE("skinny m=1 GEMM is memory bound") {
  // bytes = (1*8192 + 8192*8192 + 1*8192) * 2 = 134250496; time = bytes / (2e12 * 0.9) + 4 us.
  const ComputeModel model(test_accelerator(128));
  const OpEstimate estimate = model.gemm(gemm_shape(1, 8192, 8192));
  CHECK(estimate.bytes == doctest::Approx(134250496.0));
  CHECK_FALSE(estimate.compute_bound);
  CHECK(estimate.time_s == doctest::Approx(7.85836088888889e-05).epsilon(1e-9).scale(0));
}

TEST_CASE("a weight-only quantised GEMM reads its packed weight: W4A16 decode moves a quarter of the bytes") {
  // m = 1: bytes = 1*8192*2 (A) + 8192*8192*0.5 (packed B) + 1*8192*2 (C) = 33587200.
  const ComputeModel model(test_accelerator(128));
  GemmShape w4 = gemm_shape(1, 8192, 8192);
  w4.weight_bytes = 0.5;
  const OpEstimate packed = model.gemm(w4);
  CHECK(packed.bytes == doctest::Approx(33587200.0));
  CHECK(packed.time_s >= 33587200.0 / (2e12 * 0.9) + 4e-6);  // at least its bytes' time (the tile's math may bound it)
  CHECK(packed.time_s < model.gemm(gemm_shape(1, 8192, 8192)).time_s);
  // The memo tells the two apart; weight_bytes equal to the dtype's is the plain GEMM.
  GemmShape same = gemm_shape(1, 8192, 8192);
  same.weight_bytes = 2;
  CHECK(model.gemm(same).time_s == doctest::Approx(7.85836088888889e-05).epsilon(1e-9).scale(0));
  w4.weight_bytes = -1;
  CHECK_THROWS_AS(model.gemm(w4), clustersim::ConfigError);
}

TEST_CASE("per-format matmul efficiency: fp8 at its own best fraction of the fp8 peak") {
  AcceleratorSpec spec = test_accelerator(128);
  spec.matmul_efficiency_by_dtype[Dtype::fp8] = 0.5;
  const ComputeModel model(spec);
  CHECK(spec.matmul_efficiency_for(Dtype::fp8) == doctest::Approx(0.5));
  CHECK(spec.matmul_efficiency_for(Dtype::bf16) == doctest::Approx(0.8));
  // fp8 peak 2e15 at 0.5 = 1e15 effective vs bf16 1e15 at 0.8: fp8 main loop 1.6x faster
  // only, not 2x.
  const GemmSchedule fp8 = model.gemm_schedule(gemm_shape(8192, 8192, 8192, 1, Dtype::fp8));
  const GemmSchedule bf16 = model.gemm_schedule(gemm_shape(8192, 8192, 8192));
  CHECK(bf16.compute_s / fp8.compute_s == doctest::Approx(0.5 * 2.0 / 0.8));
  spec.matmul_efficiency_by_dtype[Dtype::fp8] = 1.2;
  CHECK(message_of([&] { const ComputeModel bad(spec); }) ==
        "accelerator 'test-gpu': matmul efficiency for fp8 must be in (0, 1]");
}

TEST_CASE("fp8 GEMM reads 1-byte operands, writes bf16, and uses the fp8 peak") {
  const ComputeModel model(test_accelerator(128));
  const OpEstimate fp8 = model.gemm(gemm_shape(8192, 8192, 8192, 1, Dtype::fp8));
  CHECK(fp8.bytes == doctest::Approx(8192.0 * 8192.0 * (1.0 + 1.0 + 2.0)));
  const GemmSchedule fp8_schedule = model.gemm_schedule(gemm_shape(8192, 8192, 8192, 1, Dtype::fp8));
  const GemmSchedule bf16_schedule = model.gemm_schedule(gemm_shape(8192, 8192, 8192));
  // Twice the peak: the main loop halves; the bf16 output store does not.
  CHECK(fp8_schedule.compute_s == doctest::Approx(bf16_schedule.compute_s / 2.0));
  CHECK(fp8_schedule.store_s == doctest::Approx(bf16_schedule.store_s));
  CHECK(fp8.time_s == relative_approx(fp8_schedule.time_s + 4e-6));
}

TEST_CASE("precise fp8 accumulation promotes the accumulator every interval on the vector cores") {
  // 8192^3 fp8 with promotion every 128 K elements: 8192^2 x 64 fp32 adds at 50e12 / 2 =
  // 25e12 adds/s = 171.8 us more than the fast-accumulation GEMM; nothing without an interval,
  // for a format other than fp8, or without split accumulation.
  AcceleratorSpec spec = test_accelerator(128);
  const OpEstimate fast = ComputeModel(spec).gemm(gemm_shape(8192, 8192, 8192, 1, Dtype::fp8));
  GemmShape precise = gemm_shape(8192, 8192, 8192, 1, Dtype::fp8);
  precise.split_accumulation = true;
  CHECK(ComputeModel(spec).gemm(precise).time_s == doctest::Approx(fast.time_s));  // interval 0
  spec.fp8_promotion_interval = 128;
  const ComputeModel model(spec);
  CHECK(model.gemm(precise).time_s - fast.time_s == doctest::Approx(8192.0 * 8192.0 * 64.0 / 25e12).epsilon(1e-9).scale(0));
  CHECK(model.gemm(gemm_shape(8192, 8192, 8192, 1, Dtype::fp8)).time_s == doctest::Approx(fast.time_s));
  GemmShape bf16 = gemm_shape(8192, 8192, 8192);
  bf16.split_accumulation = true;
  CHECK(model.gemm(bf16).time_s == doctest::Approx(model.gemm(gemm_shape(8192, 8192, 8192)).time_s));
  // K = 1000 needs ceil(1000 / 128) = 8 promotions per output element.
  GemmShape odd_k = gemm_shape(4096, 4096, 1000, 1, Dtype::fp8);
  const double fast_odd = model.gemm(odd_k).time_s;
  odd_k.split_accumulation = true;
  CHECK(model.gemm(odd_k).time_s - fast_odd == doctest::Approx(4096.0 * 4096.0 * 8.0 / 25e12).epsilon(1e-9).scale(0));
}

TEST_CASE("GEMM rejects bad shapes and missing formats, naming them") {
  const ComputeModel model(test_accelerator(128));
  CHECK(message_of([&] { model.gemm(gemm_shape(0, 8, 8)); }) ==
        "GEMM dimension m must be positive, got 0");
  CHECK(message_of([&] { model.gemm(gemm_shape(8, 8, -3)); }) ==
        "GEMM dimension k must be positive, got -3");
  CHECK(message_of([&] { model.gemm(gemm_shape(8, 8, 8, 0)); }) ==
        "GEMM dimension batch must be positive, got 0");
  CHECK(message_of([&] { model.gemm(gemm_shape(8, 8, 8, 1, Dtype::fp4)); }) ==
        "accelerator 'test-gpu' has no fp4 matrix peak; available formats: bf16, fp8");
}

TEST_CASE("peak_for falls back to the vector peak for plain fp32 only") {
  AcceleratorSpec spec = test_accelerator(128);
  CHECK(spec.peak_for(Dtype::fp32) == doctest::Approx(50e12));
  CHECK(spec.peak_for(Dtype::bf16) == doctest::Approx(1000e12));
  CHECK(message_of([&] { spec.peak_for(Dtype::tf32); }).find("no tf32 matrix peak") !=
        std::string::npos);
}

TEST_CASE("ComputeModel validates the accelerator spec") {
  AcceleratorSpec spec = test_accelerator(0);
  CHECK(message_of([&] { const ComputeModel bad(spec); }) ==
        "accelerator 'test-gpu': compute_units must be positive");
  spec = test_accelerator(128);
  spec.matmul_efficiency = 1.5;
  CHECK(message_of([&] { const ComputeModel bad(spec); }) ==
        "accelerator 'test-gpu': matmul_efficiency must be in (0, 1]");
  spec = test_accelerator(128);
  spec.hbm_bytes_per_s = 0;
  CHECK(message_of([&] { const ComputeModel bad(spec); }) ==
        "accelerator 'test-gpu': hbm_bytes_per_s must be positive");
  spec = test_accelerator(128);
  spec.fp8_promotion_interval = 128;
  spec.vector_flops_per_s = 0;
  CHECK(message_of([&] { const ComputeModel bad(spec); }) ==
        "accelerator 'test-gpu': fp8_promotion_interval needs the vector fp32 peak (vector_fp32) that drains the "
        "accumulator");
}

TEST_CASE("attention FLOPs: 4 b h s s d forward, causal halves, backward 2.5x") {
  CHECK(attention_flops(attention_shape(16, false, false)) == doctest::Approx(274877906944.0));
  CHECK(attention_flops(attention_shape(16, true, false)) == doctest::Approx(137438953472.0));
  CHECK(attention_flops(attention_shape(16, true, true)) == doctest::Approx(343597383680.0));
  // Decode step: one query against 8192 cached keys sees all but half a diagonal element.
  AttentionShape decode = attention_shape(16, true, false);
  decode.seq_q = 1;
  decode.seq_kv = 8192;
  CHECK(attention_score_pairs(decode) == doctest::Approx(8191.5));
}

TEST_CASE("GQA reduces fused attention bytes but not FLOPs") {
  const ComputeModel model(test_accelerator(128));
  const OpEstimate mha = model.attention(attention_shape(16, true, false));
  const OpEstimate gqa = model.attention(attention_shape(2, true, false));
  CHECK(mha.flops == doctest::Approx(gqa.flops));
  // Q + O (bf16) + K + V by kv heads + fp32 LSE: 2*16*4096*128*(2+2) + 2*2*kv*4096*128*2 + 4*2*16*4096
  CHECK(mha.bytes == doctest::Approx(134742016.0));
  CHECK(gqa.bytes == doctest::Approx(76021760.0));
  const OpEstimate mha_bwd = model.attention(attention_shape(16, true, true));
  const OpEstimate gqa_bwd = model.attention(attention_shape(2, true, true));
  CHECK(mha_bwd.bytes == doctest::Approx(268959744.0));
  CHECK(gqa_bwd.bytes == doctest::Approx(151519232.0));
}

TEST_CASE("fused attention time: score elements x the kernel family's cost per element") {
  const ComputeModel model(test_accelerator(128));
  // fa3 (the accelerator's default), head dim 128: per element max(512 / (1e15 x 0.8),
  // 1 / 4e12, 4 / 25e12) = 0.64 ps; causal, 32 query tiles of 128 reaching 1..32 key tiles plus
  // one tile of fixed work each: 2 x 16 x 128^2 x (528 + 32) = 293601280 elements (268435456
  // pairs): 187.90 us + 4 us launch.
  const double elements = 2 * 16 * 16384.0 * 560;
  const OpEstimate forward = model.attention(attention_shape(16, true, false));
  CHECK(forward.compute_bound);
  CHECK(forward.time_s == doctest::Approx(elements * 0.64e-12 + 4e-6).epsilon(1e-9).scale(0));
  // backward: 2.5 x 0.64 ps per element / (0.63 / 0.73) = 1.854 ps: 544.33 us + 4 us.
  const OpEstimate backward = model.attention(attention_shape(16, true, true));
  CHECK(backward.time_s == doctest::Approx(elements * 2.5 * 0.64e-12 / (0.63 / 0.73) + 4e-6).epsilon(1e-9).scale(0));
  // fa2 asked for explicitly: warp MMA at the full peak (fraction 1) but softmax not overlapped:
  // 0.64 + max(0.25, 0.16) = 0.89 ps per element; cudnn the same form at the full MMA rate.
  AttentionShape fa2 = attention_shape(16, true, false);
  fa2.kernel = AttentionKernelFamily::fa2;
  CHECK(model.attention(fa2).time_s == doctest::Approx(elements * 0.89e-12 + 4e-6).epsilon(1e-9).scale(0));
  fa2.kernel = AttentionKernelFamily::cudnn;
  CHECK(model.attention(fa2).time_s == doctest::Approx(elements * 0.89e-12 + 4e-6).epsilon(1e-9).scale(0));
}

TEST_CASE("fused attention works in 128 x 128 tiles: whole diagonal tiles and one tile of fixed work per query tile") {
  AttentionShape shape = attention_shape(16, false, false);
  // non-causal 4096: 32 query tiles x (32 + 1) key tiles x 128^2
  CHECK(attention_tile_elements(shape) == doctest::Approx(32 * 33 * 16384.0));
  shape.causal = true;  // query tile i reaches i + 1 key tiles: 528 + 32 overhead
  CHECK(attention_tile_elements(shape) == doctest::Approx(560 * 16384.0));
  CHECK(attention_tile_elements(shape) > attention_score_pairs(shape));
  // A chunk of 256 queries at the end of 4096 keys: tile 0 reaches key 3967 (31 tiles), tile 1
  // the last key (32 tiles).
  shape.seq_q = 256;
  CHECK(attention_tile_elements(shape) == doctest::Approx(128 * 128 * (32.0 + 33.0)));
  // One decode row over 8192 keys: 64 key tiles + 1, for that one row.
  shape.seq_q = 1;
  shape.seq_kv = 8192;
  CHECK(attention_tile_elements(shape) == doctest::Approx(128 * 65.0));
  // A sequence shorter than a tile still walks one whole key tile per row.
  shape.causal = false;
  shape.seq_q = 100;
  shape.seq_kv = 100;
  CHECK(attention_tile_elements(shape) == doctest::Approx(100 * 128 * 2.0));
}

TEST_CASE("decode attention is memory bound on the KV cache") {
  const ComputeModel model(test_accelerator(128));
  AttentionShape decode;
  decode.batch = 8;
  decode.q_heads = 32;
  decode.kv_heads = 8;
  decode.seq_q = 1;
  decode.seq_kv = 8192;
  decode.head_dim = 128;
  const OpEstimate estimate = model.attention(decode);
  CHECK_FALSE(estimate.compute_bound);
  CHECK(estimate.bytes == doctest::Approx(268567552.0));
  CHECK(estimate.time_s == doctest::Approx(1.5320419555555555e-4).epsilon(1e-9).scale(0));
}

TEST_CASE("unfused attention: GEMMs at full size plus elementwise passes over the scores") {
  const ComputeModel model(test_accelerator(128));
  AttentionShape shape;
  shape.batch = 1;
  shape.q_heads = 8;
  shape.kv_heads = 8;
  shape.seq_q = 2048;
  shape.seq_kv = 2048;
  shape.head_dim = 128;
  shape.causal = true;
  shape.fused = false;
  // Forward: QK^T (8 x 2048x2048x128: main loop 16.11 us, then the 67.1 MB score store,
  // 37.28 us: 53.39 us) and PV (8 x 2048x128x2048: 71.3 MB of operands, 39.61 us, + store
  // 2.33 us: 41.94 us), each + 4 us launch; fused scale+mask+softmax over 33.5M bf16 scores
  // (134 MB: 74.57 us + 4 us launch = 78.57 us) and dropout, which also writes its 1-byte mask
  // (168 MB: 93.21 us + 4 us).
  const OpEstimate forward = model.attention(shape);
  CHECK(forward.flops == doctest::Approx(17481859072.0));  // causal is not halved unfused
  CHECK(forward.bytes == doctest::Approx(419430400.0 + 33554432.0));
  CHECK(forward.time_s == doctest::Approx(2.6046267847111112e-4 + 33554432.0 / 134217728.0 * 74.57e-6).epsilon(1e-4).scale(0));
  CHECK_FALSE(forward.compute_bound);
  // Backward: 4 GEMMs (dP like QK^T; dV, dQ, dK like PV), dropout grad (reads the gradient and
  // the mask: 168 MB, 97.21 us) and the fused softmax grad with the scale folded in (reads P and
  // dP: 201 MB, 115.85 us).
  shape.backward = true;
  const OpEstimate backward = model.attention(shape);
  CHECK(backward.flops == doctest::Approx(34527510528.0));
  CHECK(backward.bytes == doctest::Approx(637534208.0 + 33554432.0));
  CHECK(backward.time_s == doctest::Approx(3.8963146069333336e-4 + 33554432.0 / 134217728.0 * 74.57e-6).epsilon(1e-4).scale(0));
  // The fused kernel never writes the score matrix.
  shape.fused = true;
  shape.backward = false;
  CHECK(model.attention(shape).bytes < forward.bytes / 10);
}

TEST_CASE("attention rejects bad shapes, naming the problem") {
  const ComputeModel model(test_accelerator(128));
  AttentionShape shape = attention_shape(16, true, false);
  shape.head_dim = 0;
  CHECK(message_of([&] { model.attention(shape); }) ==
        "attention dimension head_dim must be positive, got 0");
  shape = attention_shape(3, true, false);
  CHECK(message_of([&] { model.attention(shape); }) ==
        "attention q_heads (16) must be a multiple of kv_heads (3)");
  shape = attention_shape(16, true, false);
  shape.seq_q = 8192;
  CHECK(message_of([&] { attention_flops(shape); }) ==
        "causal attention needs seq_q <= seq_kv, got seq_q 8192 > seq_kv 4096");
}

TEST_CASE("elementwise ops: bandwidth bound unless the vector math dominates") {
  const ComputeModel model(test_accelerator(128));
  ElementwiseShape copy;
  copy.bytes_read = 1e9;
  copy.bytes_written = 1e9;
  copy.flops = 1e6;
  const OpEstimate copy_estimate = model.elementwise(copy);
  CHECK_FALSE(copy_estimate.compute_bound);
  CHECK(copy_estimate.time_s == relative_approx(2e9 / 1.8e12 + 4e-6));
  ElementwiseShape math_heavy;
  math_heavy.bytes_read = 1e6;
  math_heavy.flops = 1e12;
  const OpEstimate math_estimate = model.elementwise(math_heavy);
  CHECK(math_estimate.compute_bound);
  CHECK(math_estimate.time_s == relative_approx(0.02 + 4e-6));
}

TEST_CASE("an op whose working set fits in L2 streams at L2 bandwidth, a larger one at HBM") {
  AcceleratorSpec spec = test_accelerator(128);
  spec.l2_bytes = 50e6;
  spec.l2_bytes_per_s = 5e12;
  const ComputeModel model(spec);
  ElementwiseShape fits;  // 25 MB read + 25 MB written = the 50 MB of L2 exactly
  fits.bytes_read = 25e6;
  fits.bytes_written = 25e6;
  CHECK(model.elementwise(fits).time_s == relative_approx(50e6 / 5e12 + 4e-6));
  ElementwiseShape spills = fits;  // one byte more: HBM at 2e12 x 0.9
  spills.bytes_written += 1;
  CHECK(model.elementwise(spills).time_s == relative_approx((50e6 + 1) / 1.8e12 + 4e-6));
  CHECK(model.memory_bytes_per_s(OpClass::layernorm, 49e6) == doctest::Approx(5e12));
  CHECK(model.memory_bytes_per_s(OpClass::optimizer, 51e6) == doctest::Approx(1.8e12));
  // The microbenchmarks name their level: hbm_* is HBM and l2_read is L2 at any size.
  CHECK(model.memory_bytes_per_s(OpClass::hbm_copy, 1e6) == doctest::Approx(1.8e12));
  CHECK(model.memory_bytes_per_s(OpClass::l2_read, 1e9) == doctest::Approx(5e12));

  // Without an L2 bandwidth in the preset there is no reuse credit.
  spec.l2_bytes_per_s = 0;
  const ComputeModel no_l2(spec);
  CHECK(no_l2.elementwise(fits).time_s == relative_approx(50e6 / 1.8e12 + 4e-6));
  CHECK(no_l2.memory_bytes_per_s(OpClass::l2_read, 1e6) == doctest::Approx(1.8e12));
}

TEST_CASE("elementwise rejects negative amounts and flops without a vector peak") {
  ComputeModel model(test_accelerator(128));
  ElementwiseShape bad;
  bad.bytes_read = -1;
  CHECK(message_of([&] { model.elementwise(bad); }).find(
            "elementwise bytes_read must be finite and non-negative") == 0);
  AcceleratorSpec no_vector = test_accelerator(128);
  no_vector.vector_flops_per_s = 0;
  const ComputeModel scalar_less(no_vector);
  ElementwiseShape math;
  math.flops = 10;
  CHECK(message_of([&] { scalar_less.elementwise(math); }) ==
        "accelerator 'test-gpu' has no vector_flops_per_s for an elementwise op with flops");
}

}  // namespace compute_model_test
