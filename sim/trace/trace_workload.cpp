#include "sim/trace/trace_workload.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <regex>
#include <span>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/comm/collective_kind.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/trace_sink.hpp"

namespace clustersim::trace {

namespace fs = std::filesystem;

const config::NameTable<ComputeCosting>& compute_costing_names() {
  static const config::NameTable<ComputeCosting> names{
      "compute costing", {{"model", ComputeCosting::model}, {"recorded", ComputeCosting::recorded}}};
  return names;
}

TraceFiles trace_files(const std::string& trace) {
  if (fs::is_regular_file(trace)) return {{fs::path(trace)}, false};
  TraceFiles found{{}, true};
  for (int rank = 0;; ++rank) {
    fs::path file = trace + "." + std::to_string(rank) + ".et";
    if (!fs::is_regular_file(file)) break;
    found.files.push_back(std::move(file));
  }
  if (found.files.empty()) {
    throw ConfigError(fmt::format("trace '{}': no such file, and no {}.0.et (one file per rank, Chakra's naming)",
                                  trace, trace));
  }
  return found;
}

std::unique_ptr<platform::Workload> TraceSpec::instantiate(const platform::Platform& platform,
                                                           const platform::Allocation& allocation,
                                                           const platform::SessionOptions& /*options*/) const {
  auto [files, per_rank] = trace_files(trace);
  std::vector<ChakraTrace> traces;
  for (const fs::path& file : files) traces.push_back(read_chakra_file(file));
  if (!per_rank) {
    // One file: every rank runs it.
    const int count = ranks_or(allocation.count);
    traces.resize(static_cast<std::size_t>(count), traces.front());
    files.resize(static_cast<std::size_t>(count), files.front());
  } else if (ranks != 0 && ranks != static_cast<int>(files.size())) {
    throw ConfigError(fmt::format("trace '{}' has one file per rank for {} ranks, but ranks is {}", trace, files.size(),
                                  ranks));
  }
  if (static_cast<int>(traces.size()) > allocation.count) {
    throw ConfigError(fmt::format("trace '{}' has {} ranks, more than the workload's {} accelerators", trace,
                                  traces.size(), allocation.count));
  }
  std::map<std::string, ProcessGroup> all_groups = groups;
  if (!groups_file.empty()) {
    for (auto& [name, group] : read_groups_file(groups_file)) {
      if (all_groups.count(name) != 0) {
        throw ConfigError(fmt::format("{}: group '{}' is also given in groups", groups_file, name));
      }
      all_groups.emplace(name, std::move(group));
    }
  }
  for (const auto& [name, group] : all_groups) {
    for (const int rank : group.ranks) {
      if (rank < 0 || rank >= static_cast<int>(traces.size())) {
        throw ConfigError(fmt::format("groups.{}: rank {} is not one of the trace's ranks 0-{}", name, rank,
                                      traces.size() - 1));
      }
    }
  }
  return std::make_unique<TraceWorkload>(*this, platform, allocation, std::move(traces), std::move(files),
                                         std::move(all_groups));
}

int TraceSpec::ranks_or(int accelerators) const { return ranks > 0 ? ranks : accelerators; }

std::map<std::string, ProcessGroup> read_groups_file(const std::string& file) {
  std::ifstream stream(file);
  if (!stream) throw ConfigError(fmt::format("{}: cannot read the groups file", file));
  const nlohmann::json document = nlohmann::json::parse(stream, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    throw ConfigError(fmt::format("{}: expected a JSON object {{\"pg_name\": [ranks]}}", file));
  }
  std::map<std::string, ProcessGroup> groups;
  for (const auto& [name, ranks] : document.items()) {
    ProcessGroup group;
    for (const nlohmann::json& rank : ranks.is_array() ? ranks : nlohmann::json::array({nullptr})) {
      if (!rank.is_number_integer()) {
        throw ConfigError(fmt::format("{}: group '{}' must be a list of integer ranks", file, name));
      }
      group.ranks.push_back(rank.get<int>());
    }
    groups.emplace(name, std::move(group));
  }
  return groups;
}

namespace {

/// Chakra's collective as ClusterSim's, or nullopt for GATHER and SCATTER (not modelled).
std::optional<models::CollectiveKind> collective_kind(ChakraCollective type) {
  using K = models::CollectiveKind;
  switch (type) {
    case ChakraCollective::all_reduce: return K::all_reduce;
    case ChakraCollective::reduce: return K::reduce;
    case ChakraCollective::all_gather: return K::all_gather;
    case ChakraCollective::broadcast: return K::broadcast;
    case ChakraCollective::all_to_all: return K::all_to_all;
    case ChakraCollective::reduce_scatter:
    case ChakraCollective::reduce_scatter_block: return K::reduce_scatter;
    case ChakraCollective::barrier: return K::all_reduce;  // NCCL has none: a one-element all-reduce
    case ChakraCollective::gather:
    case ChakraCollective::scatter: return std::nullopt;
  }
  return std::nullopt;
}

/// Kernel names of matrix work (GEMMs, attention, convolutions): costed as a GEMM of their FLOPs.
bool matrix_kernel(const std::string& name) {
  static const std::regex pattern(
      R"(gemm|matmul|\bmm\b|addmm|bmm|linear|cutlass|cublas|xmma|sm\d+_|flash|fmha|attention|sdpa|conv)",
      std::regex::icase);
  return std::regex_search(name, pattern);
}

engine::TimePs micros_to_ps(std::uint64_t micros) { return static_cast<engine::TimePs>(micros) * 1'000'000; }

}  // namespace

/// What building the graph keeps track of.
struct TraceWorkload::Build {
  std::vector<std::unordered_map<std::uint64_t, exec::TaskId>> task_of;  ///< per rank: node id -> task
  /// (process group, index of the collective on it) -> the task and the ranks that joined it.
  std::map<std::pair<std::string, int>, std::pair<exec::TaskId, std::vector<int>>> collectives;
  /// (src, dst, tag, index) -> the task, and whether the send and the receive were seen.
  std::map<std::tuple<int, int, int, int>, std::tuple<exec::TaskId, bool, bool>> transfers;
  std::map<std::string, exec::StreamId> group_streams;
  std::map<std::pair<int, int>, exec::StreamId> pair_streams;
  std::vector<exec::StreamId> compute_stream, host_stream;  ///< per rank
  std::vector<int> everyone;                                 ///< every rank: a collective without pg_name
  std::vector<std::map<std::string, int>> collective_index;  ///< per rank: collectives seen per group
  std::vector<std::map<std::tuple<int, int, int>, int>> transfer_index;  ///< per rank: per (src, dst, tag)
  int recorded_fallbacks = 0, cpu_ops = 0;
};

TraceWorkload::TraceWorkload(const TraceSpec& spec, const platform::Platform& platform,
                             const platform::Allocation& allocation, std::vector<ChakraTrace> ranks,
                             std::vector<fs::path> files, std::map<std::string, ProcessGroup> groups)
    : spec_(spec),
      platform_(platform),
      allocation_(allocation),
      ranks_(std::move(ranks)),
      files_(std::move(files)),
      groups_(std::move(groups)) {}

TraceWorkload::~TraceWorkload() = default;

namespace {

/// `trace`'s nodes in an order that respects their dependencies (Kahn's, ties in file order).
/// Throws ConfigError for duplicate ids, a dependency on no node, or a cycle.
std::vector<const ChakraNode*> dependency_order(const ChakraTrace& trace, const fs::path& file) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    if (!index.emplace(trace.nodes[i].id, i).second) {
      throw ConfigError(fmt::format("{}: two nodes have id {}", file.string(), trace.nodes[i].id));
    }
  }
  std::vector<int> waiting(trace.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> successors(trace.nodes.size());
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const ChakraNode& node = trace.nodes[i];
    for (const auto* deps : {&node.data_deps, &node.ctrl_deps}) {
      for (const std::uint64_t dep : *deps) {
        const auto it = index.find(dep);
        if (it == index.end()) {
          throw ConfigError(fmt::format("{}: node {} '{}' depends on node {}, which the file does not hold",
                                        file.string(), node.id, node.name, dep));
        }
        successors[it->second].push_back(i);
        ++waiting[i];
      }
    }
  }
  std::vector<const ChakraNode*> order;
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const std::size_t i = ready.front();
    ready.pop_front();
    order.push_back(&trace.nodes[i]);
    for (const std::size_t next : successors[i]) {
      if (--waiting[next] == 0) ready.push_back(next);
    }
  }
  if (order.size() != trace.nodes.size()) {
    const auto stuck = std::find_if(waiting.begin(), waiting.end(), [](int w) { return w > 0; });
    const ChakraNode& node = trace.nodes[static_cast<std::size_t>(stuck - waiting.begin())];
    throw ConfigError(fmt::format("{}: the dependencies form a cycle (node {} '{}' is on or behind one)",
                                  file.string(), node.id, node.name));
  }
  return order;
}

}  // namespace

