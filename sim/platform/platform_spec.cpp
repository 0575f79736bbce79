#include "sim/platform/platform_spec.hpp"

namespace clustersim::platform {

const config::NameTable<Placement>& placement_names() {
  static const config::NameTable<Placement> names("placement",
                                                  {{"packed", Placement::packed}, {"scattered", Placement::scattered}});
  return names;
}

}  // namespace clustersim::platform
