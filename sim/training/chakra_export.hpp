#pragma once
/// A training step written out as MLCommons Chakra execution traces, one file per rank
/// (`clustersim run --export-chakra DIR`; docs/chakra.md): each rank's kernels, host dispatch,
/// collectives and pipeline sends with their dependencies, so that ASTRA-sim (or ClusterSim's
/// own trace workload) can run the same step.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/training/step_graph.hpp"
#include "sim/training/training_simulation.hpp"

namespace clustersim::training {

/// What was written.
struct ChakraExport {
  std::vector<std::filesystem::path> files;           ///< PREFIX.r.et, r = the job's accelerator index
  std::filesystem::path groups_file;                  ///< PREFIX.groups.json: pg_name -> ranks
  std::map<std::string, std::vector<int>> groups;     ///< the same; pg_names are numbers from "1"
  std::size_t nodes = 0;                              ///< over every file
  /// The network dimensions each collective's involved_dim refers to, ASTRA-sim's npus_count of
  /// a multi-node HGX configuration: [accelerators per scale-up domain, domains]; empty when
  /// the job does not fill whole domains.
  std::vector<int> dimensions;
  std::size_t collectives = 0;      ///< collective nodes over every file
  std::size_t with_dimensions = 0;  ///< of them, those whose group is whole dimensions (involved_dim written)
};

/// Writes `step` (built for `setup`, either mode: the stages' streams, kernels with their
/// durations, FLOPs and bytes, and every collective's group from GroupCollective) as one
/// Chakra file per rank of the job into `dir` (created), named `name`.r.et, and the process
/// groups as `name`.groups.json (ASTRA-sim's communicator-group format: {"pg_name": [ranks]}).
/// Rank r is the job's accelerator r (the placement applied). A stream's order becomes control
/// dependencies; a pipeline send becomes a send on its stage's ranks and a receive on the next
/// stage's, which the receiving stage's ops depend on; host dispatch (release times) becomes a
/// chain of host nodes of host_op_time each. A collective whose group is whole network
/// dimensions (ChakraExport::dimensions: one scale-up domain, the same position in every
/// domain, or everyone) also carries ASTRA-sim's involved_dim, so that ASTRA-sim can run it
/// over its multi-dimensional network without a communicator group. Throws ConfigError for
/// what Chakra cannot say here (offloading transfers).
ChakraExport export_chakra(const StepGraph& step, const TrainingSetup& setup, const std::filesystem::path& dir,
                           const std::string& name);

}  // namespace clustersim::training
