// cuBLASLt GEMM sweep: square sizes and the per-rank GEMMs of Llama-3-70B and GPT-3 175B
// layers at tp 8 (forward, dgrad, wgrad) plus GPT-3's attention batched GEMMs, in tf32, bf16,
// fp16 and (on compute capability >= 8.9) fp8 e4m3. One calibration row per shape and dtype.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "common/cuda_bench.cuh"
#include "common/gemm_shapes.hpp"
#include "common/lt_gemm.cuh"

namespace ck = clustersim::kernels;

namespace {

constexpr std::size_t kWorkspaceBytes = 64ull << 20;  // cuBLASLt recommends >= 32 MiB on Hopper

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  const ck::DeviceInfo device = ck::current_device_info();
  const std::vector<ck::GemmShape> shapes = ck::default_gemm_sweep(args.quick);
  std::vector<ck::GemmDtype> dtypes = {ck::GemmDtype::bf16, ck::GemmDtype::fp16,
                                       ck::GemmDtype::tf32};
  if (device.compute_capability >= 89) {
    dtypes.push_back(ck::GemmDtype::fp8);
  } else {
    std::cerr << "gemm_bench: fp8 skipped (compute capability " << device.compute_capability
              << " < 8.9)\n";
  }

  std::size_t a_elements = 0, b_elements = 0, c_elements = 0;
  for (const ck::GemmShape& shape : shapes) {
    a_elements = std::max(a_elements, static_cast<std::size_t>(shape.m * shape.k * shape.batch));
    b_elements = std::max(b_elements, static_cast<std::size_t>(shape.k * shape.n * shape.batch));
    c_elements = std::max(c_elements, static_cast<std::size_t>(shape.m * shape.n * shape.batch));
  }
  const ck::GemmBuffers buffers(a_elements * 4, b_elements * 4, c_elements * 4, kWorkspaceBytes);
  void *a = buffers.a, *b = buffers.b, *c = buffers.c, *workspace = buffers.workspace;
  cudaStream_t stream = buffers.stream;
  cublasLtHandle_t handle = buffers.handle;

  std::vector<ck::CalibrationRow> rows;
  for (ck::GemmDtype dtype : dtypes) {
    // Random operands: all-zero inputs run ~13% faster (validation/data, measured_h200).
    ck::fill_random(a, a_elements, dtype, false, 1.0f, 1u, stream);
    ck::fill_random(b, b_elements, dtype, false, 1.0f, 2u, stream);
    ck::fill_random(c, c_elements, dtype, true, 0.0f, 3u, stream);
    ck::check_cuda(cudaStreamSynchronize(stream), "fill");
    for (const ck::GemmShape& shape : shapes) {
      std::unique_ptr<ck::LtGemm> gemm;
      try {
        gemm = std::make_unique<ck::LtGemm>(
            handle, ck::tn_gemm(dtype, shape.m, shape.n, shape.k, static_cast<int>(shape.batch)),
            kWorkspaceBytes);
      } catch (const ck::UnsupportedGemm& error) {
        std::cerr << "gemm_bench: skipped " << shape.label << ": " << error.what() << '\n';
        continue;
      }
      const ck::TimingSummary timing = ck::time_op(
          [&] { gemm->run(a, b, c, workspace, stream); }, args.warmup, args.repeats, stream);
      ck::CalibrationRow row;
      row.accelerator = args.accelerator;
      row.op = shape.batch > 1 ? "batched_gemm" : "gemm";
      row.dtype = ck::dtype_name(dtype);
      row.m = shape.m;
      row.n = shape.n;
      row.k = shape.k;
      row.batch = shape.batch;
      row.time_s = timing.median_s;
      row.spread_s = timing.spread_s;
      row.repeats = timing.repeats;
      row.source = source + "; cuBLASLt TN; " + shape.label;
      if (dtype == ck::GemmDtype::fp8) row.source += "; e4m3 in, bf16 out, fast accumulation";
      rows.push_back(row);
      const double flops = 2.0 * static_cast<double>(shape.m * shape.n) *
                           static_cast<double>(shape.k * shape.batch);
      std::fprintf(stderr, "gemm_bench: %-4s %-45s %9.3f ms %7.1f TFLOP/s\n", row.dtype.c_str(),
                   shape.label.c_str(), timing.median_s * 1e3, flops / timing.median_s * 1e-12);
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) { return ck::run_benchmark(argc, argv, "gemm_bench", measure); }
