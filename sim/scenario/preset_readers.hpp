#pragma once
/// Readers of library presets and their scenario overrides (already validated against their
/// schema): accelerators, models (Hugging Face fields), and the near-miss hint for unknown
/// preset names.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/accelerator/dtype.hpp"
#include "models/llm/transformer_spec.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/config/config_tree.hpp"
#include "sim/config/problems.hpp"
#include "sim/config/schema.hpp"

namespace clustersim::scenario {

/// The numeric formats a preset may give a peak for, with their names.
inline constexpr std::array<std::pair<const char*, models::Dtype>, 6> kPeakFormats{{
    {"fp32", models::Dtype::fp32}, {"tf32", models::Dtype::tf32}, {"bf16", models::Dtype::bf16},
    {"fp16", models::Dtype::fp16}, {"fp8", models::Dtype::fp8},   {"fp4", models::Dtype::fp4}}};


/// One accelerator entry (already validated). Names may contain dots ("llama-3.1-405b"), so
/// entries are read through their own node rather than by dotted path from the root.
models::AcceleratorSpec read_accelerator(const config::ConfigNode& entry, const std::string& name);

/// Memory levels and power figures of one accelerator entry (already validated) into `cluster`.
/// Optional levels exist only when both their capacity and bandwidth are given.
void read_memory_and_power(const config::ConfigNode& entry, const models::AcceleratorSpec& spec, platform::ClusterSpec& cluster);

/// One model entry at `path` ("models.NAME" or an inline "workload.model"), with the checks
/// between its mixture-of-experts and latent-attention keys.
models::TransformerSpec read_model(const config::ConfigNode& entry, const std::string& path, const std::string& name,
                                   config::Problems& problems);

/// "valid choices: ... | did you mean '...'?" over `names` (sorted, unique).
std::string unknown_name_hint(const std::string& name, std::vector<std::string> names);

}  // namespace clustersim::scenario
