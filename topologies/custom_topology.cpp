#include "topologies/custom_topology.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "topologies/routing.hpp"

namespace clustersim::topologies {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

bool parse_double(std::string_view text, double& value) {
  const std::string copy(text);
  if (copy.empty()) return false;
  char* end = nullptr;
  value = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(value);
}

/// -1: a switch name; -2: "gpu" + digits but out of range; otherwise the accelerator index.
long accelerator_index(std::string_view name, int accelerators) {
  if (name.size() < 4 || name.substr(0, 3) != "gpu") return -1;
  long index = 0;
  for (const char c : name.substr(3)) {
    if (c < '0' || c > '9') return -1;
    index = std::min<long>(index * 10 + (c - '0'), 1L << 40);
  }
  return index < accelerators ? index : -2;
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::vector<EdgeListCable> parse_edge_list(std::string_view text, const std::string& file_name,
                                           int accelerators) {
  std::vector<EdgeListCable> cables;
  std::vector<std::string> problems;
  int line_number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> fields;
    std::string_view rest = line;
    for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos;) {
      fields.push_back(trim(rest.substr(0, comma)));
      rest = rest.substr(comma + 1);
    }
    fields.push_back(trim(rest));
    auto problem = [&](const std::string& what) {
      problems.push_back(fmt::format("{}:{}: {}", file_name, line_number, what));
    };
    if (fields.size() != 4) {
      problem(fmt::format("expected 4 comma-separated fields a,b,bytes_per_s,latency_s, got {}",
                          fields.size()));
      continue;
    }
    EdgeListCable cable{std::string(fields[0]), std::string(fields[1]), 0, 0, line_number};
    bool ok = true;
    for (const std::string& name : {cable.a, cable.b}) {
      if (!valid_name(name)) {
        problem(fmt::format("bad vertex name '{}' (letters, digits, '_', '.', '-')", name));
        ok = false;
      } else if (accelerator_index(name, accelerators) == -2) {
        problem(fmt::format("unknown vertex '{}': the cluster has accelerators gpu0..gpu{}", name,
                            accelerators - 1));
        ok = false;
      }
    }
    if (ok && cable.a == cable.b) {
      problem(fmt::format("cable from '{}' to itself", cable.a));
      ok = false;
    }
    if (!parse_double(fields[2], cable.bytes_per_s) || cable.bytes_per_s <= 0) {
      problem(fmt::format("bandwidth '{}' must be a number of bytes/s > 0", fields[2]));
      ok = false;
    }
    if (!parse_double(fields[3], cable.latency_s) || cable.latency_s < 0) {
      problem(fmt::format("latency '{}' must be a number of seconds >= 0", fields[3]));
      ok = false;
    }
    if (ok) cables.push_back(std::move(cable));
  }
  if (!problems.empty()) {
    std::string message = problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
    throw ConfigError(message);
  }
  return cables;
}

DirectNetwork build_custom(NetworkGraph& graph, const ClusterNetworkSpec& spec) {
  const std::string& file = spec.scale_out.custom_file;
  if (file.empty()) throw ConfigError("custom topology needs an edge-list file (scale_out.custom_file)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("cannot read custom topology file '{}'", file));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const int n = spec.nodes * spec.accelerators_per_node;
  const std::vector<EdgeListCable> cables = parse_edge_list(buffer.str(), file, n);

  DirectNetwork network;
  const int first = graph.vertex_count();
  for (int a = 0; a < n; ++a) {
    network.accelerator_vertex.push_back(graph.add_vertex(VertexKind::accelerator, a / spec.accelerators_per_node, 0));
  }
  // Looked up, never iterated: the vertex order is the order of first appearance.
  std::map<std::string, int> switch_vertex;
  auto vertex_of = [&](const std::string& name) {
    const long index = accelerator_index(name, n);
    if (index >= 0) return first + static_cast<int>(index);
    auto it = switch_vertex.find(name);
    if (it == switch_vertex.end()) {
      it = switch_vertex.emplace(name, graph.add_vertex(VertexKind::switch_, -1, 1)).first;
      network.switch_names.push_back(name);
    }
    return it->second;
  };
  for (const EdgeListCable& cable : cables) {
    const int a = vertex_of(cable.a);
    const int b = vertex_of(cable.b);
    graph.add_cable(a, b, cable.bytes_per_s, cable.latency_s, 1);
  }
  network.switch_count = static_cast<std::int64_t>(switch_vertex.size());

  // Every accelerator must be reachable from gpu0.
  std::vector<std::vector<int>> neighbours(static_cast<std::size_t>(graph.vertex_count()));
  for (const Link& link : graph.links()) neighbours[static_cast<std::size_t>(link.from)].push_back(link.to);
  std::vector<char> seen(neighbours.size(), 0);
  std::vector<int> frontier{first};
  seen[static_cast<std::size_t>(first)] = 1;
  while (!frontier.empty()) {
    const int v = frontier.back();
    frontier.pop_back();
    for (const int w : neighbours[static_cast<std::size_t>(v)]) {
      if (!seen[static_cast<std::size_t>(w)]) {
        seen[static_cast<std::size_t>(w)] = 1;
        frontier.push_back(w);
      }
    }
  }
  std::vector<std::string> unreachable;
  for (int a = 1; a < n; ++a) {
    if (!seen[static_cast<std::size_t>(first + a)]) unreachable.push_back(fmt::format("gpu{}", a));
  }
  if (!unreachable.empty()) {
    std::string names;
    for (std::size_t i = 0; i < unreachable.size() && i < 8; ++i) names += (i > 0 ? ", " : "") + unreachable[i];
    if (unreachable.size() > 8) names += fmt::format(" and {} more", unreachable.size() - 8);
    throw ConfigError(fmt::format("{}: accelerators not connected to gpu0: {}", file, names));
  }
  network.router = std::make_unique<SwitchRouter>(graph, first);
  network.bisection_bytes_per_s = -1;  // computed on demand by max-flow
  network.diameter_hops = -1;          // computed on demand by BFS
  return network;
}

}  // namespace clustersim::topologies