exec::TaskId TraceWorkload::add_compute(Build& b, int r, const ChakraNode& node) {
  ++compute_nodes_;
  const auto rank = static_cast<std::size_t>(r);
  engine::TimePs duration = node.duration_ps ? static_cast<engine::TimePs>(*node.duration_ps)
                                             : micros_to_ps(node.duration_micros);
  if (node.is_cpu_op) {
    ++b.cpu_ops;
    return graph_.add_task(b.host_stream[rank], duration, {exec::TaskKind::host}, node.name);
  }
  const double flops = static_cast<double>(node.num_ops.value_or(0));
  const double bytes = static_cast<double>(node.tensor_size.value_or(0));
  if (spec_.compute == ComputeCosting::model) {
    if (flops > 0 && matrix_kernel(node.name)) {
      const auto side = std::max<std::int64_t>(1, std::llround(std::cbrt(flops / 2)));
      duration = engine::seconds_to_ps(platform_.compute().gemm({side, side, side, 1, spec_.dtype}).time_s);
    } else if (flops > 0 || bytes > 0) {
      duration = engine::seconds_to_ps(platform_.compute().elementwise({bytes, 0, flops}).time_s);
    } else {
      ++b.recorded_fallbacks;
    }
  }
  compute_s_[rank] += engine::ps_to_seconds(duration);
  return graph_.add_task(b.compute_stream[rank], duration, {exec::TaskKind::compute, 0, flops, bytes}, node.name);
}

