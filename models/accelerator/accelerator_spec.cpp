#include "models/accelerator/accelerator_spec.hpp"

#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

double AcceleratorSpec::peak_for(Dtype dtype) const {
  if (auto it = peak_flops_per_s.find(dtype); it != peak_flops_per_s.end()) return it->second;
  // Plain fp32 math without a matrix path runs on the vector (CUDA-core) units.
  if (dtype == Dtype::fp32 && vector_flops_per_s > 0) return vector_flops_per_s;
  std::string available;
  for (const auto& [format, peak] : peak_flops_per_s) {  // std::map: deterministic order
    if (!available.empty()) available += ", ";
    available += dtype_name(format);
  }
  if (available.empty()) available = "none";
  throw ConfigError("accelerator '" + name + "' has no " + std::string(dtype_name(dtype)) +
                    " matrix peak; available formats: " + available);
}

double AcceleratorSpec::matmul_efficiency_for(Dtype dtype) const {
  if (auto it = matmul_efficiency_by_dtype.find(dtype); it != matmul_efficiency_by_dtype.end()) {
    return it->second;
  }
  return matmul_efficiency;
}

}  // namespace clustersim::models
