#include "models/comm/collective_kind.hpp"

#include <array>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

constexpr std::array kKinds = {CollectiveKind::all_reduce, CollectiveKind::all_gather,
                               CollectiveKind::reduce_scatter, CollectiveKind::all_to_all,
                               CollectiveKind::broadcast, CollectiveKind::reduce,
                               CollectiveKind::send_recv};

}  // namespace

std::string_view collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all-reduce";
    case CollectiveKind::all_gather: return "all-gather";
    case CollectiveKind::reduce_scatter: return "reduce-scatter";
    case CollectiveKind::all_to_all: return "all-to-all";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::reduce: return "reduce";
    case CollectiveKind::send_recv: return "send-recv";
  }
  throw ConfigError("unknown collective kind");
}

CollectiveKind parse_collective(std::string_view name) {
  std::string valid;
  for (const CollectiveKind kind : kKinds) {
    if (collective_name(kind) == name) return kind;
    valid += (valid.empty() ? "" : ", ") + std::string(collective_name(kind));
  }
  throw ConfigError(fmt::format("unknown collective '{}'; valid: {}", name, valid));
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  if (ranks < 1) throw ConfigError(fmt::format("bus bandwidth factor needs ranks >= 1, got {}", ranks));
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
    case CollectiveKind::send_recv: return 1.0;
  }
  throw ConfigError("unknown collective kind");
}

}  // namespace clustersim::models
