#include "sim/scenario/scenario_loader.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "sim/config/node_override.hpp"
#include "sim/config/problems.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/kernel_stacks.hpp"
#include "sim/scenario/platform_reader.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/scenario_schema.hpp"
#include "sim/scenario/scenario_tree_loader.hpp"

namespace clustersim::scenario {
namespace {

using config::ConfigEntry;
using config::ConfigNode;
using config::Diagnostic;
using config::Field;
using config::FieldKind;
using config::Problems;
using config::ScenarioError;

/// Records the position of `node` under `path` and of its mapping entries `depth` levels down.
void record_positions(const ConfigNode& node, const std::string& path, int depth,
                      std::map<std::string, config::Position>& positions) {
  positions[path] = node.position;
  if (depth == 0 || !node.is_mapping()) return;
  for (const ConfigEntry& entry : node.entries) {
    record_positions(entry.value, path + "." + entry.key, depth - 1, positions);
  }
}

/// The kind a workload mapping names (its `kind`, or the first kind when it names none).
std::string kind_name(const ConfigNode* workload, const WorkloadKinds& kinds) {
  const ConfigNode* kind = workload != nullptr && workload->is_mapping() ? workload->find("kind") : nullptr;
  return kind != nullptr && kind->is_scalar() ? kind->text : kinds.all().front().name;
}

/// Job names become key path components, so they must not hold dots.
bool valid_job_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

/// The fields of job `name` of kind `kind` (`kind` and the kind's keys).
std::vector<Field> job_fields(const WorkloadKinds& kinds, const WorkloadKind& kind, const std::string& name) {
  return workload_field(kinds, kind, name, kind.help, true).fields;
}

/// The names of the kinds that may be a job (or the primary workload).
std::vector<std::string> kind_choices(const WorkloadKinds& kinds, bool job) {
  std::vector<std::string> choices;
  for (const WorkloadKind& k : kinds.all()) {
    if (job ? k.can_be_job : k.can_be_primary) choices.push_back(k.name);
  }
  return choices;
}

/// Checks and reads `jobs`: each against its kind's keys, pinned to its accelerators.
void read_jobs(const ConfigNode& root, const WorkloadKinds& kinds, const WorkloadReadContext& base,
               std::vector<Diagnostic>& diagnostics, Scenario& scenario) {
  const ConfigNode* jobs = root.find("jobs");
  if (jobs == nullptr || !jobs->is_mapping()) return;
  for (const ConfigEntry& entry : jobs->entries) {
    const std::string path = "jobs." + entry.key;
    if (!valid_job_name(entry.key)) {
      base.problems.add(entry.key_position, path, "a job name may hold letters, digits, '-' and '_' only");
      continue;
    }
    if (!entry.value.is_mapping()) continue;  // reported by the schema
    const std::string name = kind_name(&entry.value, kinds);
    const WorkloadKind* kind = kinds.find(name);
    if (kind == nullptr || !kind->can_be_job) {
      const ConfigNode* kind_node = entry.value.find("kind");
      const std::vector<std::string> choices = kind_choices(kinds, true);
      base.problems.add(kind_node != nullptr ? kind_node->position : entry.value.position, path + ".kind",
                        kind == nullptr ? "unknown workload kind '" + name + "'"
                                        : "a workload of kind '" + name + "' can only be the primary workload",
                        config::choices_hint("choices", choices, config::closest_match(name, choices)));
      continue;
    }
    config::validate(entry.value, job_fields(kinds, *kind, entry.key), path, diagnostics);
    WorkloadReadContext context{root,      entry.value, path,          base.platform, base.platform_ok,
                                base.simulation, 0,     base.data_dir, base.problems, &scenario.resolved};
    auto spec = kind->read(context);
    if (spec) scenario.jobs.push_back({entry.key, std::move(spec)});
  }
}

/// The accelerators the primary workload gets: what the pinned jobs leave.
int primary_accelerators(const Scenario& scenario, const ConfigNode& root, Problems& problems) {
  std::vector<platform::Allocation> pinned;
  for (const NamedWorkload& job : scenario.jobs) {
    if (const auto range = job.spec->pinned()) pinned.push_back(*range);
  }
  if (pinned.empty() || problems.any_bad("cluster", "jobs")) return scenario.platform.cluster.accelerator_count();
  try {
    return platform::primary_allocation(scenario.platform.cluster.accelerator_count(), pinned).count;
  } catch (const ConfigError& e) {
    problems.add(config::position_of(root, "jobs"), "jobs", e.what());
    return scenario.platform.cluster.accelerator_count();
  }
}

/// The scenario's declarations with the primary workload's kind; the schema then has only
/// `kind` for a workload of an unknown kind (its keys are not checked against another kind's).
std::vector<Field> schema_fields(const ConfigNode& root, const WorkloadKinds& kinds) {
  const std::string name = kind_name(root.find("workload"), kinds);
  std::vector<Field> fields = scenario_keys(kinds, name).fields();
  if (kinds.find(name) == nullptr || !kinds.find(name)->can_be_primary) {
    for (Field& field : fields) {
      if (field.key != "workload") continue;
      field.fields.resize(1);  // kind
      field.open = true;
    }
  }
  return fields;
}

/// Stands for a level whose keys are free names (preset entries, job names).
const std::vector<Field> kFreeNames;

/// The declared fields that `path` leads into (a job's own kind's under jobs.NAME); &kFreeNames
/// where any name goes; nullptr where nothing is declared.
const std::vector<Field>* declared_level(const std::vector<Field>& fields, const ConfigNode& root,
                                         const WorkloadKinds& kinds, const std::vector<std::string>& path,
                                         std::vector<Field>& job_storage) {
  const std::vector<Field>* level = &fields;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i == 0 && path[0] == "jobs") {
      if (path.size() == 1) return &kFreeNames;
      const ConfigNode* job = config::has_value(root, "jobs") ? root.find("jobs")->find(path[1]) : nullptr;
      const WorkloadKind* kind = kinds.find(kind_name(job, kinds));
      if (kind == nullptr) return nullptr;
      job_storage = job_fields(kinds, *kind, path[1]);
      level = &job_storage;
      ++i;
      continue;
    }
    const auto it = std::find_if(level->begin(), level->end(), [&](const Field& f) { return f.key == path[i]; });
    if (it == level->end()) return nullptr;
    if (it->kind == FieldKind::map_of_objects) {
      if (i + 1 == path.size()) return &kFreeNames;
      ++i;
    }
    level = &it->fields;
  }
  return level;
}

