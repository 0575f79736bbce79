#pragma once
/// Output paths are checked before anything is simulated: a long run must not end in "cannot
/// write" after its results were computed (or printed).
#include <filesystem>
#include <string_view>

namespace clustersim::report {

/// Makes `dir` (and its parents) and checks that a file can be created in it. Throws
/// ConfigError naming `option` (the flag or key that named the folder, e.g. "--out") and the
/// folder, with the reason (a file of that name, a path under a file, no permission).
void prepare_output_dir(const std::filesystem::path& dir, std::string_view option);

/// Checks that `file` can be written: its folder is prepared (prepare_output_dir) and the file
/// itself is not a folder. Throws ConfigError naming `option` and the file.
void check_output_file(const std::filesystem::path& file, std::string_view option);

}  // namespace clustersim::report
