#include "sim/runner/scenario_runner.hpp"

#include "sim/training/training_step.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/llm/memory_footprint.hpp"
#include "sim/engine/error.hpp"
#include "sim/platform/session.hpp"
#include "sim/training/training_simulation.hpp"
#include "topologies/link_fault_injector.hpp"

namespace clustersim::runner {

std::unique_ptr<platform::Platform> build_platform(const scenario::Scenario& scenario) {
  return std::make_unique<platform::Platform>(scenario.platform);
}

namespace {

/// `spec` built on `platform`; a layout that does not fit is reported at the setting that chose
/// it (`where`.parallelism, `where`.pools.NAME, or `where` itself), as a load error would be.
std::unique_ptr<platform::Workload> instantiate_at(const scenario::Scenario& scenario, const std::string& where,
                                                   const platform::WorkloadSpec& spec,
                                                   const platform::Platform& platform,
                                                   const platform::Allocation& allocation) {
  try {
    return spec.instantiate(platform, allocation, scenario.simulation);
  } catch (const models::DoesNotFitError& e) {
    std::string key = e.key().empty() ? where : where + "." + e.key();
    auto found = scenario.positions.find(key);
    if (found == scenario.positions.end()) {
      key = where;
      found = scenario.positions.find(key);
    }
    if (found == scenario.positions.end()) throw;  // a scenario built in code, with no file
    throw models::DoesNotFitError(found->second.to_string() + ": " + key + ": " + e.what(), e.key());
  }
}

}  // namespace

namespace {

/// Every workload of `scenario` in one session; `intact_baseline`: on the intact network
/// (Session::intact_baseline), no trace or progress.
RunResult run_workloads(const scenario::Scenario& scenario, const platform::Platform& platform,
                        platform::TraceSink* trace, platform::Session::TaskProgress progress, bool intact_baseline) {
  const platform::Allocation primary_allocation = scenario.primary_allocation();
  // Every workload is checked (memory fit, ...) before anything is simulated.
  auto primary = instantiate_at(scenario, "workload", *scenario.workload, platform, primary_allocation);
  std::vector<std::unique_ptr<platform::Workload>> jobs;
  for (const scenario::NamedWorkload& job : scenario.jobs) {
    jobs.push_back(instantiate_at(scenario, "jobs." + job.name, *job.spec, platform,
                                  job.spec->pinned().value_or(primary_allocation)));
  }
  platform::Session session(platform, scenario.simulation, intact_baseline);
  session.set_trace(trace);
  for (auto& job : jobs) job->start(session, {});
  session.set_progress(std::move(progress));  // the primary workload's only (set after the jobs start)
  primary->start(session, [&jobs] {
    for (auto& job : jobs) job->stop();
  });
  try {
    session.engine().run();
  } catch (const EventLimitError& e) {
    throw EventLimitError(platform::event_limit_message(e.what(), scenario.simulation.limits));
  } catch (const topologies::NetworkPartitionError& e) {
    // At the failure that cut the network, as a load error would be.
    const std::string key = "cluster.network.faults." + e.fault();
    const auto found = scenario.positions.find(key);
    const std::string prefix = "cluster.network.faults: ";
    const std::string message = e.what();
    if (found == scenario.positions.end() || message.rfind(prefix, 0) != 0) throw;
    throw topologies::NetworkPartitionError(
        found->second.to_string() + ": " + key + ": " + message.substr(prefix.size()), e.fault());
  }
  RunResult result;
  result.primary = primary->finish(session);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    result.jobs.push_back({scenario.jobs[j].name, jobs[j]->finish(session)});
  }
  result.fingerprint = session.engine().fingerprint();
  result.events = session.engine().events_fired();
  if (intact_baseline) return result;
  if (!jobs.empty() && scenario.simulation.fidelity == platform::Fidelity::analytical) {
    std::string names;
    for (const auto& job : scenario.jobs) names += (names.empty() ? "" : ", ") + job.name;
    result.primary->notes.push_back(fmt::format(
        "jobs ({}) ran beside the workload: in the analytical fidelity a communication that starts while another "
        "(of any job) runs on its links is slowed for as long as they overlap, but its duration is fixed when it "
        "starts, so it does not slow the ones already running in turn (simulation.fidelity: flow shares the links "
        "max-min fairly)",
        names));
  }
  // Settings without effect reach the user with the result (the run table and the JSON notes).
  for (const config::Diagnostic& warning : scenario.warnings) {
    result.primary->notes.push_back("warning: " + warning.render());
  }
  for (const std::string& notice : scenario.notices) result.primary->notes.push_back("notice: " + notice);
  return result;
}

}  // namespace

