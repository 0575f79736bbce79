#include "sim/validate/base_cluster.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/config/diagnostics.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace clustersim::validate {
namespace {

/// Top-level sections of a scenario that describe what runs, not the platform it runs on.
bool is_workload_section(const std::string& key) {
  return key == "schema_version" || key == "name" || key == "description" || key == "workload" ||
         key == "jobs" || key == "output";
}

std::string yaml_quoted(const std::string& text) { return nlohmann::json(text).dump(); }

/// Each entry of a mapping as "<indent>key: <flow>\n", leaving out `skip`.
std::string entry_lines(const config::ConfigNode& mapping, const std::string& indent, const std::string& skip = "") {
  std::string out;
  for (const auto& entry : mapping.entries) {
    if (entry.key == skip) continue;
    out += fmt::format("{}{}: {}\n", indent, yaml_quoted(entry.key), flow_yaml(entry.value));
  }
  return out;
}

}  // namespace

std::string flow_yaml(const config::ConfigNode& node) {
  switch (node.kind) {
    case config::ConfigNode::Kind::null:
      return "null";
    case config::ConfigNode::Kind::scalar:
      return yaml_quoted(node.text);
    case config::ConfigNode::Kind::sequence: {
      std::vector<std::string> items;
      for (const auto& item : node.items) items.push_back(flow_yaml(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case config::ConfigNode::Kind::mapping: {
      std::vector<std::string> entries;
      for (const auto& entry : node.entries) {
        entries.push_back(fmt::format("{}: {}", yaml_quoted(entry.key), flow_yaml(entry.value)));
      }
      return fmt::format("{{{}}}", fmt::join(entries, ", "));
    }
  }
  return "null";
}

BaseCluster load_base_cluster(const std::filesystem::path& file) {
  // A full load reports every problem of the file at its own position, and gives the node size.
  const scenario::Scenario scenario = scenario::load_scenario(file);
  std::vector<config::Diagnostic> diagnostics;
  const config::ConfigNode root = config::load_config_file(file, config::library_data_dir(), diagnostics);
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);  // load_scenario would have thrown first

  BaseCluster base;
  base.file = file.string();
  base.accelerators_per_node = scenario.platform.cluster.network.accelerators_per_node;
  base.accelerator = scenario.platform.cluster.accelerator.name;
  for (const auto& entry : root.entries) {
    if (is_workload_section(entry.key)) continue;
    if (entry.key == "cluster") {
      base.cluster_entries_yaml = entry_lines(entry.value, "  ", "nodes");
    } else if (entry.key == "models") {
      base.model_entries_yaml = entry_lines(entry.value, "  ");
      base.model_names = entry.value.keys();
    } else {
      base.sections_yaml += fmt::format("{}: {}\n", yaml_quoted(entry.key), flow_yaml(entry.value));
    }
  }
  return base;
}

}  // namespace clustersim::validate
