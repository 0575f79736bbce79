#include "sim/training/chakra_export.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/trace/chakra_trace.hpp"
#include "sim/training/op_kind.hpp"
#include "sim/training/rank_layout.hpp"

namespace clustersim::training {
namespace {

using trace::ChakraCollective;
using trace::ChakraNode;
using trace::ChakraNodeType;

ChakraCollective chakra_collective(models::CollectiveKind kind, std::string_view label) {
  using K = models::CollectiveKind;
  switch (kind) {
    case K::all_reduce: return ChakraCollective::all_reduce;
    case K::all_gather: return ChakraCollective::all_gather;
    case K::reduce_scatter: return ChakraCollective::reduce_scatter;
    case K::all_to_all: return ChakraCollective::all_to_all;
    case K::broadcast: return ChakraCollective::broadcast;
    case K::reduce: return ChakraCollective::reduce;
    case K::send_recv: break;
  }
  throw ConfigError(fmt::format("--export-chakra: '{}' is a {} in a process group, which Chakra cannot say", label,
                                models::collective_name(kind)));
}

std::string_view dimension_name(GroupDimension dimension) {
  switch (dimension) {
    case GroupDimension::tensor: return "tp";
    case GroupDimension::context: return "cp";
    case GroupDimension::expert: return "ep";
    case GroupDimension::data: return "dp";
    case GroupDimension::expert_data: return "edp";
    case GroupDimension::pipeline: return "pp";
    case GroupDimension::none: return "none";
  }
  return "none";
}

/// The template's tasks by stage: which stage each stream belongs to, each task's prerequisites.
struct Template {
  std::vector<int> stage_of_stream;
  std::vector<std::vector<exec::TaskId>> prerequisites;
};

ChakraNode make_node(std::uint64_t id, std::string name, ChakraNodeType type) {
  ChakraNode node;
  node.id = id;
  node.name = std::move(name);
  node.type = type;
  return node;
}

Template index_template(const StepGraph& step) {
  Template t;
  t.stage_of_stream.assign(step.graph.stream_count(), -1);
  for (std::size_t p = 0; p < step.stages.size(); ++p) {
    for (const exec::StreamId s : step.stages[p].all) t.stage_of_stream[static_cast<std::size_t>(s)] = static_cast<int>(p);
    if (step.stages[p].host >= 0) t.stage_of_stream[static_cast<std::size_t>(step.stages[p].host)] = static_cast<int>(p);
  }
  t.prerequisites.resize(step.graph.task_count());
  for (const exec::Dependency& d : step.graph.dependencies()) {
    t.prerequisites[static_cast<std::size_t>(d.task)].push_back(d.prerequisite);
  }
  return t;
}

/// [accelerators per scale-up domain, domains] over the job's accelerators; empty when the job
/// does not fill whole domains.
std::vector<int> network_dimensions(const TrainingSetup& setup) {
  const int job = setup.job_accelerators();
  const int first = setup.topology.scale_up_domain_of(0);
  int domain = 0;
  while (domain < job && setup.topology.scale_up_domain_of(domain) == first) ++domain;
  if (domain == 0 || job % domain != 0) return {};
  return {domain, job / domain};
}

/// involved_dim of a group over `dimensions`: both for everyone, the first for one whole
/// domain, the second for the same position in every domain; empty for any other group.
std::vector<bool> involved_dimensions(const std::vector<int>& dimensions, const std::vector<int>& members) {
  if (dimensions.size() != 2 || members.empty()) return {};
  const int domain = dimensions[0], domains = dimensions[1];
  const auto size = static_cast<int>(members.size());
  if (size == domain * domains) return {true, true};
  const auto same = [&](auto coordinate) {
    return std::all_of(members.begin(), members.end(), [&](int m) { return coordinate(m) == coordinate(members[0]); });
  };
  if (size == domain && same([&](int m) { return m / domain; })) return {true, false};
  if (size == domains && same([&](int m) { return m % domain; })) return {false, true};
  return {};
}

}  // namespace

ChakraExport export_chakra(const StepGraph& step, const TrainingSetup& setup, const std::filesystem::path& dir,
                           const std::string& name) {
  const ParallelismConfig& par = setup.workload.parallelism;
  const RankLayout layout(par, setup.placement);
  const Template shape = index_template(step);
  const auto task_count = static_cast<std::uint64_t>(step.graph.task_count());
  const double slowdown = 1.0 / setup.throttle;  // kernels take 1 / throttle as long (apply_speeds)
  ChakraExport out;
  out.dimensions = network_dimensions(setup);
  std::map<std::string, std::size_t> group_ids;  // "tp:0/8" (dimension, lowest rank, size) -> its number
  const int instances = par.tp * par.cp * par.dp;
  for (int instance = 0; instance < instances; ++instance) {
    const ReplicaIndex replica = replica_of(par, instance);
    for (int p = 0; p < par.pp; ++p) {
      const int accelerator = layout.rank(replica.t, replica.c, replica.d, p);
      trace::ChakraTrace file;
      file.version = "0.0.4";
      // Host dispatch: a task released at time R waits for the host node of the chain that ends
      // at R (the chain's nodes last the gaps between the stage's distinct release times).
      std::set<engine::TimePs> releases;
      for (const exec::StreamId s : step.stages[static_cast<std::size_t>(p)].all) {
        for (const exec::TaskId task : step.graph.stream_tasks(s)) {
          if (step.graph.task(task).release_ps > 0) releases.insert(step.graph.task(task).release_ps);
        }
      }
      std::map<engine::TimePs, std::uint64_t> release_node;
      engine::TimePs previous_release = 0;
      for (const engine::TimePs release : releases) {
        ChakraNode host = make_node(2 * task_count + release_node.size(), "host dispatch", ChakraNodeType::compute);
        host.is_cpu_op = true;
        host.duration_ps = static_cast<std::uint64_t>(release - previous_release);
        host.duration_micros = static_cast<std::uint64_t>(std::llround(double(*host.duration_ps) * 1e-6));
        if (!release_node.empty()) host.ctrl_deps.push_back(std::prev(release_node.end())->second);
        release_node[release] = host.id;
        previous_release = release;
        file.nodes.push_back(std::move(host));
      }
      // Receives of the sends other stages make toward this one.
      for (exec::TaskId task = 0; task < static_cast<exec::TaskId>(task_count); ++task) {
        const GroupCollective& info = step.collective(task);
        if (info.dimension != GroupDimension::pipeline || info.to_stage != p) continue;
        ChakraNode recv =
            make_node(task_count + static_cast<std::uint64_t>(task), std::string(step.graph.label(task)), ChakraNodeType::recv);
        recv.comm_src = layout.rank(replica.t, replica.c, replica.d, info.stage);
        recv.comm_tag = task;
        recv.comm_size = static_cast<std::int64_t>(std::llround(info.bytes));
        file.nodes.push_back(std::move(recv));
      }
      std::vector<exec::StreamId> streams = step.stages[static_cast<std::size_t>(p)].all;
      const exec::StreamId host_stream = step.stages[static_cast<std::size_t>(p)].host;
      if (host_stream >= 0 && std::find(streams.begin(), streams.end(), host_stream) == streams.end()) {
        streams.push_back(host_stream);
      }
      for (const exec::StreamId s : streams) {
        exec::TaskId before = -1;
        for (const exec::TaskId task : step.graph.stream_tasks(s)) {
          const exec::Task& t = step.graph.task(task);
          const GroupCollective& info = step.collective(task);
          ChakraNode node = make_node(static_cast<std::uint64_t>(task), std::string(step.graph.label(task)), ChakraNodeType::compute);
          if (t.traits.kind == exec::TaskKind::communication && info.dimension == GroupDimension::pipeline) {
            node.type = ChakraNodeType::send;
            node.comm_dst = layout.rank(replica.t, replica.c, replica.d, info.to_stage);
            node.comm_tag = task;
            node.comm_size = static_cast<std::int64_t>(std::llround(info.bytes));
          } else if (t.traits.kind == exec::TaskKind::communication && info.dimension != GroupDimension::none) {
            const std::vector<int> members = group_members(par, layout, info, instance);
            node.type = ChakraNodeType::collective;
            node.comm_type = chakra_collective(info.kind, step.graph.label(task));
            const double bytes = info.kind == models::CollectiveKind::all_gather
                                     ? info.bytes / static_cast<double>(members.size())
                                     : info.bytes;
            node.comm_size = static_cast<std::int64_t>(std::llround(bytes));
            // PyTorch names process groups by number, and ASTRA-sim reads them so ("0": every
            // rank): groups are numbered from 1 in the order ranks first meet them.
            const std::string key = fmt::format("{}:{}/{}", dimension_name(info.dimension),
                                                *std::min_element(members.begin(), members.end()), members.size());
            auto [id, fresh] = group_ids.try_emplace(key, group_ids.size() + 1);
            node.pg_name = std::to_string(id->second);
            if (fresh) out.groups.emplace(node.pg_name, members);
            node.involved_dim = involved_dimensions(out.dimensions, members);
            ++out.collectives;
            out.with_dimensions += node.involved_dim.empty() ? 0 : 1;
          } else if (t.traits.kind == exec::TaskKind::compute || t.traits.kind == exec::TaskKind::host ||
                     t.traits.kind == exec::TaskKind::idle) {
            node.type = ChakraNodeType::compute;
            node.is_cpu_op = t.traits.kind == exec::TaskKind::host;
            const double ps = static_cast<double>(t.duration_ps) * (node.is_cpu_op ? 1.0 : slowdown);
            node.duration_ps = static_cast<std::uint64_t>(std::llround(ps));
            node.duration_micros = static_cast<std::uint64_t>(std::llround(ps * 1e-6));
            if (t.traits.flops > 0) node.num_ops = static_cast<std::int64_t>(std::llround(t.traits.flops));
            if (t.traits.bytes > 0) node.tensor_size = static_cast<std::uint64_t>(std::llround(t.traits.bytes));
          } else {
            throw ConfigError(fmt::format("--export-chakra: '{}' ({} on stage {}) has no Chakra node kind here: "
                                          "offloading and per-rank copies are not exported",
                                          step.graph.label(task), exec::task_kind_name(t.traits.kind), p));
          }
          if (before >= 0) node.ctrl_deps.push_back(static_cast<std::uint64_t>(before));
          if (t.release_ps > 0) node.ctrl_deps.push_back(release_node.at(t.release_ps));
          for (const exec::TaskId prerequisite : shape.prerequisites[static_cast<std::size_t>(task)]) {
            const int from = shape.stage_of_stream[static_cast<std::size_t>(step.graph.task(prerequisite).stream)];
            if (from == p) {
              node.data_deps.push_back(static_cast<std::uint64_t>(prerequisite));
            } else if (step.collective(prerequisite).dimension == GroupDimension::pipeline &&
                       step.collective(prerequisite).to_stage == p) {
              node.data_deps.push_back(task_count + static_cast<std::uint64_t>(prerequisite));
            } else {
              throw ConfigError(fmt::format("--export-chakra: '{}' on stage {} waits for '{}' on stage {}, which is "
                                            "not a pipeline send to it",
                                            step.graph.label(task), p, step.graph.label(prerequisite), from));
            }
          }
          before = task;
          file.nodes.push_back(std::move(node));
        }
      }
      out.nodes += file.nodes.size();
      const std::filesystem::path path = dir / fmt::format("{}.{}.et", name, accelerator);
      trace::write_chakra_file(path, file);
      out.files.push_back(path);
    }
  }
  std::sort(out.files.begin(), out.files.end());
  out.groups_file = dir / (name + ".groups.json");
  std::ofstream groups(out.groups_file);
  groups << "{";
  bool first = true;
  for (const auto& [pg, members] : out.groups) {
    groups << (first ? "\n" : ",\n") << fmt::format("  \"{}\": [{}]", pg, fmt::join(members, ", "));
    first = false;
  }
  groups << "\n}\n";
  if (!groups) throw ConfigError(fmt::format("--export-chakra: cannot write {}", out.groups_file.string()));
  return out;
}

}  // namespace clustersim::training
