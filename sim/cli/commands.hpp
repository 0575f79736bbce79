#pragma once
/// The `clustersim` subcommands. Each writes its output to `out` and returns an exit code;
/// errors propagate as clustersim::Error for `main` to report.
#include <ostream>
#include <string>
#include <vector>

namespace clustersim::cli {

/// The simulator's version (`--version`, manifests).
inline constexpr const char* kVersion = "0.1.0";

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;  ///< "key.path=value"
  std::string format = "table";        ///< table | json | csv
  std::string out_dir;                 ///< when set, result.json is written there
  std::string trace;                   ///< when set, the Chrome trace JSON is written there
  std::string trace_ranks;             ///< "0-7,12": accelerators the trace keeps (empty: all)
  std::string trace_window;            ///< "0:5ms": the time window the trace keeps (empty: all)
  std::string export_chakra;           ///< a folder: the training step as Chakra traces, one per rank
};

/// `clustersim import KIND FILE...`: benchmark tools' outputs as validation CSV rows.
struct ImportOptions {
  std::string kind;                 ///< vllm-bench, sglang-bench, nccl-tests
  std::vector<std::string> files;   ///< the tool's output files
  std::vector<std::string> fields;  ///< column=value for every row (what the files do not state)
  std::string out;                  ///< the CSV file to write; empty: stdout
};
int import_command(const ImportOptions& options, std::ostream& out);

struct ValidateOptions {
  std::string dataset;
  std::string format = "table";
  /// Row id: print the scenario YAML that row maps to (or why it is skipped) instead of
  /// validating, so the row can be run, inspected and varied with `clustersim run`.
  std::string scenario_row;
  /// Training rows: a scenario file whose cluster, network and presets every row runs on,
  /// instead of the system its source or gpu_type names.
  std::string base;
  /// A calibration table every row also runs on; the report gives each row's and source's error
  /// on the default tables and on it.
  std::string calibration;
  int threads = 0;  ///< training simulations at once (0: every core)
};

/// `clustersim collective`: an nccl-tests-style sweep on a scenario's cluster, or (with
/// `compare` set) the comparison with measured nccl-tests curves.
struct CollectiveOptions {
  std::string scenario;                ///< required unless `compare` is set
  std::vector<std::string> overrides;  ///< "key.path=value"
  std::string op = "all-reduce";
  std::string algorithm = "auto";
  std::string min_size = "8";          ///< bytes, with optional K/M/G (x1024, as nccl-tests)
  std::string max_size = "8G";
  double factor = 2;
  int ranks = 0;                       ///< 0: the first node's accelerators
  std::string fidelity;  ///< analytical | flow; empty: the scenario's simulation.fidelity
  std::string format = "table";        ///< table | json
  std::string compare;                 ///< CSV of measured nccl-tests rows
};

/// Bytes of an nccl-tests size argument: a number with an optional K, M or G suffix
/// (powers of 1024, as nccl-tests' -b/-e). Throws ConfigError for anything else.
double parse_size_bytes(const std::string& text);

/// `clustersim ops`: one pipeline stage's costed per-micro-batch program.
struct OpsOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  int stage = 0;
  std::string format = "table";
};

int collective_command(const CollectiveOptions& options, std::ostream& out);
int ops_command(const OpsOptions& options, std::ostream& out);
int run_command(const RunOptions& options, std::ostream& out);
/// `clustersim compare A B`: each a scenario file (simulated here) or a `run --out` folder.
/// `compare A [B] [--set-a K=V]... [--set-b K=V]...`: B defaults to A, so one scenario can be
/// put beside itself with other settings (two kernel stacks on the same hardware).
struct CompareOptions {
  std::string a, b;
  std::vector<std::string> set_a, set_b;
};
int compare_command(const CompareOptions& options, std::ostream& out);
int list_command(const std::string& kind, std::ostream& out);
int describe_command(const std::string& name, std::ostream& out);
int validate_command(const ValidateOptions& options, std::ostream& out);
int docs_command(const std::string& name, std::ostream& out);

}  // namespace clustersim::cli
