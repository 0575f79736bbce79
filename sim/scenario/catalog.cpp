// The catalog behind `clustersim describe`: topologies (their declared keys) and library
// presets (their values, defaults from the declarations).
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "models/accelerator/compute_model.hpp"
#include "sim/config/units.hpp"
#include "sim/scenario/kernel_stacks.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "topologies/topology_keys.hpp"

namespace clustersim::scenario {
namespace {

using config::ConfigNode;
using config::Field;
using config::FieldKind;

void describe_fields(const ConfigNode* node, const std::vector<Field>& fields, const std::string& prefix,
                     std::vector<DescribedKey>& rows) {
  for (const auto& field : fields) {
    const std::string key = prefix.empty() ? field.key : prefix + "." + field.key;
    const ConfigNode* value = node != nullptr && node->is_mapping() ? node->find(field.key) : nullptr;
    if (field.kind == FieldKind::object) {
      describe_fields(value, field.fields, key, rows);
      continue;
    }
    const bool is_quantity = field.kind == FieldKind::quantity;
    std::string shown;
    if (value != nullptr && value->is_scalar()) {
      shown = value->text;
      if (is_quantity) {
        try {
          const std::string normalized =
              config::format_quantity(config::parse_quantity(value->text, field.dimension), field.dimension);
          if (normalized != value->text) shown += " (" + normalized + ")";
        } catch (const config::UnitError& e) {
          shown += " (invalid: " + std::string(e.what()) + ")";
        }
      }
    } else if (value != nullptr) {
      shown = value->describe();
    } else if (!field.default_text.empty()) {
      shown = field.default_text + " (default)";
    } else {
      shown = "(unset)";
      if (is_quantity) shown += " [" + std::string(config::si_unit(field.dimension)) + "]";
    }
    rows.push_back({key, shown});
  }
}

/// A topology: each key it reads, with its type, default (or "required") and help.
Description describe_topology(const topologies::TopologyKind& kind) {
  Description description{"topology " + kind.name, kind.help, "cluster.network", {}};
  const std::vector<Field> fields = topologies::scale_out_keys().fields();
  for (const std::string& key : kind.keys) {
    const Field* field = config::find_field(fields, config::split_key_path(key));
    const bool required = std::find(kind.required.begin(), kind.required.end(), key) != kind.required.end();
    const std::string fallback = required                     ? "required"
                                 : field->default_text.empty() ? "no default"
                                                               : "default " + field->default_text;
    description.keys.push_back({key, config::describe_type(*field) + "; " + fallback + "; " + field->help});
  }
  return description;
}

/// A library preset: its keys and values (defaults and "(unset)" for the others).
Description describe_preset(LibraryKind kind, const std::string& name, const std::filesystem::path& data_dir) {
  const auto file = data_dir / library_folder(kind) / (name + ".yaml");
  std::vector<config::Diagnostic> diagnostics;
  ConfigNode root = config::load_config_file(file, data_dir, diagnostics);
  if (kind == LibraryKind::systems) {
    if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
    Description description{"system " + name + " (" + file.string() + ")", "", "", {}};
    const std::vector<Field> fields = scenario_schema(builtin_workload_kinds(), "training").fields;
    describe_fields(root.find("cluster"), config::find_field(fields, {"cluster"})->fields, "cluster", description.keys);
    return description;
  }
  const bool is_accelerator = kind == LibraryKind::accelerators;
  const char* section = is_accelerator ? "accelerators" : "models";
  const ConfigNode* map = root.find(section);
  if (map == nullptr || !map->is_mapping() || map->find(name) == nullptr) {
    throw ConfigError(file.string() + ": no entry '" + name + "' under '" + section + ":'");
  }
  // A library preset may derive from another (`base:`): show what it resolves to.
  merge_library_presets(root, kind, section, "", data_dir, diagnostics);
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  Description description{std::string(is_accelerator ? "accelerator " : "model ") + name + " (" + file.string() + ")",
                          "", std::string(section) + "." + name, {}};
  describe_fields(root.find(section)->find(name), is_accelerator ? accelerator_preset_fields() : model_fields(), "",
                  description.keys);
  return description;
}

/// A kernel stack: its release and timing, then each accelerator's settings and measurements.
Description describe_stack(const std::string& name, const std::filesystem::path& data_dir) {
  std::vector<config::Diagnostic> diagnostics;
  config::Problems problems(diagnostics);
  const KernelStack stack = read_kernel_stack(name, data_dir, problems);
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  Description description{"kernel stack " + name + " (" + stack.file + ")", "", "", {}};
  description.keys.push_back({"display_name", stack.display_name});
  description.keys.push_back({"release", stack.release});
  description.keys.push_back({"timing", stack.timing});
  for (const StackEntry& entry : stack.entries) {
    std::vector<DescribedKey> settings;
    describe_fields(&entry.settings, accelerator_preset_fields(), entry.accelerator, settings);
    for (DescribedKey& row : settings) {
      if (row.shown.find("(default)") == std::string::npos && row.shown.rfind("(unset)", 0) != 0) {
        description.keys.push_back(std::move(row));
      }
    }
    description.keys.push_back({entry.accelerator + ".source", entry.source});
    const StackedAccelerator chip = stacked_accelerator(name, entry.accelerator, data_dir);
    for (const std::string& notice : chip.notices) description.keys.push_back({entry.accelerator + ".applied", notice});
    const models::ComputeModel preset(chip.preset);
    const models::ComputeModel stacked(chip.stacked);
    for (const StackMeasurement& m : entry.measured) {
      const models::GemmShape shape{.m = m.m, .n = m.n, .k = m.k, .dtype = m.dtype};
      const double measured_s = 2.0 * double(m.m) * double(m.n) * double(m.k) / m.flops_per_s;
      const double with_stack = stacked.gemm(shape).time_s, with_preset = preset.gemm(shape).time_s;
      description.keys.push_back(
          {entry.accelerator + ".measured",
           fmt::format("gemm {} {}x{}x{} {:g} TFLOP/s = {:.1f} us ({}); model {:.1f} us ({:+.1f} %), preset {:.1f} us "
                       "({:+.1f} %)",
                       models::dtype_name(m.dtype), m.m, m.n, m.k, m.flops_per_s / 1e12, measured_s * 1e6, m.row,
                       with_stack * 1e6, 100 * (with_stack / measured_s - 1), with_preset * 1e6,
                       100 * (with_preset / measured_s - 1))});
    }
  }
  return description;
}

/// The library preset `name`, if there is one; `names` gets every preset name.
std::optional<Description> describe_library(const std::string& name, const std::filesystem::path& data_dir,
                                            std::vector<std::string>& names) {
  for (LibraryKind kind : {LibraryKind::accelerators, LibraryKind::models, LibraryKind::systems}) {
    const auto of_kind = library_names(kind, data_dir);
    names.insert(names.end(), of_kind.begin(), of_kind.end());
    if (std::find(of_kind.begin(), of_kind.end(), name) != of_kind.end()) return describe_preset(kind, name, data_dir);
  }
  const auto stacks = kernel_stack_names(data_dir);
  names.insert(names.end(), stacks.begin(), stacks.end());
  if (std::find(stacks.begin(), stacks.end(), name) != stacks.end()) return describe_stack(name, data_dir);
  return std::nullopt;
}

[[noreturn]] void unknown_entry(const std::string& name, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  throw ConfigError("unknown library entry '" + name + "' (" +
                    config::choices_hint("choices", names, config::closest_match(name, names)) + ")");
}

}  // namespace

Description describe(std::string_view name, const std::filesystem::path& data_dir) {
  if (const topologies::TopologyKind* kind = topologies::find_topology_kind(name)) return describe_topology(*kind);
  std::vector<std::string> names;
  for (const auto& topology : topologies::topology_kinds()) names.push_back(topology.name);
  if (auto description = describe_library(std::string(name), data_dir, names)) return *description;
  unknown_entry(std::string(name), names);
}

std::string render_description(const Description& description) {
  std::size_t width = 0;
  for (const auto& row : description.keys) width = std::max(width, row.key.size());
  std::string out = description.title + "\n";
  if (!description.help.empty()) out += "  " + description.help + "\n";
  if (!description.prefix.empty() && !description.help.empty()) out += "keys (" + description.prefix + ".*):\n";
  for (const auto& [key, shown] : description.keys) {
    out += "  " + key + std::string(width - key.size() + 2, ' ') + shown + "\n";
  }
  return out;
}

std::string describe_library_entry(std::string_view name, const std::filesystem::path& data_dir) {
  std::vector<std::string> names;
  if (auto description = describe_library(std::string(name), data_dir, names)) return render_description(*description);
  unknown_entry(std::string(name), names);
}

}  // namespace clustersim::scenario
