#include "sim/scenario/kernel_stacks.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/accelerator/compute_model.hpp"
#include "sim/config/declarations.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/preset_readers.hpp"

namespace clustersim::scenario {
namespace {

using config::ConfigNode;
using config::Problems;

constexpr const char* kKey = "simulation.kernel_stack";

/// The accelerator-preset keys a stack may set: what the software decides, not the silicon.
const std::vector<std::string>& settable_keys() {
  static const std::vector<std::string> keys{"attention", "efficiency", "kernel_launch"};
  return keys;
}

std::string scalar_text(const ConfigNode* node) { return node != nullptr && node->is_scalar() ? node->text : ""; }

/// A mapping's keys, each checked against `allowed`; missing `required` ones reported at the mapping.
void check_keys(const ConfigNode& node, const std::string& path, const std::vector<std::string>& allowed,
                const std::vector<std::string>& required, Problems& problems) {
  for (const config::ConfigEntry& entry : node.entries) {
    if (std::find(allowed.begin(), allowed.end(), entry.key) == allowed.end()) {
      problems.add(entry.key_position, path + "." + entry.key, "unknown key '" + entry.key + "' in a kernel stack",
                   unknown_name_hint(entry.key, allowed));
    }
  }
  for (const std::string& key : required) {
    if (scalar_text(node.find(key)).empty()) problems.add(node.position, path + "." + key, "missing '" + key + "'");
  }
}

std::optional<StackMeasurement> read_measurement(const ConfigNode& item, const std::string& path, Problems& problems) {
  if (!item.is_mapping()) {
    problems.add(item.position, path, "expected a mapping {op, dtype, m, n, k, tflops, row}, got " + item.describe());
    return std::nullopt;
  }
  check_keys(item, path, {"also", "dtype", "k", "m", "n", "op", "row", "tflops"},
             {"dtype", "k", "m", "n", "op", "row", "tflops"}, problems);
  StackMeasurement measured;
  measured.position = item.position;
  measured.row = scalar_text(item.find("row"));
  if (const std::string op = scalar_text(item.find("op")); !op.empty() && op != "gemm") {
    problems.add(item.find("op")->position, path + ".op", "only gemm measurements are read, got '" + op + "'");
  }
  const auto read_dtype = [&](const ConfigNode& node, const std::string& key) -> std::optional<models::Dtype> {
    try {
      return models::parse_dtype(node.text);
    } catch (const ConfigError& e) {
      problems.add(node.position, path + "." + key, e.what());
      return std::nullopt;
    }
  };
  if (const ConfigNode* dtype = item.find("dtype"); dtype != nullptr && dtype->is_scalar()) {
    if (auto read = read_dtype(*dtype, "dtype")) measured.dtype = *read;
  }
  if (const ConfigNode* also = item.find("also")) {
    for (const ConfigNode& format : config::list_items(*also)) {
      if (auto read = read_dtype(format, "also")) measured.also.push_back(*read);
    }
  }
  for (auto [key, member] : {std::pair{"m", &StackMeasurement::m}, {"n", &StackMeasurement::n}, {"k", &StackMeasurement::k}}) {
    const ConfigNode* node = item.find(key);
    const auto value = config::parse_integer(scalar_text(node));
    if (node != nullptr && !(value && *value > 0)) {
      problems.add(node->position, path + "." + key, "expected a positive integer, got '" + scalar_text(node) + "'");
    }
    if (value) measured.*member = *value;
  }
  const ConfigNode* tflops = item.find("tflops");
  const auto rate = config::parse_number(scalar_text(tflops));
  if (tflops != nullptr && !(rate && *rate > 0)) {
    problems.add(tflops->position, path + ".tflops", "expected a positive number of TFLOP/s, got '" + scalar_text(tflops) + "'");
  }
  if (rate) measured.flops_per_s = *rate * 1e12;
  return measured;
}

StackEntry read_entry(const config::ConfigEntry& entry, const std::string& path, Problems& problems) {
  StackEntry stack_entry;
  stack_entry.accelerator = entry.key;
  const ConfigNode& node = entry.value;
  if (!node.is_mapping()) {
    problems.add(node.position, path, "expected a mapping, got " + node.describe());
    return stack_entry;
  }
  std::vector<std::string> allowed = settable_keys();
  allowed.insert(allowed.end(), {"measured", "source"});
  check_keys(node, path, allowed, {"source"}, problems);
  stack_entry.source = scalar_text(node.find("source"));
  stack_entry.settings.kind = ConfigNode::Kind::mapping;
  stack_entry.settings.position = node.position;
  for (const config::ConfigEntry& setting : node.entries) {
    const auto& settable = settable_keys();
    if (std::find(settable.begin(), settable.end(), setting.key) != settable.end()) {
      stack_entry.settings.set(setting.key, setting.key_position, setting.value);
    }
  }
  if (const ConfigNode* measured = node.find("measured")) {
    for (const ConfigNode& item : config::list_items(*measured)) {
      if (auto read = read_measurement(item, path + ".measured", problems)) stack_entry.measured.push_back(*read);
    }
  }
  if (stack_entry.settings.entries.empty() && stack_entry.measured.empty()) {
    problems.add(node.position, path, "sets nothing: a stack entry needs measured GEMMs or one of " +
                                          fmt::format("{}", fmt::join(settable_keys(), ", ")));
  }
  const ConfigNode* efficiency = stack_entry.settings.find("efficiency");
  for (const StackMeasurement& m : stack_entry.measured) {
    std::vector<models::Dtype> formats = m.also;
    formats.push_back(m.dtype);
    for (models::Dtype format : formats) {
      const std::string key = "matmul_" + std::string(models::dtype_name(format));
      const ConfigNode* written = efficiency != nullptr && efficiency->is_mapping() ? efficiency->find(key) : nullptr;
      if (written != nullptr) {
        problems.add(written->position, path + ".efficiency." + key,
                     "set twice: the measured " + std::string(models::dtype_name(format)) + " GEMMs of this entry give it");
      }
    }
  }
  return stack_entry;
}

/// Leaves of `settings` as (dotted path, node), depth first.
void leaves(const ConfigNode& settings, const std::string& prefix, std::vector<std::pair<std::string, const ConfigNode*>>& out) {
  for (const config::ConfigEntry& entry : settings.entries) {
    const std::string path = prefix.empty() ? entry.key : prefix + "." + entry.key;
    if (entry.value.is_mapping()) {
      leaves(entry.value, path, out);
    } else {
      out.emplace_back(path, &entry.value);
    }
  }
}

/// The accelerator names the scenario runs, in order of appearance.
std::vector<std::pair<std::string, config::Position>> named_accelerators(const ConfigNode& root) {
  std::vector<std::pair<std::string, config::Position>> named;
  const auto add = [&named](const ConfigNode* node) {
    if (node == nullptr || !node->is_scalar()) return;
    const bool seen = std::any_of(named.begin(), named.end(), [&](const auto& n) { return n.first == node->text; });
    if (!seen) named.emplace_back(node->text, node->position);
  };
  add(root.find_path("cluster.node.accelerator"));
  if (const ConfigNode* pools = root.find_path("workload.pools"); pools != nullptr && pools->is_mapping()) {
    for (const config::ConfigEntry& pool : pools->entries) add(pool.value.is_mapping() ? pool.value.find("accelerator") : nullptr);
  }
  return named;
}

/// The efficiencies an entry's measured GEMMs give on `spec` (the preset with the entry's
/// written settings): per format the median of the rows' solved efficiencies, as a mapping
/// {efficiency: {matmul_<format>: value}} positioned at the format's first row.
ConfigNode derived_settings(const StackEntry& entry, const models::AcceleratorSpec& spec, const std::string& path,
                            Problems& problems) {
  std::map<models::Dtype, std::vector<double>> solved;
  std::map<models::Dtype, config::Position> first_row;
  for (const StackMeasurement& m : entry.measured) {
    double efficiency = 0;
    try {
      efficiency = solve_matmul_efficiency(spec, m);
    } catch (const ConfigError& e) {
      problems.add(m.position, path + ".measured", e.what());
      continue;
    }
    std::vector<models::Dtype> formats = m.also;
    formats.insert(formats.begin(), m.dtype);
    for (models::Dtype format : formats) {
      solved[format].push_back(efficiency);
      first_row.emplace(format, m.position);
    }
  }
  ConfigNode efficiency;
  efficiency.kind = ConfigNode::Kind::mapping;
  for (auto& [format, values] : solved) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    ConfigNode value;
    value.kind = ConfigNode::Kind::scalar;
    value.position = first_row.at(format);
    value.text = fmt::format("{:.4g}", median);
    efficiency.position = value.position;
    efficiency.set("matmul_" + std::string(models::dtype_name(format)), value.position, std::move(value));
  }
  ConfigNode settings;
  settings.kind = ConfigNode::Kind::mapping;
  if (!efficiency.entries.empty()) settings.set("efficiency", efficiency.position, std::move(efficiency));
  return settings;
}

/// Puts settings of a stack entry into the accelerator's merged preset entry; returns what changed.
std::vector<std::string> overlay(const StackEntry& entry, const ConfigNode& stack_settings, const std::string& stack_name,
                                 ConfigNode& preset, const std::filesystem::path& data_dir, Problems& problems) {
  std::vector<std::pair<std::string, const ConfigNode*>> settings;
  leaves(stack_settings, "", settings);
  std::vector<std::string> changed;
  for (const auto& [path, value] : settings) {
    const std::vector<std::string> parts = config::split_key_path(path);
    ConfigNode* target = &preset;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      ConfigNode* child = target->find(parts[i]);
      if (child == nullptr || !child->is_mapping()) {
        ConfigNode mapping;
        mapping.kind = ConfigNode::Kind::mapping;
        mapping.position = value->position;
        child = &target->set(parts[i], value->position, std::move(mapping));
      }
      target = child;
    }
    const ConfigNode* current = target->find(parts.back());
    const std::string key = "accelerators." + entry.accelerator + "." + path;
    if (current != nullptr && written_by_scenario(*current, data_dir, LibraryKind::accelerators)) {
      problems.warn(current->position, key,
                    fmt::format("the scenario's own value {} wins over kernel stack {}'s {} ({})", current->text,
                                stack_name, value->text, value->position.to_string()));
      continue;
    }
    // A format's own efficiency takes precedence over the generic one the scenario may have written.
    const ConfigNode* generic = path.rfind("efficiency.matmul_", 0) == 0 ? target->find("matmul") : nullptr;
    if (generic != nullptr && written_by_scenario(*generic, data_dir, LibraryKind::accelerators)) {
      const std::string format = path.substr(std::string("efficiency.matmul_").size());
      problems.warn(generic->position, "accelerators." + entry.accelerator + ".efficiency.matmul",
                    fmt::format("does not apply to {} GEMMs: kernel stack {} sets efficiency.matmul_{} {} ({}), which "
                                "takes precedence",
                                format, stack_name, format, value->text, value->position.to_string()),
                    "write efficiency.matmul_" + format + " to override the stack");
    }
    changed.push_back(fmt::format("{} {} -> {}", path, current != nullptr ? current->text : "(unset)", value->text));
    target->set(parts.back(), value->position, *value);
  }
  return changed;
}

}  // namespace

