#pragma once
// Output folders of one test process, removed when the process ends, and a file's text: what
// the sweep tests (threads, the farm, MPI) compare. The process ID keeps worktrees that run the
// suite at the same time apart.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace clustersim::testing {

class TempFolders {
 public:
  explicit TempFolders(const std::string& prefix) : prefix_(prefix + "-" + std::to_string(getpid()) + "-") {}
  TempFolders(const TempFolders&) = delete;
  TempFolders& operator=(const TempFolders&) = delete;
  ~TempFolders() {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), error)) {
      if (entry.path().filename().string().rfind(prefix_, 0) == 0) std::filesystem::remove_all(entry.path(), error);
    }
  }
  /// An empty (absent) folder `name` of this process.
  std::filesystem::path fresh(const std::string& name) const {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / (prefix_ + name);
    std::filesystem::remove_all(dir);
    return dir;
  }

 private:
  std::string prefix_;
};

/// The file's text ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace clustersim::testing
