#include "sim/report/progress.hpp"
#include "sim/cli/commands.hpp"

#include <fmt/format.h>


#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>
#include <memory>
#include <optional>
#include <tuple>

#include <cmath>
#include <numeric>

#include "models/comm/collective_sweep.hpp"
#include "sim/engine/error.hpp"
#include "sim/cli/report_output.hpp"
#include "sim/report/chrome_trace.hpp"
#include "sim/report/run_timeline.hpp"
#include "sim/report/trace_counters.hpp"
#include "sim/report/collective_report.hpp"
#include "sim/report/compare.hpp"
#include "sim/report/metric_glossary.hpp"
#include "sim/report/output_paths.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/dataset_validation.hpp"
#include "sim/validate/importers.hpp"
#include "sim/validate/nccl_validation.hpp"
#include "sim/validate/power_validation.hpp"
#include "sim/report/stage_program_report.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/scenario_json.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/validate/serving_validation.hpp"
#include "sim/validate/training_validation.hpp"
#include "topologies/topology_keys.hpp"

namespace clustersim::cli {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream file(path);
  if (!file) throw Error(fmt::format("cannot write {}", path.string()));
  file << text;
}

}  // namespace

int run_command(const RunOptions& options, std::ostream& out) {
  if (options.trace.empty() && (!options.trace_ranks.empty() || !options.trace_window.empty())) {
    throw ConfigError(fmt::format("{} has no effect without --trace FILE",
                                  options.trace_ranks.empty() ? "--trace-window" : "--trace-ranks"));
  }
  report::TraceFilter filter;
  if (!options.trace_ranks.empty()) filter.ranks = report::parse_trace_ranks(options.trace_ranks);
  if (!options.trace_window.empty()) std::tie(filter.from_ps, filter.to_ps) = report::parse_trace_window(options.trace_window);
  const auto scenario = scenario::load_scenario(options.scenario, options.overrides);
  const int accelerators = scenario.platform.cluster.accelerator_count();
  for (const auto& [first, last] : filter.ranks) {
    if (last >= accelerators) {
      throw ConfigError(fmt::format("--trace-ranks '{}': the cluster has accelerators 0-{}; {} is not one of them",
                                    options.trace_ranks, accelerators - 1, first >= accelerators ? first : last));
    }
  }
  // --out wins over the scenario's output.dir. Output paths are checked before the run: a long
  // simulation must not end in "cannot write".
  if (!options.export_chakra.empty()) {
    const training::ChakraExport written = runner::export_chakra(scenario, options.export_chakra);
    std::cerr << fmt::format("wrote the step as {} Chakra traces ({} nodes) and {} to {}\n", written.files.size(),
                             written.nodes, written.groups_file.filename().string(), options.export_chakra);
    if (written.collectives > 0 && !written.dimensions.empty()) {
      std::cerr << fmt::format("  involved_dim on {} of {} collectives (ASTRA-sim network dimensions [{}]: a group "
                               "that is one scale-up domain, one position in every domain, or everyone)\n",
                               written.with_dimensions, written.collectives, fmt::join(written.dimensions, ", "));
    }
  }
  const std::string out_dir = !options.out_dir.empty() ? options.out_dir : scenario.output.dir;
  const char* out_option = !options.out_dir.empty() ? "--out" : "output.dir";
  if (!out_dir.empty()) report::prepare_output_dir(out_dir, out_option);
  std::ofstream trace_file;
  std::unique_ptr<report::ChromeTrace> trace;
  if (!options.trace.empty()) {
    const std::filesystem::path path(options.trace);
    report::check_output_file(path, "--trace");
    trace_file.open(path);
    if (!trace_file) throw ConfigError(fmt::format("--trace {}: cannot write the file", path.string()));
    trace = std::make_unique<report::ChromeTrace>(trace_file, filter);
  }
  platform::Session::TaskProgress progress;
  if (report::ProgressCallback line = report::terminal_progress()) {
    // A training step's tasks (every simulated rank's) or a serving run's requests; stderr, on a terminal.
    progress = [line](std::string_view unit, std::size_t done, std::size_t total) { line("run", unit, done, total); };
  }
  // The timeline report.html and the trace's counter tracks draw, recorded beside the trace.
  std::optional<report::RunTimeline> timeline;
  std::optional<report::TraceTee> tee;
  platform::TraceSink* sink = trace.get();
  if (!out_dir.empty() || trace) sink = &timeline.emplace();
  if (trace) sink = &tee.emplace(*trace, *timeline);
  runner::RunResult result = runner::run_scenario(scenario, sink, std::move(progress));
  const std::optional<runner::CalibrationEffect> calibration = runner::compare_with_default_tables(scenario, result);
  if (trace) {
    report::add_run_counters(*trace, result, *timeline);
    trace->finish(fmt::format(R"({{"scenario":{},"fingerprint":"{:016x}","time_unit":"us"}})",
                              nlohmann::json(scenario.name).dump(), result.fingerprint));
    trace_file.close();
    if (!trace_file) throw Error(fmt::format("--trace {}: writing the file failed", options.trace));
    if (trace->events() == 0) {
      std::cerr << fmt::format("warning: the trace {} holds no events: --trace-ranks / --trace-window kept none\n",
                               options.trace);
    }
  }
  auto json = report::run_result_json(scenario, result);
  if (calibration) report::add_calibration_effect(json, *calibration);
  if (options.format == "json") {
    out << json.dump(2) << '\n';
  } else if (options.format == "csv") {
    out << report::run_summary_csv(scenario, result);
  } else {
    out << report::run_summary_table(scenario, result);
  }
  if (!out_dir.empty()) {
    const auto path = std::filesystem::path(out_dir) / "result.json";
    write_file(path, json.dump(2) + "\n");
    const auto manifest = std::filesystem::path(out_dir) / "manifest.json";
    write_file(manifest, report::manifest_json(scenario, result.fingerprint, result.events, kVersion).dump(2) + "\n");
    const auto html = write_run_report(out_dir, scenario, result, *timeline);
    if (options.format == "table") {
      out << fmt::format("wrote {}, {} and {}\n", path.string(), manifest.string(), html.string());
    }
  }
  if (trace && options.format == "table") {
    out << fmt::format("wrote {} ({} events)\n", options.trace, trace->events());
  }
  return 0;
}

