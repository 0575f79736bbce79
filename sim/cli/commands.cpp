#include "sim/cli/commands.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "sim/engine/error.hpp"
#include "sim/report/training_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/scenario/schema.hpp"
#include "sim/validate/training_validation.hpp"
#include "topologies/topology.hpp"

namespace clustersim::cli {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream file(path);
  if (!file) throw Error(fmt::format("cannot write {}", path.string()));
  file << text;
}

std::string describe_topology(const topologies::TopologyDoc& doc) {
  std::string text = fmt::format("topology {}\n  {}\nparameters (cluster.network.*):\n", doc.name, doc.help);
  for (const auto& p : doc.parameters) {
    text += fmt::format("  {:<20} {:<10} default {:<10} {}\n", p.name, p.unit.empty() ? "-" : p.unit,
                        p.default_value.empty() ? "-" : p.default_value, p.help);
  }
  return text;
}

}  // namespace

int run_command(const RunOptions& options, std::ostream& out) {
  const auto scenario = scenario::load_scenario(options.scenario, options.overrides);
  const auto result = runner::run_training(scenario);
  const auto json = report::training_result_json(scenario, result);
  if (options.format == "json") {
    out << json.dump(2) << '\n';
  } else {
    out << report::training_summary_table(scenario, result);
  }
  if (!options.out_dir.empty()) {
    const auto path = std::filesystem::path(options.out_dir) / "result.json";
    write_file(path, json.dump(2) + "\n");
    if (options.format != "json") out << fmt::format("wrote {}\n", path.string());
  }
  return 0;
}

int list_command(const std::string& kind, std::ostream& out) {
  if (kind == "topologies") {
    for (const auto& doc : topologies::topology_registry()) out << fmt::format("{:<16} {}\n", doc.name, doc.help);
    return 0;
  }
  const auto library_kind = kind == "accelerators" ? scenario::LibraryKind::accelerators
                            : kind == "models"     ? scenario::LibraryKind::models
                                                   : scenario::LibraryKind::systems;
  for (const auto& name : scenario::library_names(library_kind)) out << name << '\n';
  return 0;
}

int describe_command(const std::string& name, std::ostream& out) {
  for (const auto& doc : topologies::topology_registry()) {
    if (doc.name == name) {
      out << describe_topology(doc);
      return 0;
    }
  }
  out << scenario::describe_library_entry(name);
  return 0;
}

int validate_command(const ValidateOptions& options, std::ostream& out) {
  const auto report = validate::validate_training_dataset(options.dataset);
  if (options.format == "json") {
    out << validate::validation_json(report).dump(2) << '\n';
  } else {
    out << validate::render_validation_table(report);
  }
  return report.summary.rows > 0 ? 0 : 1;
}

int docs_command(const std::string& name, std::ostream& out) {
  if (name == "scenario-reference") out << scenario::scenario_reference_markdown();
  return 0;
}

}  // namespace clustersim::cli
