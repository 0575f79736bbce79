#pragma once
/// THE scenario schema: every key a scenario file may hold, with type, unit, default and help.
/// The loader validates against it and docs/scenario-reference.md is generated from it.
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/schema.hpp"

namespace clustersim::scenario {

/// Fields of one accelerator preset (an entry of `accelerators:`; models/data/accelerators).
std::vector<config::Field> accelerator_preset_fields();
/// Fields of one model (an entry of `models:`, or an inline `workload.model`; Hugging Face
/// config.json names; models/data/llms).
std::vector<config::Field> model_fields();
class WorkloadKinds;
struct WorkloadKind;

/// The `workload` (or a job's) mapping of `kind`: a `kind` key naming one of `kinds`, then the
/// kind's own keys.
/// `job`: a mapping of `jobs:` (its kind has no default and names a kind that can be a job);
/// else the primary workload (kind defaults to the first kind).
config::Field workload_field(const WorkloadKinds& kinds, const WorkloadKind& kind, std::string key, std::string help,
                     bool job);
/// The whole scenario schema (top level) for a primary workload of kind `primary_kind` (the
/// first of `kinds` when it names none of them). `jobs` entries are checked by the loader
/// against their own kind's fields.
config::Schema scenario_schema(const WorkloadKinds& kinds, std::string_view primary_kind);
/// The Markdown scenario reference (docs/scenario-reference.md): the schema with the first
/// kind's workload keys, then a section per other kind.
std::string scenario_reference_markdown(const WorkloadKinds& kinds);

}  // namespace clustersim::scenario
