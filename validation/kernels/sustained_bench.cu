// Sustained-load GEMM: one bf16 8192^3 cuBLASLt GEMM launched back to back for minutes (default
// 120 s, --quick 15 s, --seconds N), timed in windows of about a second. The suite's other
// benchmarks (and MAMF-style searches) time short runs; a training GPU sits at its power and
// thermal limits for hours. The row it writes is the settled rate (the median of the windows of
// the last 30 s), so `clustersim validate kernels DIR/sustained` compares the compute model with
// what the GPU keeps; the first window's rate and the whole curve go to stderr (run.log), and
// run.sh logs nvidia-smi clocks and power beside it (sustained/smi.csv).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "common/cuda_bench.cuh"
#include "common/lt_gemm.cuh"
#include "common/sustained.hpp"

namespace ck = clustersim::kernels;

namespace {

constexpr std::size_t kWorkspaceBytes = 64ull << 20;
constexpr std::int64_t kSize = 8192;
constexpr double kWindowS = 1.0;
constexpr double kSettledTailS = 30.0;

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  const int seconds = args.seconds > 0 ? args.seconds : (args.quick ? 15 : 120);
  const ck::GemmDtype dtype = ck::GemmDtype::bf16;
  const auto elements = static_cast<std::size_t>(kSize * kSize);
  const ck::GemmBuffers buffers(elements * 2, elements * 2, elements * 2, kWorkspaceBytes);
  void *a = buffers.a, *b = buffers.b, *c = buffers.c, *workspace = buffers.workspace;
  cudaStream_t stream = buffers.stream;
  // Random operands: all-zero inputs draw less power and run faster (measured_h200).
  ck::fill_random(a, elements, dtype, false, 1.0f, 1u, stream);
  ck::fill_random(b, elements, dtype, false, 1.0f, 2u, stream);
  ck::fill_random(c, elements, dtype, true, 0.0f, 3u, stream);
  ck::check_cuda(cudaStreamSynchronize(stream), "fill");
  const ck::LtGemm gemm(buffers.handle, ck::tn_gemm(dtype, kSize, kSize, kSize, 1), kWorkspaceBytes);
  const auto launch = [&] { gemm.run(a, b, c, workspace, stream); };

  // Executions per window from a short timing.
  const ck::TimingSummary probe = ck::time_op(launch, 3, 10, stream);
  const int per_window = std::max(1, static_cast<int>(std::lround(kWindowS / probe.median_s)));
  const double flops = 2.0 * static_cast<double>(kSize) * static_cast<double>(kSize) * static_cast<double>(kSize);

  cudaEvent_t start = nullptr, stop = nullptr;
  ck::check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  ck::check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<ck::SustainWindow> windows;
  const auto begin = std::chrono::steady_clock::now();
  const auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  while (elapsed_s() < seconds) {
    ck::SustainWindow window;
    window.start_s = elapsed_s();
    ck::check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < per_window; ++i) launch();
    ck::check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    ck::check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    ck::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    window.seconds = static_cast<double>(ms) * 1e-3;
    window.executions = per_window;
    windows.push_back(window);
    std::fprintf(stderr, "sustained_bench: %7.1f s %8.1f TFLOP/s\n", window.start_s,
                 flops * per_window / window.seconds * 1e-12);
  }
  cudaEventDestroy(stop);
  cudaEventDestroy(start);

  const ck::SustainedSummary summary = ck::summarize_sustained(windows, kSettledTailS);
  const double first = flops / summary.first_op_s * 1e-12;
  const double settled = flops / summary.settled_op_s * 1e-12;
  std::fprintf(stderr, "sustained_bench: first window %.1f TFLOP/s, settled (from %.0f s) %.1f TFLOP/s (%.3f)\n",
               first, summary.settled_from_s, settled, settled / first);
  ck::CalibrationRow row;
  row.accelerator = args.accelerator;
  row.op = "gemm";
  row.dtype = ck::dtype_name(dtype);
  row.m = kSize;
  row.n = kSize;
  row.k = kSize;
  row.batch = 1;
  row.time_s = summary.settled_op_s;
  row.spread_s = summary.settled_spread_s;
  row.repeats = summary.settled_executions;
  char note[256];
  std::snprintf(note, sizeof note,
                "; cuBLASLt TN; sustained: back to back for %d s, settled median from %.0f s; first window "
                "%.1f TFLOP/s, settled %.1f",
                seconds, summary.settled_from_s, first, settled);
  row.source = source + note;
  return {row};
}

}  // namespace

int main(int argc, char** argv) { return ck::run_benchmark(argc, argv, "sustained_bench", measure); }
