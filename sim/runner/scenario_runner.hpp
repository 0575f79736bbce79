#pragma once
/// Runs a Scenario: builds its platform once, instantiates the primary workload on the
/// accelerators the pinned jobs leave and every job on its own, starts them all on one
/// session (one engine, one communication runtime), runs the engine until the primary
/// workload completes (then asks the others to stop and lets their work in flight finish), and
/// collects every workload's result. Knows no workload kind: kinds come from the scenario.
/// Used by the CLI, `validate` and the goldens.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/platform/platform.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/trace_sink.hpp"
#include "sim/platform/workload.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/training/chakra_export.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::runner {

/// A job's result with its name.
struct JobResult {
  std::string name;
  std::unique_ptr<platform::WorkloadResult> result;
};

/// What a run produced.
struct RunResult {
  std::unique_ptr<platform::WorkloadResult> primary;  ///< the primary workload's result
  std::vector<JobResult> jobs;                        ///< the jobs', in the scenario's order
  std::uint64_t fingerprint = 0;                      ///< the session's event fingerprint
  std::uint64_t events = 0;                           ///< events the session fired
};

/// The platform of `scenario` (its models, built once).
std::unique_ptr<platform::Platform> build_platform(const scenario::Scenario& scenario);

/// Runs every workload of `scenario` on `platform` (built from the same scenario), reporting
/// the timeline to `trace` when set (it does not change the run). Throws ConfigError /
/// SimulationError (models::DoesNotFitError before anything is simulated).
RunResult run_scenario(const scenario::Scenario& scenario, const platform::Platform& platform,
                       platform::TraceSink* trace = nullptr, platform::Session::TaskProgress progress = {});
/// Same on a platform built for the run.
RunResult run_scenario(const scenario::Scenario& scenario, platform::TraceSink* trace = nullptr,
                       platform::Session::TaskProgress progress = {});

/// What a calibration table (`simulation.calibration`) changed: the primary workload's headline
/// figures (WorkloadResult::headline) on the table and on the library's tables.
struct CalibrationEffect {
  std::string table;                          ///< simulation.calibration as resolved
  std::vector<platform::Metric> calibrated;   ///< this run's
  std::vector<platform::Metric> default_tables;  ///< the same scenario without the table
};

/// For a scenario with `simulation.calibration`: runs it again without the table (same platform
/// otherwise, no trace) and compares the primary result's headline figures; appends a note to
/// `run`'s primary result saying by how much each moved. nullopt (and no second run) without a
/// calibration.
std::optional<CalibrationEffect> compare_with_default_tables(const scenario::Scenario& scenario, RunResult& run);

/// run_scenario's primary result as a training result; throws ConfigError when the primary
/// workload is not training.
training::TrainingResult run_training(const scenario::Scenario& scenario);

/// Builds the scenario's training step as `run` would (not running it) and writes it as Chakra
/// traces into `dir`: step.R.et per rank R of the job and step.groups.json
/// (training::export_chakra). Throws ConfigError for a scenario that is not training.
training::ChakraExport export_chakra(const scenario::Scenario& scenario, const std::filesystem::path& dir);

/// The costed per-micro-batch program of every pipeline stage of the scenario's training
/// workload (what `clustersim ops` prints).
std::vector<training::StageProgram> stage_programs(const scenario::Scenario& scenario);

}  // namespace clustersim::runner
