#include "models/comm/comm_fidelity.hpp"

namespace clustersim::models {

const config::NameTable<CommFidelity>& comm_fidelity_names() {
  static const config::NameTable<CommFidelity> names(
      "fidelity", {{"analytical", CommFidelity::analytical}, {"flow", CommFidelity::flow}});
  return names;
}

std::string_view comm_fidelity_name(CommFidelity fidelity) { return comm_fidelity_names().name(fidelity); }

CommFidelity parse_comm_fidelity(std::string_view name) { return comm_fidelity_names().parse(name); }

}  // namespace clustersim::models
