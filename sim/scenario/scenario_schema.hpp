#pragma once
/// THE scenario schema: every key a scenario file may hold, with type, unit, default and help.
/// The loader validates against it and docs/scenario-reference.md is generated from it.
#include <string>
#include <vector>

#include "sim/scenario/schema.hpp"

namespace clustersim::scenario {

/// Fields of one accelerator preset (an entry of `accelerators:`; models/data/accelerators).
std::vector<Field> accelerator_preset_fields();
/// Fields of one model (an entry of `models:`, or an inline `workload.model`; Hugging Face
/// config.json names; models/data/llms).
std::vector<Field> model_fields();
/// The whole scenario schema (top level).
Schema scenario_schema();
/// The Markdown scenario reference (docs/scenario-reference.md).
std::string scenario_reference_markdown();

}  // namespace clustersim::scenario
