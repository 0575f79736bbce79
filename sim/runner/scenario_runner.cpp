#include "sim/runner/scenario_runner.hpp"

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "sim/engine/error.hpp"
#include "sim/training/training_simulation.hpp"
#include "topologies/topology.hpp"

namespace clustersim::runner {

training::TrainingResult run_training(const scenario::Scenario& scenario) {
  if (scenario.simulation.fidelity != scenario::Fidelity::analytical) {
    throw SimulationError("simulation.fidelity 'flow' is not implemented yet; use 'analytical'");
  }
  if (scenario.simulation.mode != scenario::SimulationMode::symmetric) {
    throw SimulationError("simulation.mode 'full' is not implemented yet; use 'symmetric'");
  }
  const auto topology = topologies::Topology::build(scenario.cluster.network);
  const models::ComputeModel compute(scenario.cluster.accelerator);
  const models::CollectiveModel collectives(topology, scenario.simulation.comm);
  const training::TrainingSetup setup{scenario.training, compute, collectives, topology,
                                      scenario.simulation.seed};
  return training::simulate_training_step(setup);
}

}  // namespace clustersim::runner
