#pragma once
/// The workload kinds a scenario may name (`workload.kind`, `jobs.NAME.kind`): each declares
/// the keys of its mapping once, bound to the members of its platform::WorkloadSpec
/// (config::Declarations: the schema the loader validates it against, its reader,
/// `docs/scenario-reference.md` and the near-miss suggestions all come from them), plus the
/// rules its keys cannot express. A registry is a value: builtin_workload_kinds() has training
/// and collective-loop; a caller (a test, a plugin) adds its own kind to a copy and hands it to
/// the loader, with no change to the loader, the runner or the CLI.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/op_class.hpp"
#include "sim/config/config_tree.hpp"
#include "sim/config/declarations.hpp"
#include "sim/config/problems.hpp"
#include "sim/config/schema.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/workload.hpp"

namespace clustersim::scenario {

/// What a kind's reader gets: the scenario tree, validated against the whole schema (its own
/// keys included), and the platform already read.
struct WorkloadReadContext {
  const config::ConfigNode& root;          ///< the whole scenario (presets merged)
  const config::ConfigNode& mapping;       ///< the workload's own mapping (at `path`)
  std::string path;                        ///< "workload" or "jobs.NAME"
  const platform::PlatformSpec& platform;  ///< the platform (may be partial where it had problems)
  bool platform_ok = true;                 ///< false: the platform has problems; skip checks on it
  const platform::SessionOptions& simulation;
  /// Accelerators the workload may use: the primary's, what the pinned jobs leave; -1 when
  /// unknown (a job has problems), so checks of the count are skipped.
  int accelerators = 0;
  const std::filesystem::path& data_dir;   ///< the preset library
  config::Problems& problems;
  /// The scenario's resolved keys (Scenario::resolved; nullptr: not recorded): a kind that
  /// fills keys the scenario does not write from other settings (a serving framework's
  /// scheduler defaults) records the values it used, so `compare` and the run's manifest show
  /// them instead of the keys' declared defaults.
  std::map<std::string, std::string>* resolved = nullptr;
  /// `path` + "." + `key`.
  std::string key(std::string_view key) const { return path + "." + std::string(key); }
  /// Position of `path` + "." + `key` if written, else of its closest written ancestor.
  config::Position position(std::string_view key) const { return config::position_of(root, this->key(key)); }
  /// Whether the workload writes `key` (relative to `path`).
  bool has(std::string_view key) const { return config::has_value(root, this->key(key)); }
  /// warn_no_effect for `key` (relative to `path`) when `effective` is false.
  void warn_unless(bool effective, std::string_view key, const std::string& why) const;
};

/// Warns that `key_path` (absolute, e.g. "workload.tp_comm_overlap" or "simulation.mode") has
/// no effect, when the scenario writes it: "<value> has no effect: <why>" at its position,
/// which the runner adds to the result's notes. A setting the rest of the scenario makes
/// ineffective is reported this way, never silently ignored.
void warn_no_effect(const config::ConfigNode& root, config::Problems& problems, const std::string& key_path,
                    const std::string& why);

/// The fault settings every workload kind reads alike: stragglers that cannot be slow or that no
/// node is (`stragglers`: the platform's, null when the platform could not be read), host noise
/// with a rate but no delay (or the reverse), and `simulation.failures.*` written while failures
/// are off (`why_off`: what that means for this kind), each warned as having no effect.
void warn_idle_fault_settings(const config::ConfigNode& root, config::Problems& problems,
                              const platform::SessionOptions& simulation, const platform::Stragglers* stragglers,
                              const std::string& why_off);

/// One op class a workload runs, for notice_roofline_estimates: `op` in `dtype` (attention
/// with its fused `family`).
struct CostedOpClass {
  models::OpClass op = models::OpClass::gemm;
  models::Dtype dtype = models::Dtype::bf16;
  std::optional<models::AttentionKernelFamily> family{};
};

/// Adds a notice (the result's notes) for each of `classes` that `accelerator` has no kernel
/// measurement of in the library's calibration table (models/data/calibration/<name>.csv,
/// models::has_measurement): its time is then a roofline estimate from datasheet peaks and
/// efficiencies measured on other shapes or chips. Names the accelerator and the op class.
void notice_roofline_estimates(const WorkloadReadContext& c, const models::AcceleratorSpec& accelerator,
                               const std::vector<CostedOpClass>& classes);

/// One workload kind.
struct WorkloadKind {
  std::string name;  ///< the `kind:` value
  std::string help;  ///< one line for the reference
  /// The keys of its mapping, `kind` excluded (workload_field adds it).
  std::vector<config::Field> fields;
  /// Reads the mapping at context.path into a spec, adding every problem to context.problems
  /// (it may return nullptr then).
  std::function<std::shared_ptr<const platform::WorkloadSpec>(const WorkloadReadContext&)> read;
  /// May it run as one of `jobs:` (beside the primary workload, pinned to its accelerators)?
  bool can_be_job = true;
  /// May it be the primary `workload:`?
  bool can_be_primary = true;
};

/// A kind whose keys are `keys`, bound to a Spec: its reader default-constructs a Spec, sets
/// every key the mapping writes, then calls `complete` (if any) for what the declarations
/// cannot say: preset lookups, keys whose default is another key, cross-field rules and the
/// checks against the platform, each adding its problems to context.problems.
template <class Spec>
WorkloadKind declared_workload_kind(std::string name, std::string help, config::Declarations<Spec> keys,
                                    std::function<void(const WorkloadReadContext&, Spec&)> complete = {}) {
  WorkloadKind kind;
  kind.name = std::move(name);
  kind.help = std::move(help);
  kind.fields = keys.fields();
  kind.read = [keys = std::move(keys), complete = std::move(complete)](const WorkloadReadContext& context) {
    auto spec = std::make_shared<Spec>();
    keys.read(context.mapping, context.path, *spec, context.problems);
    if (complete) complete(context, *spec);
    return std::shared_ptr<const platform::WorkloadSpec>(std::move(spec));
  };
  return kind;
}

/// The model a workload's `model` key names (the scenario's `models:` map, then the library) or
/// defines inline, with its path ("models.NAME" or the inline key) and name ("inline" when
/// inline); nullptr with a problem when the name is unknown, nullptr alone when the key is
/// absent or not a name or mapping (the validator reports those).
const config::ConfigNode* find_model(const WorkloadReadContext& context, std::string& model_path,
                                     std::string& model_name);

/// The kinds a loader knows, in insertion order.
class WorkloadKinds {
 public:
  /// Adds a kind. Throws ConfigError if one of that name exists.
  void add(WorkloadKind kind);
  /// The kind named `name`, or nullptr.
  const WorkloadKind* find(std::string_view name) const;
  /// Every kind's name, in insertion order.
  std::vector<std::string> names() const;
  const std::vector<WorkloadKind>& all() const { return kinds_; }

 private:
  std::vector<WorkloadKind> kinds_;
};

/// The training workload kind (training_kind.cpp).
WorkloadKind training_workload_kind();
/// The synthetic collective-loop kind (collective_loop_kind.cpp).
WorkloadKind collective_loop_workload_kind();
/// The serving workload kind (serving_kind.cpp).
WorkloadKind serving_workload_kind();
/// The `trace` kind (trace_kind.cpp): a Chakra execution trace.
WorkloadKind trace_workload_kind();
/// training, serving, collective-loop and trace.
const WorkloadKinds& builtin_workload_kinds();

}  // namespace clustersim::scenario
