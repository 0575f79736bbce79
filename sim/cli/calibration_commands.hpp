#pragma once
/// `clustersim calibrate DIR` and `clustersim validate kernels DIR`: kernel-suite results in the
/// calibration CSV format (docs/calibration-format.md) -> a calibration table, and model
/// predictions vs those measurements. No modeling logic here (see models/accelerator).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/calibration_table.hpp"

namespace clustersim::cli {

struct CalibrateOptions {
  std::vector<std::string> paths;  ///< calibration CSV files or folders of them; may be empty with traces
  std::vector<std::string> traces;  ///< PyTorch profiler traces (--from-trace), merged with `dir`'s rows
  std::vector<std::string> nsys;    ///< Nsight Systems nvtx_gpu_proj_trace CSVs (--from-nsys)
  std::string dtype;                ///< the operators' tensor type in an nsys report (NVTX records none)
  std::string accelerator;  ///< keep only this accelerator's rows (checked against the library); with
                            ///< traces, also the accelerator they ran on when their GPU name is ambiguous
  std::string out_file;     ///< write the table here; empty: print it
};

struct ValidateKernelsOptions {
  std::string dir;              ///< folder of *.csv measurements (or one CSV file)
  std::string accelerator;      ///< only this accelerator's rows; empty: all
  double holdout_fraction = 0;  ///< 0: compare every row in-sample
  std::uint64_t seed = 1;       ///< hold-out split seed
  /// Fused-kernel family of the attention rows ("fa2", "fa3", "cudnn"; the CSV does not record it).
  std::string attention_kernel = "fa2";
  /// Clock of the roofline column: "burst" (full clock) or "sustained" (settled under the power
  /// limit while the row's kernel runs back to back: models::device_energy's throttle factor).
  std::string clock = "burst";
};

/// The subcommands and their parsed options, as registered on the CLI11 app.
struct CalibrationCli {
  CLI::App* calibrate = nullptr;
  CLI::App* validate_kernels = nullptr;
  CalibrateOptions calibrate_options;
  ValidateKernelsOptions kernels_options;
};

/// Adds `calibrate` to `app` and `kernels` to `validate_cmd`.
void add_calibration_commands(CLI::App& app, CLI::App& validate_cmd, CalibrationCli& cli);

/// Reads every *.csv in `dir` (sorted by name; `dir` may also be one file) and merges them
/// (duplicates of a shape -> medians). Parse errors of all files are reported together, each
/// as file:line. Throws ConfigError when no CSV is found.
models::CalibrationTable read_calibration_dir(const std::filesystem::path& dir,
                                              const std::string& accelerator = "");

/// The library preset `name` (models/data/accelerators); throws ConfigError for an unknown one.
models::AcceleratorSpec library_accelerator(const std::string& name);

int calibrate_command(const CalibrateOptions& options, std::ostream& out);
int validate_kernels_command(const ValidateKernelsOptions& options, std::ostream& out);

}  // namespace clustersim::cli
