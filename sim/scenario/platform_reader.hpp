#pragma once
/// What the platform's declarations cannot say by themselves: the accelerator preset the
/// cluster names, keys whose default is another key's value (scale-up bandwidth, NICs per
/// node), keys a topology requires, rules between keys, and settings another layer overrides
/// (warnings). The declarations (scenario_schema.hpp) have already set every written key.
#include <filesystem>

#include "sim/config/config_tree.hpp"
#include "sim/config/problems.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/platform/resource_limits.hpp"

namespace clustersim::scenario {

/// Completes `platform` as read by the declarations from `root` (presets merged): resolves
/// the accelerator, derives the defaults that depend on other keys, checks the cluster's rules
/// (and builds its network once to surface the topology's own problems), the price basis, and
/// warns about overrides without effect. A network that would need more memory than `limits`
/// allow is refused (at cluster.nodes) before it is built. Returns false when the accelerator
/// is unknown or has problems (the workloads then skip their checks against it).
bool complete_platform(const config::ConfigNode& root, const std::filesystem::path& data_dir,
                       platform::PlatformSpec& platform, const platform::ResourceLimits& limits,
                       config::Problems& problems);

}  // namespace clustersim::scenario
