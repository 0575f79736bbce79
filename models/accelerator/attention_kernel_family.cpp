#include "models/accelerator/attention_kernel_family.hpp"

#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

std::string_view attention_kernel_family_name(AttentionKernelFamily family) {
  switch (family) {
    case AttentionKernelFamily::fa2: return "fa2";
    case AttentionKernelFamily::fa3: return "fa3";
    case AttentionKernelFamily::cudnn: return "cudnn";
  }
  throw ConfigError("attention_kernel_family_name: invalid AttentionKernelFamily value");
}

AttentionKernelFamily parse_attention_kernel_family(std::string_view name) {
  if (name == "fa2") return AttentionKernelFamily::fa2;
  if (name == "fa3") return AttentionKernelFamily::fa3;
  if (name == "cudnn") return AttentionKernelFamily::cudnn;
  throw ConfigError("unknown attention kernel family '" + std::string(name) + "'; valid: fa2, fa3, cudnn");
}

bool needs_warpgroup_mma(AttentionKernelFamily family) { return family != AttentionKernelFamily::fa2; }

}  // namespace clustersim::models
