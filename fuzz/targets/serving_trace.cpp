// Serving request traces and empirical length files: both are read from a file, so the input
// goes to a temporary file of this process first.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "sim/serving/requests.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("clustersim-fuzz-trace-" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  clustersim::fuzz::expect_parse_or_error([&] { (void)clustersim::serving::read_trace(file); });
  clustersim::fuzz::expect_parse_or_error([&] { (void)clustersim::serving::read_length_table(file); });
  return 0;
}