double solve_matmul_efficiency(models::AcceleratorSpec spec, const StackMeasurement& measured) {
  const double measured_s = 2.0 * double(measured.m) * double(measured.n) * double(measured.k) / measured.flops_per_s;
  const models::GemmShape shape{.m = measured.m, .n = measured.n, .k = measured.k, .dtype = measured.dtype};
  const auto time_at = [&](double efficiency) {
    spec.matmul_efficiency_by_dtype[measured.dtype] = efficiency;
    return models::ComputeModel(spec).gemm(shape).time_s;
  };
  const double fastest = time_at(1.0);
  if (fastest > measured_s) {
    throw ConfigError(fmt::format("{} ({:g} TFLOP/s, {:.4g} us) is faster than the compute model of {} allows at "
                                  "efficiency 1 ({:.4g} us)",
                                  measured.row, measured.flops_per_s / 1e12, measured_s * 1e6, spec.name, fastest * 1e6));
  }
  double low = 1e-3, high = 1.0;  // time_at(low) > measured_s >= time_at(high)
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (low + high);
    (time_at(mid) > measured_s ? low : high) = mid;
  }
  return high;
}

const StackEntry* KernelStack::find(const std::string& accelerator) const {
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const StackEntry& e) { return e.accelerator == accelerator; });
  return it == entries.end() ? nullptr : &*it;
}

