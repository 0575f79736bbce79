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

std::vector<MemoryLevel> AcceleratorSpec::memory_levels() const {
  std::vector<MemoryLevel> levels{
      {MemoryLevelKind::hbm, hbm_capacity_bytes, hbm_bytes_per_s, hbm_latency_s}};
  if (l2_bytes > 0 && l2_bytes_per_s > 0) {
    levels.push_back({MemoryLevelKind::l2, l2_bytes, l2_bytes_per_s, l2_latency_s});
  }
  if (sram_bytes > 0 && sram_bytes_per_s > 0) {
    levels.push_back({MemoryLevelKind::sram, sram_bytes, sram_bytes_per_s, 0.0});
  }
  if (host_capacity_bytes > 0 && host_bytes_per_s > 0) {
    levels.push_back({MemoryLevelKind::host, host_capacity_bytes, host_bytes_per_s, host_latency_s});
  }
  if (cxl_capacity_bytes > 0 && cxl_bytes_per_s > 0) {
    levels.push_back(
        {MemoryLevelKind::cxl, cxl_capacity_bytes, cxl_bytes_per_s, cxl_latency_s});
  }
  if (ssd_capacity_bytes > 0 && ssd_bytes_per_s > 0) {
    levels.push_back({MemoryLevelKind::ssd, ssd_capacity_bytes, ssd_bytes_per_s, ssd_latency_s});
  }
  return levels;
}

}  // namespace clustersim::models
