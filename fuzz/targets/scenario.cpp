// The whole scenario loader: includes, library presets, schema, cross-checks.
#include "fuzz/fuzz_support.hpp"
#include "sim/scenario/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_parse_or_error([&] {
    (void)clustersim::scenario::load_scenario_from_string(clustersim::fuzz::as_text(data, size),
                                                          "fuzz.yaml");
  });
  return 0;
}
