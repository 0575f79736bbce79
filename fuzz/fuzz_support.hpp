#pragma once
// Shared by the fuzz targets (fuzz/targets/*.cpp): an input either parses or is rejected with
// one of the project's errors carrying a message; anything else (another exception, a crash, a
// sanitizer report, a hang, a runaway allocation) is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "sim/engine/error.hpp"

namespace clustersim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `parse`; a clustersim::Error is the expected rejection and must say something. Other
/// exceptions propagate: libFuzzer and the replay driver report them as crashes.
template <typename Parse>
void expect_parse_or_error(Parse&& parse) {
  try {
    parse();
  } catch (const clustersim::Error& error) {
    if (std::string_view(error.what()).empty()) {
      std::fputs("fuzz: an input was rejected with an empty message\n", stderr);
      std::abort();
    }
  }
}

}  // namespace clustersim::fuzz
