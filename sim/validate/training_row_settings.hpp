#pragma once
/// What a row of a training dataset may set beyond the documented format: optional columns,
/// each bound to one declared workload key (its choices and range come from that declaration),
/// and the system preset a row's `gpu_type` names when the row's source has no conventions.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/validate/csv_table.hpp"

namespace clustersim::validate {

/// An optional column of a training row and the scenario key it sets.
struct RowSettingColumn {
  std::string column;  ///< CSV header name, e.g. "micro_batch"
  std::string key;     ///< declared scenario key, e.g. "workload.micro_batch"
  bool format_column = false;  ///< one of the format's own columns (vp), not an addition to it
};

/// Every optional column, in the order the docs list them. `vp` is the format's own column
/// (virtual stages); it is read here so that a bad value is an error like the others.
const std::vector<RowSettingColumn>& row_setting_columns();

/// The settings a row's optional columns state; nullopt / empty where the column is absent or
/// empty, which leaves the setting to the row's notes, its source's conventions or the defaults.
struct RowSettings {
  std::optional<std::int64_t> micro_batch;         ///< workload.micro_batch (>= 1)
  std::optional<std::int64_t> vp;                  ///< workload.parallelism.vp (>= 1); > 1: interleaved
  std::vector<std::int64_t> stage_layers;          ///< workload.parallelism.stage_layers; empty: unset
  std::optional<std::string> recompute;            ///< workload.recompute (none | selective | full | op)
  std::optional<bool> sequence_parallel;           ///< workload.parallelism.sequence_parallel
  std::optional<std::int64_t> zero;                ///< workload.parallelism.zero (0-3)
  std::optional<std::string> attention;            ///< workload.attention (flash | fa2 | fa3 | cudnn | unfused)
  std::optional<bool> tp_comm_overlap;             ///< workload.tp_comm_overlap
  std::optional<bool> overlap_grad_reduce;         ///< workload.overlap_grad_reduce
  std::optional<std::string> framework;            ///< workload.framework (megatron | torchtitan)
  std::optional<std::string> cross_entropy;        ///< workload.cross_entropy (auto | fused | eager | compiled)
  std::optional<std::string> gradient_reduce_dtype;  ///< workload.gradient_reduce_dtype (bf16 | fp32)
  std::optional<std::string> optimizer_master;   ///< workload.optimizer.master_weights (fp32 | remainders | none)
  std::optional<std::string> optimizer_moments;  ///< workload.optimizer.moments (fp32 | bf16)
  /// The optional columns that were set (not the format's own vp), in row_setting_columns() order.
  std::vector<std::string> columns_set;
};

/// Reads a row's optional columns. Each invalid value appends one problem to `problems`, naming
/// the column, the value and the valid choices (or range) of the key it sets, e.g.
/// "column 'recompute': 'partial' is not one of none, selective, full (workload.recompute)".
RowSettings read_row_settings(const CsvRow& row, std::vector<std::string>& problems);

/// The format's `precision` column read as workload.precision, for rows of a source without
/// conventions (a documented source's column is free text, e.g. "mixed precision (paper)", and
/// its conventions set the precision); nullopt when empty.
std::optional<std::string> read_row_precision(const CsvRow& row, std::vector<std::string>& problems);

/// Columns that a dataset may carry but the simulator has no setting for, with the reason; a
/// non-empty value in one is a problem, never silently ignored.
struct UnsupportedColumn {
  std::string column;
  std::string reason;
};
const std::vector<UnsupportedColumn>& unsupported_row_columns();

/// A system preset and the `gpu_type` names (case-insensitive) that select it.
struct GpuTypeSystem {
  std::string system;              ///< library system preset (models/data/systems)
  std::vector<std::string> names;  ///< e.g. "H100", "H100-SXM5-80GB"
};

/// The gpu_type names of rows whose source has no conventions of its own, in listing order.
const std::vector<GpuTypeSystem>& gpu_type_systems();

/// The system preset a row's gpu_type names: one of gpu_type_systems()' names or a library
/// system preset's own name, compared case-insensitively after dropping a parenthesised
/// remark ("H100 (DGX H100, Selene)" is "H100"). nullopt when it names none: never a guess.
std::optional<std::string> system_for_gpu_type(const std::string& gpu_type);

/// The valid gpu_type names as one line, for messages: "H100, H100-SXM, ... (dgx-h100); ...".
std::string gpu_type_choices();

}  // namespace clustersim::validate
