#pragma once
/// The collective operations, their names and nccl-tests' size and bus-bandwidth conventions.
#include <string_view>

#include "sim/config/name_table.hpp"

namespace clustersim::models {

/// The collectives ClusterSim can time. `bytes` always follows nccl-tests: the per-rank buffer
/// for all-reduce, broadcast and reduce; the full output for all-gather; the full input for
/// reduce-scatter; the per-rank send buffer for all-to-all; the message for send/recv.
enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };

/// "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast", "reduce", "send-recv".
std::string_view collective_name(CollectiveKind kind);

/// The names of the collectives: "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
/// "broadcast", "reduce", "send-recv".
const config::NameTable<CollectiveKind>& collective_names();
/// Parses a name as printed by collective_name. Throws ConfigError listing the valid names.
CollectiveKind parse_collective(std::string_view name);

/// nccl-tests' bus-bandwidth factor for `ranks` participants (busbw = algbw x factor):
/// all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, reduce,
/// send/recv 1. Throws ConfigError for ranks < 1.
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

}  // namespace clustersim::models