namespace {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw ConfigError(fmt::format("cannot read {}", path.string()));
  try {
    return nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& error) {
    throw ConfigError(fmt::format("{} is not valid JSON: {}", path.string(), error.what()));
  }
}

/// A side of `compare`: a folder written by `run --out` (its manifest and result), or a
/// scenario file, run now.
report::ComparedRun compared_run(const std::string& source, const std::vector<std::string>& overrides) {
  report::ComparedRun run;
  run.label = source;
  for (const std::string& set : overrides) run.label += " --set " + set;
  if (std::filesystem::is_directory(source)) {
    if (!overrides.empty()) {
      throw ConfigError(fmt::format("{} is a finished run (a folder): --set applies only to a scenario file", source));
    }
    const auto manifest = read_json_file(std::filesystem::path(source) / "manifest.json");
    if (!manifest.contains("resolved") || !manifest["resolved"].is_object()) {
      throw ConfigError(fmt::format("{}/manifest.json has no \"resolved\" scenario", source));
    }
    for (const auto& [key, value] : manifest["resolved"].items()) run.resolved[key] = value.get<std::string>();
    run.metrics = report::summary_metrics(read_json_file(std::filesystem::path(source) / "result.json"));
    return run;
  }
  const auto scenario = scenario::load_scenario(source, overrides);
  run.resolved = scenario.resolved;
  run.metrics = report::summary_metrics(report::run_result_json(scenario, runner::run_scenario(scenario)));
  return run;
}

}  // namespace

int compare_command(const CompareOptions& options, std::ostream& out) {
  const std::string& b = options.b.empty() ? options.a : options.b;
  if (options.b.empty() && options.set_a.empty() && options.set_b.empty()) {
    throw ConfigError("compare needs a second run B, or --set-a / --set-b to compare A with itself changed");
  }
  const report::ComparedRun first = compared_run(options.a, options.set_a);
  const report::ComparedRun second = compared_run(b, options.set_b);
  out << report::compare_table(first, second);
  return 0;
}