const std::vector<int>& TraceWorkload::group_of(const Build& b, const std::string& pg, const std::string& where) const {
  if (pg.empty()) return b.everyone;
  const auto it = groups_.find(pg);
  if (it == groups_.end()) {
    std::vector<std::string> names;
    for (const auto& [name, group] : groups_) names.push_back(name);
    throw ConfigError(fmt::format("{}: pg_name '{}' is not one of the workload's groups ({})", where, pg,
                                  names.empty() ? std::string("none are given: the workload's groups or groups_file")
                                                : fmt::format("{}", fmt::join(names, ", "))));
  }
  return it->second.ranks;
}

exec::TaskId TraceWorkload::add_collective(Build& b, platform::Session& session, int r, const ChakraNode& node,
                                           const std::string& where) {
  if (!node.comm_type) throw ConfigError(fmt::format("{}: a collective without comm_type", where));
  const auto kind = collective_kind(*node.comm_type);
  if (!kind) {
    throw ConfigError(fmt::format("{}: {} is not modelled (all-reduce, reduce, all-gather, broadcast, all-to-all, "
                                  "reduce-scatter and barrier are)",
                                  where, chakra_collective_name(*node.comm_type)));
  }
  if (node.pg_name.empty() && !node.involved_dim.empty()) {
    throw ConfigError(fmt::format("{}: a collective with involved_dim and no pg_name: ClusterSim takes a collective's "
                                  "ranks from its process group (pg_name, and the workload's groups or groups_file), "
                                  "not from ASTRA-sim's network dimensions",
                                  where));
  }
  const std::vector<int>& group = group_of(b, node.pg_name, where);
  if (std::find(group.begin(), group.end(), r) == group.end()) {
    throw ConfigError(
        fmt::format("{}: rank {} runs a collective of group '{}', which it is not in", where, r, node.pg_name));
  }
  const int k = b.collective_index[static_cast<std::size_t>(r)][node.pg_name]++;
  auto [it, created] = b.collectives.try_emplace({node.pg_name, k});
  if (created) {
    ++collectives_;
    // comm_size is the input buffer (Chakra's PyTorch converter); nccl-tests' all-gather size
    // is the gathered output.
    double bytes = static_cast<double>(node.comm_size.value_or(0));
    if (*kind == models::CollectiveKind::all_gather) bytes *= static_cast<double>(group.size());
    if (*node.comm_type == ChakraCollective::barrier) bytes = 4;
    bytes_ += bytes;
    auto [stream, fresh] = b.group_streams.try_emplace(node.pg_name, -1);
    if (fresh) stream->second = graph_.add_stream(fmt::format("group '{}'", node.pg_name));
    std::vector<std::vector<int>> accelerators(1);
    for (const int member : group) accelerators[0].push_back(allocation_.first + member);
    const exec::Work work =
        group.size() < 2 ? exec::Work{} : sharing(session.comm().collective(*kind, accelerators, bytes), group);
    it->second.first = graph_.add_work(stream->second, work, {exec::TaskKind::communication, 0, 0, bytes},
                                       fmt::format("{} ({})", node.name, models::collective_name(*kind)));
  }
  it->second.second.push_back(r);
  return it->second.first;
}

