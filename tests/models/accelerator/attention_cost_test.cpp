#include "models/accelerator/attention_cost.hpp"

#include <doctest/doctest.h>

#include <string>

#include "models/accelerator/compute_model.hpp"
#include "sim/engine/error.hpp"

namespace attention_cost_test {

using namespace clustersim;
using namespace clustersim::models;

namespace {

// The library presets' figures (models/data/accelerators), so each value below can be checked
// by hand against docs/models.md "Fused attention".
AcceleratorSpec a100() {
  AcceleratorSpec spec;
  spec.name = "a100";
  spec.peak_flops_per_s = {{Dtype::bf16, 312e12}};
  spec.matmul_efficiency = 0.81;
  spec.vector_flops_per_s = 19.5e12;
  spec.special_function_ops_per_s = 2.436e12;
  spec.warp_mma_fraction = 1.0;
  return spec;
}

AcceleratorSpec h100() {
  AcceleratorSpec spec;
  spec.name = "h100";
  spec.peak_flops_per_s = {{Dtype::bf16, 989e12}};
  spec.matmul_efficiency = 0.80;
  spec.vector_flops_per_s = 67e12;
  spec.special_function_ops_per_s = 3.863e12;
  spec.warp_mma_fraction = 0.5;
  spec.matrix_path = MatrixPath::wgmma;  // Hopper: fa3 runs here
  spec.attention_kernel = AttentionKernelFamily::fa3;
  return spec;
}

// Per-element times are picoseconds: doctest's Approx would compare them with an absolute
// tolerance of its epsilon (scale 1), so every comparison here is relative.
doctest::Approx ps_approx(double value) { return doctest::Approx(value).scale(0); }

}  // namespace

TEST_CASE("FlashAttention-2 on A100 at head dim 64: the softmax is exp-bound and not overlapped") {
  const AttentionScoreCost cost = attention_score_cost(a100(), AttentionKernelFamily::fa2, 64, Dtype::bf16, false);
  CHECK(cost.matmul_s == ps_approx(256.0 / (312e12 * 0.81)));  // 1.0130 ps
  CHECK(cost.exp_s == ps_approx(1.0 / 2.436e12));               // 0.4105 ps
  CHECK(cost.fp32_s == ps_approx(4.0 / 9.75e12));               // 0.4103 ps
  // matmul + max(exp, fp32) = 1.4235 ps per score element, i.e. 256 / 1.4235 ps = 179.8 TFLOP/s
  CHECK(cost.time_s == ps_approx(1.4234878219552548e-12).epsilon(1e-9));
  CHECK(cost.matmul_bound);
  // Head dim 128 doubles the matmul part only: the exponential's share of the time halves
  // (0.288 -> 0.168).
  const AttentionScoreCost wide = attention_score_cost(a100(), AttentionKernelFamily::fa2, 128, Dtype::bf16, false);
  CHECK(wide.exp_s == ps_approx(cost.exp_s));
  CHECK(cost.exp_s / cost.time_s == ps_approx(0.28838).epsilon(1e-4));
  CHECK(wide.exp_s / wide.time_s == ps_approx(0.168485).epsilon(1e-4));
}

TEST_CASE("attention backward: 2.5x the forward's FLOPs at 0.863 of its rate, every family") {
  const AttentionScoreCost cost = attention_score_cost(a100(), AttentionKernelFamily::fa2, 128, Dtype::bf16, true);
  // forward 512 / 252.72e12 + max(0.4105, 0.4103) ps = 2.4365 ps; x 2.5 / (0.63 / 0.73) = 7.0580 ps
  CHECK(cost.time_s == ps_approx(2.5 * (512.0 / 252.72e12 + 1.0 / 2.436e12) / (0.63 / 0.73)).epsilon(1e-9));
  // The parts are the forward's.
  CHECK(cost.matmul_s == ps_approx(512.0 / 252.72e12));
  for (const auto family : {AttentionKernelFamily::fa2, AttentionKernelFamily::fa3, AttentionKernelFamily::cudnn}) {
    const double forward = attention_score_cost(h100(), family, 128, Dtype::bf16, false).time_s;
    const double backward = attention_score_cost(h100(), family, 128, Dtype::bf16, true).time_s;
    // backward rate / forward rate = (2.5 x FLOPs / backward) / (FLOPs / forward) = 0.863
    CHECK(2.5 * forward / backward == ps_approx(0.63 / 0.73));
  }
}

TEST_CASE("cudnn: full-rate warpgroup MMA with the softmax added, not hidden") {
  const AttentionScoreCost cudnn = attention_score_cost(h100(), AttentionKernelFamily::cudnn, 128, Dtype::bf16, false);
  // 512 / 791.2e12 + max(1 / 3.863e12, 4 / 33.5e12) = 0.6471 + 0.2589 ps = 0.9060 ps: 565 TFLOP/s
  CHECK(cudnn.time_s == ps_approx(6.471183013144591e-13 + 1.0 / 3.863e12).epsilon(1e-9));
  CHECK(cudnn.matmul_bound);
  // The fa3 overlap does not apply to it.
  AcceleratorSpec spec = h100();
  spec.attention_softmax_overlap = 0.5;
  CHECK(attention_score_cost(spec, AttentionKernelFamily::cudnn, 128, Dtype::bf16, false).time_s == cudnn.time_s);
  CHECK(attention_score_cost(spec, AttentionKernelFamily::fa3, 128, Dtype::bf16, false).time_s < cudnn.time_s);
  // A Hopper-class preset may name either warpgroup family and still run the other two.
  spec.attention_kernel = AttentionKernelFamily::cudnn;
  CHECK(attention_score_cost(spec, AttentionKernelFamily::fa3, 128, Dtype::bf16, false).time_s > 0);
  CHECK(attention_score_cost(spec, AttentionKernelFamily::fa2, 128, Dtype::bf16, false).time_s > 0);
}

TEST_CASE("on H100 the family decides: fa2 on warp MMA and serial softmax, fa3 MMA-bound") {
  const AttentionScoreCost fa2 = attention_score_cost(h100(), AttentionKernelFamily::fa2, 128, Dtype::bf16, false);
  // 512 / (989e12 x 0.8 x 0.5) + max(1 / 3.863e12, 4 / 33.5e12) = 1.2942 + 0.2589 ps: 33.3 % of peak
  CHECK(fa2.time_s == ps_approx(1.5531027688209969e-12).epsilon(1e-9));
  CHECK(512.0 / fa2.time_s / 989e12 == ps_approx(0.33333).epsilon(1e-4));
  const AttentionScoreCost fa3 = attention_score_cost(h100(), AttentionKernelFamily::fa3, 128, Dtype::bf16, false);
  // max(512 / 791.2e12, 0.2589, 0.1194 ps) = 0.6471 ps: the matmul sets the pace
  CHECK(fa3.time_s == ps_approx(6.471183013144591e-13).epsilon(1e-9));
  CHECK(fa3.matmul_bound);
}

TEST_CASE("fa3 at head dim 32 on H100 is exp-bound even with full overlap") {
  const AttentionScoreCost cost = attention_score_cost(h100(), AttentionKernelFamily::fa3, 32, Dtype::bf16, false);
  CHECK(cost.matmul_s == ps_approx(1.6177957532861477e-13));
  CHECK(cost.time_s == ps_approx(1.0 / 3.863e12));
  CHECK_FALSE(cost.matmul_bound);
}

TEST_CASE("fa3 softmax overlap: FlashAttention-3's measured forward and its ablation") {
  // FA3 paper Table 2 (head dim 128, fwd): 661 TFLOP/s with both overlaps, 570 without warp
  // specialisation. Per element: matmul 0.6471 ps, softmax max(exp 0.2589, fp32 0.1194 ps).
  AcceleratorSpec spec = h100();
  const double flops = 512.0;
  spec.attention_softmax_overlap = 0.0;  // nothing hidden: matmul + softmax at the full MMA rate
  const AttentionScoreCost serial = attention_score_cost(spec, AttentionKernelFamily::fa3, 128, Dtype::bf16, false);
  CHECK(serial.time_s == ps_approx(6.471183013144591e-13 + 1.0 / 3.863e12).epsilon(1e-9));
  CHECK(flops / serial.time_s / 1e12 == ps_approx(570.0).epsilon(0.01));  // 565 vs 570
  spec.attention_softmax_overlap = 0.5;  // the presets' value
  const AttentionScoreCost half = attention_score_cost(spec, AttentionKernelFamily::fa3, 128, Dtype::bf16, false);
  CHECK(half.time_s == ps_approx(6.471183013144591e-13 + 0.5 / 3.863e12).epsilon(1e-9));
  CHECK(flops / half.time_s / 1e12 == ps_approx(661.0).epsilon(0.01));
  // Head dim 256 (the paper's "up to 740 TFLOP/s"): the same overlap, twice the matmul.
  const AttentionScoreCost d256 = attention_score_cost(spec, AttentionKernelFamily::fa3, 256, Dtype::bf16, false);
  CHECK(2 * flops / d256.time_s / 1e12 == ps_approx(740.0).epsilon(0.03));
  // Where the exp is longer (head dim 32), the unhidden part is of the matmul instead.
  const AttentionScoreCost d32 = attention_score_cost(spec, AttentionKernelFamily::fa3, 32, Dtype::bf16, false);
  CHECK(d32.time_s == ps_approx(1.0 / 3.863e12 + 0.5 * 1.6177957532861477e-13).epsilon(1e-9));
  // fa2 does not use it.
  CHECK(attention_score_cost(spec, AttentionKernelFamily::fa2, 128, Dtype::bf16, false).time_s ==
        attention_score_cost(h100(), AttentionKernelFamily::fa2, 128, Dtype::bf16, false).time_s);
}

TEST_CASE("attention cost rejects what it cannot model, naming the problem") {
  AcceleratorSpec spec = a100();
  spec.special_function_ops_per_s = 0;
  CHECK_THROWS_WITH_AS(attention_score_cost(spec, AttentionKernelFamily::fa2, 64, Dtype::bf16, false),
                       "accelerator 'a100' gives no special-function (exp) rate (preset "
                       "attention.special_function); the fused-attention model needs it (or use "
                       "workload.attention: unfused)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(attention_score_cost(a100(), AttentionKernelFamily::fa2, 0, Dtype::bf16, false),
                       "attention dimension head_dim must be positive, got 0", ConfigError);
  CHECK_THROWS_AS(attention_score_cost(a100(), AttentionKernelFamily::fa2, 64, Dtype::fp8, false), ConfigError);
  CHECK_THROWS_WITH_AS(attention_score_cost(a100(), AttentionKernelFamily::fa3, 128, Dtype::bf16, false),
                       "attention kernel family fa3 does not run on accelerator 'a100' (matrix path mma_sync); "
                       "families that run there: fa2, cudnn",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_attention_kernel_family("fa5"),
                       "unknown attention kernel family 'fa5'; valid: fa2, fa3, cudnn, fa4, fused_sdpa, pallas",
                       ConfigError);
  CHECK(parse_attention_kernel_family("fa3") == AttentionKernelFamily::fa3);
  CHECK(parse_attention_kernel_family("cudnn") == AttentionKernelFamily::cudnn);
  CHECK(attention_kernel_family_name(AttentionKernelFamily::cudnn) == "cudnn");
  CHECK(attention_kernel_family_name(AttentionKernelFamily::fa2) == "fa2");
  AcceleratorSpec bad = a100();
  bad.hbm_bytes_per_s = 1e12;
  bad.compute_units = 108;
  bad.warp_mma_fraction = 1.5;
  CHECK_THROWS_WITH_AS(ComputeModel{bad}, "accelerator 'a100': attention warp_mma_fraction must be in (0, 1]",
                       ConfigError);
}

TEST_CASE("families run only on their matrix path; the error names the accelerator and the valid ones") {
  // Every family on every path: the table of attention_kernel_family.hpp.
  CHECK(families_on_text(MatrixPath::mma_sync) == "fa2, cudnn");
  CHECK(families_on_text(MatrixPath::wgmma) == "fa2, fa3, cudnn");
  CHECK(families_on_text(MatrixPath::tcgen05) == "fa2, cudnn, fa4");
  CHECK(families_on_text(MatrixPath::mfma) == "fa2");
  CHECK(families_on_text(MatrixPath::mme) == "fused_sdpa");
  CHECK(families_on_text(MatrixPath::mxu) == "pallas");
  AcceleratorSpec blackwell = h100();
  blackwell.name = "b200";
  blackwell.matrix_path = MatrixPath::tcgen05;
  CHECK_THROWS_WITH_AS(attention_score_cost(blackwell, AttentionKernelFamily::fa3, 128, Dtype::bf16, false),
                       "attention kernel family fa3 does not run on accelerator 'b200' (matrix path tcgen05); "
                       "families that run there: fa2, cudnn, fa4",
                       ConfigError);
  AcceleratorSpec amd = a100();
  amd.name = "mi300x";
  amd.matrix_path = MatrixPath::mfma;
  CHECK_THROWS_WITH_AS(attention_score_cost(amd, AttentionKernelFamily::fa3, 128, Dtype::bf16, false),
                       "attention kernel family fa3 does not run on accelerator 'mi300x' (matrix path mfma); "
                       "families that run there: fa2",
                       ConfigError);
  CHECK_THROWS_AS(attention_score_cost(amd, AttentionKernelFamily::cudnn, 128, Dtype::bf16, false), ConfigError);
  // The family check comes before the missing-rate one: a Gaudi asked for fa2 hears about the family.
  AcceleratorSpec gaudi = a100();
  gaudi.name = "gaudi3";
  gaudi.matrix_path = MatrixPath::mme;
  gaudi.special_function_ops_per_s = 0;
  CHECK_THROWS_WITH_AS(attention_score_cost(gaudi, AttentionKernelFamily::fa2, 128, Dtype::bf16, false),
                       "attention kernel family fa2 does not run on accelerator 'gaudi3' (matrix path mme); "
                       "families that run there: fused_sdpa",
                       ConfigError);
}

TEST_CASE("cudnn overlaps its softmax on Blackwell and stays serial on Hopper") {
  AcceleratorSpec spec = h100();
  const double serial = attention_score_cost(spec, AttentionKernelFamily::cudnn, 128, Dtype::bf16, false).time_s;
  spec.matrix_path = MatrixPath::tcgen05;
  spec.attention_softmax_overlap = 1.0;
  const AttentionScoreCost overlapped = attention_score_cost(spec, AttentionKernelFamily::cudnn, 128, Dtype::bf16, false);
  // max(0.6471, 0.2589 ps) on tcgen05 against their sum on wgmma
  CHECK(overlapped.time_s == ps_approx(6.471183013144591e-13).epsilon(1e-9));
  CHECK(serial == ps_approx(6.471183013144591e-13 + 1.0 / 3.863e12).epsilon(1e-9));
}

TEST_CASE("fa4 splits the exponentials between MUFU and FMA emulation so both pipes finish together") {
  // B200: MUFU 4.395e12 exp/s, FMA pipe 40e12 op/s carrying 4 softmax ops per element.
  // f = (40e12 - 4.395e12 x 4) / (40e12 + 4.395e12 x 5) = 22.42 / 61.975 = 0.3618.
  const double fraction = emulated_exp_fraction(4.395e12, 40e12, 4.0);
  CHECK(fraction == doctest::Approx((40e12 - 4.395e12 * 4) / (40e12 + 4.395e12 * 5)).epsilon(1e-12));
  CHECK(fraction == doctest::Approx(0.3618).epsilon(1e-3));
  // A chip whose FMA pipe is already the longer one emulates nothing.
  CHECK(emulated_exp_fraction(4e12, 10e12, 4.0) == 0.0);
  AcceleratorSpec b200;
  b200.name = "b200";
  b200.peak_flops_per_s = {{Dtype::bf16, 2250e12}};
  b200.matmul_efficiency = 0.78;
  b200.vector_flops_per_s = 80e12;
  b200.special_function_ops_per_s = 4.395e12;
  b200.warp_mma_fraction = 0.25;
  b200.matrix_path = MatrixPath::tcgen05;
  b200.attention_kernel = AttentionKernelFamily::cudnn;
  // Head dim 64: matmul 256 / 1755e12 = 0.1459 ps; MUFU alone 0.2275 ps; split (1 - f) / 4.395e12
  // = 0.1452 ps. fa4 is matmul-bound, cudnn (MUFU only) exp-bound.
  const AttentionScoreCost fa4 = attention_score_cost(b200, AttentionKernelFamily::fa4, 64, Dtype::bf16, false);
  const AttentionScoreCost cudnn = attention_score_cost(b200, AttentionKernelFamily::cudnn, 64, Dtype::bf16, false);
  CHECK(fa4.time_s == ps_approx(256.0 / (2250e12 * 0.78)).epsilon(1e-9));
  CHECK(cudnn.time_s == ps_approx(1.0 / 4.395e12).epsilon(1e-9));
  CHECK(cudnn.time_s / fa4.time_s == doctest::Approx(1.559).epsilon(1e-3));
  // Head dim 128: both are matmul-bound at 0.2917 ps (1755 TFLOP/s before tiles).
  CHECK(attention_score_cost(b200, AttentionKernelFamily::fa4, 128, Dtype::bf16, false).time_s ==
        ps_approx(512.0 / (2250e12 * 0.78)).epsilon(1e-9));
}

}  // namespace attention_cost_test
