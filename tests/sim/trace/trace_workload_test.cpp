// Chakra execution traces (sim/trace): files written from the schema by the generator below
// read back field for field, and small traces run on the platform to the step time derived by
// hand from the compute and collective models (within 1e-7: each task's time is a whole number of
// picoseconds).
#include "sim/trace/trace_workload.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../sweep/temp_folders.hpp"
#include "tests/relative_approx.hpp"
#include "sim/engine/error.hpp"
#include "sim/platform/platform.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace trace_workload_test {

using namespace clustersim;
using tolerance::relative_approx;
using trace::ChakraCollective;
using trace::ChakraNode;
using trace::ChakraNodeType;
using trace::ChakraTrace;
namespace fs = std::filesystem;

namespace {

const clustersim::testing::TempFolders folders("clustersim-trace-test");

ChakraNode node(std::uint64_t id, std::string name, ChakraNodeType type, std::vector<std::uint64_t> deps = {}) {
  ChakraNode n;
  n.id = id;
  n.name = std::move(name);
  n.type = type;
  n.data_deps = std::move(deps);
  return n;
}

ChakraNode compute(std::uint64_t id, std::string name, std::uint64_t micros, std::vector<std::uint64_t> deps = {}) {
  ChakraNode n = node(id, std::move(name), ChakraNodeType::compute, std::move(deps));
  n.duration_micros = micros;
  return n;
}

ChakraNode collective(std::uint64_t id, ChakraCollective type, std::int64_t bytes, std::vector<std::uint64_t> deps,
                      std::string pg = "") {
  ChakraNode n = node(id, "nccl collective", ChakraNodeType::collective, std::move(deps));
  n.comm_type = type;
  n.comm_size = bytes;
  n.pg_name = std::move(pg);
  return n;
}

/// Writes one file per rank as PREFIX.r.et; returns the prefix.
std::string write_ranks(const std::string& name, const std::vector<ChakraTrace>& ranks) {
  const fs::path dir = folders.fresh(name);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    trace::write_chakra_file(dir / ("trace." + std::to_string(r) + ".et"), ranks[r]);
  }
  return (dir / "trace").string();
}

/// One DGX H100 node (8 GPUs) running the trace.
scenario::Scenario scenario_of(const std::string& trace, const std::string& extra = "compute: recorded") {
  return scenario::load_scenario_from_string(
      "schema_version: 1\nname: trace-test\ninclude: [systems/dgx-h100.yaml]\ncluster: {nodes: 1}\n"
      "simulation: {fidelity: analytical}\n"
      "workload:\n  kind: trace\n  trace: " +
          trace + "\n  " + extra + "\n",
      "trace.yaml");
}

double metric(const runner::RunResult& run, const std::string& name) {
  for (const auto& m : run.primary->metrics) {
    if (m.name == name) return m.value;
  }
  FAIL("no metric " << name);
  return 0;
}

