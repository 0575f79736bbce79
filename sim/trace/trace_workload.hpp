#pragma once
/// The `trace` workload kind: a Chakra execution trace (one file per rank, or one file every
/// rank runs) simulated on the platform. Compute nodes are costed by the platform's calibrated
/// compute model from their FLOPs, bytes and kernel names (or take their recorded durations),
/// collectives and sends run as the platform's communication on its network (contending with
/// every other workload's), and the trace's data and control dependencies are the executor's
/// edges. docs/chakra.md says how each node is read.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/accelerator/dtype.hpp"
#include "sim/config/name_table.hpp"
#include "sim/exec/executor.hpp"
#include "sim/platform/workload.hpp"
#include "sim/trace/chakra_trace.hpp"

namespace clustersim::trace {

/// How a compute node's time is found.
enum class ComputeCosting {
  model,     ///< the compute model, from num_ops, tensor_size and the kernel name
  recorded,  ///< the node's duration_micros, as recorded
};
const config::NameTable<ComputeCosting>& compute_costing_names();

/// A process group: the ranks (of the trace) a pg_name's collectives span.
struct ProcessGroup {
  std::vector<int> ranks;
  bool operator==(const ProcessGroup&) const = default;
};

/// The settings.
class TraceSpec final : public platform::WorkloadSpec {
 public:
  /// A trace file every rank runs (`X.et`), or the prefix of one file per rank
  /// (`X` -> X.0.et, X.1.et, ..., Chakra's and ASTRA-sim's naming).
  std::string trace;
  /// Ranks a single file is run by (0: every accelerator of the allocation); with one file per
  /// rank, the files found.
  int ranks = 0;
  ComputeCosting compute = ComputeCosting::model;
  models::Dtype dtype = models::Dtype::bf16;  ///< the format GEMM-named compute nodes run in (model costing)
  std::map<std::string, ProcessGroup> groups;  ///< pg_name -> ranks; a collective without one spans every rank
  /// A JSON file of more groups, {"pg_name": [ranks]} (ASTRA-sim's communicator groups; what
  /// `--export-chakra` writes); empty: none.
  std::string groups_file;

  std::string_view kind() const override { return "trace"; }
  /// The ranks a single file is run by: `ranks`, or `accelerators` when it is 0.
  int ranks_or(int accelerators) const;
  /// Reads the files and builds the run. Throws ConfigError naming the file and node for a
  /// trace it cannot run (a dependency on no node, a send without its receive, a collective
  /// some ranks of its group lack, more ranks than accelerators, ...).
  std::unique_ptr<platform::Workload> instantiate(const platform::Platform& platform,
                                                  const platform::Allocation& allocation,
                                                  const platform::SessionOptions& options) const override;
};

/// The trace files of `spec.trace`: the file itself (run by every rank), or PREFIX.0.et ...
/// PREFIX.N-1.et (one per rank; N: the consecutive ranks found from 0). Throws ConfigError when
/// neither exists.
struct TraceFiles {
  std::vector<std::filesystem::path> files;
  bool per_rank = false;  ///< one file per rank (a prefix), not one file every rank runs
};
TraceFiles trace_files(const std::string& trace);

/// The groups of a groups file: {"pg_name": [ranks]}. Throws ConfigError naming the file.
std::map<std::string, ProcessGroup> read_groups_file(const std::string& file);

/// The running trace: one task graph (a compute and a host stream per rank, a stream per
/// process group and per sending pair), run once.
class TraceWorkload final : public platform::Workload {
 public:
  TraceWorkload(const TraceSpec& spec, const platform::Platform& platform, const platform::Allocation& allocation,
                std::vector<ChakraTrace> ranks, std::vector<std::filesystem::path> files,
                std::map<std::string, ProcessGroup> groups);
  ~TraceWorkload() override;
  void start(platform::Session& session, std::function<void()> on_done) override;
  /// Metrics: step time (the trace's makespan), nodes, compute / collective / send nodes,
  /// compute time of the busiest rank, bytes communicated.
  std::unique_ptr<platform::WorkloadResult> finish(platform::Session& session) override;

 private:
  struct Build;
  void build(platform::Session& session);
  exec::TaskId add_compute(Build& b, int rank, const ChakraNode& node);
  exec::TaskId add_collective(Build& b, platform::Session& session, int rank, const ChakraNode& node,
                              const std::string& where);
  exec::TaskId add_transfer(Build& b, platform::Session& session, int rank, const ChakraNode& node,
                            const std::string& where);
  const std::vector<int>& group_of(const Build& b, const std::string& pg, const std::string& where) const;
  void check_matched(const Build& b) const;
  /// `work`, slowing its ranks' compute to the sharing rate while it runs.
  exec::Work sharing(exec::Work work, std::vector<int> ranks);

  const TraceSpec& spec_;
  const platform::Platform& platform_;
  platform::Allocation allocation_;
  std::vector<ChakraTrace> ranks_;
  std::vector<std::filesystem::path> files_;
  std::map<std::string, ProcessGroup> groups_;  ///< the spec's and its groups file's
  exec::TaskGraph graph_;
  std::unique_ptr<exec::Executor> executor_;
  std::function<void()> on_done_;
  std::vector<std::string> notes_;
  double compute_nodes_ = 0, collectives_ = 0, transfers_ = 0, bytes_ = 0;
  std::vector<double> compute_s_;  ///< per rank: the compute nodes' nominal time
  std::vector<int> communicating_;  ///< per rank: communications running
  double sharing_rate_ = 1.0;       ///< compute speed while a rank communicates
};

}  // namespace clustersim::trace
