// Calibration tables, the measured-table interpolation, the least-squares fit, the calibrated
// ComputeModel and kernel validation with hold-out.
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "models/accelerator/calibration_table.hpp"
#include "models/accelerator/compute_model.hpp"
#include "models/accelerator/fitted_model.hpp"
#include "models/accelerator/kernel_validation.hpp"
#include "models/accelerator/measured_table.hpp"
#include "sim/engine/error.hpp"

namespace calibration_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;
using namespace clustersim::models;

namespace {

/// 100 TFLOP/s bf16, 1 TB/s, 100 compute units, 128x128 tiles, no launch cost, efficiencies 1.
AcceleratorSpec test_spec() {
  AcceleratorSpec spec;
  spec.name = "testgpu";
  spec.peak_flops_per_s[Dtype::bf16] = 100e12;
  spec.vector_flops_per_s = 10e12;
  spec.special_function_ops_per_s = 10e12;
  spec.hbm_bytes_per_s = 1e12;
  spec.compute_units = 100;
  spec.gemm_tile_m = 128;
  spec.gemm_tile_n = 128;
  spec.matmul_efficiency = 1.0;
  spec.memory_efficiency = 1.0;
  spec.kernel_launch_s = 0;
  return spec;
}

std::string header() { return std::string(kCalibrationHeader) + "\n"; }

std::string gemm_row(int m, int n, int k, double time_s, const char* source = "test") {
  char time[40];
  std::snprintf(time, sizeof time, "%.17g", time_s);
  return "testgpu,gemm,bf16," + std::to_string(m) + "," + std::to_string(n) + "," +
         std::to_string(k) + ",,,,,,,,,," + time + ",0,10," + source + "\n";
}

std::string error_of(const std::string& text) {
  try {
    parse_calibration_csv(text, "t.csv");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("calibration CSV: metadata, rows and a round trip") {
  const std::string text = "# gpu: NVIDIA H200\n# a plain comment: not metadata\n" + header() +
                           gemm_row(1024, 1024, 1024, 1e-5, "\"suite, run 1\"") +
                           "testgpu,hbm_copy,,,,,,,,,,,,,4e9,0.001,0.00001,5,stream\n"
                           "testgpu,attention,bf16,,,,2,16,4,1024,2048,128,1,1,,0.002,0,3,fa\n";
  const CalibrationTable table = parse_calibration_csv(text, "t.csv");
  REQUIRE(table.metadata.size() == 1);
  CHECK(table.metadata[0].first == "gpu");
  CHECK(table.metadata[0].second == "NVIDIA H200");
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[0].shape.m == 1024);
  CHECK(table.rows[0].shape.batch == 1);
  CHECK(table.rows[0].source == "suite, run 1");
  CHECK(table.rows[0].line == 4);
  CHECK(table.rows[1].shape.op == OpClass::hbm_copy);
  CHECK_FALSE(table.rows[1].dtype_given);
  CHECK(table.rows[1].shape.bytes == 4e9);
  CHECK(table.rows[1].repeats == 5);
  CHECK(table.rows[2].shape.kv_heads == 4);
  CHECK(table.rows[2].shape.seq_kv == 2048);
  CHECK(table.rows[2].shape.causal);
  CHECK(table.rows[2].shape.backward);

  const CalibrationTable again = parse_calibration_csv(write_calibration_csv(table), "u.csv");
  REQUIRE(again.rows.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(same_measurement_key(again.rows[i], table.rows[i]));
    CHECK(again.rows[i].time_s == table.rows[i].time_s);
    CHECK(again.rows[i].source == table.rows[i].source);
  }
}

TEST_CASE("calibration CSV: every problem is reported with file:line") {
  CHECK(error_of("accelerator,op\n").find("t.csv:1: expected the calibration header") == 0);
  CHECK(error_of("# only comments\n") == "t.csv: no calibration header line found");
  CHECK(error_of(header() + "testgpu,gemm,bf16,1,2\n") == "t.csv:2: expected 19 columns, got 5");
  CHECK(error_of(header() + "testgpu,conv,bf16,,,,,,,,,,,,,1,0,1,s\n").find("t.csv:2: unknown op 'conv'") == 0);
  const std::string several =
      error_of(header() + "testgpu,gemm,bf17,-4,8,,,,,,,,,,,0,0,1,\n");
  CHECK(several.find("t.csv:2: unknown dtype 'bf17'") != std::string::npos);
  CHECK(several.find("t.csv:2: column m must be positive, got -4") != std::string::npos);
  CHECK(several.find("t.csv:2: column k is empty but the op needs it") != std::string::npos);
  CHECK(several.find("t.csv:2: column time_s must be positive") != std::string::npos);
  CHECK(several.find("t.csv:2: column source is empty") != std::string::npos);
  CHECK(error_of(header() + "testgpu,hbm_read,,,,,,,,,,,,,,1e-3,0,1,s\n") ==
        "t.csv:2: column bytes must be positive for op hbm_read");
  CHECK(error_of(header() + "testgpu,attention,bf16,,,,1,6,4,64,64,64,2,0,,1e-3,0,1,s\n") ==
        "t.csv:2: column causal must be 0 or 1, got '2'\n"
        "t.csv:2: heads (6) must be a multiple of kv_heads (4)");
  CHECK(error_of(header() + gemm_row(8, 8, 8, 1e-6) + "testgpu,gemm,bf16,8,x,8,,,,,,,,,,1,0,1,s\n") ==
        "t.csv:3: column n must be an integer, got 'x'");
}

TEST_CASE("merge: duplicates of a shape become one row with the median time") {
  const auto a = parse_calibration_csv(header() + gemm_row(64, 64, 64, 1e-6, "run1") +
                                           gemm_row(128, 64, 64, 5e-6, "run1"),
                                       "a.csv");
  const auto b = parse_calibration_csv("# gpu: X\n" + header() + gemm_row(64, 64, 64, 3e-6, "run2") +
                                           gemm_row(64, 64, 64, 2e-6, "run2") +
                                           "other,gemm,bf16,64,64,64,,,,,,,,,,1e-6,0,1,x\n",
                                       "b.csv");
  const CalibrationTable merged = merge_calibration({a, b});
  REQUIRE(merged.rows.size() == 3);
  CHECK(merged.rows[0].time_s == relative_approx(2e-6));  // median of 1, 3, 2 us
  CHECK(merged.rows[0].repeats == 30);
  CHECK(merged.rows[0].source == "run1 | run2");
  CHECK(merged.rows[1].time_s == relative_approx(5e-6));
  CHECK(merged.rows[2].accelerator == "other");
  CHECK(merged.metadata.size() == 1);
  const CalibrationTable only = merge_calibration({a, b}, "testgpu");
  CHECK(only.rows.size() == 2);
  // An even count takes the mean of the two middle values.
  const auto c = parse_calibration_csv(header() + gemm_row(8, 8, 8, 1e-6) + gemm_row(8, 8, 8, 4e-6), "c.csv");
  CHECK(merge_calibration({c}).rows[0].time_s == relative_approx(2.5e-6));
}

TEST_CASE("measured table: exact at measured points, log-space IDW between, none outside") {
  KernelShape small;
  small.m = small.n = small.k = 1024;
  KernelShape large = small;
  large.m = large.n = large.k = 2048;
  // ratios 2 (small) and 8 (large) to a reference of 1 s
  const MeasuredTable table({{small, 2.0, 1.0}, {large, 8.0, 1.0}}, std::log(2.0));
  CHECK(*table.time_ratio(small) == doctest::Approx(2.0));
  CHECK(*table.time_ratio(large) == doctest::Approx(8.0));
  // The geometric middle (1448) is equally far from both: exp((ln 2 + ln 8) / 2) = 4.
  KernelShape middle = small;
  middle.m = middle.n = middle.k = 1448;
  CHECK(*table.time_ratio(middle) == doctest::Approx(4.0).epsilon(1e-3));
  // m = n = k = 1024 * 2^(1/4): distances d and 3d -> weights 9 : 1 -> exp((9 ln2 + ln8)/10).
  KernelShape quarter = small;
  quarter.m = quarter.n = quarter.k = 1218;  // 1024 * 2^0.25 = 1217.75
  CHECK(*table.time_ratio(quarter) == doctest::Approx(std::exp((9 * std::log(2.0) + std::log(8.0)) / 10)).epsilon(2e-3));
  // Outside the measured box, another dtype, or too far from every point: not applicable.
  KernelShape outside = small;
  outside.m = 4096;
  CHECK_FALSE(table.time_ratio(outside).has_value());
  KernelShape other_dtype = small;
  other_dtype.dtype = Dtype::fp16;
  CHECK_FALSE(table.time_ratio(other_dtype).has_value());
  const MeasuredTable narrow({{small, 2.0, 1.0}, {large, 8.0, 1.0}}, std::log(1.2));
  CHECK_FALSE(narrow.time_ratio(middle).has_value());
}

TEST_CASE("least squares recovers known coefficients and keeps them non-negative") {
  // time = 1.25 f0 + 3e-6 + 0.5 f2, exactly.
  std::vector<FitSample> samples;
  for (int i = 1; i <= 6; ++i) {
    const double f0 = 1e-5 * i * i, f2 = 2e-5 * (7 - i);
    samples.push_back({{f0, 1.0, f2}, 1.25 * f0 + 3e-6 + 0.5 * f2});
  }
  const auto fit = LinearTimeFit::fit(samples);
  REQUIRE(fit.has_value());
  CHECK(fit->coefficients()[0] == doctest::Approx(1.25));
  CHECK(fit->coefficients()[1] == relative_approx(3e-6));
  CHECK(fit->coefficients()[2] == doctest::Approx(0.5));
  CHECK(fit->rms_relative_error() < 1e-9);
  CHECK(fit->predict_s({1e-3, 1.0, 0.0}) == relative_approx(1.25e-3 + 3e-6));
  // One sample: only the first feature is used (a scale).
  const auto single = LinearTimeFit::fit({{{2e-3, 1.0, 5e-4}, 3e-3}});
  REQUIRE(single.has_value());
  CHECK(single->coefficients()[0] == doctest::Approx(1.5));
  CHECK(single->coefficients()[1] == 0.0);
  // A fixed offset is added, not fitted.
  const auto offset = LinearTimeFit::fit({{{2e-3, 0.0}, 3e-3}}, 1e-3);
  CHECK(offset->coefficients()[0] == doctest::Approx(1.0));
  CHECK(offset->predict_s({4e-3, 0.0}) == relative_approx(5e-3));
  // Data that would need a negative overhead: the overhead is dropped.
  const auto clipped = LinearTimeFit::fit({{{1e-3, 1.0}, 0.5e-3}, {{2e-3, 1.0}, 1.5e-3}});
  CHECK(clipped->coefficients()[1] == 0.0);
  CHECK(clipped->coefficients()[0] > 0.0);
  CHECK_FALSE(LinearTimeFit::fit({}).has_value());
  CHECK_THROWS_WITH_AS(LinearTimeFit::fit({{{1.0}, 0.0}}),
                       "LinearTimeFit: measured time must be positive, got 0.000000", ConfigError);
  CHECK_THROWS_WITH_AS(LinearTimeFit::fit({{{1.0}, 1.0}, {{1.0, 2.0}, 1.0}}),
                       "LinearTimeFit: every sample needs 1 features, got 2", ConfigError);
}

TEST_CASE("calibrated compute model: measured table, then fit, then roofline") {
  // GEMMs measured at 1/2 of peak; wave quantization is 1 for these shapes (tiles multiple
  // of 100 would be needed: 1280 x 1280 -> 100 tiles), so the roofline is flops / 100 TFLOP/s.
  std::string csv = header();
  const int sizes[] = {1280, 2560};
  for (int m : sizes) {
    const double flops = 2.0 * m * 1280.0 * 4096.0;
    csv += gemm_row(m, 1280, 4096, flops / 50e12);
  }
  const ComputeModel plain(test_spec());
  const ComputeModel calibrated(test_spec(), parse_calibration_csv(csv, "c.csv"));
  CHECK(calibrated.calibration_point_count() == 2);

  GemmShape at_point{1280, 1280, 4096, 1, Dtype::bf16};
  const OpEstimate measured = calibrated.gemm(at_point);
  CHECK(measured.provenance == Provenance::measured_table);
  CHECK(measured.time_s == relative_approx(2.0 * 1280 * 1280 * 4096 / 50e12));
  // Out of the measured range: the fit (time = 2 x ideal, overhead not identifiable) applies.
  GemmShape outside{12800, 1280, 4096, 1, Dtype::bf16};
  const OpEstimate fitted = calibrated.gemm(outside);
  CHECK(fitted.provenance == Provenance::fitted);
  CHECK(fitted.time_s == relative_approx(2.0 * 12800 * 1280 * 4096 / 50e12));
  // Another dtype has neither table nor fit: roofline, same as the uncalibrated model.
  AcceleratorSpec spec = test_spec();
  spec.peak_flops_per_s[Dtype::fp16] = 100e12;
  const ComputeModel with_fp16(spec, parse_calibration_csv(csv, "c.csv"));
  GemmShape fp16 = outside;
  fp16.dtype = Dtype::fp16;
  CHECK(with_fp16.gemm(fp16).provenance == Provenance::roofline);
  CHECK(plain.gemm(outside).provenance == Provenance::roofline);
  // roofline: full waves, small-K factor (4096 + 64) / 4096, then the C store at 1 TB/s
  CHECK(plain.gemm(outside).time_s ==
        relative_approx(2.0 * 12800 * 1280 * 4096 / 100e12 * 4160 / 4096 + 12800.0 * 1280 * 2 / 1e12));
  // The pooled GEMM fit has a bf16 scale only: fp16 GEMMs get no fitted estimate from it.
  CHECK_FALSE(with_fp16.fitted({OpClass::gemm, Dtype::fp16, 12800, 1280, 4096}).has_value());
  CHECK(with_fp16.fitted({OpClass::gemm, Dtype::bf16, 12800, 1280, 4096}).has_value());
  // Rows of other accelerators are ignored; a dtype the accelerator lacks is an error.
  const auto foreign = parse_calibration_csv(header() + "other,gemm,fp8,8,8,8,,,,,,,,,,1e-6,0,1,s\n", "f.csv");
  CHECK(ComputeModel(test_spec(), foreign).calibration_point_count() == 0);
  const auto fp8 = parse_calibration_csv(header() + "testgpu,gemm,fp8,8,8,8,,,,,,,,,,1e-6,0,1,s\n", "f.csv");
  CHECK_THROWS_AS(ComputeModel(test_spec(), fp8), ConfigError);
}

TEST_CASE("the GEMM fit pools dtypes: one scale per format, one shared overhead") {
  // bf16 points run at 2x the roofline plus 10 us, over a 16x span of sizes (overhead
  // identifiable); a single fp8 point runs at 1.5x its roofline plus the same 10 us.
  AcceleratorSpec spec = test_spec();
  spec.peak_flops_per_s[Dtype::fp8] = 200e12;
  const ComputeModel plain(spec);
  auto roofline_s = [&](int m, Dtype dtype) {
    return plain.roofline({OpClass::gemm, dtype, m, 1280, 4096}).time_s;
  };
  std::string csv = header();
  for (int m = 1280; m <= 20480; m *= 2) csv += gemm_row(m, 1280, 4096, 2.0 * roofline_s(m, Dtype::bf16) + 10e-6);
  char row[200];
  std::snprintf(row, sizeof row, "testgpu,gemm,fp8,2560,1280,4096,,,,,,,,,,%.17g,0,1,test\n",
                1.5 * roofline_s(2560, Dtype::fp8) + 10e-6);
  csv += row;
  const ComputeModel calibrated(spec, parse_calibration_csv(csv, "p.csv"));
  REQUIRE(calibrated.fits().count("gemm") == 1);
  const LinearTimeFit& fit = calibrated.fits().at("gemm");
  CHECK(fit.coefficients()[static_cast<std::size_t>(Dtype::bf16)] == doctest::Approx(2.0));
  CHECK(fit.coefficients()[static_cast<std::size_t>(Dtype::fp8)] == doctest::Approx(1.5));
  CHECK(fit.coefficients()[kDtypeCount] == relative_approx(10e-6));
  // An fp8 shape far from its one point: its own scale, the overhead learnt from bf16.
  const auto fp8 = calibrated.fitted({OpClass::gemm, Dtype::fp8, 40960, 1280, 4096});
  REQUIRE(fp8.has_value());
  CHECK(fp8->time_s == relative_approx(1.5 * roofline_s(40960, Dtype::fp8) + 10e-6));
}

TEST_CASE("bandwidth ops: new op classes, streaming fallback, provenance") {
  const ComputeModel plain(test_spec());
  // layer norm of 1024 x 4096 bf16: 1024*4096*4 + 2*4096*2 + 8*1024 bytes at 1 TB/s
  const double ln_bytes = 1024.0 * 4096 * 4 + 2 * 4096 * 2 + 8 * 1024;
  CHECK(plain.layernorm({1024, 4096, Dtype::bf16}).time_s == doctest::Approx(ln_bytes / 1e12));
  CHECK(plain.softmax({1024, 1024, Dtype::bf16}).bytes == doctest::Approx(1024.0 * 1024 * 4));
  CHECK(plain.embedding({8, 4096, Dtype::bf16}).bytes == doctest::Approx(8.0 * 4096 * 4 + 64));
  CHECK(plain.optimizer_step({1e9}).time_s == doctest::Approx(30e9 / 1e12));
  CHECK(plain.memcpy(1e9).time_s == relative_approx(2e9 / 1e12));
  CHECK_THROWS_WITH_AS(plain.memcpy(0), "memcpy needs a positive byte count, got 0.000000", ConfigError);
  CHECK_THROWS_WITH_AS(plain.layernorm({0, 4, Dtype::bf16}), "layernorm dimension rows must be positive, got 0", ConfigError);
  // A STREAM copy at 80% of peak: memcpy without its own rows uses the streaming fit.
  const auto table = parse_calibration_csv(
      header() + "testgpu,hbm_copy,,,,,,,,,,,,,4e9,0.005,0,1,stream\n", "s.csv");
  const ComputeModel calibrated(test_spec(), table);
  const OpEstimate copy = calibrated.memcpy(1e9);
  CHECK(copy.provenance == Provenance::fitted);
  CHECK(copy.time_s == relative_approx(2e9 / 0.8e12));
  KernelShape copy_kernel;
  copy_kernel.op = OpClass::hbm_copy;
  copy_kernel.bytes = 4e9;
  CHECK(calibrated.estimate(copy_kernel).provenance == Provenance::measured_table);
  CHECK(calibrated.estimate(copy_kernel).time_s == relative_approx(0.005));
  KernelShape layer;
  layer.op = OpClass::layer_fwd;
  CHECK_THROWS_WITH_AS(calibrated.roofline(layer),
                       "op layer_fwd (a whole layer) is not costed by the compute model", ConfigError);
}

TEST_CASE("kernel validation: deterministic hold-out and the report") {
  std::string csv = header();
  // m = 1280 x 2^i: whole waves of 128 x 128 tiles over 100 units
  for (int m = 1280; m <= 40960; m *= 2) csv += gemm_row(m, 1280, 4096, 2.0 * m * 1280 * 4096 / 50e12);
  csv += "testgpu,layer_fwd,bf16,,,,,,,,,,,,,0.01,0,1,layer\n";
  const auto table = parse_calibration_csv(csv, "k.csv");
  const auto a = split_holdout(table.rows, 0.3, 7);
  // 6 GEMM rows -> round(1.8) = 2 held out; the single layer row stays in the fit part.
  CHECK(a.held_out.size() == 2);
  CHECK(a.fit.size() == 5);
  // Same seed, reversed input order: the same rows are held out.
  std::vector<CalibrationRow> reversed(table.rows.rbegin(), table.rows.rend());
  const auto b = split_holdout(reversed, 0.3, 7);
  REQUIRE(b.held_out.size() == 2);
  for (const auto& row : a.held_out) {
    CHECK(std::any_of(b.held_out.begin(), b.held_out.end(),
                      [&](const CalibrationRow& other) { return other.shape.m == row.shape.m; }));
  }
  CHECK_THROWS_WITH_AS(split_holdout(table.rows, 1.0, 1), "holdout fraction must be in [0, 1), got 1.000000", ConfigError);

  const auto spec_for = [](const std::string& name) {
    if (name != "testgpu") throw ConfigError("unknown accelerator '" + name + "'");
    return test_spec();
  };
  const auto report = validate_kernels(table.rows, spec_for, 0.3, 7);
  REQUIRE(report.comparisons.size() == 2);
  CHECK(report.skipped.size() == 1);
  CHECK(report.skipped[0] == "k.csv:8: layer_fwd is not costed by the compute model");
  // Every point runs at exactly 1/2 of peak: the fit predicts the held-out ones exactly while
  // the roofline (efficiency 1, small-K (4096 + 64)/4096, and the exposed C store
  // m n 2 B / 1 TB/s = 100/4096 of the ideal time) is 1 - 0.5 x 4260/4096 = 48.0% off.
  for (const auto& c : report.comparisons) {
    CHECK(std::fabs(c.best_error) < 1e-12);  // exact up to rounding
    CHECK(c.roofline_error == doctest::Approx(1 - 0.5 * 4260 / 4096));
  }
  CHECK(report.overall.roofline_median == doctest::Approx(1 - 0.5 * 4260 / 4096));
  const std::string text = render_kernel_validation(report);
  CHECK(text.find("held-out validation: 4 rows fitted, 2 held out (fraction 0.30, seed 7)") == 0);
  CHECK(text.find("median error all        n=2   best 0.0%    fitted 0.0%    (n=2)  roofline 48.0%") != std::string::npos);
  CHECK(text.find("skipped k.csv:8: layer_fwd") != std::string::npos);
  CHECK_THROWS_WITH_AS(validate_kernels(parse_calibration_csv(header() + "x,gemm,bf16,8,8,8,,,,,,,,,,1,0,1,s\n", "x.csv").rows,
                                        spec_for, 0, 1),
                       "unknown accelerator 'x'", ConfigError);
}

TEST_CASE("attention across accelerators: the model alone, and scaled by the others' ratios") {
  // Three accelerators (peaks 100, 200, 400 TFLOP/s) whose fused forward attention runs at
  // 2x, 2x and 4x their own model times; one row each, so nothing could be held out per
  // accelerator. gpu-d has no special-function rate: its row cannot be costed.
  const auto spec_for = [](const std::string& name) {
    AcceleratorSpec spec = test_spec();
    spec.name = name;
    const double scale = name == "gpu-a" || name == "gpu-d" ? 1.0 : name == "gpu-b" ? 2.0 : 4.0;
    spec.peak_flops_per_s[Dtype::bf16] = 100e12 * scale;
    if (name == "gpu-d") spec.special_function_ops_per_s = 0;
    return spec;
  };
  KernelShape shape;
  shape.op = OpClass::attention;
  shape.batch = 2;
  shape.heads = 16;
  shape.kv_heads = 16;
  shape.seq_q = 8192;
  shape.seq_kv = 8192;
  shape.head_dim = 128;
  std::string csv = header();
  const std::pair<const char*, double> measured_scales[] = {{"gpu-a", 2.0}, {"gpu-b", 2.0}, {"gpu-c", 4.0}};
  for (const auto& [name, scale] : measured_scales) {
    const double time_s = scale * ComputeModel(spec_for(name)).roofline(shape).time_s;
    char row[256];
    std::snprintf(row, sizeof row, "%s,attention,bf16,,,,2,16,16,8192,8192,128,0,0,,%.17g,0,1,t\n", name, time_s);
    csv += row;
  }
  // A causal row has no partner in its family: the model predicts it, nothing is pooled.
  // fa2 per score element: 512 / 100e12 + max(1 / 10e12, 4 / 5e12) = 5.92 ps; 2 x 16 x 128^2 x
  // (2080 + 64) tile elements (64 causal query tiles reaching 1..64 key tiles, plus one tile of
  // fixed work each): 6.6545 ms against 10 ms measured (test_spec has no launch cost).
  csv += "gpu-a,attention,bf16,,,,2,16,16,8192,8192,128,1,0,,0.01,0,1,t\n";
  csv += "gpu-d,attention,bf16,,,,2,16,16,8192,8192,128,0,0,,0.01,0,1,t\n";
  const auto report = validate_kernels(parse_calibration_csv(csv, "a.csv").rows, spec_for, 0, 1);
  REQUIRE(report.attention_transfer.size() == 4);
  const auto& a = report.attention_transfer[0];
  CHECK(a.row.accelerator == "gpu-a");
  CHECK(a.family == AttentionKernelFamily::fa2);
  CHECK(a.per_score.matmul_s == doctest::Approx(5.12e-12).scale(0));
  CHECK(a.per_score.fp32_s == doctest::Approx(0.8e-12).scale(0));
  CHECK(a.own_ratio == doctest::Approx(2.0));
  CHECK(a.model_error == doctest::Approx(0.5));
  CHECK(a.pooled_rows == 2);
  CHECK(a.pooled_ratio == doctest::Approx(std::sqrt(2.0 * 4.0)));  // geometric mean of b, c
  CHECK(a.pooled_error == doctest::Approx(std::sqrt(8.0) / 2.0 - 1.0));
  const auto& c = report.attention_transfer[2];
  CHECK(c.pooled_ratio == doctest::Approx(2.0));
  CHECK(c.pooled_error == doctest::Approx(0.5));
  CHECK(c.model_error == doctest::Approx(0.75));
  const auto& causal = report.attention_transfer[3];
  CHECK(causal.pooled_rows == 0);
  CHECK(causal.model_s == doctest::Approx(32 * 16384.0 * 2144 * 5.92e-12).epsilon(1e-4).scale(0));
  // model errors 0.5, 0.5, 0.75, 0.335; pooled 0.414, 0.414, 0.5
  CHECK(report.attention_transfer_median == doctest::Approx(0.5));
  CHECK(report.attention_transfer_pooled_median == doctest::Approx(std::sqrt(8.0) / 2.0 - 1.0));
  CHECK(report.attention_transfer_pooled_count == 3);
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].find("a.csv:6: accelerator 'gpu-d' gives no special-function (exp) rate") == 0);
  const std::string text = render_kernel_validation(report);
  CHECK(text.find("median error attention across accelerators n=4   model 50.0%   pooled 41.4% (n=3)") !=
        std::string::npos);
}

}  // namespace calibration_test
