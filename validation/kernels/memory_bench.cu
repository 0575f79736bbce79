// Memory-bandwidth microbenchmarks: HBM read, write, copy and triad (STREAM-style, arrays far
// larger than L2), device-to-device cudaMemcpy, and L2 read bandwidth (a working set smaller
// than L2 read repeatedly). `bytes` counts bytes read plus bytes written.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "common/cuda_bench.cuh"

namespace ck = clustersim::kernels;

namespace {

constexpr int kThreads = 256;

// The conditional store depends on every loaded value, so the loads cannot be elided, and it
// never fires for the finite fill values used here.
__global__ void read_kernel(const float4* in, std::size_t count, int passes, float* sink) {
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
         i < count; i += stride) {
      const float4 v = in[i];
      sum += (v.x + v.y) + (v.z + v.w);
    }
  }
  if (sum == -1.2345e30f) sink[0] = sum;
}

__global__ void write_kernel(float4* out, std::size_t count, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    out[i] = make_float4(value, value, value, value);
  }
}

__global__ void copy_kernel(const float4* in, float4* out, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    out[i] = in[i];
  }
}

__global__ void triad_kernel(float4* a, const float4* b, const float4* c, float scalar,
                             std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + scalar * y.x, x.y + scalar * y.y, x.z + scalar * y.z,
                       x.w + scalar * y.w);
  }
}

ck::CalibrationRow bandwidth_row(const ck::BenchArgs& args, const std::string& op, double bytes,
                                 const ck::TimingSummary& timing, const std::string& source) {
  ck::CalibrationRow row;
  row.accelerator = args.accelerator;
  row.op = op;
  row.dtype = "fp32";
  row.bytes = bytes;
  row.time_s = timing.median_s;
  row.spread_s = timing.spread_s;
  row.repeats = timing.repeats;
  row.source = source;
  std::fprintf(stderr, "memory_bench: %-9s %12.0f bytes %9.3f ms %8.1f GB/s\n", op.c_str(), bytes,
               timing.median_s * 1e3, bytes / timing.median_s * 1e-9);
  return row;
}

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  const ck::DeviceInfo device = ck::current_device_info();
  const int blocks = device.sm_count * 8;
  std::vector<std::size_t> hbm_sizes = {256ull << 20, 1ull << 30, 4ull << 30};
  if (args.quick) hbm_sizes = {1ull << 30};
  // Three arrays for triad; keep a quarter of device memory free.
  while (!hbm_sizes.empty() && 3 * hbm_sizes.back() > device.global_memory_bytes * 3 / 4) {
    hbm_sizes.pop_back();
  }
  if (hbm_sizes.empty()) throw std::runtime_error("memory_bench: device memory too small");
  const std::size_t max_bytes = hbm_sizes.back();
  float4 *a = nullptr, *b = nullptr, *c = nullptr;
  float* sink = nullptr;
  ck::check_cuda(cudaMalloc(&a, max_bytes), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&b, max_bytes), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&c, max_bytes), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
  cudaStream_t stream = nullptr;
  ck::check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  const std::size_t max_count = max_bytes / sizeof(float4);
  write_kernel<<<blocks, kThreads, 0, stream>>>(a, max_count, 1.0f);
  write_kernel<<<blocks, kThreads, 0, stream>>>(b, max_count, 2.0f);
  write_kernel<<<blocks, kThreads, 0, stream>>>(c, max_count, 3.0f);
  ck::check_cuda(cudaStreamSynchronize(stream), "initialize");

  std::vector<ck::CalibrationRow> rows;
  for (std::size_t bytes : hbm_sizes) {
    const std::size_t count = bytes / sizeof(float4);
    const double size = static_cast<double>(bytes);
    const std::string label = source + "; " + std::to_string(bytes >> 20) + " MiB per array";
    rows.push_back(bandwidth_row(
        args, "hbm_read", size,
        ck::time_op([&] { read_kernel<<<blocks, kThreads, 0, stream>>>(b, count, 1, sink); },
                    args.warmup, args.repeats, stream),
        label));
    rows.push_back(bandwidth_row(
        args, "hbm_write", size,
        ck::time_op([&] { write_kernel<<<blocks, kThreads, 0, stream>>>(a, count, 1.0f); },
                    args.warmup, args.repeats, stream),
        label));
    rows.push_back(bandwidth_row(
        args, "hbm_copy", 2 * size,
        ck::time_op([&] { copy_kernel<<<blocks, kThreads, 0, stream>>>(b, a, count); },
                    args.warmup, args.repeats, stream),
        label + "; read + written"));
    rows.push_back(bandwidth_row(
        args, "hbm_triad", 3 * size,
        ck::time_op([&] { triad_kernel<<<blocks, kThreads, 0, stream>>>(a, b, c, 3.0f, count); },
                    args.warmup, args.repeats, stream),
        label + "; a = b + s*c, read + written"));
    rows.push_back(bandwidth_row(
        args, "memcpy", 2 * size,
        ck::time_op(
            [&] {
              ck::check_cuda(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, stream),
                             "cudaMemcpyAsync");
            },
            args.warmup, args.repeats, stream),
        label + "; cudaMemcpyAsync device to device, read + written"));
  }

  // L2: working sets of 1/8, 1/4 and 1/2 of L2, each read until ~1 GiB has been read per launch.
  for (std::size_t divisor : {std::size_t{8}, std::size_t{4}, std::size_t{2}}) {
    const std::size_t bytes = (device.l2_bytes / divisor) & ~std::size_t{4095};
    if (bytes == 0) continue;
    const int passes = static_cast<int>(std::max<std::size_t>(1, (1ull << 30) / bytes));
    const std::size_t count = bytes / sizeof(float4);
    const ck::TimingSummary timing = ck::time_op(
        [&] { read_kernel<<<blocks, kThreads, 0, stream>>>(b, count, passes, sink); }, args.warmup,
        args.repeats, stream);
    rows.push_back(bandwidth_row(args, "l2_read", static_cast<double>(bytes) * passes, timing,
                                 source + "; working set " + std::to_string(bytes >> 10) +
                                     " KiB (L2 " + std::to_string(device.l2_bytes >> 20) +
                                     " MiB) read " + std::to_string(passes) + " times"));
  }
  cudaStreamDestroy(stream);
  cudaFree(sink);
  cudaFree(c);
  cudaFree(b);
  cudaFree(a);
  return rows;
}

}  // namespace

int main(int argc, char** argv) { return ck::run_benchmark(argc, argv, "memory_bench", measure); }