exec::TaskId TraceWorkload::add_transfer(Build& b, platform::Session& session, int r, const ChakraNode& node,
                                         const std::string& where) {
  const int rank_count = static_cast<int>(ranks_.size());
  const bool send = node.type == ChakraNodeType::send;
  const std::optional<std::int32_t> peer = send ? node.comm_dst : node.comm_src;
  if (!peer) throw ConfigError(fmt::format("{}: no {}", where, send ? "comm_dst" : "comm_src"));
  if (*peer < 0 || *peer >= rank_count || *peer == r) {
    throw ConfigError(fmt::format("{}: {} {} is not another of the trace's ranks 0-{}", where,
                                  send ? "comm_dst" : "comm_src", *peer, rank_count - 1));
  }
  const int src = send ? r : *peer, dst = send ? *peer : r, tag = node.comm_tag.value_or(0);
  const int k = b.transfer_index[static_cast<std::size_t>(r)][{src, dst, tag}]++;
  auto [it, created] = b.transfers.try_emplace({src, dst, tag, k});
  if (created) {
    ++transfers_;
    const double bytes = static_cast<double>(node.comm_size.value_or(0));
    bytes_ += bytes;
    auto [stream, fresh] = b.pair_streams.try_emplace({src, dst}, -1);
    if (fresh) stream->second = graph_.add_stream(fmt::format("send {} -> {}", src, dst));
    std::get<0>(it->second) = graph_.add_work(
        stream->second,
        sharing(session.comm().transfer(allocation_.first + src, allocation_.first + dst, bytes), {src, dst}),
        {exec::TaskKind::communication, 0, 0, bytes}, node.name);
  }
  bool& seen = send ? std::get<1>(it->second) : std::get<2>(it->second);
  if (seen) throw ConfigError(fmt::format("{}: a second {} matched to one transfer", where, send ? "send" : "receive"));
  seen = true;
  return std::get<0>(it->second);
}

