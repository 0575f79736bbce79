#pragma once
// Runs the `clustersim` binary the tests were built with and captures its output, for the
// end-to-end tests of the CLI subcommands (the command code lives in the executable).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace clustersim::cli_testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs a shell command line, stderr with stdout.
inline CommandResult run_command(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline CommandResult run_clustersim(const std::string& arguments) {
  return run_command(std::string(CLUSTERSIM_BINARY) + " " + arguments);
}

}  // namespace clustersim::cli_testing
