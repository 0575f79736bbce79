#pragma once
/// Calibration tables: measured kernel times in the CSV format of docs/calibration-format.md,
/// their parser (errors carry file:line), writer and merge (dedupe by shape, keep medians).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/accelerator/op_class.hpp"

namespace clustersim::models {

/// The header line every calibration CSV carries (column order is part of the contract).
inline constexpr std::string_view kCalibrationHeader =
    "accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,"
    "bytes,time_s,spread_s,repeats,source";

/// One measured shape.
struct CalibrationRow {
  std::string accelerator;  ///< library name, e.g. "h200-sxm"
  KernelShape shape;        ///< op, dtype and the shape columns
  bool dtype_given = true;  ///< false when the dtype cell was empty (bandwidth ops only)
  double time_s = 0;        ///< median time of one op execution, seconds
  double spread_s = 0;      ///< half the inter-quartile range, seconds (0 if unknown)
  std::int64_t repeats = 0; ///< timed repeats behind the median (0 if unknown)
  std::string source;       ///< who/what measured it
  std::string file;         ///< where the row was read from (for messages; not written)
  int line = 0;             ///< 1-based line in `file`
};

/// A parsed table: `# key: value` metadata in file order, then the rows in file order.
struct CalibrationTable {
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<CalibrationRow> rows;
};

/// Parses calibration CSV text. `file_name` is used in messages. Throws ConfigError
/// "FILE:LINE: problem" for: a missing or wrong header, a wrong column count, an unknown op or
/// dtype, a non-integer or non-positive dimension, a shape column the op needs left empty,
/// causal/backward other than 0/1, a non-positive or non-finite time_s, a negative spread_s
/// or repeats, an empty accelerator or source. Every problem found is reported, one per line.
CalibrationTable parse_calibration_csv(std::string_view text, const std::string& file_name);

/// Reads and parses one file; throws ConfigError naming the file if it cannot be read.
CalibrationTable read_calibration_csv(const std::filesystem::path& path);

/// Writes metadata comments, the header and the rows (numbers with 17 significant digits for
/// times, so a round trip is exact). Source cells are quoted when they hold commas or quotes.
std::string write_calibration_csv(const CalibrationTable& table);

/// True when two rows describe the same accelerator and kernel shape (dtype, op, every shape
/// column, causal, backward and bytes equal).
bool same_measurement_key(const CalibrationRow& a, const CalibrationRow& b);

/// Merges tables: rows with the same key (same_measurement_key) become one row whose time_s
/// and spread_s are the medians over the duplicates (mean of the two middle values for an even
/// count), repeats the sum, and source the distinct sources joined by " | ". Rows are kept in
/// order of first appearance. Metadata keys keep their first value; a later different value
/// is appended after "; ". If `accelerator` is not empty only its rows are kept.
CalibrationTable merge_calibration(const std::vector<CalibrationTable>& tables,
                                   const std::string& accelerator = "");

/// Reads a calibration CSV file, or every *.csv file directly in a folder (sorted by name), and
/// merges them (merge_calibration) keeping `accelerator`'s rows (all when empty). Throws
/// ConfigError for a path that does not exist, a folder without CSV files, or malformed files
/// (every problem, one per line).
CalibrationTable read_calibration_path(const std::filesystem::path& path, const std::string& accelerator = "");

/// The default calibration of `accelerator`: DATA_DIR/calibration/<accelerator>.csv, or nullopt
/// when that file does not exist. Throws ConfigError (file:line) for a malformed file.
std::optional<CalibrationTable> read_default_calibration(const std::filesystem::path& data_dir,
                                                         const std::string& accelerator);

/// Whether `table` holds a measurement of `accelerator` running an op of `op`'s kind (gemm and
/// batched_gemm are one kind) in `dtype`: the test behind the notice that an op class's time is
/// a roofline estimate with no measurement on that chip.
bool has_measurement(const CalibrationTable& table, const std::string& accelerator, OpClass op, Dtype dtype);

/// The rows of `table` for one accelerator.
std::vector<CalibrationRow> rows_for_accelerator(const CalibrationTable& table,
                                                 const std::string& accelerator);

}  // namespace clustersim::models