/// Calls `apply(known, declared)` with the schema's answers for `root` as it is now: whether a
/// key path is declared, and the keys declared under a path.
template <typename Apply>
void with_declared_keys(const ConfigNode& root, const WorkloadKinds& kinds, Apply&& apply) {
  const std::vector<Field> fields = schema_fields(root, kinds);
  std::vector<Field> job_storage;
  const auto known = [&](const std::vector<std::string>& path) {
    if (path.empty()) return false;
    std::vector<std::string> parent(path.begin(), path.end() - 1);
    const std::vector<Field>* level = declared_level(fields, root, kinds, parent, job_storage);
    if (level == nullptr) return false;
    return level == &kFreeNames ||
           std::any_of(level->begin(), level->end(), [&](const Field& f) { return f.key == path.back(); });
  };
  const auto declared = [&](const std::vector<std::string>& path) {
    std::vector<std::string> keys;
    if (const std::vector<Field>* level = declared_level(fields, root, kinds, path, job_storage)) {
      for (const Field& field : *level) keys.push_back(field.key);
    }
    return keys;
  };
  apply(known, declared);
}

/// Applies the --set overrides, then the key overrides (a sweep point's values): a declared key
/// absent from the file may be set; an unknown one is reported with the closest declared key at
/// its level.
void apply_overrides(ConfigNode& root, const std::vector<std::string>& set_overrides,
                     const std::vector<KeyOverride>& key_overrides, const WorkloadKinds& kinds,
                     std::vector<Diagnostic>& diagnostics) {
  for (const auto& text : set_overrides) {
    with_declared_keys(root, kinds, [&](const auto& known, const auto& declared) {
      config::apply_set_override(root, text, diagnostics, known, declared);
    });
  }
  for (const KeyOverride& key : key_overrides) {
    with_declared_keys(root, kinds, [&](const auto& known, const auto& declared) {
      config::apply_node_override(root, key.key_path, key.key_position, key.value, key.shown, diagnostics, known,
                                  declared);
    });
  }
}

/// The primary workload (`workload`).
void read_primary(const ConfigNode& root, const WorkloadKinds& kinds, const WorkloadReadContext& context,
                  Scenario& scenario) {
  const std::string name = kind_name(root.find("workload"), kinds);
  const WorkloadKind* kind = kinds.find(name);
  if (kind == nullptr || context.problems.bad("workload.kind")) return;
  if (!kind->can_be_primary) {
    context.problems.add(context.position("kind"), "workload.kind",
                         "a workload of kind '" + name + "' can only run as one of `jobs:` beside a primary workload",
                         config::choices_hint("choices", kind_choices(kinds, false), std::nullopt));
    return;
  }
  scenario.workload = kind->read(context);
}

