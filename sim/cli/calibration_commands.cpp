#include "sim/cli/calibration_commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "models/accelerator/compute_model.hpp"
#include "models/accelerator/kernel_validation.hpp"
#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace clustersim::cli {

void add_calibration_commands(CLI::App& app, CLI::App& validate_cmd, CalibrationCli& cli) {
  cli.calibrate = app.add_subcommand(
      "calibrate", "merge kernel-suite CSV results into a calibration table (docs/calibration-format.md)");
  cli.calibrate->add_option("dir", cli.calibrate_options.dir, "folder of calibration-format CSV files")
      ->required();
  cli.calibrate->add_option("--accelerator", cli.calibrate_options.accelerator,
                            "keep only this library accelerator's rows");
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
  // The scenario loader is the one reader of presets (units, schema); a one-device probe
  // scenario resolves the accelerator exactly as a user's scenario would. A one-chip torus is a
  // whole network of its own, which every accelerator may run on whatever its scale-up fabric
  // (an NVSwitch, a mesh or ICI); no overlapped communication, so chips with few compute units
  // (TPU) are not refused for it.
  const std::string yaml = fmt::format(R"(schema_version: 1
name: accelerator-probe-{0}
cluster:
  nodes: 1
  node: {{accelerator: {0}, per_node: 1}}
  network: {{topology: torus, dims: [1], link: {{bandwidth: 1 GB/s}}}}
simulation:
  comm: {{overlap_sms: 0}}
workload:
  kind: training
  model: llama-3-8b
  seq_len: 128
  global_batch: 1
  micro_batch: 1
  precision: bf16
  parallelism: {{tp: 1, pp: 1, dp: 1}}
)",
                                       name);
  return scenario::load_scenario_from_string(yaml, "accelerator-probe.yaml").platform.cluster.accelerator;
}

int calibrate_command(const CalibrateOptions& options, std::ostream& out) {
  const models::CalibrationTable table = read_calibration_dir(options.dir, options.accelerator);
  if (table.rows.empty()) {
    throw ConfigError(fmt::format("no rows{} in '{}'",
                                  options.accelerator.empty() ? "" : " for accelerator '" + options.accelerator + "'",
                                  options.dir));
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

int validate_kernels_command(const ValidateKernelsOptions& options, std::ostream& out) {
  const models::CalibrationTable table = read_calibration_dir(options.dir, options.accelerator);
  if (table.rows.empty()) throw ConfigError(fmt::format("no rows to validate in '{}'", options.dir));
  const auto report =
      models::validate_kernels(table.rows, library_accelerator, options.holdout_fraction, options.seed,
                               models::parse_attention_kernel_family(options.attention_kernel));
  out << models::render_kernel_validation(report);
  return 0;
}

}  // namespace clustersim::cli
