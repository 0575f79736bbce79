#include "models/accelerator/gemm_schedule.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/error.hpp"

namespace gemm_schedule_test {

using namespace clustersim;
using namespace clustersim::models;

namespace {

// A small accelerator whose numbers can be followed by hand: `units` compute units sharing
// 10 TFLOP/s of bf16, 2 TB/s of HBM at 90 %, a 128x256 preset tile.
AcceleratorSpec small_accelerator(int units) {
  AcceleratorSpec spec;
  spec.name = "small-gpu";
  spec.peak_flops_per_s = {{Dtype::bf16, 10e12}, {Dtype::fp8, 20e12}};
  spec.hbm_bytes_per_s = 2e12;
  spec.memory_efficiency = 0.9;
  spec.compute_units = units;
  spec.gemm_tile_m = 128;
  spec.gemm_tile_n = 256;
  return spec;
}

GemmShape shape_of(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  GemmShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.batch = batch;
  return shape;
}

constexpr double kMemoryBytesPerS = 2e12 * 0.9;

const GemmSchedule& find(const std::vector<GemmSchedule>& schedules, int tile_m, int tile_n,
                         bool stream_k) {
  for (const auto& schedule : schedules) {
    if (schedule.tile_m == tile_m && schedule.tile_n == tile_n && schedule.stream_k == stream_k) {
      return schedule;
    }
  }
  FAIL("no schedule " << tile_m << "x" << tile_n << (stream_k ? " stream-K" : ""));
  return schedules.front();
}

}  // namespace

TEST_CASE("candidate tiles: preset, transpose, halvings; stream-K for the preset pair") {
  const auto schedules = gemm_schedules(shape_of(1024, 1024, 1024), small_accelerator(8), 0.8);
  std::vector<std::string> names;
  for (const auto& schedule : schedules) names.push_back(schedule.describe());
  CHECK(names == std::vector<std::string>{"128x256", "128x256 stream-K", "256x128",
                                          "256x128 stream-K", "64x256", "256x64", "128x128",
                                          "64x128"});
  // Tile efficiency I(tile) / I(128x256), I = m n / (m + n): 64x256 -> 51.2 / 85.33.
  CHECK(find(schedules, 64, 256, false).tile_efficiency == doctest::Approx(0.6));
  CHECK(find(schedules, 128, 128, false).tile_efficiency == doctest::Approx(0.75));
  CHECK(find(schedules, 64, 128, false).tile_efficiency == doctest::Approx(0.5));
  CHECK(find(schedules, 256, 128, false).tile_efficiency == doctest::Approx(1.0));
}

TEST_CASE("a partial wave idles units; stream-K spreads the k-loop and pays a fix-up") {
  // 384 x 256 x 4096 on 2 units: three 128x256 tiles take two waves (4 tile slots).
  const AcceleratorSpec spec = small_accelerator(2);
  const GemmShape shape = shape_of(384, 256, 4096);
  const auto schedules = gemm_schedules(shape, spec, 0.8);
  const double prologue = (4096.0 + 64.0) / 4096.0;
  const double tile_flops = 2.0 * 128 * 256 * 4096;

  const GemmSchedule& waves = find(schedules, 128, 256, false);
  CHECK(waves.tiles == 3);
  CHECK(waves.waves == 2);
  CHECK(waves.utilization == doctest::Approx(0.75));
  CHECK(waves.compute_s == doctest::Approx(4 * tile_flops / 8e12 * prologue));
  CHECK(waves.compute_bound());

  // Stream-K: 3 tiles x 64 iterations = 192 over 2 units, 96 each (no idle slot); a unit's
  // range ends inside a tile, so min(3, 2) = 2 fp32 partial tiles are read back.
  const GemmSchedule& stream_k = find(schedules, 128, 256, true);
  CHECK(stream_k.utilization == doctest::Approx(1.0));
  CHECK(stream_k.compute_s == doctest::Approx(3 * tile_flops / 8e12 * prologue));
  CHECK(stream_k.fixup_s == doctest::Approx(2.0 * 128 * 256 * 4 / kMemoryBytesPerS));
  CHECK(stream_k.store_s == doctest::Approx(384.0 * 256 * 2 / kMemoryBytesPerS));
  CHECK(stream_k.time_s ==
        doctest::Approx(stream_k.compute_s + stream_k.store_s + stream_k.fixup_s));

  const GemmSchedule best = fastest_gemm_schedule(shape, spec, 0.8);
  CHECK(best.describe() == "128x256 stream-K");
  CHECK(best.time_s < waves.time_s);
}

TEST_CASE("a full wave needs no stream-K: the data-parallel preset tile wins the tie") {
  // 256 x 256 x 4096 on 2 units: two tiles, one wave; stream-K gives each unit one whole tile.
  const auto schedules = gemm_schedules(shape_of(256, 256, 4096), small_accelerator(2), 0.8);
  CHECK(find(schedules, 128, 256, true).fixup_s == 0.0);
  const GemmSchedule best = fastest_gemm_schedule(shape_of(256, 256, 4096), small_accelerator(2), 0.8);
  CHECK(best.describe() == "128x256");
  CHECK(best.utilization == doctest::Approx(1.0));
}

TEST_CASE("a small problem picks a smaller tile to fill the units") {
  // 256 x 256 x 64 on 8 units: 128x256 gives 2 tiles (utilization 0.25) and stream-K cannot
  // split a single k-iteration; 64x128 gives 8 tiles, one full wave, at tile efficiency 0.5.
  const GemmSchedule best = fastest_gemm_schedule(shape_of(256, 256, 64), small_accelerator(8), 0.8);
  CHECK(best.describe() == "64x128");
  CHECK(best.utilization == doctest::Approx(1.0));
  const double compute_s = 8 * 2.0 * 64 * 128 * 64 / (8e12 * 0.5) * (128.0 / 64.0);
  CHECK(best.compute_s == doctest::Approx(compute_s));
  CHECK(best.time_s == doctest::Approx(compute_s + 256.0 * 256 * 2 / kMemoryBytesPerS));
}

TEST_CASE("operands that fit in L2 are read once; otherwise once per wave's panels") {
  // 4096 x 4096 x 16384 bf16 on 128 units: 32 x 16 = 512 tiles of 128x256, 4 waves of 128.
  AcceleratorSpec spec = small_accelerator(128);
  spec.peak_flops_per_s[Dtype::bf16] = 1e15;
  const GemmShape shape = shape_of(4096, 4096, 16384);
  const double compulsory = 2.0 * 4096 * 16384 * 2;  // A and B, 256 MiB

  spec.l2_bytes = 512e6;  // holds A and B
  CHECK(find(gemm_schedules(shape, spec, 0.8), 128, 256, false).operand_bytes ==
        doctest::Approx(compulsory));

  // 64 MB of L2 does not: a wave of 128 tiles is a block of 16 x 8 tiles (square in
  // elements: sqrt(128 x 256 / 128) = 16 rows), i.e. 2048 rows of A and 2048 columns of B,
  // each over all of k; four such waves.
  spec.l2_bytes = 64e6;
  const double per_wave = (16.0 * 128 + 8.0 * 256) * 16384 * 2;
  const GemmSchedule tiled = find(gemm_schedules(shape, spec, 0.8), 128, 256, false);
  CHECK(tiled.operand_bytes == doctest::Approx(4 * per_wave));
  CHECK(tiled.operand_s == doctest::Approx(4 * per_wave / kMemoryBytesPerS));
}

TEST_CASE("a skinny GEMM is bound by its operands plus the exposed store") {
  // 1 x 8192 x 8192 at 1 PFLOP/s: B (128 MiB) dominates even with the rows padded to a tile.
  AcceleratorSpec spec = small_accelerator(128);
  spec.peak_flops_per_s[Dtype::bf16] = 1e15;
  const GemmSchedule best = fastest_gemm_schedule(shape_of(1, 8192, 8192), spec, 0.8);
  CHECK_FALSE(best.compute_bound());
  CHECK(best.operand_bytes == doctest::Approx((8192.0 + 8192.0 * 8192.0) * 2));
  CHECK(best.store_bytes == doctest::Approx(8192.0 * 2));
  CHECK(best.time_s == doctest::Approx((best.operand_bytes + best.store_bytes) / kMemoryBytesPerS));
}

TEST_CASE("on tcgen05, mme and mxu only the last round of tiles stores after its main loop") {
  CHECK_FALSE(epilogue_overlaps_main_loop(MatrixPath::mma_sync));
  CHECK_FALSE(epilogue_overlaps_main_loop(MatrixPath::wgmma));
  CHECK_FALSE(epilogue_overlaps_main_loop(MatrixPath::mfma));
  CHECK(epilogue_overlaps_main_loop(MatrixPath::tcgen05));
  CHECK(epilogue_overlaps_main_loop(MatrixPath::mme));
  CHECK(epilogue_overlaps_main_loop(MatrixPath::mxu));
  // 4 units, 1024 x 2048 x 512: 8 x 8 = 64 tiles of 128 x 256 in 16 full waves, compute-bound.
  AcceleratorSpec hopper = small_accelerator(4);
  hopper.matrix_path = MatrixPath::wgmma;
  AcceleratorSpec blackwell = hopper;
  blackwell.matrix_path = MatrixPath::tcgen05;
  const GemmShape shape = shape_of(1024, 2048, 512);
  const GemmSchedule exposed = find(gemm_schedules(shape, hopper, 0.8), 128, 256, false);
  const GemmSchedule overlapped = find(gemm_schedules(shape, blackwell, 0.8), 128, 256, false);
  const double store_s = 1024.0 * 2048.0 * 2 / kMemoryBytesPerS;
  CHECK(exposed.store_s == doctest::Approx(store_s));
  CHECK(exposed.time_s == doctest::Approx(std::max(exposed.compute_s, exposed.operand_s) + store_s));
  // 4 of 64 tiles store after the last main loop; the other 60 share HBM with the operands.
  CHECK(overlapped.store_s == doctest::Approx(store_s * 4 / 64));
  CHECK(overlapped.compute_s == doctest::Approx(exposed.compute_s));
  CHECK(overlapped.time_s ==
        doctest::Approx(std::max(overlapped.compute_s, overlapped.operand_s + store_s * 60 / 64) + store_s * 4 / 64));
  CHECK(overlapped.time_s < exposed.time_s);
}

TEST_CASE("gemm_schedules rejects bad shapes and efficiencies, naming them") {
  const AcceleratorSpec spec = small_accelerator(8);
  auto message = [&](GemmShape shape, double efficiency) -> std::string {
    try {
      (void)gemm_schedules(shape, spec, efficiency);
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "<no ConfigError>";
  };
  CHECK(message(shape_of(0, 8, 8), 0.8) == "GEMM dimension m must be positive, got 0");
  CHECK(message(shape_of(8, 8, 8, -1), 0.8) == "GEMM dimension batch must be positive, got -1");
  CHECK(message(shape_of(8, 8, 8), 1.5) == "GEMM main-loop efficiency must be in (0, 1], got 1.500000");
  GemmShape fp4 = shape_of(8, 8, 8);
  fp4.dtype = Dtype::fp4;
  CHECK(message(fp4, 0.8) ==
        "accelerator 'small-gpu' has no fp4 matrix peak; available formats: bf16, fp8");
}

}  // namespace gemm_schedule_test
