#include "models/accelerator/attention_kernel_family.hpp"

namespace clustersim::models {

const config::NameTable<AttentionKernelFamily>& attention_kernel_family_names() {
  static const config::NameTable<AttentionKernelFamily> names(
      "attention kernel family",
      {{"fa2", AttentionKernelFamily::fa2}, {"fa3", AttentionKernelFamily::fa3}, {"cudnn", AttentionKernelFamily::cudnn}});
  return names;
}

std::string_view attention_kernel_family_name(AttentionKernelFamily family) {
  return attention_kernel_family_names().name(family);
}

AttentionKernelFamily parse_attention_kernel_family(std::string_view name) {
  return attention_kernel_family_names().parse(name);
}

bool needs_warpgroup_mma(AttentionKernelFamily family) { return family != AttentionKernelFamily::fa2; }

}  // namespace clustersim::models
