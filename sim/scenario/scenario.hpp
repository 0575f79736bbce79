#pragma once
/// The typed, validated scenario that one YAML file (plus includes and --set overrides)
/// describes: a platform (the hardware), the primary workload that runs on it, other jobs that
/// share it, and the run's options. Built only by the loader (scenario_loader.hpp); every
/// field is checked.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/diagnostics.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/workload.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::scenario {

struct OutputConfig {
  std::string dir;  ///< empty: print only
};

/// A workload of `jobs:` with its name.
struct NamedWorkload {
  std::string name;
  std::shared_ptr<const platform::WorkloadSpec> spec;
};

/// A whole scenario.
struct Scenario {
  int schema_version = 1;
  std::string name;
  std::string description;  ///< free text
  std::string source_file;  ///< the top-level YAML file it came from
  platform::PlatformSpec platform;
  platform::SessionOptions simulation;  ///< `simulation`: fidelity, mode, seed
  /// The primary workload (`workload:`): its result is the run's result.
  std::shared_ptr<const platform::WorkloadSpec> workload;
  /// Other jobs sharing the platform (`jobs:`), pinned to their accelerators, in name order.
  std::vector<NamedWorkload> jobs;
  OutputConfig output;
  /// The `--set key.path=value` overrides applied on top of the file, in the order given,
  /// exactly as written (results name them beside the scenario file).
  std::vector<std::string> set_overrides;
  /// The scenario as run, one entry per dotted key ("cluster.nodes" -> "128"): every key
  /// written (after `include:`, library presets and the --set overrides) and the default of
  /// every declared key that is not, as YAML text. What manifests record and `compare` diffs.
  std::map<std::string, std::string> resolved;
  /// Problems that did not stop the load (a setting another layer overrides, so it has no
  /// effect), with their positions; the runner adds them to the result's notes.
  std::vector<config::Diagnostic> warnings;
  /// How parts of the run are estimated (an op class whose time is a roofline estimate with no
  /// kernel measurement on its accelerator); the runner adds them to the result's notes.
  std::vector<std::string> notices;
  /// Where the workload's and the jobs' settings were written, for errors found only when a
  /// workload is built or runs (a layout that does not fit, a network partitioned by a fault):
  /// "workload", "workload.parallelism", "workload.pools.chat", "jobs.NAME",
  /// "jobs.NAME.parallelism", ... (three levels of keys below `workload` and `jobs`), and
  /// "cluster.network.faults.NAME", as written after includes and --set overrides.
  std::map<std::string, config::Position> positions;

  /// The primary workload's accelerators: its own pinned range, or the ones the pinned jobs
  /// leave (platform::primary_allocation). Throws ConfigError for overlapping jobs.
  platform::Allocation primary_allocation() const;
  /// The primary workload as a training workload. Throws ConfigError naming its kind when it
  /// is another.
  const training::TrainingWorkload& training() const;
  /// Replaces the primary workload by a training workload (candidates, validation, tests).
  void set_training(training::TrainingWorkload workload);
};

}  // namespace clustersim::scenario