exec::Work TraceWorkload::sharing(exec::Work work, std::vector<int> ranks) {
  if (!(sharing_rate_ < 1.0)) return work;
  // While it runs, its ranks' compute runs at the sharing rate (communication kernels take SMs),
  // as a training step's overlapped collectives slow the kernels beside them.
  struct State {
    exec::Work work;
    std::vector<int> ranks;
    exec::DoneCallback done;
  };
  auto state = std::make_shared<State>(State{std::move(work), std::move(ranks), {}});
  return exec::Work{0, [this, state](engine::Engine& engine, exec::DoneCallback done) {
                      for (const int r : state->ranks) {
                        if (communicating_[static_cast<std::size_t>(r)]++ == 0) {
                          executor_->set_device_speed(0, r, sharing_rate_);
                        }
                      }
                      state->done = std::move(done);
                      exec::DoneCallback end = [this, state](engine::Engine& e) {
                        for (const int r : state->ranks) {
                          if (--communicating_[static_cast<std::size_t>(r)] == 0) executor_->set_device_speed(0, r, 1.0);
                        }
                        state->done(e);
                      };
                      if (state->work.asynchronous()) {
                        state->work.start(engine, std::move(end));
                      } else {
                        engine.schedule_after(state->work.duration_ps, [end](engine::Engine& e) { end(e); });
                      }
                    }};
}

void TraceWorkload::check_matched(const Build& b) const {
  for (const auto& [key, entry] : b.collectives) {
    const std::vector<int>& group = key.first.empty() ? b.everyone : groups_.at(key.first).ranks;
    if (entry.second.size() != group.size()) {
      throw ConfigError(fmt::format("collective {} of group '{}' is run by {} of its {} ranks ({}): every rank of a "
                                    "group must run each of its collectives",
                                    key.second, key.first.empty() ? "all" : key.first, entry.second.size(),
                                    group.size(), fmt::join(entry.second, ", ")));
    }
  }
  for (const auto& [key, entry] : b.transfers) {
    if (!std::get<1>(entry) || !std::get<2>(entry)) {
      const auto [src, dst, tag, k] = key;
      throw ConfigError(fmt::format("transfer {} from rank {} to rank {} (tag {}) has a {} but no {}", k, src, dst, tag,
                                    std::get<1>(entry) ? "send" : "receive", std::get<1>(entry) ? "receive" : "send"));
    }
  }
}

