#pragma once
/// The data-parallel parts of a pipeline stage: each set of parameters that reduces together
/// over one group, with its ZeRO sharding. Written once; the step graph (step_graph.cpp) turns
/// a part into collectives on streams, its closed form (analytical_step.cpp) costs the same
/// collectives, and the memory footprint shards by the same models::ZeroSharding.
#include <vector>

#include "models/llm/zero_sharding.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/training_config.hpp"

namespace clustersim::training {

/// One set of parameters reduced over one group.
struct DataParallelPart {
  /// The routed experts (MoE; over the expert-data-parallel group, on their own streams as
  /// Megatron-Core keeps separate expert buffers), else the dense parameters.
  bool experts = false;
  std::vector<int> group;         ///< the representative's group (global ranks, ring order)
  models::ZeroSharding sharding;  ///< the ZeRO stage over that group
  /// Parameters per rank of each unit (embedding, each layer of each chunk, head; forward
  /// order), 0 for units without parameters of this part.
  std::vector<double> units;
  /// ZeRO-3: each unit's collective shares (per parameter tensor); empty: one per unit.
  std::vector<std::vector<double>> unit_shares;
  double stage_parameters = 0;  ///< per rank, the whole stage
  /// Bytes per parameter the parameter all-gathers move for each unit: the working precision,
  /// or 1 for the layers' weights with FP8 primary weights (workload.fp8_params: Megatron-Core
  /// --fp8-param-gather gathers them as fp8); the embedding and head stay in the working
  /// precision.
  std::vector<double> unit_gather_bytes;

  /// Bytes the parameter all-gather of units `units` (indices into `units`) moves per rank.
  template <typename Indices>
  double gather_bytes(const Indices& unit_indices) const {
    double bytes = 0;
    for (const auto u : unit_indices) {
      const auto i = static_cast<std::size_t>(u);
      bytes += units[i] * unit_gather_bytes[i];
    }
    return bytes;
  }
  /// Bytes the parameter all-gather of the whole stage moves per rank.
  double stage_gather_bytes() const {
    double bytes = 0;
    for (std::size_t i = 0; i < units.size(); ++i) bytes += units[i] * unit_gather_bytes[i];
    return bytes;
  }
};

/// The stage's parts whose group has two ranks or more (a group of one reduces nothing): the
/// dense parameters over the gradient group (dp x cp ranks of the same tensor-parallel shard),
/// then the routed experts over the expert gradient group (dp x cp / ep ranks).
std::vector<DataParallelPart> data_parallel_parts(const TrainingWorkload& workload, const StageProgram& program,
                                                  const RankLayout& layout);

}  // namespace clustersim::training
