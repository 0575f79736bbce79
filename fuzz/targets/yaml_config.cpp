// The YAML layer under every scenario: parse_config turns text into the position-carrying tree
// (a syntax error is a diagnostic, never an exception of yaml-cpp's).
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "sim/config/config_tree.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_parse_or_error([&] {
    std::vector<clustersim::config::Diagnostic> diagnostics;
    (void)clustersim::config::parse_config(clustersim::fuzz::as_text(data, size), "fuzz.yaml", diagnostics);
  });
  return 0;
}
