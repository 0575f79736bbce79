#pragma once
/// Kernel measurements from a profiler's trace: rows of the calibration table
/// (docs/calibration-format.md) from the operator shapes and GPU kernel times a PyTorch profiler
/// trace records (`torch.profiler.profile(record_shapes=True)`, `export_chrome_trace`, or the
/// `.pt.trace.json` files of `tensorboard_trace_handler`).
///
/// Each GPU kernel names the CPU operator that launched it (its `External id`); an operator's
/// time is the sum of its kernels' durations, and its shape comes from the operator's `Input
/// Dims`, `Input type` and `Concrete Inputs`. Operators read: aten::mm, addmm, bmm, baddbmm and
/// _scaled_mm (FP8) as GEMMs; aten::_scaled_dot_product_flash_attention and its backward as
/// FlashAttention-2 attention (the family of the default tables); aten::native_layer_norm,
/// aten::_softmax and the common unary / binary elementwise ops as bandwidth ops; vLLM's
/// vllm::inplace_fused_experts / outplace_fused_experts as the simulator's two grouped expert
/// GEMMs (models::grouped_expert_gemm of the call's tokens), each timed by its own Triton
/// fused_moe_kernel launches, the call's align / activation / sum / quantization kernels left out
/// (the simulator costs those as elementwise ops). A kernel
/// launched inside an operator the importer does not read (aten::_flash_attention_forward)
/// counts for the nearest enclosing operator it reads, on the same thread. Everything else is
/// counted and left out with its reason (collectives, embedding, memory-efficient attention,
/// kernels with no operator such as CUDA-graph replays).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "models/accelerator/calibration_table.hpp"

namespace clustersim::validate {

/// The library accelerator a GPU's device name means ("NVIDIA H100 80GB HBM3" -> h100-sxm,
/// "AMD Instinct MI300X" -> mi300x), the rule of validation/kernels/run.sh; "" when none does
/// (H100 PCIe / NVL, A100 40 GB and unknown parts: say which with --accelerator).
std::string accelerator_for_gpu_name(std::string_view gpu_name);

/// Calibration rows from traces: one row per distinct operator shape, its time the median over
/// every instance in every file, spread half the inter-quartile range, repeats the instance
/// count, source "measured (trace FILE...)".
struct TraceCalibration {
  models::CalibrationTable table;
  std::vector<std::string> notes;  ///< per file: operators read, and what was left out and why
};

/// Reads PyTorch profiler traces (uncompressed Chrome-trace JSON). `accelerator` (a library
/// name) overrides the trace's `deviceProperties`. Throws ConfigError naming the file (and line
/// and column for a JSON syntax error) for a file that is not such a trace, a device no library
/// accelerator matches without `accelerator`, a gzip file, or a trace with no kernel linked to
/// an operator the importer reads.
TraceCalibration calibration_from_traces(const std::vector<std::filesystem::path>& files,
                                         const std::string& accelerator);

/// Nsight Systems: `nsys stats --report nvtx_gpu_proj_trace --format csv` of a run under
/// `torch.autograd.profiler.emit_nvtx(record_shapes=True)`: each PyTorch operator's NVTX range
/// ("aten::mm, seq = 12, op_id = 40, sizes = [[8192, 4096], [4096, 4096]]", PyTorch's
/// profiler/util.cpp getNvtxStr) and the GPU time its kernels span (`Projected Duration (ns)`),
/// read with the same operator rules as a PyTorch profiler trace. NVTX records sizes, not types
/// or scalar arguments: `dtype` (bf16, fp16, fp8, fp32) is every tensor's type, and attention
/// (is_causal unknown) is left out with that reason. The report names no GPU model: `accelerator`
/// is required. Throws ConfigError naming the file for a report without those columns or without
/// one operator range it reads.
TraceCalibration calibration_from_nsys(const std::vector<std::filesystem::path>& files, const std::string& accelerator,
                                       const std::string& dtype);

}  // namespace clustersim::validate