int ops_command(const OpsOptions& options, std::ostream& out) {
  const auto scenario = scenario::load_scenario(options.scenario, options.overrides);
  const auto programs = runner::stage_programs(scenario);
  if (options.stage < 0 || static_cast<std::size_t>(options.stage) >= programs.size()) {
    throw ConfigError(fmt::format("--stage must be in [0, {}] (the pipeline's stages), got {}", programs.size() - 1,
                                  options.stage));
  }
  const auto& program = programs[static_cast<std::size_t>(options.stage)];
  if (options.format == "json") {
    out << report::stage_program_json(program).dump(2) << '\n';
  } else {
    out << report::stage_program_table(program);
  }
  return 0;
}

int list_command(const std::string& kind, std::ostream& out) {
  if (kind == "topologies") {
    for (const auto& topology : topologies::topology_kinds()) {
      out << fmt::format("{:<16} {}\n", topology.name, topology.help);
    }
    return 0;
  }
  for (const auto& name : scenario::library_names(scenario::library_kind_names().parse(kind))) out << name << '\n';
  return 0;
}

int describe_command(const std::string& name, std::ostream& out) {
  out << scenario::render_description(scenario::describe(name));
  return 0;
}

int import_command(const ImportOptions& options, std::ostream& out) {
  const validate::ImportKind kind = validate::import_kind_names().parse(options.kind);
  std::map<std::string, std::string> fields;
  for (const std::string& field : options.fields) {
    const auto equals = field.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw ConfigError(fmt::format("--field '{}': expected column=value", field));
    }
    fields[field.substr(0, equals)] = field.substr(equals + 1);
  }
  validate::ImportedRows rows;
  validate::import_files(kind, std::vector<std::filesystem::path>(options.files.begin(), options.files.end()), fields,
                         rows);
  // A trace's rows carry no notes column: what it read and left out goes to the terminal.
  if (kind == validate::ImportKind::kineto || kind == validate::ImportKind::nsys) {
    for (const auto& note : rows.notes) std::cerr << "import: " << note << '\n';
  }
  const std::string csv = validate::rows_csv(rows);
  if (options.out.empty()) {
    out << csv;
  } else {
    std::ofstream file(options.out, std::ios::binary);
    if (!file || !(file << csv)) throw ConfigError(fmt::format("--out {}: cannot write the file", options.out));
    std::cerr << fmt::format("{} rows from {} file(s) written to {}\n", rows.rows.size(), options.files.size(),
                             options.out);
  }
  return rows.rows.empty() ? 1 : 0;
}

namespace {

/// `validate --scenario ID`: the scenario YAML the row maps to (or why it is skipped).
int print_row_scenario(const ValidateOptions& options, std::ostream& out) {
  if (!options.calibration.empty()) {
    throw ConfigError(fmt::format("--calibration has no effect with --scenario (the row's scenario is printed, not "
                                  "run): run it on the table with --set simulation.calibration={}",
                                  options.calibration));
  }
  const auto rows = validate::read_dataset_rows(options.dataset);
  if (validate::is_power_dataset(rows)) {
    throw ConfigError(fmt::format("--scenario applies to training and inference datasets; {} is a power dataset "
                                  "(its rows' scenarios are validation/power/<id>.yaml)",
                                  options.dataset));
  }
  const bool inference = validate::is_inference_dataset(rows);
  if (inference && !options.base.empty()) {
    throw ConfigError(fmt::format("--base applies to training datasets; {} is an inference dataset", options.dataset));
  }
  std::optional<validate::BaseCluster> base;
  if (!options.base.empty()) base = validate::load_base_cluster(options.base);
  std::vector<std::string> ids;
  for (const auto& row : rows) {
    if (row.get("id") != options.scenario_row) {
      ids.push_back(row.get("id"));
      continue;
    }
    std::optional<std::string> yaml;
    std::string skip_reason;
    if (inference) {
      const auto mapping = validate::map_serving_row(row);
      yaml = mapping.scenario_yaml;
      skip_reason = mapping.skip_reason;
    } else {
      const auto mapping = validate::map_training_row(row, base ? &*base : nullptr);
      if (!mapping.problems.empty()) {
        throw ConfigError(fmt::format("{}:{}: {}", options.dataset, row.line, fmt::join(mapping.problems, "; ")));
      }
      yaml = mapping.scenario_yaml;
      skip_reason = mapping.skip_reason;
    }
    if (!yaml) {
      throw ConfigError(
          fmt::format("{}: row '{}' is skipped: {}", options.dataset, options.scenario_row, skip_reason));
    }
    out << *yaml;
    return 0;
  }
  throw ConfigError(fmt::format("{}: no row with id '{}' (the file has {} rows{})", options.dataset,
                                options.scenario_row, ids.size(),
                                ids.empty() ? "" : fmt::format(", e.g. '{}'", ids.front())));
}

}  // namespace