void TraceWorkload::build(platform::Session& session) {
  const int rank_count = static_cast<int>(ranks_.size());
  Build b;
  b.task_of.resize(ranks_.size());
  b.collective_index.resize(ranks_.size());
  b.transfer_index.resize(ranks_.size());
  compute_s_.assign(ranks_.size(), 0.0);
  communicating_.assign(ranks_.size(), 0);
  // Compute sharing (cluster.network.comm.overlap_sms), unless speed profiles (stragglers) own
  // the devices' speeds.
  sharing_rate_ = platform_.has_speed_changes() ? 1.0 : platform_.compute_rate_while_communicating();
  if (platform_.has_speed_changes() && platform_.compute_rate_while_communicating() < 1.0) {
    notes_.push_back("with stragglers, compute does not slow while communication shares the device (not modelled "
                     "for traces)");
  }
  for (int r = 0; r < rank_count; ++r) {
    b.compute_stream.push_back(graph_.add_stream(fmt::format("rank {} compute", r), r, exec::StreamRole::compute));
    b.host_stream.push_back(graph_.add_stream(fmt::format("rank {} host", r), r));
    b.everyone.push_back(r);
  }
  for (int r = 0; r < rank_count; ++r) {
    const fs::path& file = files_[static_cast<std::size_t>(r)];
    for (const ChakraNode* node : dependency_order(ranks_[static_cast<std::size_t>(r)], file)) {
      const std::string where = fmt::format("{} (rank {}): node {} '{}'", file.string(), r, node->id, node->name);
      exec::TaskId task = -1;
      switch (node->type) {
        case ChakraNodeType::compute: task = add_compute(b, r, *node); break;
        case ChakraNodeType::metadata:
        case ChakraNodeType::invalid:
          task = graph_.add_task(b.host_stream[static_cast<std::size_t>(r)], 0, {exec::TaskKind::idle}, node->name);
          break;
        case ChakraNodeType::mem_load:
        case ChakraNodeType::mem_store:
          throw ConfigError(fmt::format("{}: {} (remote memory) is not modelled by the trace workload", where,
                                        chakra_type_name(node->type)));
        case ChakraNodeType::collective: task = add_collective(b, session, r, *node, where); break;
        case ChakraNodeType::send:
        case ChakraNodeType::recv: task = add_transfer(b, session, r, *node, where); break;
      }
      b.task_of[static_cast<std::size_t>(r)][node->id] = task;
    }
  }
  check_matched(b);
  for (int r = 0; r < rank_count; ++r) {
    const auto& task_of = b.task_of[static_cast<std::size_t>(r)];
    for (const ChakraNode& node : ranks_[static_cast<std::size_t>(r)].nodes) {
      const exec::TaskId task = task_of.at(node.id);
      for (const auto* deps : {&node.data_deps, &node.ctrl_deps}) {
        for (const std::uint64_t dep : *deps) {
          const exec::TaskId prerequisite = task_of.at(dep);
          if (prerequisite != task) graph_.add_dependency(task, prerequisite);
        }
      }
    }
  }
  notes_.push_back(fmt::format("Chakra trace '{}': {} ranks on accelerators {}-{}, {} compute nodes ({}), {} "
                               "collectives, {} transfers",
                               spec_.trace, rank_count, allocation_.first, allocation_.first + rank_count - 1,
                               compute_nodes_,
                               spec_.compute == ComputeCosting::model
                                   ? fmt::format("costed by the compute model in {}", models::dtype_name(spec_.dtype))
                                   : std::string("their recorded durations"),
                               collectives_, transfers_));
  if (b.recorded_fallbacks > 0) {
    notes_.push_back(fmt::format("{} compute nodes carry neither num_ops nor tensor_size: their recorded durations "
                                 "(duration_micros) were used",
                                 b.recorded_fallbacks));
  }
  if (b.cpu_ops > 0) {
    notes_.push_back(fmt::format("{} host (is_cpu_op) nodes take their recorded durations on a host stream per rank",
                                 b.cpu_ops));
  }
}

void TraceWorkload::start(platform::Session& session, std::function<void()> on_done) {
  on_done_ = std::move(on_done);
  build(session);
  // No compute sharing: a collective is one task its ranks share, on no one device's stream.
  executor_ = std::make_unique<exec::Executor>(session.engine(), graph_);
  if (platform::TraceSink* sink = session.trace()) {
    executor_->add_observer(sink->watch_graph(
        graph_, [first = allocation_.first](int, int device) { return first + std::max(device, 0); }));
  }
  if (platform_.has_speed_changes()) {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      executor_->apply_speed_profile(0, r, platform_.accelerator_speed(allocation_.first + r));
    }
  }
  executor_->on_finished([this] {
    if (on_done_) on_done_();
  });
  executor_->start();
}

std::unique_ptr<platform::WorkloadResult> TraceWorkload::finish(platform::Session& /*session*/) {
  const exec::ExecutionResult run = executor_->finish();  // a deadlock names the blocked tasks
  auto result = std::make_unique<platform::WorkloadResult>();
  result->kind = "trace";
  const double step_s = engine::ps_to_seconds(run.makespan_ps);
  const double busiest = compute_s_.empty() ? 0.0 : *std::max_element(compute_s_.begin(), compute_s_.end());
  result->metrics = {{"step_time", step_s, "s"},
                     {"ranks", static_cast<double>(ranks_.size()), ""},
                     {"compute_nodes", compute_nodes_, ""},
                     {"collectives", collectives_, ""},
                     {"transfers", transfers_, ""},
                     {"communicated_bytes", bytes_, "B"},
                     {"busiest_rank_compute_time", busiest, "s"}};
  result->notes = notes_;
  return result;
}

}  // namespace clustersim::trace