std::string run_error(const scenario::Scenario& s) {
  try {
    (void)runner::run_scenario(s);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// False (after checking the error that says how to build it) in a build without Chakra support.
bool chakra_built() {
  if (trace::chakra_supported()) return true;
  CHECK_THROWS_WITH_AS(trace::write_chakra_file(folders.fresh("none") / "x.et", {}),
                       doctest::Contains("-DCLUSTERSIM_WITH_CHAKRA=ON"), ConfigError);
  return false;
}

}  // namespace

TEST_CASE("a trace written from the schema reads back field for field") {
  if (!chakra_built()) return;
  ChakraTrace written;
  written.version = "0.0.4";
  ChakraNode gemm = compute(7, "sm90_xmma_gemm_bf16", 123);
  gemm.num_ops = 2'000'000'000;
  gemm.tensor_size = 3'000'000;
  gemm.ctrl_deps = {3};
  ChakraNode host = compute(3, "aten::linear", 4);
  host.is_cpu_op = true;
  ChakraNode send = node(9, "send", ChakraNodeType::send, {7});
  send.comm_dst = 1;
  send.comm_tag = 42;
  send.comm_size = 1 << 20;
  ChakraNode across = collective(11, ChakraCollective::reduce_scatter, 4096, {9}, "dp");
  across.involved_dim = {false, true};
  written.nodes = {host, gemm, send, across};
  const std::string prefix = write_ranks("roundtrip", {written});
  const ChakraTrace read = trace::read_chakra_file(prefix + ".0.et");
  CHECK(read.version == "0.0.4");
  REQUIRE(read.nodes.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const ChakraNode& a = written.nodes[i];
    const ChakraNode& b = read.nodes[i];
    CHECK(a.id == b.id);
    CHECK(a.name == b.name);
    CHECK(a.type == b.type);
    CHECK(a.data_deps == b.data_deps);
    CHECK(a.ctrl_deps == b.ctrl_deps);
    CHECK(a.duration_micros == b.duration_micros);
    CHECK(a.is_cpu_op == b.is_cpu_op);
    CHECK(a.num_ops == b.num_ops);
    CHECK(a.tensor_size == b.tensor_size);
    CHECK(a.comm_type == b.comm_type);
    CHECK(a.comm_size == b.comm_size);
    CHECK(a.comm_src == b.comm_src);
    CHECK(a.comm_dst == b.comm_dst);
    CHECK(a.comm_tag == b.comm_tag);
    CHECK(a.pg_name == b.pg_name);
    CHECK(a.involved_dim == b.involved_dim);
  }
  // Not a trace: the first message does not parse.
  const fs::path junk = folders.fresh("junk");
  fs::create_directories(junk);
  std::ofstream(junk / "x.et") << "\xff\xff\xff\xff not protobuf";
  CHECK_THROWS_WITH_AS(trace::read_chakra_file(junk / "x.et"), doctest::Contains("not a Chakra trace"), ConfigError);
  CHECK_THROWS_WITH_AS(trace::read_chakra_file(junk / "none.et"), doctest::Contains("cannot read"), ConfigError);
  // involved_dim holding a number instead of a bool list, written byte by byte: an empty
  // GlobalMetadata, then node {id 1, type COMM_COLL_NODE, attr {name "involved_dim", int64_val 1}}.
  const std::string attr = std::string("\x0a\x0c") + "involved_dim" + "\x48\x01";
  const std::string coll = std::string("\x08\x01\x18\x07\x52") + char(attr.size()) + attr;
  std::ofstream(junk / "dims.et", std::ios::binary) << std::string(1, '\0') << char(coll.size()) << coll;
  CHECK_THROWS_WITH_AS(trace::read_chakra_file(junk / "dims.et"),
                       doctest::Contains("dims.et: node 1 '': attribute involved_dim holds no bool list"), ConfigError);
}

TEST_CASE("compute, an all-reduce and compute again: the recorded times plus the collective model's") {
  if (!chakra_built()) return;
  ChakraTrace rank;
  rank.nodes = {compute(1, "forward", 100), collective(2, ChakraCollective::all_reduce, 1 << 20, {1}),
                compute(3, "backward", 50, {2})};
  const auto s = scenario_of(write_ranks("allreduce", {rank, rank}));
  const auto platform = runner::build_platform(s);
  const std::vector<int> group = {0, 1};
  const double expected =
      150e-6 + platform->collectives().time_s(models::CollectiveKind::all_reduce, group, double(1 << 20));
  const auto run = runner::run_scenario(s, *platform);
  CHECK(run.primary->kind == "trace");
  CHECK(metric(run, "step_time") == relative_approx(expected, 1e-7));
  CHECK(metric(run, "ranks") == 2);
  CHECK(metric(run, "compute_nodes") == 4);
  CHECK(metric(run, "collectives") == 1);
  CHECK(metric(run, "communicated_bytes") == 1 << 20);
}

TEST_CASE("one file run by every rank; process groups; send and receive") {
  if (!chakra_built()) return;
  // Four ranks run one file: an all-gather of the whole group (input 1 MiB, so 4 MiB gathered).
  ChakraTrace symmetric;
  symmetric.nodes = {compute(1, "x", 10), collective(2, ChakraCollective::all_gather, 1 << 20, {1})};
  const fs::path dir = folders.fresh("symmetric");
  trace::write_chakra_file(dir / "step.et", symmetric);
  const auto s = scenario_of((dir / "step.et").string(), "compute: recorded\n  ranks: 4");
  const auto platform = runner::build_platform(s);
  const std::vector<int> four = {0, 1, 2, 3};
  const auto run = runner::run_scenario(s, *platform);
  CHECK(metric(run, "step_time") ==
        relative_approx(10e-6 + platform->collectives().time_s(models::CollectiveKind::all_gather, four, 4.0 * (1 << 20)),
                        1e-7));
  // Two ranks: rank 0 sends 8 MiB to rank 1, which then computes; a collective of group "pair".
  ChakraTrace r0, r1;
  ChakraNode send = node(1, "send", ChakraNodeType::send);
  send.comm_dst = 1;
  send.comm_size = 8 << 20;
  ChakraNode recv = node(1, "recv", ChakraNodeType::recv);
  recv.comm_src = 0;
  recv.comm_size = 8 << 20;
  r0.nodes = {send};
  r1.nodes = {recv, compute(2, "after", 20, {1})};
  const auto p2p = scenario_of(write_ranks("p2p", {r0, r1}));
  const auto p2p_platform = runner::build_platform(p2p);
  const auto p2p_run = runner::run_scenario(p2p, *p2p_platform);
  CHECK(metric(p2p_run, "step_time") ==
        relative_approx(p2p_platform->collectives().send_recv_time_s(0, 1, 8 << 20) + 20e-6, 1e-7));
  CHECK(metric(p2p_run, "transfers") == 1);
}

TEST_CASE("compute nodes costed by the compute model from their FLOPs, bytes and kernel name") {
  if (!chakra_built()) return;
  ChakraTrace rank;
  ChakraNode gemm = compute(1, "sm90_xmma_gemm_bf16bf16", 999);
  gemm.num_ops = 2LL * 4096 * 4096 * 4096;
  ChakraNode add = compute(2, "vectorized_elementwise_kernel", 999, {1});
  add.tensor_size = 3 * 4096 * 4096 * 2;
  ChakraNode bare = compute(3, "unknown", 7, {2});  // neither: its recorded 7 us
  rank.nodes = {gemm, add, bare};
  const auto s = scenario_of(write_ranks("model", {rank}), "compute: model");
  const auto platform = runner::build_platform(s);
  const double expected = platform->compute().gemm({4096, 4096, 4096, 1, models::Dtype::bf16}).time_s +
                          platform->compute().elementwise({3.0 * 4096 * 4096 * 2, 0, 0}).time_s + 7e-6;
  const auto run = runner::run_scenario(s, *platform);
  CHECK(metric(run, "step_time") == relative_approx(expected, 1e-7));
  bool noted = false;
  for (const auto& note : run.primary->notes) noted |= note.find("1 compute nodes carry neither") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("a trace the simulator cannot run is refused, naming the file and node") {
  if (!chakra_built()) return;
  ChakraTrace dangling;
  dangling.nodes = {compute(1, "a", 1, {99})};
  CHECK(run_error(scenario_of(write_ranks("dangling", {dangling}))).find("node 1 'a' depends on node 99") !=
        std::string::npos);
  ChakraTrace lonely;
  ChakraNode send = node(1, "send", ChakraNodeType::send);
  send.comm_dst = 1;
  lonely.nodes = {send};
  ChakraTrace idle;
  idle.nodes = {compute(1, "b", 1)};
  CHECK(run_error(scenario_of(write_ranks("lonely", {lonely, idle}))).find("has a send but no receive") !=
        std::string::npos);
  ChakraTrace with, without;
  with.nodes = {collective(1, ChakraCollective::all_reduce, 64, {})};
  without.nodes = {compute(1, "c", 1)};
  CHECK(run_error(scenario_of(write_ranks("partial", {with, without}))).find("is run by 1 of its 2 ranks") !=
        std::string::npos);
  ChakraTrace grouped;
  grouped.nodes = {collective(1, ChakraCollective::all_reduce, 64, {}, "tp")};
  CHECK(run_error(scenario_of(write_ranks("nogroup", {grouped, grouped}))).find("pg_name 'tp' is not one of") !=
        std::string::npos);
  // ASTRA-sim's network dimensions alone do not say which ranks a collective spans here.
  ChakraTrace by_dimensions;
  by_dimensions.nodes = {collective(1, ChakraCollective::all_reduce, 64, {})};
  by_dimensions.nodes[0].involved_dim = {true, false};
  CHECK(run_error(scenario_of(write_ranks("dims", {by_dimensions, by_dimensions})))
            .find("node 1 'nccl collective': a collective with involved_dim and no pg_name") != std::string::npos);
  CHECK(run_error(scenario_of(write_ranks("group", {grouped, grouped}),
                              "compute: recorded\n  groups: {tp: {ranks: [0, 1]}}")) == "");
  ChakraTrace gather;
  gather.nodes = {collective(1, ChakraCollective::gather, 64, {})};
  CHECK(run_error(scenario_of(write_ranks("gather", {gather, gather}))).find("GATHER is not modelled") !=
        std::string::npos);
  CHECK(run_error(scenario_of(write_ranks("many", std::vector<ChakraTrace>(9, idle)))).find(
            "has 9 ranks, more than the workload's 8 accelerators") != std::string::npos);
  CHECK(run_error(scenario_of("/nonexistent/trace")).find("no such file, and no /nonexistent/trace.0.et") !=
        std::string::npos);
  // Groups from a file: JSON {"pg": [ranks]}, each rank one of the trace's.
  const fs::path groups = folders.fresh("groups");
  fs::create_directories(groups);
  const std::string pair = write_ranks("groupsfile", {grouped, grouped});
  const auto with_groups = [&](const std::string& json) {
    std::ofstream(groups / "g.json") << json;
    return run_error(scenario_of(pair, "compute: recorded\n  groups_file: " + (groups / "g.json").string()));
  };
  CHECK(with_groups(R"({"tp": [0, 1]})") == "");
  CHECK(with_groups("[0, 1]") == (groups / "g.json").string() + R"(: expected a JSON object {"pg_name": [ranks]})");
  CHECK(with_groups(R"({"tp": "all"})") == (groups / "g.json").string() + ": group 'tp' must be a list of integer ranks");
  CHECK(with_groups(R"({"tp": [0, 5]})") == "groups.tp: rank 5 is not one of the trace's ranks 0-1");
  CHECK(run_error(scenario_of(pair, "compute: recorded\n  groups: {tp: {ranks: [0, 1]}}\n  groups_file: " +
                                        (groups / "g.json").string()))
            .find("group 'tp' is also given in groups") != std::string::npos);
  // A bad key is reported at load with its position and the valid choices.
  CHECK_THROWS_WITH_AS(scenario_of("x.et", "ranks: 9"),
                       "trace.yaml:9:10: workload.ranks: ranks 9 is more than the workload's 8 accelerators",
                       ConfigError);
  CHECK_THROWS_WITH_AS(scenario_of("x.et", "compute: measured"), doctest::Contains("trace.yaml:9:12: workload.compute: invalid value 'measured' (valid choices: model, recorded)"), ConfigError);
}

}  // namespace trace_workload_test
