#pragma once
/// Builds the task graph of one training step and runs it on the engine.
#include <cstdint>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "models/llm/memory_footprint.hpp"
#include "models/memory/memory_hierarchy.hpp"
#include "sim/engine/profile.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/variability.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/training_config.hpp"
#include "sim/training/training_result.hpp"
#include "topologies/flow_network.hpp"
#include "topologies/topology.hpp"

namespace clustersim::training {

/// Everything one training-step simulation needs: the workload and views of the platform's
/// models. References must outlive the simulation.
struct TrainingSetup {
  const TrainingWorkload& workload;
  const models::ComputeModel& compute;
  const models::CollectiveModel& collectives;
  const topologies::Topology& topology;
  std::uint64_t seed = 1;
  /// placement[r] = accelerator of global rank r (RankLayout); empty: rank r on accelerator r.
  std::vector<int> placement{};
  /// Accelerators of the job (the first ones of the platform); 0: all of the topology's.
  int accelerators = 0;
  /// Speed of compute kernels, as a fraction of full, while a communication kernel runs on
  /// the same GPU (overlapped DP/TP/CP collectives and pipeline sends occupy SMs), in (0, 1]:
  /// 1 - communication SMs / compute units. 1: no slowdown.
  double compute_rate_while_communicating = 1.0;
  /// `symmetric`: one representative rank per pipeline stage; `full`: every rank (see
  /// TrainingStep). The fidelity is the session's (SessionOptions::fidelity).
  platform::SimulationMode mode = platform::SimulationMode::symmetric;
  /// Per accelerator: compute speed over time relative to nominal (a constant 0.9: a straggler
  /// 10 % slow); empty: all nominal. Needs full mode.
  std::vector<engine::Profile> accelerator_speed{};
  /// The accelerator's memory hierarchy (host-link transfers of offloading); nullptr: none.
  const models::MemoryHierarchy* memory = nullptr;
  /// The memory pools of offload.target: pool (nullptr: none).
  const platform::MemoryPoolSpec* memory_pool = nullptr;
  /// Clock fraction every accelerator runs at because the power limit throttles it
  /// (power.apply_throttling), in (0, 1]: compute kernels take 1 / throttle as long.
  double throttle = 1.0;
  /// Full mode: the kernel, host and network variability this step draws (its `iteration`'s
  /// draws from `seed`, step_variability.hpp); none by default. Symmetric mode simulates the
  /// nominal step and draws in its replays (step_iterations.hpp).
  platform::VariabilitySpec variability{};
  int iteration = 0;
  /// Keep the start and end of every task of instance 0 (what a replay of the step needs).
  bool record_task_times = false;
  /// Only the step time is read (TrainingStep::step_time_s; iterations): no time breakdown is
  /// kept, and the session records no link utilisation.
  bool step_time_only = false;

  /// The job's accelerator count: `accelerators`, or the topology's when 0.
  int job_accelerators() const { return accelerators > 0 ? accelerators : topology.accelerator_count(); }
};

/// The setup of `workload` on `platform` within `allocation`, with `options`' mode and seed: the platform's models, compute sharing and accelerator speeds, and the placement
/// (a scattered placement stays inside the allocation's nodes). Throws ConfigError for a
/// scattered placement of an allocation of partial nodes.
TrainingSetup training_setup(const TrainingWorkload& workload, const platform::Platform& platform,
                             const platform::Allocation& allocation, const platform::SessionOptions& options);

/// Rank -> accelerator map of `placement` over `nodes` nodes of `per_node` accelerators
/// (platform_spec.hpp defines it): empty for packed (the identity); for scattered, rank
/// r -> (r mod nodes) x per_node + floor(r / nodes). Throws ConfigError for nodes or
/// per_node < 1.
std::vector<int> placement_map(platform::Placement placement, int nodes, int per_node);

/// Checks the split against the model, batch and topology; throws ConfigError naming the
/// values (SimulationError for features not implemented yet).
void validate_training_setup(const TrainingSetup& setup);

/// Per-tier utilisation of `topology`'s directed links: link bytes / (bytes_per_s x
/// step_time_s), mean and max per tier, tiers in increasing order; with `series` (the run's
/// utilisation over time, from time 0) also each tier's peaks over [0, step_time_s). Throws
/// ConfigError if step_time_s is not > 0 or `traffic` does not cover every link.
std::vector<TierUtilisation> tier_utilisation(const topologies::Topology& topology,
                                              const topologies::LinkTraffic& traffic, double step_time_s,
                                              const topologies::TierUtilisationSeries* series = nullptr);

/// `series` up to (not including) `end_ps`: the samples before it.
topologies::TierUtilisationSeries series_until(const topologies::TierUtilisationSeries& series, engine::TimePs end_ps);

/// ZeRO-3 with list-form all-gathers (ParallelismConfig::zero3_list_gathers): the time of the
/// copies after one all-gather of `bytes` over `ranks`: one copy kernel per rank, each moving
/// bytes / ranks out of the flat buffer (ComputeModel::elementwise, launch included). 0 when
/// the setting is off.
double zero3_gather_copies_s(const TrainingSetup& setup, double bytes, std::size_t ranks);

/// The costed per-micro-batch program of every pipeline stage.
std::vector<StageProgram> build_stage_programs(const TrainingSetup& setup);

/// The footprint inputs of a training workload (precision sets the activation and weight
/// bytes; sequence parallelism counts only with tp > 1).
models::FootprintInputs footprint_inputs(const TrainingWorkload& workload);

/// The modelling assumptions a step's result notes (one line each), true for the run that
/// produced it: the simulation mode, how the TP collectives sit beside the compute
/// (tp_comm_overlap, tp_async_backward, sequence parallelism), the FLOP convention, and when
/// the data-parallel collectives run (ZeRO stage, overlap_grad_reduce).
std::vector<std::string> assumption_notes(const TrainingWorkload& workload, platform::SimulationMode mode);

/// Fills tokens/s, FLOPs per step, TFLOP/s per GPU, MFU and HFU from `result.step_time_s`.
void fill_step_metrics(const TrainingSetup& setup, const std::vector<StageProgram>& programs,
                       TrainingResult& result);

}  // namespace clustersim::training
