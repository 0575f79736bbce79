#pragma once
/// THE scenario schema: every key a scenario file may hold, declared once (config::Declarations)
/// and bound to the member of the Scenario it sets. Topologies, accelerators, models, the
/// collective library, power and cost declare their own keys next to their structs
/// (topologies/topology_keys, models/*/..._keys); this file composes them with the platform's
/// and the run's keys. The loader validates against it and reads through it; `describe`,
/// docs/scenario-reference.md and the --set near-miss suggestions come from it.
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/declarations.hpp"
#include "sim/config/schema.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/scenario/scenario.hpp"

namespace clustersim::scenario {

class WorkloadKinds;
struct WorkloadKind;

/// Fields of one accelerator preset (an entry of `accelerators:`; models/data/accelerators):
/// models::accelerator_keys() and `base`.
std::vector<config::Field> accelerator_preset_fields();
/// Fields of one model (an entry of `models:`, or an inline `workload.model`; Hugging Face
/// config.json names; models/data/llms): models::transformer_keys() and `base`.
std::vector<config::Field> model_fields();

/// The keys of `cluster` (nodes, scale-up domain, scale-out network, placement, stragglers),
/// bound to platform::ClusterSpec; `node.accelerator` is read by the preset lookup.
const config::Declarations<platform::ClusterSpec>& cluster_keys();

/// The `workload` (or a job's) mapping of `kind`: a `kind` key naming one of `kinds`, then the
/// kind's own keys.
/// `job`: a mapping of `jobs:` (its kind has no default and names a kind that can be a job);
/// else the primary workload (kind defaults to the first kind).
config::Field workload_field(const WorkloadKinds& kinds, const WorkloadKind& kind, std::string key, std::string help,
                             bool job);
/// Every key of a scenario for a primary workload of kind `primary_kind` (the first of `kinds`
/// when it names none of them), bound to the Scenario; `workload`, `jobs`, `accelerators`,
/// `models`, `include` and `base` are declared for validation and docs and read by functions of
/// their own (kind dispatch, preset lookups, include resolution).
config::Declarations<Scenario> scenario_keys(const WorkloadKinds& kinds, std::string_view primary_kind);
/// The whole scenario schema (scenario_keys' fields, titled).
config::Schema scenario_schema(const WorkloadKinds& kinds, std::string_view primary_kind);
/// The Markdown scenario reference (docs/scenario-reference.md): the schema with the first
/// kind's workload keys, then a section per other kind.
std::string scenario_reference_markdown(const WorkloadKinds& kinds);

}  // namespace clustersim::scenario
