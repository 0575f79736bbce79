#pragma once
/// How a GEMM library runs one GEMM on an accelerator: the output-tile shape, data-parallel
/// waves or stream-K, and what each costs (the roofline of ComputeModel::gemm()).
///
/// A library picks, per shape, the fastest of several kernel configurations. The model offers
/// a few realistic ones and takes the cheapest:
///   * data-parallel tiles: the preset tile (tile_m x tile_n), its transpose, and the tiles
///     with one or both sides halved (128x256 -> 256x128, 64x256, 256x64, 128x128, 64x128);
///     every output tile is one unit of work, run in ceil(tiles / units) waves;
///   * stream-K with the preset tile (or its transpose): the tiles' k-loop iterations are
///     spread evenly over the units, so there is no partial wave, at the cost of a fix-up:
///     the owner of a split tile reads back the fp32 partial sums of the units that shared
///     it (min(tiles, units) partial tiles on the critical path; the writes overlap the
///     writers' main loops).
/// Cost of a configuration, seconds (launch overhead excluded, ComputeModel adds it):
///   compute  = executed MMA work / (peak x efficiency(dtype) x tile_efficiency)
///              x (k + kGemmTileKOverheadElements) / k
///              executed work counts the padding of partial tiles and the idle units of the
///              last wave (data-parallel) or of the last k-iteration (stream-K);
///   operands = operand bytes read from HBM / (hbm x memory_efficiency): A and B once when
///              both fit in L2 together, else each wave's distinct A row panels and B column
///              panels (the wave's tiles share panels through L2; waves do not);
///   store    = C bytes / (hbm x memory_efficiency): the epilogue writes the output tile after
///              the k-loop and is not overlapped with it (one resident tile per unit) on the
///              mma_sync, wgmma and mfma paths (cuBLAS / hipBLASLt non-persistent kernels);
///   time     = max(compute, operands) + store (+ stream-K fix-up).
/// On the tcgen05, mme and mxu paths (epilogue_overlaps_main_loop) the accumulator lives
/// outside the registers the next tile's math uses (Blackwell: tensor memory, double-buffered
/// by the persistent sm100 kernels of CUTLASS / cuBLAS; Gaudi MME and TPU MXU: the engine
/// streams its output while the next tile runs), so only the last round of tiles (one per
/// unit) stores after its main loop: store = C bytes x min(tiles, units) / tiles / bandwidth,
/// and the rest of C shares HBM with the operands: time = max(compute, operands + hidden
/// store) + store (+ fix-up).
/// tile_efficiency = I(tile) / I(preset tile), I = tile_m tile_n / (tile_m + tile_n): the
/// operand bytes a tile loads into shared memory per FLOP grow as 1 / I, and the preset tile
/// is taken to be the one that keeps the matrix units fed at the library's best efficiency.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/dtype.hpp"

namespace clustersim::models {

/// K elements one main-loop iteration consumes (tile_k). Stream-K splits work at this grain.
inline constexpr std::int64_t kGemmTileK = 64;

/// Small-K prologue cost of one GEMM tile, in K elements. Each output tile runs k / tile_k
/// main-loop iterations; before the first one the multi-stage shared-memory pipeline must be
/// filled, which costs about one main-loop iteration at tile_k = 64, so compute time is scaled
/// by (k + 64) / k. It matters for small-K GEMMs (k = 768: +8.3 %).
inline constexpr double kGemmTileKOverheadElements = 64.0;

/// C[m,n] = A[m,k] x B[k,n], repeated `batch` times (batched GEMM).
/// Bytes = (m*k + k*n) x dtype_bytes + m*n x output_dtype_bytes (fp8/fp4 write bf16), x batch.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  Dtype dtype = Dtype::bf16;
  /// 0: the epilogue writes C (output_dtype_bytes per element). > 0: C += A x B into an
  /// existing accumulator of this many bytes per element (beta = 1), which the epilogue reads
  /// and writes back: a weight-gradient GEMM accumulating into the framework's gradient
  /// buffer (Megatron's gradient_accumulation_fusion, fp32 main_grad with bf16).
  double accumulate_bytes = 0;
  /// fp8 with precise ("split") accumulation: the running sums are promoted to fp32 every
  /// AcceleratorSpec::fp8_promotion_interval K elements (Transformer Engine's dgrad and wgrad
  /// GEMMs; its forward GEMMs use fast accumulation). Ignored for other formats.
  bool split_accumulation = false;
  /// 0: B (the weight, k x n) is stored in `dtype`. > 0: bytes per B element as stored, for
  /// weight-only quantisation (W4A16: 0.5, W8A16: 1): the kernel reads the packed weight and
  /// dequantises it in the main loop, whose math stays in `dtype` (Marlin, TensorRT-LLM's
  /// weight-only GEMMs). The scales' bytes (one per group of 128) are neglected.
  double weight_bytes = 0;
  /// Bytes per element of B as read from HBM.
  double b_bytes() const;
};


/// One kernel configuration and its modelled cost.
struct GemmSchedule {
  int tile_m = 0;                 ///< output tile rows
  int tile_n = 0;                 ///< output tile columns
  bool stream_k = false;          ///< k-iterations spread over the units (no partial wave)
  std::int64_t tiles = 0;         ///< output tiles, all batches
  std::int64_t waves = 0;         ///< data-parallel waves (stream-K: 1)
  double utilization = 0;         ///< useful MMA work / executed MMA work, in (0, 1]
  double tile_efficiency = 0;     ///< I(tile) / I(preset tile), in (0, 1]
  double compute_s = 0;           ///< main-loop math time, seconds
  double operand_bytes = 0;       ///< A and B bytes read from HBM
  double operand_s = 0;           ///< their transfer time, seconds
  double store_bytes = 0;         ///< C bytes written
  double store_s = 0;             ///< exposed epilogue store time, seconds
  double fixup_s = 0;             ///< stream-K partial-tile fix-up, seconds (0 otherwise)
  double time_s = 0;              ///< max(compute, operands) + store + fix-up, seconds
  /// True when the main loop is limited by the math rather than the operand traffic.
  bool compute_bound() const { return compute_s >= operand_s; }
  /// "128x256", "256x128 stream-K", ... for reports.
  std::string describe() const;
};

/// Whether a GEMM's epilogue store overlaps later tiles' main loops on `path` (see top): true for
/// tcgen05, mme and mxu, false for mma_sync, wgmma and mfma.
bool epilogue_overlaps_main_loop(MatrixPath path);

/// Every configuration the model considers for `problem` (see top), in a fixed order.
/// `efficiency` is the main-loop fraction of peak (AcceleratorSpec::matmul_efficiency_for).
/// Throws ConfigError for a non-positive dimension or a dtype the accelerator lacks.
std::vector<GemmSchedule> gemm_schedules(const GemmShape& problem, const AcceleratorSpec& spec,
                                         double efficiency);

/// The cheapest of gemm_schedules() (the first on a tie).
GemmSchedule fastest_gemm_schedule(const GemmShape& problem, const AcceleratorSpec& spec,
                                   double efficiency);

}  // namespace clustersim::models
