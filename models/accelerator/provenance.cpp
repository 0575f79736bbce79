#include "models/accelerator/provenance.hpp"

#include "sim/engine/error.hpp"

namespace clustersim::models {

std::string_view provenance_name(Provenance provenance) {
  switch (provenance) {
    case Provenance::measured_table:
      return "measured_table";
    case Provenance::fitted:
      return "fitted";
    case Provenance::roofline:
      return "roofline";
    case Provenance::collective_model:
      return "collective_model";
  }
  throw ConfigError("provenance_name: invalid Provenance value");
}

}  // namespace clustersim::models