int validate_command(const ValidateOptions& options, std::ostream& out) {
  if (!options.scenario_row.empty()) return print_row_scenario(options, out);
  validate::DatasetValidationOptions validation;
  validation.base = options.base;
  validation.calibration = options.calibration;
  validation.threads = options.threads;
  if (report::ProgressCallback progress = report::terminal_progress()) {
    // Progress on a terminal only: a redirected stderr (logs, CI) stays free of it.
    validation.on_progress = [progress](int done_rows, int total_rows) {
      progress("validate", "rows", static_cast<std::size_t>(done_rows), static_cast<std::size_t>(total_rows));
    };
  }
  const validate::DatasetValidation report = validate::validate_dataset(options.dataset, validation);
  if (options.format == "json") {
    out << report.json.dump(2) << '\n';
  } else {
    out << report.table;
  }
  return report.compared_rows > 0 ? 0 : 1;
}

double parse_size_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = used > 0 ? text.substr(used) : "";
  const double scale = suffix.empty() ? 1.0
                       : suffix == "K" ? 1024.0
                       : suffix == "M" ? 1024.0 * 1024
                       : suffix == "G" ? 1024.0 * 1024 * 1024
                                       : 0.0;
  if (used == 0 || scale == 0 || !std::isfinite(value) || value <= 0) {
    throw ConfigError(fmt::format("size '{}' must be a number > 0 with an optional K, M or G suffix", text));
  }
  return value * scale;
}

int collective_command(const CollectiveOptions& options, std::ostream& out) {
  if (!options.compare.empty()) {
    const auto comparison = validate::compare_nccl_dataset(options.compare);
    if (options.format == "json") {
      out << validate::nccl_comparison_json(comparison).dump(2) << '\n';
    } else {
      out << validate::nccl_comparison_table(comparison);
    }
    return comparison.gpus.empty() ? 1 : 0;
  }
  if (options.scenario.empty()) throw ConfigError("collective needs a SCENARIO file (or --compare CSV)");
  models::SweepRequest request;
  request.kind = models::parse_collective(options.op);
  if (options.algorithm != "auto") request.algorithm = models::parse_algorithm(options.algorithm);
  request.min_bytes = parse_size_bytes(options.min_size);
  request.max_bytes = parse_size_bytes(options.max_size);
  request.factor = options.factor;
  models::sweep_sizes(request.min_bytes, request.max_bytes, request.factor);  // reject a bad range first

  // The hardware only: a system file without a workload sweeps as well as a whole scenario.
  const auto scenario = scenario::load_platform(options.scenario, options.overrides);
  // --fidelity, or the scenario's own (simulation.fidelity, flow by default) as `run` would use.
  request.fidelity = options.fidelity.empty() ? scenario.simulation.fidelity : models::parse_comm_fidelity(options.fidelity);
  const std::string fidelity(models::comm_fidelity_name(request.fidelity));
  const auto platform = runner::build_platform(scenario);
  const int ranks = options.ranks == 0 ? scenario.platform.cluster.network.accelerators_per_node : options.ranks;
  if (ranks < 2 || ranks > platform->accelerator_count()) {
    throw ConfigError(fmt::format("--ranks must be in [2, {}] (the cluster's accelerators), got {}",
                                  platform->accelerator_count(), ranks));
  }
  request.group.resize(static_cast<std::size_t>(ranks));
  std::iota(request.group.begin(), request.group.end(), 0);
  const auto points = models::run_collective_sweep(platform->collectives().tuner(), request);
  const report::SweepHeader header{scenario.name, options.op, options.algorithm, fidelity, ranks};
  if (options.format == "json") {
    out << report::collective_sweep_json(header, points).dump(2) << '\n';
  } else {
    out << report::collective_sweep_table(header, points);
  }
  return 0;
}

int docs_command(const std::string& name, std::ostream& out) {
  if (name == "scenario-reference") out << scenario::scenario_reference_markdown(scenario::builtin_workload_kinds());
  if (name == "metrics") out << report::metrics_glossary_markdown();
  return 0;
}

}  // namespace clustersim::cli
