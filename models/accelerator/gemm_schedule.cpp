#include "models/accelerator/gemm_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/engine/error.hpp"
#include "sim/engine/integer_math.hpp"

namespace clustersim::models {

bool epilogue_overlaps_main_loop(MatrixPath path) {
  return path == MatrixPath::tcgen05 || path == MatrixPath::mme || path == MatrixPath::mxu;
}

namespace {


/// Bytes of one stream-K partial sum element (fp32 accumulator).
constexpr double kPartialSumBytes = 4.0;

void require_positive(std::int64_t value, const char* dimension) {
  if (value <= 0) {
    throw ConfigError(std::string("GEMM dimension ") + dimension + " must be positive, got " +
                      std::to_string(value));
  }
}

/// Operand-load intensity of a tile: FLOPs per operand element loaded, / 2.
double tile_intensity(double tile_m, double tile_n) { return tile_m * tile_n / (tile_m + tile_n); }

/// Fixed per-problem quantities shared by every configuration.
struct ProblemCosts {
  double m, n, k, batch;
  double peak_flops_per_s;
  double memory_bytes_per_s;
  double input_bytes, output_bytes;
  double weight_bytes;  // B's bytes per element as stored
  double useful_flops;
  double compulsory_operand_bytes;
  bool operands_fit_l2;
  double store_bytes;
};

/// Distinct A row panels and B column panels of `count` concurrently running tiles of one
/// matrix, bytes: the tiles form a block of rows x cols tiles, as square in elements as the
/// grid allows (rasterization keeps concurrently running tiles together).
double wave_panel_bytes(const ProblemCosts& p, std::int64_t tiles_m, std::int64_t tiles_n,
                        int tile_m, int tile_n, std::int64_t count) {
  const double ideal_rows = std::sqrt(static_cast<double>(count) * tile_n / tile_m);
  std::int64_t rows = std::clamp<std::int64_t>(std::llround(ideal_rows), 1, tiles_m);
  const std::int64_t cols = std::min(engine::ceil_div(count, rows), tiles_n);
  rows = std::min(engine::ceil_div(count, cols), tiles_m);
  const double panel_rows = std::min(static_cast<double>(rows * tile_m), p.m);
  const double panel_cols = std::min(static_cast<double>(cols * tile_n), p.n);
  return (panel_rows * p.input_bytes + panel_cols * p.weight_bytes) * p.k;
}

/// A and B bytes read from HBM with `tile_count` tiles run `active` at a time.
double operand_bytes(const ProblemCosts& p, std::int64_t tiles_m, std::int64_t tiles_n,
                     int tile_m, int tile_n, std::int64_t tile_count, std::int64_t active) {
  if (p.operands_fit_l2) return p.compulsory_operand_bytes;
  // A wave that covers whole matrices streams each matrix's operands once.
  if (tiles_m * tiles_n <= active) return p.compulsory_operand_bytes;
  // Tiles of one wave share panels through L2; the next wave reads its own.
  const std::int64_t full_waves = tile_count / active;
  const std::int64_t last_wave = tile_count % active;
  double bytes = static_cast<double>(full_waves) *
                 wave_panel_bytes(p, tiles_m, tiles_n, tile_m, tile_n, active);
  if (last_wave > 0) bytes += wave_panel_bytes(p, tiles_m, tiles_n, tile_m, tile_n, last_wave);
  return std::max(p.compulsory_operand_bytes, bytes);
}

}  // namespace

double GemmShape::b_bytes() const {
  if (weight_bytes < 0) throw ConfigError("a GEMM's weight_bytes must be >= 0, got " + std::to_string(weight_bytes));
  return weight_bytes > 0 ? weight_bytes : dtype_bytes(dtype);
}

std::string GemmSchedule::describe() const {
  std::string text = std::to_string(tile_m);
  text.append("x");
  text.append(std::to_string(tile_n));
  if (stream_k) text.append(" stream-K");
  return text;
}

std::vector<GemmSchedule> gemm_schedules(const GemmShape& problem, const AcceleratorSpec& spec,
                                         double efficiency) {
  require_positive(problem.m, "m");
  require_positive(problem.n, "n");
  require_positive(problem.k, "k");
  require_positive(problem.batch, "batch");
  if (!(efficiency > 0 && efficiency <= 1)) {
    throw ConfigError("GEMM main-loop efficiency must be in (0, 1], got " +
                      std::to_string(efficiency));
  }
  ProblemCosts p{};
  p.m = static_cast<double>(problem.m);
  p.n = static_cast<double>(problem.n);
  p.k = static_cast<double>(problem.k);
  p.batch = static_cast<double>(problem.batch);
  p.peak_flops_per_s = spec.peak_for(problem.dtype) * efficiency;
  p.memory_bytes_per_s = spec.hbm_bytes_per_s * spec.memory_efficiency;
  p.input_bytes = dtype_bytes(problem.dtype);
  p.output_bytes = output_dtype_bytes(problem.dtype);
  p.weight_bytes = problem.b_bytes();
  p.useful_flops = 2.0 * p.m * p.n * p.k * p.batch;
  const double operands_per_matrix = p.m * p.k * p.input_bytes + p.k * p.n * p.weight_bytes;
  p.compulsory_operand_bytes = operands_per_matrix * p.batch;
  p.operands_fit_l2 = spec.l2_bytes > 0 && operands_per_matrix <= spec.l2_bytes;
  p.store_bytes = p.m * p.n * p.batch * p.output_bytes;
  const double store_s = p.store_bytes / p.memory_bytes_per_s;
  const double prologue_factor = (p.k + kGemmTileKOverheadElements) / p.k;
  const std::int64_t units = spec.compute_units;
  const bool overlaps_store = epilogue_overlaps_main_loop(spec.matrix_path);

  const int preset_m = spec.gemm_tile_m, preset_n = spec.gemm_tile_n;
  const double preset_intensity = tile_intensity(preset_m, preset_n);
  const int half_m = std::max(1, preset_m / 2), half_n = std::max(1, preset_n / 2);
  const std::pair<int, int> tiles[] = {{preset_m, preset_n}, {preset_n, preset_m},
                                       {half_m, preset_n},   {preset_n, half_m},
                                       {preset_m, half_n},   {half_n, preset_m},
                                       {half_m, half_n}};
  std::vector<GemmSchedule> schedules;
  for (std::size_t index = 0; index < std::size(tiles); ++index) {
    const auto [tile_m, tile_n] = tiles[index];
    // A square preset repeats itself under transposition; keep the first of equal tiles.
    bool repeated = false;
    for (const auto& seen : schedules) {
      repeated = repeated || (!seen.stream_k && seen.tile_m == tile_m && seen.tile_n == tile_n);
    }
    if (repeated) continue;
    const std::int64_t tiles_m = engine::ceil_div(problem.m, tile_m);
    const std::int64_t tiles_n = engine::ceil_div(problem.n, tile_n);
    const std::int64_t tile_count = tiles_m * tiles_n * problem.batch;
    const std::int64_t waves = engine::ceil_div(tile_count, units);
    const std::int64_t active = std::min(tile_count, units);
    const double tile_efficiency =
        std::min(1.0, tile_intensity(tile_m, tile_n) / preset_intensity);
    const double tile_flops_per_k = 2.0 * tile_m * tile_n;

    GemmSchedule data_parallel;
    data_parallel.tile_m = tile_m;
    data_parallel.tile_n = tile_n;
    data_parallel.tiles = tile_count;
    data_parallel.waves = waves;
    const double executed_flops =
        static_cast<double>(waves * units) * tile_flops_per_k * p.k;
    data_parallel.utilization = p.useful_flops / executed_flops;
    data_parallel.tile_efficiency = tile_efficiency;
    data_parallel.compute_s =
        executed_flops / (p.peak_flops_per_s * tile_efficiency) * prologue_factor;
    data_parallel.operand_bytes =
        operand_bytes(p, tiles_m, tiles_n, tile_m, tile_n, tile_count, active);
    data_parallel.operand_s = data_parallel.operand_bytes / p.memory_bytes_per_s;
    data_parallel.store_bytes = p.store_bytes;
    // Overlapped epilogue: every tile's store but the last round's (one per unit) runs beside
    // later main loops and shares HBM with their operand traffic.
    const double exposed_store_s =
        overlaps_store ? store_s * static_cast<double>(active) / static_cast<double>(tile_count) : store_s;
    const double hidden_store_s = store_s - exposed_store_s;
    data_parallel.store_s = exposed_store_s;
    data_parallel.time_s = std::max(data_parallel.compute_s, data_parallel.operand_s + hidden_store_s) +
                           data_parallel.store_s;
    schedules.push_back(data_parallel);

    // Stream-K is offered with the preset tile and its transpose (index 0 and 1).
    if (index > 1) continue;
    const std::int64_t iterations_per_tile = engine::ceil_div(problem.k, kGemmTileK);
    const std::int64_t iterations = tile_count * iterations_per_tile;
    const std::int64_t per_unit = engine::ceil_div(iterations, units);
    GemmSchedule stream_k = data_parallel;
    stream_k.stream_k = true;
    stream_k.waves = 1;
    const double executed_k = static_cast<double>(per_unit * units * kGemmTileK);
    stream_k.utilization = p.useful_flops / (executed_k * tile_flops_per_k);
    stream_k.compute_s =
        executed_k * tile_flops_per_k / (p.peak_flops_per_s * tile_efficiency) * prologue_factor;
    // A tile is split between units when a unit's range ends inside it. The unit that
    // finishes a split tile reads back the fp32 partial sums the others wrote; the writes
    // overlap the writers' next iterations, the reads do not. At most one partial per unit
    // and one owner per tile: min(tiles, units) partial tiles are read on the critical path.
    const bool splits_tiles = per_unit % iterations_per_tile != 0;
    const double partial_tiles =
        splits_tiles ? static_cast<double>(std::min(tile_count, units)) : 0.0;
    stream_k.fixup_s = partial_tiles * tile_m * tile_n * kPartialSumBytes / p.memory_bytes_per_s;
    stream_k.time_s = std::max(stream_k.compute_s, stream_k.operand_s + hidden_store_s) + stream_k.store_s +
                      stream_k.fixup_s;
    schedules.push_back(stream_k);
  }
  return schedules;
}

GemmSchedule fastest_gemm_schedule(const GemmShape& problem, const AcceleratorSpec& spec,
                                   double efficiency) {
  const std::vector<GemmSchedule> schedules = gemm_schedules(problem, spec, efficiency);
  const GemmSchedule* best = &schedules.front();
  for (const auto& schedule : schedules) {
    if (schedule.time_s < best->time_s) best = &schedule;
  }
  return *best;
}

}  // namespace clustersim::models
