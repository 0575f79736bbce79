#pragma once
/// Readers of library presets and their scenario overrides (already validated against their
/// declarations): accelerators, models (Hugging Face fields), and the near-miss hint for
/// unknown preset names.
#include <string>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/llm/transformer_spec.hpp"
#include "sim/config/config_tree.hpp"
#include "sim/config/problems.hpp"
#include "sim/platform/platform_spec.hpp"

namespace clustersim::scenario {

/// One accelerator entry at `path` ("accelerators.NAME"), read through
/// models::accelerator_keys(); its display name defaults to `name`. Names may contain dots
/// ("llama-3.1-405b"), so entries are read through their own node rather than by dotted path
/// from the root.
models::AcceleratorSpec read_accelerator(const config::ConfigNode& entry, const std::string& path,
                                         const std::string& name, config::Problems& problems);

/// Puts `accelerator` into `cluster` with what the platform derives from it: the memory
/// levels, the host link, and the accelerator's part of the power figures.
void set_accelerator(const models::AcceleratorSpec& accelerator, platform::ClusterSpec& cluster);

/// One model entry at `path` ("models.NAME" or an inline "workload.model"), read through
/// models::transformer_keys() and completed (models::complete_transformer).
models::TransformerSpec read_model(const config::ConfigNode& entry, const std::string& path, const std::string& name,
                                   config::Problems& problems);

/// "valid choices: ... | did you mean '...'?" over `names` (sorted, unique).
std::string unknown_name_hint(const std::string& name, std::vector<std::string> names);

}  // namespace clustersim::scenario
