#pragma once
/// Kernel stacks (`simulation.kernel_stack`): what a software stack and release achieves on an
/// accelerator, as library files (models/data/stacks/NAME.yaml), each entry one accelerator's
/// efficiencies under that stack with the measurements they come from. A scenario naming a
/// stack runs every accelerator the stack covers with those efficiencies instead of its
/// preset's; the run's notes say which values changed and from what, an accelerator the stack
/// does not cover is a warning, and a value the scenario writes itself wins (a warning too).
/// "preset" (the default) keeps the accelerator presets as they are. docs/models.md "Kernel
/// stacks".
#include <filesystem>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/dtype.hpp"
#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/config/problems.hpp"

namespace clustersim::scenario {

/// The name of the default: the accelerator presets' own efficiencies.
inline constexpr const char* kPresetKernelStack = "preset";

/// One measured GEMM a stack entry's efficiencies come from (`measured:`).
struct StackMeasurement {
  models::Dtype dtype = models::Dtype::bf16;
  std::int64_t m = 0, n = 0, k = 0;
  double flops_per_s = 0;  ///< achieved, FLOP/s
  /// Further formats the row stands for (`also:`, an assumption the file states, e.g. fp16's
  /// rate for bf16 where only fp16 was measured).
  std::vector<models::Dtype> also;
  std::string row;         ///< the dataset row or result file it was read from
  config::Position position;
};

/// One accelerator under a stack.
struct StackEntry {
  std::string accelerator;
  std::string source;
  /// The accelerator-preset keys the stack sets as written (a mapping of efficiency,
  /// kernel_launch, attention), with their positions in the stack file.
  config::ConfigNode settings;
  /// The GEMMs measured under the stack: each format's `efficiency.matmul_<format>` is solved
  /// from them through the compute model (solve_matmul_efficiency; the median over the rows of
  /// the format), so the model costs them as measured.
  std::vector<StackMeasurement> measured;
};

struct KernelStack {
  std::string name;
  std::string display_name;
  std::string vendor;
  std::string release;
  std::string timing;  ///< how the measurements were timed
  /// The measurements ran with the clock settled at the power limit (`clock_settled`), so
  /// power.apply_throttling on top would count the limit twice (a warning).
  bool clock_settled = false;
  std::string file;
  std::vector<StackEntry> entries;

  const StackEntry* find(const std::string& accelerator) const;
  /// The covered accelerators, in file order.
  std::vector<std::string> accelerators() const;
};

/// The GEMM efficiency of the measurement's format at which the compute model of `spec` costs
/// it as measured (bisection; the model's time falls as the efficiency rises). Throws
/// ConfigError when the measurement is faster than the model at efficiency 1.
double solve_matmul_efficiency(models::AcceleratorSpec spec, const StackMeasurement& measured);

/// A library accelerator as its preset describes it and with a stack applied (what a scenario
/// naming the stack runs), for `clustersim describe STACK`. Throws ScenarioError for problems of
/// the preset or the stack.
struct StackedAccelerator {
  models::AcceleratorSpec preset;
  models::AcceleratorSpec stacked;
  std::vector<std::string> notices;  ///< what the stack changed, as a run's notes say it
};
StackedAccelerator stacked_accelerator(const std::string& stack, const std::string& accelerator,
                                       const std::filesystem::path& data_dir);

/// The library's stack names (file stems of DATA_DIR/stacks), sorted.
std::vector<std::string> kernel_stack_names(const std::filesystem::path& data_dir);

/// Reads DATA_DIR/stacks/NAME.yaml. Every problem (a missing or unknown key, a key a stack may
/// not set, a malformed measurement) is added to `problems` at its position in the file; the
/// stack is usable only when none was added.
KernelStack read_kernel_stack(const std::string& name, const std::filesystem::path& data_dir,
                              config::Problems& problems);

/// Applies `simulation.kernel_stack` to the merged preset entries of `root` (after
/// merge_library_presets): for each accelerator the scenario names (cluster.node.accelerator,
/// workload.pools.*.accelerator) the stack's settings replace the preset's, except settings the
/// scenario writes itself (a warning at them). An unknown stack is an error at the key; an
/// accelerator the stack does not cover a warning there; what changed a notice.
void apply_kernel_stack(config::ConfigNode& root, const std::filesystem::path& data_dir, config::Problems& problems);

}  // namespace clustersim::scenario