RunResult run_scenario(const scenario::Scenario& scenario, const platform::Platform& platform,
                       platform::TraceSink* trace, platform::Session::TaskProgress progress) {
  if (!scenario.workload) throw ConfigError(fmt::format("scenario '{}' has no workload", scenario.name));
  RunResult result = run_workloads(scenario, platform, trace, std::move(progress), false);
  if (platform.link_faults().empty() || scenario.simulation.fidelity != platform::Fidelity::flow) return result;
  bool compared = result.primary->compares_with_intact();
  for (const JobResult& job : result.jobs) compared = compared || job.result->compares_with_intact();
  if (!compared) return result;  // no result reports a fault cost: nothing to run again for
  // What the faults cost: every workload again on the intact network, beside the same jobs (so
  // their contention is not counted as the faults'), same mode and seed.
  const RunResult intact = run_workloads(scenario, platform, nullptr, {}, true);
  result.primary->compare_with_intact(*intact.primary, platform.link_faults());
  for (std::size_t j = 0; j < result.jobs.size(); ++j) {
    result.jobs[j].result->compare_with_intact(*intact.jobs[j].result, platform.link_faults());
  }
  if (!scenario.jobs.empty()) {
    result.primary->notes.push_back("link faults: their cost is measured against the same run on the intact network, "
                                    "the other jobs beside it as here");
  }
  return result;
}

RunResult run_scenario(const scenario::Scenario& scenario, platform::TraceSink* trace,
                       platform::Session::TaskProgress progress) {
  return run_scenario(scenario, *build_platform(scenario), trace, std::move(progress));
}

std::optional<CalibrationEffect> compare_with_default_tables(const scenario::Scenario& scenario, RunResult& run) {
  if (scenario.platform.calibration_path.empty()) return std::nullopt;
  scenario::Scenario plain = scenario;
  plain.platform.calibration_path.clear();
  plain.platform.calibration = {};
  const RunResult without = run_scenario(plain);
  CalibrationEffect effect{scenario.platform.calibration_path, run.primary->headline(), without.primary->headline()};
  std::vector<std::string> moves;
  for (std::size_t i = 0; i < effect.calibrated.size() && i < effect.default_tables.size(); ++i) {
    const platform::Metric& with = effect.calibrated[i];
    const platform::Metric& base = effect.default_tables[i];
    moves.push_back(base.value != 0 ? fmt::format("{} {:+.1f} % ({:.6g} -> {:.6g} {})", with.name,
                                                  100.0 * (with.value - base.value) / base.value, base.value,
                                                  with.value, with.unit)
                                    : fmt::format("{} {:.6g} {} (0 without it)", with.name, with.value, with.unit));
  }
  run.primary->notes.push_back(fmt::format("calibration {}: against the library's tables, {}", effect.table,
                                           fmt::join(moves, ", ")));
  return effect;
}

training::TrainingResult run_training(const scenario::Scenario& scenario) {
  (void)scenario.training();  // a training workload, or a ConfigError naming its kind
  RunResult run = run_scenario(scenario);
  auto* training = dynamic_cast<training::TrainingResult*>(run.primary.get());
  if (training == nullptr) throw SimulationError("the training workload produced no training result");
  return std::move(*training);
}

training::ChakraExport export_chakra(const scenario::Scenario& scenario, const std::filesystem::path& dir) {
  const auto platform = build_platform(scenario);
  const training::TrainingWorkload& workload = scenario.training();
  training::TrainingSetup setup =
      training::training_setup(workload, *platform, scenario.primary_allocation(), scenario.simulation);
  // The full-mode template: every collective and send knows its group (GroupCollective).
  setup.mode = platform::SimulationMode::full;
  platform::Session session(*platform, scenario.simulation);  // before the step: it outlives the step's executor
  training::TrainingStep step(setup);
  step.start(session, {});  // builds the graph; the engine is never run
  return training::export_chakra(step.step_graph(), setup, dir, "step");
}

std::vector<training::StageProgram> stage_programs(const scenario::Scenario& scenario) {
  const auto platform = build_platform(scenario);
  const training::TrainingWorkload& workload = scenario.training();
  const platform::Allocation allocation = scenario.primary_allocation();
  const training::TrainingSetup setup = training::training_setup(workload, *platform, allocation, scenario.simulation);
  training::validate_training_setup(setup);
  return training::build_stage_programs(setup);
}

}  // namespace clustersim::runner
