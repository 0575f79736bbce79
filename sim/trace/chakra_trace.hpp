#pragma once
/// MLCommons Chakra execution traces (ET) as plain values: one rank's file is its metadata and
/// its nodes (compute, collectives, sends and receives, with data and control dependencies).
/// read_chakra_file / write_chakra_file convert to and from the protobuf files Chakra's tools
/// and ASTRA-sim use (sim/trace/chakra_et.proto); they need a build with
/// -DCLUSTERSIM_WITH_CHAKRA=ON (libprotobuf), and otherwise throw ConfigError saying so.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace clustersim::trace {

/// Chakra's NodeType, same values.
enum class ChakraNodeType {
  invalid = 0,
  metadata = 1,
  mem_load = 2,
  mem_store = 3,
  compute = 4,
  send = 5,
  recv = 6,
  collective = 7,
};

/// Chakra's CollectiveCommType, same values.
enum class ChakraCollective {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};

/// Chakra's name of a node type ("COMP_NODE", ...) and of a collective ("ALL_REDUCE", ...).
std::string chakra_type_name(ChakraNodeType type);
std::string chakra_collective_name(ChakraCollective collective);

/// One node, with the attributes Chakra's feeder and ASTRA-sim read (same names and types).
struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::invalid;
  std::vector<std::uint64_t> data_deps;
  std::vector<std::uint64_t> ctrl_deps;
  std::uint64_t duration_micros = 0;  ///< recorded duration (0: none recorded)
  /// attr duration_ps (ClusterSim's own; other tools skip it): the duration to the picosecond,
  /// which `clustersim run --export-chakra` writes beside duration_micros and `compute: recorded`
  /// prefers, so that a re-imported step is not rounded to microseconds kernel by kernel.
  std::optional<std::uint64_t> duration_ps;
  bool is_cpu_op = false;             ///< attr is_cpu_op: runs on the host
  std::optional<std::int64_t> num_ops;       ///< attr num_ops: floating-point operations (compute)
  std::optional<std::uint64_t> tensor_size;  ///< attr tensor_size: bytes the node reads and writes
  std::optional<ChakraCollective> comm_type;  ///< attr comm_type (collectives)
  std::optional<std::int64_t> comm_size;      ///< attr comm_size: bytes of the input buffer
  std::optional<std::int32_t> comm_src;       ///< attr comm_src (receives; sends: this rank)
  std::optional<std::int32_t> comm_dst;       ///< attr comm_dst (sends; receives: this rank)
  std::optional<std::int32_t> comm_tag;       ///< attr comm_tag (matches a send with its receive)
  std::string pg_name;                        ///< attr pg_name: the process group of a collective
  /// attr involved_dim (a bool list, ASTRA-sim's): which of the network's dimensions a
  /// collective spans, for a simulator that takes the group from the dimensions instead of
  /// pg_name (ASTRA-sim without a communicator-group file); empty: not written.
  std::vector<bool> involved_dim;
};

/// One rank's trace.
struct ChakraTrace {
  std::string version;  ///< GlobalMetadata.version
  std::vector<ChakraNode> nodes;
};

/// Reads one rank's file. Throws ConfigError naming the file for a file that cannot be read, a
/// message that does not parse (with its index and byte offset), or an attribute of the wrong
/// value kind (naming the node and the attribute).
ChakraTrace read_chakra_file(const std::filesystem::path& file);

/// Writes one rank's file (creating its folder). Throws ConfigError when it cannot be written.
void write_chakra_file(const std::filesystem::path& file, const ChakraTrace& trace);

/// Whether this build reads and writes Chakra files.
bool chakra_supported();

}  // namespace clustersim::trace
