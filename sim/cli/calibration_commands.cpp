#include "sim/cli/calibration_commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/accelerator/kernel_validation.hpp"
#include "models/power/power_model.hpp"
#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/validate/trace_import.hpp"

namespace clustersim::cli {

void add_calibration_commands(CLI::App& app, CLI::App& validate_cmd, CalibrationCli& cli) {
  cli.calibrate = app.add_subcommand(
      "calibrate",
      "merge kernel-suite CSV results and profiler traces into a calibration table (docs/calibration-format.md)");
  cli.calibrate->add_option("paths", cli.calibrate_options.paths,
                            "calibration-format CSV files, or folders of them (every *.csv directly in each)");
  cli.calibrate
      ->add_option("--from-trace", cli.calibrate_options.traces,
                   "PyTorch profiler traces (Chrome-trace JSON, record_shapes=True): one row per operator shape, "
                   "the median of its calls (sim/validate/trace_import.hpp)")
      ->check(CLI::ExistingFile);
  cli.calibrate
      ->add_option("--from-nsys", cli.calibrate_options.nsys,
                   "Nsight Systems `nsys stats --report nvtx_gpu_proj_trace --format csv` files of a run under "
                   "torch.autograd.profiler.emit_nvtx(record_shapes=True); needs --accelerator and --dtype")
      ->check(CLI::ExistingFile);
  cli.calibrate->add_option("--dtype", cli.calibrate_options.dtype,
                            "--from-nsys: the operators' tensor type (bf16, fp16, fp8, fp32): NVTX records sizes only");
  cli.calibrate->add_option("--accelerator", cli.calibrate_options.accelerator,
                            "keep only this library accelerator's rows; with --from-trace, the accelerator the traces "
                            "ran on where their GPU name does not say (e.g. an H100 PCIe)");
  cli.calibrate->add_option("--out", cli.calibrate_options.out_file, "write the table to this file");

  cli.validate_kernels = validate_cmd.add_subcommand(
      "kernels", "compare compute-model predictions with kernel measurements");
  cli.validate_kernels->add_option("dir", cli.kernels_options.dir, "folder of calibration-format CSV files")
      ->required();
  cli.validate_kernels->add_option("--accelerator", cli.kernels_options.accelerator,
                                   "only this accelerator's rows");
  cli.validate_kernels->add_option("--holdout-fraction", cli.kernels_options.holdout_fraction,
                                   "fit on the rest, predict this fraction of each group")
      ->check(CLI::Range(0.0, 0.99));
  cli.validate_kernels->add_option("--seed", cli.kernels_options.seed, "hold-out split seed");
  cli.validate_kernels
      ->add_option("--attention-kernel", cli.kernels_options.attention_kernel,
                   "fused-attention family of the attention rows (the CSV does not record it; the default "
                   "calibration's public rows are FlashAttention-2)")
      ->check(CLI::IsMember(models::attention_kernel_family_names().names()))
      ->capture_default_str();
  cli.validate_kernels
      ->add_option("--clock", cli.kernels_options.clock,
                   "clock of the roofline column: burst = full clock (rows timed in short runs); sustained = the "
                   "clock the board power limit settles at while the row's kernel runs back to back (rows timed "
                   "after long warm-ups), from the power model")
      ->check(CLI::IsMember({"burst", "sustained"}))
      ->capture_default_str();
}

models::CalibrationTable read_calibration_dir(const std::filesystem::path& dir,
                                              const std::string& accelerator) {
  return models::read_calibration_path(dir, accelerator);
}

models::AcceleratorSpec library_accelerator(const std::string& name) {
  const auto names = scenario::library_names(scenario::LibraryKind::accelerators);
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw ConfigError(fmt::format("unknown accelerator '{}'; library accelerators: {}", name,
                                  fmt::join(names, ", ")));
  }
  // The scenario loader is the one reader of presets (units, schema): a one-device platform
  // resolves the accelerator exactly as a user's scenario would. A one-chip torus is a whole
  // network of its own, which every accelerator may run on whatever its scale-up fabric (an
  // NVSwitch, a mesh or ICI); no overlapped communication, so chips with few compute units
  // (TPU) are not refused for it.
  const std::string yaml = fmt::format(R"(schema_version: 1
name: accelerator-probe-{0}
cluster:
  nodes: 1
  node: {{accelerator: {0}, per_node: 1}}
  network: {{topology: torus, dims: [1], link: {{bandwidth: 1 GB/s}}}}
simulation:
  comm: {{overlap_sms: 0}}
)",
                                       name);
  return scenario::load_platform(scenario::ScenarioSource::text(yaml, "accelerator-probe.yaml")).platform.cluster.accelerator;
}

