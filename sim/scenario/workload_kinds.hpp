#pragma once
/// The workload kinds a scenario may name (`workload.kind`, `jobs.NAME.kind`): each declares
/// the keys of its mapping (the schema the loader validates it against, `docs/scenario-
/// reference.md` and the near-miss suggestions read) and reads a validated mapping into its
/// platform::WorkloadSpec. A registry is a value: builtin_workload_kinds() has training and
/// collective-loop; a caller (a test, a plugin) adds its own kind to a copy and hands it to
/// the loader, with no change to the loader, the runner or the CLI.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/platform/platform_spec.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/workload.hpp"
#include "sim/config/config_tree.hpp"
#include "sim/config/problems.hpp"
#include "sim/config/schema.hpp"

namespace clustersim::scenario {

/// What a kind's reader gets: the scenario tree, validated against the whole schema (its own
/// keys included), and the platform already read.
struct WorkloadReadContext {
  const config::ConfigNode& root;                  ///< the whole scenario (presets merged)
  const config::SchemaReader& reader;              ///< typed access from the root, schema defaults
  std::string path;                        ///< "workload" or "jobs.NAME"
  const platform::PlatformSpec& platform;  ///< the platform (may be partial where it had problems)
  bool platform_ok = true;                 ///< false: the platform has problems; skip checks on it
  const platform::SessionOptions& simulation;
  /// Accelerators the workload may use: the primary's, what the pinned jobs leave; -1 when
  /// unknown (a job has problems), so checks of the count are skipped.
  int accelerators = 0;
  const std::filesystem::path& data_dir;   ///< the preset library
  config::Problems& problems;
  /// `path` + "." + `key`.
  std::string key(std::string_view key) const { return path + "." + std::string(key); }
};

/// One workload kind.
struct WorkloadKind {
  std::string name;  ///< the `kind:` value
  std::string help;  ///< one line for the reference
  /// The keys of its mapping, `kind` included.
  std::vector<config::Field> fields;
  /// Reads the mapping at context.path into a spec, adding every problem to context.problems
  /// (it may return nullptr then).
  std::function<std::shared_ptr<const platform::WorkloadSpec>(const WorkloadReadContext&)> read;
  /// May it run as one of `jobs:` (beside the primary workload, pinned to its accelerators)?
  bool can_be_job = true;
  /// May it be the primary `workload:`?
  bool can_be_primary = true;
};

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
/// training and collective-loop.
const WorkloadKinds& builtin_workload_kinds();

}  // namespace clustersim::scenario
