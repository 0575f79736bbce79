// Unit-carrying values ("400 Gb/s", "80 GiB", "1.5 us"), in every dimension.
#include "fuzz/fuzz_support.hpp"
#include "sim/config/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using clustersim::config::Dimension;
  for (Dimension dimension : {Dimension::bytes, Dimension::bytes_per_s, Dimension::seconds,
                              Dimension::flops_per_s, Dimension::watts, Dimension::joules}) {
    clustersim::fuzz::expect_parse_or_error(
        [&] { (void)clustersim::config::parse_quantity(clustersim::fuzz::as_text(data, size), dimension); });
  }
  return 0;
}
