#pragma once
/// Setting a parsed value at a dotted key path of a scenario tree, as `--set` does, but with
/// the value's own position: a sweep point's value keeps the file:line:column it is written at
/// in the `sweep:` block, so a bad key or value is reported there.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"

namespace clustersim::config {

/// Sets `value` at `key_path` in `root`. The key path must exist in `root`, or `is_known_path`
/// must accept it (then missing mappings are created). An unknown key becomes a diagnostic at
/// `key_position` naming `shown` (e.g. "sweep key 'cluster.nodez'") with the closest of the
/// keys `declared_keys` lists under its parent path (and of those written there).
void apply_node_override(
    ConfigNode& root, std::string_view key_path, const Position& key_position, const ConfigNode& value,
    const std::string& shown, std::vector<Diagnostic>& diagnostics,
    const std::function<bool(const std::vector<std::string>&)>& is_known_path = {},
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& declared_keys = {});

}  // namespace clustersim::config
