#pragma once
// Host-only writer for the calibration CSV (docs/validation.md, "Kernel suite"): `# key: value`
// metadata lines, one header line, one row per measured shape. Shared by every benchmark of the
// CUDA kernel suite; needs no CUDA headers so it is unit-tested on machines without a GPU.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::kernels {

/// The column names of the calibration CSV, in order.
inline constexpr const char* kCalibrationHeader =
    "accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,bytes,"
    "time_s,spread_s,repeats,source";

/// One measured shape. Unused shape columns stay empty (std::nullopt).
struct CalibrationRow {
  std::string accelerator;  ///< library accelerator name, e.g. "h200-sxm"
  std::string op;           ///< gemm | batched_gemm | attention | layernorm | softmax | ...
  std::string dtype;        ///< fp32 | tf32 | bf16 | fp16 | fp8
  std::optional<std::int64_t> m, n, k, batch, heads, kv_heads, seq_q, seq_kv, head_dim;
  std::optional<bool> causal;
  std::optional<bool> backward;
  std::optional<double> bytes;  ///< bytes moved (bandwidth ops), else empty
  double time_s = 0.0;          ///< median time of one op execution, seconds
  double spread_s = 0.0;        ///< half the inter-quartile range, seconds
  int repeats = 0;              ///< number of timed repeats
  std::string source;           ///< who/what measured
};

/// Ordered `# key: value` metadata (gpu, driver, cuda, clocks, date, host, tool).
using CalibrationMetadata = std::vector<std::pair<std::string, std::string>>;

/// The set of op names the calibration format accepts.
const std::vector<std::string>& calibration_ops();
/// The set of dtype names the calibration format accepts.
const std::vector<std::string>& calibration_dtypes();

/// Checks a row against the format: known op and dtype, non-empty accelerator, positive shape
/// values, finite time_s > 0, spread_s >= 0, repeats >= 1. Throws std::invalid_argument naming
/// the offending field.
void validate_row(const CalibrationRow& row);

/// The row as one CSV line (no newline); `source` is quoted when it holds a comma or quote.
/// Validates first (see validate_row).
std::string format_row(const CalibrationRow& row);

/// Writes the metadata lines and the header line. Keys must be non-empty and hold no ':' or
/// newline; values hold no newline (std::invalid_argument otherwise).
void write_preamble(std::ostream& out, const CalibrationMetadata& metadata);

/// Writes a whole calibration CSV: preamble, then one line per row.
void write_calibration_csv(std::ostream& out, const CalibrationMetadata& metadata,
                           const std::vector<CalibrationRow>& rows);

}  // namespace clustersim::kernels
