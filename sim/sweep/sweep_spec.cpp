#include "sim/sweep/sweep_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "sim/config/problems.hpp"
#include "sim/config/schema.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::sweep {
namespace {

using config::ConfigEntry;
using config::ConfigNode;
using config::Diagnostic;
using config::Position;

const std::vector<std::string> kSweepKeys = {"grid", "zip", "sample", "seed", "pareto"};
const std::vector<std::string> kParetoKeys = {"maximize", "minimize"};

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string quote_if_needed(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_of(",:[]{}#\"'") == std::string::npos &&
                     text.front() != ' ' && text.back() != ' ';
  if (plain) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Checks that the keys of `node` are among `valid`, reporting each other one with the closest.
void check_keys(const ConfigNode& node, const std::vector<std::string>& valid, const std::string& prefix,
                config::Problems& problems) {
  for (const ConfigEntry& entry : node.entries) {
    if (std::find(valid.begin(), valid.end(), entry.key) != valid.end()) continue;
    problems.add(entry.key_position, prefix + "." + entry.key, "unknown key '" + entry.key + "'",
                 config::choices_hint("keys", valid, config::closest_match(entry.key, valid)));
  }
}

/// Reads one `key: [values]` of a grid or zip group into `axis`; false if it is not a list.
bool read_list(const ConfigEntry& entry, const std::string& where, config::Problems& problems,
               std::vector<config::ConfigNode>& values) {
  const std::string path = where + "." + entry.key;
  if (entry.key.rfind("sweep", 0) == 0 && (entry.key.size() == 5 || entry.key[5] == '.')) {
    problems.add(entry.key_position, path, "a sweep cannot vary its own block");
    return false;
  }
  if (!entry.value.is_sequence()) {
    problems.add(entry.value.position, path,
                 "expected a list of values, got " + entry.value.describe(), "write [v1, v2, ...]");
    return false;
  }
  if (entry.value.items.empty()) {
    problems.add(entry.value.position, path, "the list of values is empty");
    return false;
  }
  values = entry.value.items;
  return true;
}

}  // namespace

std::string render_flow(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::null: return "null";
    case ConfigNode::Kind::scalar: return quote_if_needed(node.text);
    case ConfigNode::Kind::sequence: {
      std::vector<std::string> items;
      for (const ConfigNode& item : node.items) items.push_back(render_flow(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case ConfigNode::Kind::mapping: {
      std::vector<std::string> items;
      for (const ConfigEntry& entry : node.entries) {
        items.push_back(quote_if_needed(entry.key) + ": " + render_flow(entry.value));
      }
      return fmt::format("{{{}}}", fmt::join(items, ", "));
    }
  }
  return "";
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

SweepSpec parse_sweep(const ConfigNode& block, const Position& block_position, std::uint64_t default_seed) {
  std::vector<Diagnostic> diagnostics;
  config::Problems problems(diagnostics);
  SweepSpec spec;
  spec.position = block_position;
  spec.sample_seed = default_seed;
  if (!block.is_mapping()) {
    problems.add(block.is_null() ? block_position : block.position, "sweep",
                 "expected a mapping with grid, zip, sample, seed or pareto, got " + block.describe());
    throw config::ScenarioError(diagnostics);
  }
  check_keys(block, kSweepKeys, "sweep", problems);
  std::set<std::string> swept;
  const auto note_key = [&](const ConfigEntry& entry, const std::string& path) {
    if (!swept.insert(entry.key).second) {
      problems.add(entry.key_position, path, "'" + entry.key + "' is varied twice in the sweep");
    }
  };
  if (const ConfigNode* grid = block.find("grid"); grid != nullptr) {
    if (!grid->is_mapping()) {
      problems.add(grid->position, "sweep.grid", "expected a mapping of key path -> list of values, got " +
                                                     grid->describe());
    } else {
      for (const ConfigEntry& entry : grid->entries) {
        note_key(entry, "sweep.grid." + entry.key);
        std::vector<ConfigNode> values;
        if (!read_list(entry, "sweep.grid", problems, values)) continue;
        SweepAxis axis;
        axis.keys = {entry.key};
        axis.key_positions = {entry.key_position};
        for (ConfigNode& value : values) axis.values.push_back({std::move(value)});
        spec.axes.push_back(std::move(axis));
      }
    }
  }
  if (const ConfigNode* zip = block.find("zip"); zip != nullptr) {
    if (!zip->is_sequence()) {
      problems.add(zip->position, "sweep.zip",
                   "expected a list of groups (each a mapping of key path -> list of values), got " + zip->describe());
    } else {
      for (std::size_t g = 0; g < zip->items.size(); ++g) {
        const ConfigNode& group = zip->items[g];
        const std::string where = fmt::format("sweep.zip[{}]", g);
        if (!group.is_mapping() || group.entries.empty()) {
          problems.add(group.position, where, "expected a mapping of key path -> list of values, got " +
                                                  group.describe());
          continue;
        }
        SweepAxis axis;
        bool ok = true;
        for (const ConfigEntry& entry : group.entries) {
          note_key(entry, where + "." + entry.key);
          std::vector<ConfigNode> values;
          if (!read_list(entry, where, problems, values)) {
            ok = false;
            continue;
          }
          if (!axis.keys.empty() && values.size() != axis.values.size()) {
            problems.add(entry.value.position, where + "." + entry.key,
                         fmt::format("a zip group's lists vary together, so they must be equally long: this one has "
                                     "{} values, '{}' has {}",
                                     values.size(), axis.keys.front(), axis.values.size()));
            ok = false;
            continue;
          }
          if (axis.keys.empty()) axis.values.resize(values.size());
          axis.keys.push_back(entry.key);
          axis.key_positions.push_back(entry.key_position);
          for (std::size_t i = 0; i < values.size(); ++i) axis.values[i].push_back(std::move(values[i]));
        }
        if (ok) spec.axes.push_back(std::move(axis));
      }
    }
  }
  if (const ConfigNode* sample = block.find("sample"); sample != nullptr) {
    const auto count = sample->is_scalar() ? config::parse_integer(sample->text) : std::nullopt;
    if (!count || *count < 1) {
      problems.add(sample->position, "sweep.sample", "expected a whole number >= 1 (points to draw), got " +
                                                         sample->describe());
    } else {
      spec.sample = *count;
    }
  }
  if (const ConfigNode* seed = block.find("seed"); seed != nullptr) {
    const auto value = seed->is_scalar() ? config::parse_integer(seed->text) : std::nullopt;
    if (!value || *value < 0) {
      problems.add(seed->position, "sweep.seed", "expected a whole number >= 0, got " + seed->describe());
    } else {
      spec.sample_seed = static_cast<std::uint64_t>(*value);
      if (!spec.sample) {
        problems.warn(seed->position, "sweep.seed", "has no effect without `sample` (it seeds the sample's draw)");
      }
    }
  }
  if (const ConfigNode* pareto = block.find("pareto"); pareto != nullptr) {
    if (!pareto->is_mapping()) {
      problems.add(pareto->position, "sweep.pareto",
                   "expected a mapping {maximize: COLUMN, minimize: COLUMN}, got " + pareto->describe());
    } else {
      check_keys(*pareto, kParetoKeys, "sweep.pareto", problems);
      for (const ConfigEntry& entry : pareto->entries) {
        if (!entry.value.is_scalar()) {
          problems.add(entry.value.position, "sweep.pareto." + entry.key,
                       "expected a result column name, got " + entry.value.describe());
        } else if (entry.key == "maximize") {
          spec.pareto.maximize = entry.value.text;
        } else if (entry.key == "minimize") {
          spec.pareto.minimize = entry.value.text;
        }
      }
    }
  }
  if (spec.axes.empty() && diagnostics.empty()) {
    problems.add(block.position, "sweep", "the sweep varies nothing: give `grid` or `zip` lists");
  }
  if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  if (!problems.warnings().empty()) throw config::ScenarioError(problems.warnings());
  return spec;
}

std::size_t product_size(const SweepSpec& spec) {
  std::size_t total = 1;
  for (const SweepAxis& axis : spec.axes) total *= axis.values.size();
  return total;
}

std::vector<std::size_t> sample_indices(std::size_t total, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> all(total);
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (count >= total) return all;
  // Partial Fisher-Yates with splitmix64 (not std::uniform_int_distribution, whose output
  // differs between standard libraries): the first `count` slots are the draw.
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(splitmix64(state) % (total - i));
    std::swap(all[i], all[j]);
  }
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

std::uint64_t point_seed(std::uint64_t base_seed, const std::string& id) {
  std::uint64_t state = base_seed ^ fnv1a(id);
  return splitmix64(state) >> 2;  // < 2^62, within simulation.seed's range
}

std::vector<SweepPoint> expand_points(const SweepSpec& spec, std::uint64_t base_seed) {
  const std::size_t total = product_size(spec);
  const std::vector<std::size_t> chosen =
      spec.sample ? sample_indices(total, static_cast<std::size_t>(*spec.sample), spec.sample_seed)
                  : sample_indices(total, total, 0);
  std::vector<SweepPoint> points;
  std::set<std::string> ids;
  for (std::size_t product_index : chosen) {
    SweepPoint point;
    point.index = points.size();
    // Mixed radix, the last axis fastest.
    std::vector<std::size_t> digit(spec.axes.size());
    std::size_t rest = product_index;
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      digit[a] = rest % spec.axes[a].values.size();
      rest /= spec.axes[a].values.size();
    }
    std::vector<std::string> lines;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const SweepAxis& axis = spec.axes[a];
      for (std::size_t k = 0; k < axis.keys.size(); ++k) {
        const ConfigNode& value = axis.values[digit[a]][k];
        const std::string text = render_flow(value);
        point.values.emplace_back(axis.keys[k], text);
        point.overrides.push_back({axis.keys[k], axis.key_positions[k], value, "sweep key '" + axis.keys[k] + "'"});
        lines.push_back(axis.keys[k] + "=" + text);
        if (axis.keys[k] == "simulation.seed") {
          point.seed_swept = true;
          const auto seed = value.is_scalar() ? config::parse_integer(value.text) : std::nullopt;
          point.seed = seed && *seed >= 0 ? static_cast<std::uint64_t>(*seed) : 0;  // a bad one: the loader says
        }
      }
    }
    // Sorted, so the ID does not depend on the order the keys are written in.
    std::sort(lines.begin(), lines.end());
    const std::string canonical = fmt::format("{}", fmt::join(lines, "\n"));
    point.id = fmt::format("{:016x}", fnv1a(canonical));
    if (!ids.insert(point.id).second) {
      throw ConfigError(fmt::format("{}: sweep: the point {{{}}} is listed twice (a value repeated in a list)",
                                    spec.position.to_string(), fmt::join(lines, ", ")));
    }
    if (!point.seed_swept) {
      point.seed = point_seed(base_seed, point.id);
      config::ConfigNode seed;
      seed.kind = ConfigNode::Kind::scalar;
      seed.text = std::to_string(point.seed);
      seed.position = spec.position;
      point.overrides.push_back({"simulation.seed", spec.position, seed, "the sweep's derived seed"});
    }
    points.push_back(std::move(point));
  }
  return points;
}

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto bad = [&] {
    return ConfigError(fmt::format("--shard must be i/N with 1 <= i <= N (e.g. 2/8), got '{}'", text));
  };
  if (slash == std::string::npos) throw bad();
  const auto index = config::parse_integer(text.substr(0, slash));
  const auto count = config::parse_integer(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *index < 1 || *index > *count || *count > 1000000) throw bad();
  return {static_cast<int>(*index), static_cast<int>(*count)};
}

bool in_shard(std::size_t index, const Shard& shard) {
  return index % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index - 1);
}

}  // namespace clustersim::sweep
