#pragma once
// Command-line arguments shared by every benchmark of the kernel suite.

#include <string>
#include <vector>

#include "calibration_csv.hpp"

namespace clustersim::kernels {

/// Options common to the suite's benchmarks.
struct BenchArgs {
  std::string out_path;      ///< CSV file to write (required: --out)
  std::string accelerator;   ///< library accelerator name (required: --accelerator)
  int warmup = 5;            ///< untimed warm-up executions per shape (--warmup, >= 0)
  int repeats = 30;          ///< timed repeats per shape (--repeats, >= 3)
  bool quick = false;        ///< a small subset of shapes (--quick), for smoke runs
  int seconds = 0;           ///< sustained_bench: length of the loop (--seconds, >= 1); 0: its default
  std::string shapes = "default";  ///< shape set (--shapes default|decode); see shape_sets()
  std::string source;        ///< row source text (--source); the tool name and date if empty
  CalibrationMetadata metadata;  ///< --meta key=value, in the order given
};

/// The shape sets --shapes accepts: "default" (the training shapes) and "decode" (LLM serving:
/// skinny GEMMs and one-query attention over a KV cache). Not every program has both.
const std::vector<std::string>& shape_sets();

/// The usage text for a benchmark called `program`.
std::string bench_usage(const std::string& program);

/// Parses argv[1..]: --out PATH, --accelerator NAME, --warmup N, --repeats N, --seconds N, --quick,
/// --shapes SET, --source TEXT, --meta KEY=VALUE (repeatable). Throws std::invalid_argument
/// naming the problem for unknown options, missing values, non-integer or out-of-range numbers,
/// unknown shape sets and missing required options.
BenchArgs parse_bench_args(const std::vector<std::string>& args);

}  // namespace clustersim::kernels
