#include "sim/scenario/preset_readers.hpp"

#include <algorithm>

#include "models/accelerator/accelerator_keys.hpp"
#include "models/llm/transformer_keys.hpp"
#include "models/power/power_model.hpp"

namespace clustersim::scenario {

models::AcceleratorSpec read_accelerator(const config::ConfigNode& entry, const std::string& path,
                                         const std::string& name, config::Problems& problems) {
  models::AcceleratorSpec spec;
  spec.name = name;
  models::accelerator_keys().read(entry, path, spec, problems);
  if (spec.display_name.empty()) spec.display_name = name;
  // The activity levels in order (idle <= wait <= memory <= compute), those it sets or derives.
  if (const auto levels = models::activity_power(spec, 0); levels && !problems.bad(path + ".power")) {
    try {
      levels->validate();
    } catch (const ConfigError& e) {
      problems.add(config::position_of(entry, "power"), path + ".power", e.what());
    }
  }
  return spec;
}

void set_accelerator(const models::AcceleratorSpec& accelerator, platform::ClusterSpec& cluster) {
  cluster.accelerator = accelerator;
  cluster.memory_levels = accelerator.memory_levels();
  cluster.host_link = accelerator.host_link;
}

models::TransformerSpec read_model(const config::ConfigNode& entry, const std::string& path, const std::string& name,
                                   config::Problems& problems) {
  models::TransformerSpec spec;
  spec.name = name;
  models::transformer_keys().read(entry, path, spec, problems);
  models::complete_transformer(entry, path, spec, problems);
  return spec;
}

std::string unknown_name_hint(const std::string& name, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return config::choices_hint("choices", names, config::closest_match(name, names));
}

}  // namespace clustersim::scenario
