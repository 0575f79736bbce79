// Custom topologies' edge lists (cluster.network.custom_file), for a 16-accelerator cluster.
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "topologies/custom_topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_parse_or_error([&] {
    (void)clustersim::topologies::parse_edge_list(clustersim::fuzz::as_text(data, size),
                                                  std::string("fuzz.edges"), 16);
  });
  return 0;
}