/// The workloads (`jobs`, then `workload`) on the platform read.
void read_workloads(const ConfigNode& root, const WorkloadKinds& kinds, const std::filesystem::path& data_dir,
                    bool platform_ok, std::vector<Diagnostic>& diagnostics, Problems& problems, Scenario& scenario) {
  static const ConfigNode kNone;
  const ConfigNode* workload = root.find("workload");
  WorkloadReadContext jobs_context{root,     kNone, "jobs",   scenario.platform, platform_ok, scenario.simulation, 0,
                                   data_dir, problems};
  read_jobs(root, kinds, jobs_context, diagnostics, scenario);
  // With a job in error the primary's share is unknown: its count is not checked then (-1).
  const int accelerators = problems.bad("jobs") ? -1 : primary_accelerators(scenario, root, problems);
  WorkloadReadContext primary{root,     workload != nullptr ? *workload : kNone,
                              "workload", scenario.platform,
                              platform_ok, scenario.simulation,
                              accelerators, data_dir,
                              problems,     &scenario.resolved};
  read_primary(root, kinds, primary, scenario);
}

/// Every written key of `node` under `path` as its YAML text (a list of scalars as one
/// "[a, b]" value; other lists by index).
void flatten_written(const ConfigNode& node, const std::string& path, std::map<std::string, std::string>& out) {
  if (node.is_mapping()) {
    if (node.entries.empty() && !path.empty()) out[path] = "{}";
    for (const config::ConfigEntry& entry : node.entries) {
      flatten_written(entry.value, path.empty() ? entry.key : path + "." + entry.key, out);
    }
  } else if (node.is_sequence()) {
    const bool scalars = std::all_of(node.items.begin(), node.items.end(),
                                     [](const ConfigNode& item) { return item.is_scalar(); });
    if (scalars) {
      std::string text;
      for (const ConfigNode& item : node.items) text += (text.empty() ? "" : ", ") + item.text;
      out[path] = "[" + text + "]";
    } else {
      for (std::size_t i = 0; i < node.items.size(); ++i) flatten_written(node.items[i], fmt::format("{}[{}]", path, i), out);
    }
  } else {
    out[path] = node.is_scalar() ? node.text : "null";
  }
}

/// The defaults of the keys of `fields` that `node` (the mapping at `path`, or nullptr) does
/// not write, into `out`; objects recursively (maps of named entries have no defaults).
void add_defaults(const std::vector<Field>& fields, const ConfigNode* node, const std::string& path,
                  std::map<std::string, std::string>& out) {
  for (const Field& field : fields) {
    const std::string key = path.empty() ? field.key : path + "." + field.key;
    const ConfigNode* written = node != nullptr && node->is_mapping() ? node->find(field.key) : nullptr;
    if (field.kind == config::FieldKind::object) {
      if (written == nullptr || written->is_mapping()) add_defaults(field.fields, written, key, out);
    } else if (written == nullptr && !field.default_text.empty() && field.kind != config::FieldKind::map_of_objects) {
      out[key] = field.default_text;
    }
  }
}

/// The defaults of each job's keys (its kind's) that the job does not write, into `out` as
/// `jobs.NAME.key`: a job's `rounds: 0` written or left out is the same input.
void add_job_defaults(const ConfigNode& root, const WorkloadKinds& kinds, std::map<std::string, std::string>& out) {
  const ConfigNode* jobs = root.find("jobs");
  if (jobs == nullptr || !jobs->is_mapping()) return;
  for (const ConfigEntry& entry : jobs->entries) {
    const WorkloadKind* kind = entry.value.is_mapping() ? kinds.find(kind_name(&entry.value, kinds)) : nullptr;
    if (kind == nullptr || !kind->can_be_job) continue;  // reported by read_jobs
    add_defaults(job_fields(kinds, *kind, entry.key), &entry.value, "jobs." + entry.key, out);
  }
}

