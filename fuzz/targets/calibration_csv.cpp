// Kernel calibration tables (docs/calibration-format.md).
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "models/accelerator/calibration_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_parse_or_error([&] {
    (void)clustersim::models::parse_calibration_csv(clustersim::fuzz::as_text(data, size),
                                                    std::string("fuzz.csv"));
  });
  return 0;
}
