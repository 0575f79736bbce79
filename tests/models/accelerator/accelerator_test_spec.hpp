#pragma once
// An accelerator with round numbers, so that expected times can be derived by hand: 1 PFLOP/s
// bf16 (2 fp8), 50 TFLOP/s vector, 2 TB/s HBM at 90 %, 4 us per launch, 128 x 256 tiles, no L2
// figures (every bandwidth-bound op streams from HBM).
#include "models/accelerator/accelerator_spec.hpp"

namespace clustersim::models::testing {

inline AcceleratorSpec round_number_accelerator(int compute_units) {
  AcceleratorSpec spec;
  spec.name = "test-gpu";
  spec.peak_flops_per_s = {{Dtype::bf16, 1000e12}, {Dtype::fp8, 2000e12}};
  spec.vector_flops_per_s = 50e12;
  spec.special_function_ops_per_s = 4e12;
  spec.matrix_path = MatrixPath::wgmma;  // Hopper: fa3 runs here
  spec.attention_kernel = AttentionKernelFamily::fa3;
  spec.hbm_bytes_per_s = 2e12;
  spec.compute_units = compute_units;
  spec.matmul_efficiency = 0.8;
  spec.memory_efficiency = 0.9;
  spec.kernel_launch_s = 4e-6;
  spec.gemm_tile_m = 128;
  spec.gemm_tile_n = 256;
  return spec;
}

}  // namespace clustersim::models::testing
