#include "models/comm/collective_kind.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {
const config::NameTable<CollectiveKind>& collective_names() {
  static const config::NameTable<CollectiveKind> names("collective", {{"all-reduce", CollectiveKind::all_reduce},
                                                                       {"all-gather", CollectiveKind::all_gather},
                                                                       {"reduce-scatter", CollectiveKind::reduce_scatter},
                                                                       {"all-to-all", CollectiveKind::all_to_all},
                                                                       {"broadcast", CollectiveKind::broadcast},
                                                                       {"reduce", CollectiveKind::reduce},
                                                                       {"send-recv", CollectiveKind::send_recv}});
  return names;
}

std::string_view collective_name(CollectiveKind kind) { return collective_names().name(kind); }

CollectiveKind parse_collective(std::string_view name) { return collective_names().parse(name); }

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