std::vector<std::string> KernelStack::accelerators() const {
  std::vector<std::string> names;
  for (const StackEntry& entry : entries) names.push_back(entry.accelerator);
  return names;
}

std::vector<std::string> kernel_stack_names(const std::filesystem::path& data_dir) {
  return library_names(LibraryKind::stacks, data_dir);
}

KernelStack read_kernel_stack(const std::string& name, const std::filesystem::path& data_dir, Problems& problems) {
  KernelStack stack;
  stack.name = name;
  const std::filesystem::path file = data_dir / library_folder(LibraryKind::stacks) / (name + ".yaml");
  stack.file = file.string();
  std::vector<config::Diagnostic> file_problems;
  const ConfigNode tree = config::load_config_file(file, data_dir, file_problems);
  for (const config::Diagnostic& d : file_problems) problems.add(config::Position{d.file, d.line, d.column}, d.key_path, d.message, d.hint);
  if (!file_problems.empty()) return stack;
  const ConfigNode* stacks = tree.is_mapping() ? tree.find("stacks") : nullptr;
  const ConfigNode* node = stacks != nullptr && stacks->is_mapping() ? stacks->find(name) : nullptr;
  const std::string path = "stacks." + name;
  if (node == nullptr || !node->is_mapping()) {
    problems.add(tree.position, path, "the stack file has no mapping 'stacks: " + name + ":'");
    return stack;
  }
  check_keys(*node, path, {"accelerators", "clock_settled", "display_name", "release", "timing", "vendor"},
             {"clock_settled", "display_name", "release", "timing", "vendor"}, problems);
  if (const ConfigNode* settled = node->find("clock_settled"); settled != nullptr) {
    if (settled->text != "true" && settled->text != "false") {
      problems.add(settled->position, path + ".clock_settled", "expected true or false, got '" + settled->text + "'");
    }
    stack.clock_settled = settled->text == "true";
  }
  stack.display_name = scalar_text(node->find("display_name"));
  stack.vendor = scalar_text(node->find("vendor"));
  stack.release = scalar_text(node->find("release"));
  stack.timing = scalar_text(node->find("timing"));
  const ConfigNode* accelerators = node->find("accelerators");
  if (accelerators == nullptr || !accelerators->is_mapping() || accelerators->entries.empty()) {
    problems.add(node->position, path + ".accelerators", "a stack needs a mapping of the accelerators it measured");
    return stack;
  }
  const std::vector<std::string> library = library_names(LibraryKind::accelerators, data_dir);
  for (const config::ConfigEntry& entry : accelerators->entries) {
    const std::string entry_path = path + ".accelerators." + entry.key;
    if (std::find(library.begin(), library.end(), entry.key) == library.end()) {
      problems.add(entry.key_position, entry_path, "unknown accelerator '" + entry.key + "'",
                   unknown_name_hint(entry.key, library));
      continue;
    }
    stack.entries.push_back(read_entry(entry, entry_path, problems));
  }
  return stack;
}

