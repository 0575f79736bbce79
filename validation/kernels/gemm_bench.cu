// cuBLASLt GEMM sweep: square sizes and the per-rank GEMMs of Llama-3-70B and GPT-3 175B
// layers at tp 8 (forward, dgrad, wgrad) plus GPT-3's attention batched GEMMs, in tf32, bf16,
// fp16 and (on compute capability >= 8.9) fp8 e4m3. One calibration row per shape and dtype.
//
// --shapes decode: the skinny GEMMs of LLM decode instead (Llama-3-8B and -70B linears at tp 1,
// 2, 4, 8 against 1..256 tokens) in bf16 and fp8, laid out as torch's F.linear runs them (the
// weight is cuBLAS's A operand, so the few tokens are its n) and with the L2 cache flushed
// before each timed execution, so the weights stream from HBM as they do when a decode step
// walks through the layers.

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

std::vector<ck::CalibrationRow> measure_decode(const ck::BenchArgs& args, const std::string& source) {
  const ck::DeviceInfo device = ck::current_device_info();
  const std::vector<ck::GemmShape> shapes = ck::decode_gemm_sweep(args.quick);
  std::vector<ck::GemmDtype> dtypes = {ck::GemmDtype::bf16};
  if (device.compute_capability >= 89) {
    dtypes.push_back(ck::GemmDtype::fp8);
  } else {
    std::cerr << "gemm_bench: fp8 skipped (compute capability " << device.compute_capability
              << " < 8.9)\n";
  }
  // Elements: the weight is n x k per shape, the activations m x k, the output m x n.
  std::size_t weight_max = 0, act_max = 0, out_max = 0;
  for (const ck::GemmShape& shape : shapes) {
    weight_max = std::max(weight_max, static_cast<std::size_t>(shape.n * shape.k));
    act_max = std::max(act_max, static_cast<std::size_t>(shape.m * shape.k));
    out_max = std::max(out_max, static_cast<std::size_t>(shape.m * shape.n));
  }
  // Sized for bf16 (2 bytes per element), so fp8 fits too.
  const ck::GemmBuffers buffers(weight_max * 2, act_max * 2, out_max * 2, kWorkspaceBytes);
  const ck::L2Flush flush(device.l2_bytes);
  cudaStream_t stream = buffers.stream;
  std::fprintf(stderr, "gemm_bench: decode sweep, %zu shapes, L2 flushed with %.0f MiB before each execution\n",
               shapes.size(), static_cast<double>(flush.bytes()) / (1 << 20));

  std::vector<ck::CalibrationRow> rows;
  int skipped = 0;
  for (ck::GemmDtype dtype : dtypes) {
    ck::fill_random(buffers.a, weight_max, dtype, false, 1.0f, 1u, stream);
    ck::fill_random(buffers.b, act_max, dtype, false, 1.0f, 2u, stream);
    ck::fill_random(buffers.c, out_max, dtype, true, 0.0f, 3u, stream);
    ck::check_cuda(cudaStreamSynchronize(stream), "fill");
    for (const ck::GemmShape& shape : shapes) {
      // Y[m x n] = X[m x k] W^T with W stored n x k row-major (torch's Linear weight) is
      // cuBLAS's column-major C[n x m] = op(A) B with A = W (stored k x n column-major,
      // transposed) and B = X (k x m): the TN layout fp8 needs on Hopper, with the few tokens as
      // cuBLAS's n and C's leading dimension n (aligned for fp8 even at one token).
      std::unique_ptr<ck::LtGemm> gemm;
      try {
        gemm = std::make_unique<ck::LtGemm>(buffers.handle, ck::tn_gemm(dtype, shape.n, shape.m, shape.k),
                                            kWorkspaceBytes);
      } catch (const ck::UnsupportedGemm& error) {
        std::cerr << "gemm_bench: skipped " << ck::dtype_name(dtype) << ' ' << shape.label << ": "
                  << error.what() << '\n';
        ++skipped;
        continue;
      }
      const ck::TimingSummary timing = ck::time_op_cold(
          [&] { gemm->run(buffers.a, buffers.b, buffers.c, buffers.workspace, stream); }, args.warmup,
          args.repeats, stream, flush);
      ck::CalibrationRow row;
      row.accelerator = args.accelerator;
      row.op = "gemm";
      row.dtype = ck::dtype_name(dtype);
      row.m = shape.m;
      row.n = shape.n;
      row.k = shape.k;
      row.batch = 1;
      row.time_s = timing.median_s;
      row.spread_s = timing.spread_s;
      row.repeats = timing.repeats;
      row.source = source + "; cuBLASLt TN, weight as A (torch F.linear layout); L2 flushed; " + shape.label;
      if (dtype == ck::GemmDtype::fp8) row.source += "; e4m3 in, bf16 out, fast accumulation";
      rows.push_back(row);
      const double element = static_cast<double>(ck::input_element_bytes(dtype));
      const double flops = 2.0 * static_cast<double>(shape.m * shape.n) * static_cast<double>(shape.k);
      const double bytes = static_cast<double>((shape.n + shape.m) * shape.k) * element +
                           static_cast<double>(shape.m * shape.n) * 2.0;
      std::fprintf(stderr, "gemm_bench: %-4s %-36s %9.4f ms %7.1f TFLOP/s %7.0f GB/s\n", row.dtype.c_str(),
                   shape.label.c_str(), timing.median_s * 1e3, flops / timing.median_s * 1e-12,
                   bytes / timing.median_s * 1e-9);
    }
  }
  if (skipped > 0) std::fprintf(stderr, "gemm_bench: %d decode GEMMs unsupported by cuBLASLt here\n", skipped);
  return rows;
}

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  if (args.shapes == "decode") return measure_decode(args, source);
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

int main(int argc, char** argv) {
  return ck::run_benchmark(argc, argv, "gemm_bench", measure, {"default", "decode"});
}