int calibrate_command(const CalibrateOptions& options, std::ostream& out) {
  if (options.paths.empty() && options.traces.empty() && options.nsys.empty()) {
    throw ConfigError("calibrate: give calibration CSV files or folders, --from-trace FILE..., --from-nsys FILE..., or "
                      "several of them");
  }
  if (!options.dtype.empty() && options.nsys.empty()) {
    throw ConfigError("calibrate: --dtype has no effect without --from-nsys (a PyTorch profiler trace and a "
                      "calibration CSV state their types)");
  }
  std::vector<models::CalibrationTable> tables;
  for (const auto& path : options.paths) tables.push_back(read_calibration_dir(path, options.accelerator));
  if (!options.traces.empty()) {
    const validate::TraceCalibration traces = validate::calibration_from_traces(
        std::vector<std::filesystem::path>(options.traces.begin(), options.traces.end()), options.accelerator);
    for (const auto& note : traces.notes) std::cerr << "calibrate: " << note << '\n';
    tables.push_back(traces.table);
  }
  if (!options.nsys.empty()) {
    const validate::TraceCalibration reports = validate::calibration_from_nsys(
        std::vector<std::filesystem::path>(options.nsys.begin(), options.nsys.end()), options.accelerator, options.dtype);
    for (const auto& note : reports.notes) std::cerr << "calibrate: " << note << '\n';
    tables.push_back(reports.table);
  }
  const models::CalibrationTable table = models::merge_calibration(tables, options.accelerator);
  if (table.rows.empty()) {
    std::vector<std::string> from = options.paths;
    from.insert(from.end(), options.traces.begin(), options.traces.end());
    from.insert(from.end(), options.nsys.begin(), options.nsys.end());
    throw ConfigError(fmt::format("no rows{} in '{}'",
                                  options.accelerator.empty() ? "" : " for accelerator '" + options.accelerator + "'",
                                  fmt::join(from, "', '")));
  }
  // Every accelerator named must be a library preset with the measured dtypes.
  std::set<std::string> accelerators;
  for (const auto& row : table.rows) accelerators.insert(row.accelerator);
  for (const auto& name : accelerators) {
    const models::ComputeModel check(library_accelerator(name), table);
    (void)check;
  }
  const std::string csv = models::write_calibration_csv(table);
  if (options.out_file.empty()) {
    out << csv;
    return 0;
  }
  std::ofstream file(options.out_file);
  if (!file) throw Error(fmt::format("cannot write {}", options.out_file));
  file << csv;
  out << fmt::format("wrote {} calibration rows for {} to {}\n", table.rows.size(),
                     fmt::join(accelerators, ", "), options.out_file);
  return 0;
}

double sustained_clock_time_s(const models::AcceleratorSpec& chip, const models::KernelShape& shape,
                              const models::OpEstimate& full_clock) {
  const auto power = models::activity_power(chip, 0);
  if (!power) {
    throw ConfigError(fmt::format("--clock sustained: accelerator {} has no TDP, so the power model cannot settle "
                                  "its clock (use --clock burst)",
                                  chip.name));
  }
  models::DeviceActivity activity;
  activity.period_s = activity.kernel_s = full_clock.time_s;
  const bool matrix = shape.op == models::OpClass::gemm || shape.op == models::OpClass::batched_gemm ||
                      shape.op == models::OpClass::attention;
  if (matrix && full_clock.flops > 0) activity.matrix_flops[shape.dtype] = full_clock.flops;
  const double throttle = models::device_energy(*power, activity).throttle_factor;
  const double launch_s = std::min(chip.kernel_launch_s, full_clock.time_s);
  return launch_s + (full_clock.time_s - launch_s) / throttle;
}

int validate_kernels_command(const ValidateKernelsOptions& options, std::ostream& out) {
  const models::CalibrationTable table = read_calibration_dir(options.dir, options.accelerator);
  if (table.rows.empty()) throw ConfigError(fmt::format("no rows to validate in '{}'", options.dir));
  models::RooflineClock clock;
  if (options.clock == "sustained") {
    clock = [chips = std::map<std::string, models::AcceleratorSpec>()](
                const std::string& accelerator, const models::KernelShape& shape,
                const models::OpEstimate& full_clock) mutable {
      auto chip = chips.find(accelerator);
      if (chip == chips.end()) chip = chips.emplace(accelerator, library_accelerator(accelerator)).first;
      return sustained_clock_time_s(chip->second, shape, full_clock);
    };
  } else if (options.clock != "burst") {
    throw ConfigError(fmt::format("--clock: '{}' is not one of burst, sustained", options.clock));
  }
  const auto report =
      models::validate_kernels(table.rows, library_accelerator, options.holdout_fraction, options.seed,
                               models::parse_attention_kernel_family(options.attention_kernel), clock);
  if (options.clock == "sustained") out << "roofline at the clock each row's kernel settles at under the power limit (--clock sustained)\n";
  out << models::render_kernel_validation(report);
  return 0;
}

}  // namespace clustersim::cli
