#pragma once
// One run of each shipped scenario as it is written, shared by the test cases of test_scenarios:
// the golden test and the fidelity agreement test both simulate every training scenario at its
// own fidelity, and the suite's longest test would otherwise run each of them twice.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace clustersim::scenario_testing {

/// A scenario file loaded without overrides, and its run.
struct ScenarioRun {
  scenario::Scenario scenario;
  runner::RunResult run;
};

/// `file` loaded as written and run, once per process (test cases run one at a time).
inline const ScenarioRun& run_as_written(const std::filesystem::path& file) {
  static std::map<std::string, std::unique_ptr<ScenarioRun>> runs;
  std::unique_ptr<ScenarioRun>& slot = runs[file.string()];
  if (!slot) {
    scenario::Scenario loaded = scenario::load_scenario(file, {});
    runner::RunResult run = runner::run_scenario(loaded);
    slot = std::make_unique<ScenarioRun>(ScenarioRun{std::move(loaded), std::move(run)});
  }
  return *slot;
}

}  // namespace clustersim::scenario_testing
