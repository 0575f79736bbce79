#pragma once
// Helpers shared by the config tests.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/config/config_tree.hpp"

namespace clustersim::config::testing {

/// `yaml` parsed as file "t.yaml"; it must have no syntax problems.
inline ConfigNode parse_ok(const std::string& yaml) {
  std::vector<Diagnostic> diagnostics;
  ConfigNode node = parse_config(yaml, "t.yaml", diagnostics);
  REQUIRE(diagnostics.empty());
  return node;
}

}  // namespace clustersim::config::testing
