#pragma once
/// What a parallelism search ranks by.
#include <string_view>

namespace clustersim::sweep {

/// `throughput`: tokens/s, higher first. `cost`: dollars per million tokens, lower first (needs
/// the scenario's `cost` block). `energy`: joules per token, lower first (needs the
/// accelerator's power.tdp).
enum class Objective { throughput, cost, energy };

/// Parses "throughput" | "cost" | "energy"; throws ConfigError listing the valid names.
Objective parse_objective(std::string_view name);
/// The name parse_objective() accepts.
const char* objective_name(Objective objective);
/// Unit of the objective's value ("tokens/s", "USD/Mtoken", "J/token").
const char* objective_unit(Objective objective);

}  // namespace clustersim::sweep
