// clustersim: the command-line entry point. The CLI holds no modeling logic; only this file
// turns errors into exit codes (0 ok, 1 bad input or failed simulation, 2 usage).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/cli/calibration_commands.hpp"
#include "sim/cli/capacity_command.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/search_command.hpp"
#include "sim/cli/sweep_command.hpp"
#include "sim/engine/error.hpp"

namespace {

/// `clustersim import KIND FILE...`.
CLI::App* add_import_command(CLI::App& app, clustersim::cli::ImportOptions& options) {
  CLI::App* import_cmd = app.add_subcommand(
      "import", "turn benchmark tools' outputs into rows of the validation CSVs (validate and collective --compare "
                "also read them directly)");
  import_cmd
      ->add_option("kind", options.kind,
                   "vllm-bench | sglang-bench | trtllm-bench | genai-perf | mlperf | nccl-tests | megatron-log | "
                   "nemo-log | kineto | nsys")
      ->required();
  import_cmd->add_option("files", options.files,
                         "the tool's output files (mlperf: mlperf_log_summary.txt files, and the submission's "
                         "systems/<name>.json for the accelerator; megatron-log, nemo-log: rank 0's stdout of a "
                         "Megatron-LM or NeMo training run; kineto: PyTorch profiler traces; nsys: nsys stats' "
                         "nvtx_gpu_proj_trace CSV (--field accelerator= dtype=); both written as calibration-table "
                         "rows)")
      ->required();
  import_cmd->add_option("--field", options.fields,
                         "a column's value for every row, where the files do not state it: column=value, e.g. "
                         "gpu_type=H100-SXM-80GB, tp=4, framework=\"vLLM 0.10.1\" (repeatable)");
  import_cmd->add_option("--out", options.out, "write the CSV to this file (default: standard output)");
  return import_cmd;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = clustersim::cli;
  CLI::App app{"clustersim: discrete-event simulator of LLM training and serving on accelerator clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("clustersim ") + cli::kVersion);

  cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "simulate a scenario and print its prediction");
  run_cmd->add_option("scenario", run.scenario, "scenario YAML file")->required();
  run_cmd->add_option("--set", run.overrides, "override a key: --set workload.parallelism.tp=4");
  run_cmd->add_option("--format", run.format, "output format (csv: the summary metrics, one header row)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->default_str("table");
  run_cmd->add_option("--out", run.out_dir, "also write result.json and manifest.json into this folder (overrides output.dir)");
  run_cmd->add_option("--trace", run.trace, "write the run's timeline as Chrome trace JSON (Perfetto) to this file");
  run_cmd->add_option("--trace-ranks", run.trace_ranks, "trace only these accelerators: 0-7 or 0-3,8");
  run_cmd->add_option("--trace-window", run.trace_window, "trace only events overlapping FROM:TO, e.g. 0:5ms");
  run_cmd->add_option("--export-chakra", run.export_chakra,
                      "training: also write the step as Chakra execution traces into this folder, one file per rank "
                      "(docs/chakra.md)");

  std::string list_kind;
  auto* list_cmd = app.add_subcommand("list", "list what the registries hold");
  list_cmd->add_option("kind", list_kind, "accelerators | models | systems | stacks | topologies")
      ->required()
      ->check(CLI::IsMember({"accelerators", "models", "systems", "stacks", "topologies"}));

  std::string describe_name;
  auto* describe_cmd = app.add_subcommand("describe", "print every parameter of a registry entry");
  describe_cmd->add_option("name", describe_name, "accelerator, model, system or topology name")->required();

  cli::ValidateOptions validate;
  auto* validate_cmd = app.add_subcommand("validate", "compare predictions with published measurements");
  validate_cmd->add_option("--dataset", validate.dataset,
                           "CSV in the ground_truth_training.csv or ground_truth_inference.csv format (training "
                           "rows with a memory metric, e.g. ground_truth_memory.csv, compare the footprint)");
  validate_cmd->add_option("--scenario", validate.scenario_row,
                           "print the scenario YAML that this row id maps to, instead of validating");
  validate_cmd->add_option("--format", validate.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  validate_cmd->add_option("--base", validate.base,
                           "training rows run on this scenario's cluster, network and presets (not their gpu_type's)");
  validate_cmd
      ->add_option("--calibration", validate.calibration,
                   "a calibration table (clustersim calibrate, e.g. --from-trace) to run every training or inference "
                   "row on as well: each row's and each source's error on the default tables, then on it")
      ->check(CLI::ExistingPath);
  validate_cmd->add_option("--threads", validate.threads, "training simulations at once (0: every core)")
      ->default_str("0");
  cli::CalibrationCli calibration;
  cli::add_calibration_commands(app, *validate_cmd, calibration);

  cli::ImportOptions import_options;
  CLI::App* import_cmd = add_import_command(app, import_options);

  cli::CollectiveOptions collective;
  auto* collective_cmd =
      app.add_subcommand("collective", "nccl-tests-style collective sweep on a scenario's cluster");
  collective_cmd->add_option("scenario", collective.scenario, "scenario YAML file; its workload, if any, is not read (a cluster alone will do)");
  collective_cmd->add_option("--set", collective.overrides, "override a scenario key");
  collective_cmd->add_option("--op", collective.op,
                             "all-reduce | all-gather | reduce-scatter | all-to-all | broadcast | reduce | send-recv")
      ->default_str("all-reduce");
  collective_cmd->add_option("--algorithm", collective.algorithm,
                             "auto | ring | tree | halving-doubling | hierarchical | nvls | sharp | torus-rings | pairwise")
      ->default_str("auto");
  collective_cmd->add_option("--min", collective.min_size, "smallest size, bytes (K/M/G = x1024)")->default_str("8");
  collective_cmd->add_option("--max", collective.max_size, "largest size, bytes (K/M/G = x1024)")->default_str("8G");
  collective_cmd->add_option("--factor", collective.factor, "size multiplier between rows")->default_str("2");
  collective_cmd->add_option("--ranks", collective.ranks, "ranks 0..N-1 (default: the first node)");
  collective_cmd->add_option("--fidelity", collective.fidelity, "analytical | flow (default: the scenario's simulation.fidelity)")
      ->check(CLI::IsMember({"analytical", "flow"}));
  collective_cmd->add_option("--format", collective.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  collective_cmd->add_option("--compare", collective.compare,
                             "compare all-reduce busbw with measured nccl-tests rows of this CSV");

  cli::OpsOptions ops;
  auto* ops_cmd = app.add_subcommand("ops", "print one pipeline stage's costed kernels and collectives");
  ops_cmd->add_option("scenario", ops.scenario, "scenario YAML file")->required();
  ops_cmd->add_option("--set", ops.overrides, "override a scenario key");
  ops_cmd->add_option("--stage", ops.stage, "pipeline stage (default 0)");
  ops_cmd->add_option("--format", ops.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");

  cli::SearchCommandOptions search;
  auto* search_cmd = cli::add_search_command(app, search);

  cli::CapacityCommandOptions capacity;
  auto* capacity_cmd = cli::add_capacity_command(app, capacity);

  cli::SweepCli sweep;
  cli::add_sweep_commands(app, sweep);
  cli::CompareOptions compare;
  auto* compare_cmd = app.add_subcommand(
      "compare", "what differs between two runs: inputs (resolved keys) and metrics with the relative change");
  compare_cmd->add_option("A", compare.a, "a scenario YAML file (run here) or a folder written by run --out")
      ->required();
  compare_cmd->add_option("B", compare.b, "the same for the other run; omitted: A again (with --set-b)");
  compare_cmd->add_option("--set-a", compare.set_a, "override a key of A's scenario: key.path=value (repeatable)");
  compare_cmd->add_option("--set-b", compare.set_b,
                          "override a key of B's scenario, e.g. simulation.kernel_stack=cublaslt-13.0 (repeatable)");

  std::string doc_name;
  auto* docs_cmd = app.add_subcommand("docs", "print generated documentation");
  docs_cmd->add_option("name", doc_name, "scenario-reference (docs/scenario-reference.md) | metrics (docs/metrics.md)")
      ->required()
      ->check(CLI::IsMember({"scenario-reference", "metrics"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run_cmd) return cli::run_command(run, std::cout);
    if (*ops_cmd) return cli::ops_command(ops, std::cout);
    if (*list_cmd) return cli::list_command(list_kind, std::cout);
    if (*describe_cmd) return cli::describe_command(describe_name, std::cout);
    if (*calibration.calibrate) return cli::calibrate_command(calibration.calibrate_options, std::cout);
    if (*calibration.validate_kernels) {
      return cli::validate_kernels_command(calibration.kernels_options, std::cout);
    }
    if (*validate_cmd && validate.dataset.empty()) {
      std::cerr << "validate: --dataset FILE is required (or use the 'kernels DIR' subcommand)\n";
      return 2;
    }
    if (*validate_cmd) return cli::validate_command(validate, std::cout);
    if (*import_cmd) return cli::import_command(import_options, std::cout);
    if (*collective_cmd) return cli::collective_command(collective, std::cout);
    if (*docs_cmd) return cli::docs_command(doc_name, std::cout);
    if (*compare_cmd) return cli::compare_command(compare, std::cout);
    if (*search_cmd) return cli::search_command(search, std::cout);
    if (*capacity_cmd) return cli::capacity_command(capacity, std::cout);
    if (*sweep.sweep) return cli::sweep_command(sweep.sweep_options, std::cout);
    if (*sweep.merge) return cli::sweep_merge_command(sweep.merge_options, std::cout);
  } catch (const clustersim::Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
  return 2;
}
