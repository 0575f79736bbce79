#pragma once
/// The `clustersim` subcommands. Each writes its output to `out` and returns an exit code;
/// errors propagate as clustersim::Error for `main` to report.
#include <ostream>
#include <string>
#include <vector>

namespace clustersim::cli {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;  ///< "key.path=value"
  std::string format = "table";        ///< table | json
  std::string out_dir;                 ///< when set, result.json is written there
};

struct ValidateOptions {
  std::string dataset;
  std::string format = "table";
};

int run_command(const RunOptions& options, std::ostream& out);
int list_command(const std::string& kind, std::ostream& out);
int describe_command(const std::string& name, std::ostream& out);
int validate_command(const ValidateOptions& options, std::ostream& out);
int docs_command(const std::string& name, std::ostream& out);

}  // namespace clustersim::cli
