#include "sim/report/output_paths.hpp"

#include <fmt/format.h>

#include <fstream>
#include <string>
#include <system_error>

#include "sim/engine/error.hpp"

namespace clustersim::report {

namespace fs = std::filesystem;

namespace {

/// Makes `dir` and probes it with a file; why that failed, or "" when it is usable.
std::string dir_problem(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    return fmt::format("cannot create the folder {} ({})", dir.string(),
                       error ? error.message() : "a file of that name exists");
  }
  const fs::path probe = dir / ".clustersim-write-test";
  {
    std::ofstream file(probe);
    if (!file) return fmt::format("the folder {} is not writable", dir.string());
  }
  fs::remove(probe, error);
  return "";
}

}  // namespace

void prepare_output_dir(const fs::path& dir, std::string_view option) {
  if (const std::string problem = dir_problem(dir); !problem.empty()) {
    throw ConfigError(fmt::format("{} {}: {}", option, dir.string(), problem));
  }
}

void check_output_file(const fs::path& file, std::string_view option) {
  std::string problem = file.has_parent_path() ? dir_problem(file.parent_path()) : "";
  std::error_code error;
  if (problem.empty() && fs::is_directory(file, error)) problem = "it is a folder";
  if (!problem.empty()) throw ConfigError(fmt::format("{} {}: cannot write the file: {}", option, file.string(), problem));
}

}  // namespace clustersim::report