/// `platform_only` (load_platform): `workload` and `jobs` are not required, and not read when
/// written (a notice says so).
Scenario load(ConfigNode root, const std::string& source_file, const std::vector<std::string>& set_overrides,
              const std::vector<KeyOverride>& key_overrides, const std::filesystem::path& data_dir, const WorkloadKinds& kinds, std::vector<Diagnostic>& diagnostics,
              bool platform_only = false) {
  // Problems reading the files (YAML syntax, a binary file, an include cycle or a missing
  // include) come alone: the tree lacks what could not be read, so its keys would be reported
  // missing as a consequence.
  if (!diagnostics.empty()) throw ScenarioError(diagnostics);
  Problems problems(diagnostics);
  if (root.is_null()) problems.add(root.position, "", "the scenario is empty");
  if (!root.is_mapping()) {
    if (!root.is_null()) problems.add(root.position, "", "expected a mapping, got " + root.describe());
    throw ScenarioError(diagnostics);
  }
  if (const ConfigEntry* sweep = root.find_entry("sweep")) {
    // Only `clustersim sweep` runs the points (it takes the block out before loading each).
    problems.warn(sweep->key_position, "sweep",
                  "a sweep block has no effect on a single run: `clustersim sweep FILE` runs its points "
                  "(docs/sweeps.md); this run uses the scenario without it");
    root.erase("sweep");
  }
  apply_overrides(root, set_overrides, key_overrides, kinds, diagnostics);
  if (platform_only) {
    for (const char* top : {"workload", "jobs"}) {
      if (root.find(top) == nullptr) continue;
      problems.notice(fmt::format("{}: not read: only the platform (cluster, power, cost, simulation) is used here", top));
      root.erase(top);
    }
  }
  // The presets the primary workload and every job name (a job's model need not be the primary's).
  merge_library_presets(root, LibraryKind::accelerators, "accelerators",
                        "cluster.node.accelerator;workload.pools.*.accelerator;jobs.*.pools.*.accelerator", data_dir,
                        diagnostics);
  merge_library_presets(root, LibraryKind::models, "models",
                        "workload.model;workload.speculative.draft_model;jobs.*.model;jobs.*.speculative.draft_model",
                        data_dir, diagnostics);
  apply_kernel_stack(root, data_dir, problems);
  std::vector<Field> fields = schema_fields(root, kinds);
  if (platform_only) {
    for (Field& field : fields) field.required = field.required && field.key != "workload";
  }
  config::validate(root, fields, "", diagnostics);

  Scenario scenario;
  flatten_written(root, "", scenario.resolved);
  add_defaults(fields, &root, "", scenario.resolved);
  add_job_defaults(root, kinds, scenario.resolved);
  scenario.source_file = source_file;
  scenario.set_overrides = set_overrides;
  scenario_keys(kinds, kind_name(root.find("workload"), kinds)).read(root, "", scenario, problems);
  const bool accelerator_ok = complete_platform(root, data_dir, scenario.platform, scenario.simulation.limits, problems);
  const bool platform_ok = accelerator_ok && !problems.bad("cluster");
  if (!platform_only) read_workloads(root, kinds, data_dir, platform_ok, diagnostics, problems, scenario);
  if (!diagnostics.empty()) throw ScenarioError(diagnostics);
  scenario.warnings = problems.warnings();
  config::sort_diagnostics(scenario.warnings);
  scenario.notices = problems.notices();
  for (const char* top : {"workload", "jobs"}) {
    if (const ConfigNode* node = root.find(top)) record_positions(*node, top, 3, scenario.positions);
  }
  if (const ConfigNode* faults = root.find_path("cluster.network.faults")) {
    record_positions(*faults, "cluster.network.faults", 1, scenario.positions);
  }
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& set_overrides,
                       const std::filesystem::path& data_dir, const WorkloadKinds& kinds) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = config::load_config_file(file, data_dir, diagnostics);
  return load(std::move(root), file.string(), set_overrides, {}, data_dir, kinds, diagnostics);
}

Scenario load_scenario_from_string(std::string_view yaml, std::string_view virtual_file_name,
                                   const std::vector<std::string>& set_overrides,
                                   const std::filesystem::path& data_dir, const WorkloadKinds& kinds) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = config::load_config_string(yaml, virtual_file_name, data_dir, diagnostics);
  return load(std::move(root), std::string(virtual_file_name), set_overrides, {}, data_dir, kinds, diagnostics);
}

Scenario load_platform(const ScenarioSource& source, const std::vector<std::string>& set_overrides,
                       const std::filesystem::path& data_dir) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode root = source.tree(data_dir, diagnostics);
  return load(std::move(root), source.name(), set_overrides, {}, data_dir, builtin_workload_kinds(), diagnostics, true);
}

ScenarioSource::ScenarioSource(const std::filesystem::path& file) : name_(file.string()) {}

ScenarioSource ScenarioSource::text(std::string yaml, std::string virtual_file_name) {
  ScenarioSource source;
  source.name_ = std::move(virtual_file_name);
  source.text_ = std::move(yaml);
  return source;
}

Scenario ScenarioSource::load(const std::vector<std::string>& set_overrides,
                              const std::filesystem::path& data_dir) const {
  return text_ ? load_scenario_from_string(*text_, name_, set_overrides, data_dir)
               : load_scenario(name_, set_overrides, data_dir);
}

ConfigNode ScenarioSource::tree(const std::filesystem::path& data_dir, std::vector<Diagnostic>& diagnostics) const {
  return text_ ? config::load_config_string(*text_, name_, data_dir, diagnostics)
               : config::load_config_file(name_, data_dir, diagnostics);
}

Scenario load_scenario_tree(ConfigNode root, const std::string& source_file,
                            const std::vector<std::string>& set_overrides,
                            const std::vector<KeyOverride>& key_overrides, const std::filesystem::path& data_dir,
                            const WorkloadKinds& kinds) {
  std::vector<Diagnostic> diagnostics;
  return load(std::move(root), source_file, set_overrides, key_overrides, data_dir, kinds, diagnostics);
}

}  // namespace clustersim::scenario