void apply_kernel_stack(ConfigNode& root, const std::filesystem::path& data_dir, Problems& problems) {
  const ConfigNode* named = root.find_path(kKey);
  const std::string name = scalar_text(named);
  if (name.empty() || name == kPresetKernelStack) return;
  std::vector<std::string> names = kernel_stack_names(data_dir);
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    names.push_back(kPresetKernelStack);
    problems.add(named->position, kKey, "unknown kernel stack '" + name + "'", unknown_name_hint(name, names));
    return;
  }
  const config::Position position = named->position;
  std::vector<config::Diagnostic> stack_problems;
  Problems reading(stack_problems);
  const KernelStack stack = read_kernel_stack(name, data_dir, reading);
  if (!stack_problems.empty()) {
    for (const config::Diagnostic& d : stack_problems) problems.add(config::Position{d.file, d.line, d.column}, d.key_path, d.message, d.hint);
    return;
  }
  if (const ConfigNode* throttling = root.find_path("power.apply_throttling");
      stack.clock_settled && throttling != nullptr && throttling->text == "true") {
    problems.warn(throttling->position, "power.apply_throttling",
                  fmt::format("kernel stack {} was measured with the clock settled at the power limit ({}): throttling "
                              "its kernels again counts the limit twice",
                              name, stack.timing),
                  "leave power.apply_throttling off with a clock-settled stack, or use the presets (burst clock)");
  }
  ConfigNode* accelerators = root.find("accelerators");
  for (const auto& [accelerator, at] : named_accelerators(root)) {
    ConfigNode* preset = accelerators != nullptr && accelerators->is_mapping() ? accelerators->find(accelerator) : nullptr;
    if (preset == nullptr || !preset->is_mapping()) continue;  // an unknown accelerator: reported where it is named
    const StackEntry* entry = stack.find(accelerator);
    if (entry == nullptr) {
      problems.warn(position, kKey,
                    fmt::format("kernel stack {} has no measurements of accelerator '{}' (it covers: {}): {} keeps its "
                                "preset's efficiencies",
                                name, accelerator, fmt::join(stack.accelerators(), ", "), accelerator));
      continue;
    }
    std::vector<std::string> changed = overlay(*entry, entry->settings, name, *preset, data_dir, problems);
    std::vector<config::Diagnostic> scratch;  // the preset's own problems: reported when it is read
    config::Problems reading_preset(scratch);
    const models::AcceleratorSpec spec = read_accelerator(*preset, "accelerators." + accelerator, accelerator, reading_preset);
    if (scratch.empty() && !entry->measured.empty()) {
      const ConfigNode derived = derived_settings(*entry, spec, "stacks." + name + ".accelerators." + accelerator, problems);
      const std::vector<std::string> solved = overlay(*entry, derived, name, *preset, data_dir, problems);
      changed.insert(changed.end(), solved.begin(), solved.end());
    }
    if (changed.empty()) continue;
    problems.notice(fmt::format("kernel stack {} ({}; {}) on {}: {}; everything else from the {} preset; source: {}", name,
                                stack.display_name, stack.timing, accelerator, fmt::join(changed, ", "), accelerator,
                                entry->source));
  }
}

StackedAccelerator stacked_accelerator(const std::string& stack, const std::string& accelerator,
                                       const std::filesystem::path& data_dir) {
  std::vector<config::Diagnostic> diagnostics;
  const std::string yaml = fmt::format("cluster: {{node: {{accelerator: {}}}}}\nsimulation: {{kernel_stack: {}}}\n",
                                       accelerator, stack);
  ConfigNode root = config::load_config_string(yaml, "describe", data_dir, diagnostics);
  merge_library_presets(root, LibraryKind::accelerators, "accelerators", "cluster.node.accelerator", data_dir, diagnostics);
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  Problems problems(diagnostics);
  const std::string path = "accelerators." + accelerator;
  StackedAccelerator result;
  result.preset = read_accelerator(*root.find("accelerators")->find(accelerator), path, accelerator, problems);
  apply_kernel_stack(root, data_dir, problems);
  result.stacked = read_accelerator(*root.find("accelerators")->find(accelerator), path, accelerator, problems);
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  result.notices = problems.notices();
  return result;
}

}  // namespace clustersim::scenario
