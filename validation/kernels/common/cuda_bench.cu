#include "cuda_bench.cuh"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

namespace clustersim::kernels {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": cuBLAS status " +
                             std::to_string(static_cast<int>(status)));
  }
}

void require_cuda_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw NoDeviceError(std::string("no CUDA device found (cudaGetDeviceCount: ") +
                        cudaGetErrorString(status) + ")");
  }
  if (count == 0) throw NoDeviceError("no CUDA device found");
}

std::vector<double> time_repeats(const std::function<void()>& launch, int warmup, int repeats,
                                 cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i) launch();
  check_cuda(cudaGetLastError(), "warm-up launch");
  check_cuda(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> samples_s;
  samples_s.reserve(static_cast<std::size_t>(repeats));
  try {
    for (int i = 0; i < repeats; ++i) {
      check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
      launch();
      check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop), "timed execution");
      float elapsed_ms = 0.0f;
      check_cuda(cudaEventElapsedTime(&elapsed_ms, start, stop), "cudaEventElapsedTime");
      samples_s.push_back(static_cast<double>(elapsed_ms) * 1e-3);
    }
    check_cuda(cudaGetLastError(), "timed launch");
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return samples_s;
}

TimingSummary time_op(const std::function<void()>& launch, int warmup, int repeats,
                      cudaStream_t stream) {
  return summarize(time_repeats(launch, warmup, repeats, stream));
}

L2Flush::L2Flush(std::size_t l2_bytes) : bytes_(std::max<std::size_t>(256ull << 20, 4 * l2_bytes)) {
  check_cuda(cudaMalloc(&buffer_, bytes_), "cudaMalloc L2 flush buffer");
}

L2Flush::~L2Flush() {
  if (buffer_) cudaFree(buffer_);
}

void L2Flush::enqueue(cudaStream_t stream) const {
  check_cuda(cudaMemsetAsync(buffer_, 0, bytes_, stream), "L2 flush");
}

std::vector<double> time_repeats_cold(const std::function<void()>& launch, int warmup, int repeats,
                                      cudaStream_t stream, const L2Flush& flush) {
  for (int i = 0; i < warmup; ++i) launch();
  check_cuda(cudaGetLastError(), "warm-up launch");
  check_cuda(cudaStreamSynchronize(stream), "warm-up");
  std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(repeats), nullptr);
  const auto destroy = [&] {
    for (cudaEvent_t event : events) {
      if (event) cudaEventDestroy(event);
    }
  };
  std::vector<double> samples_s;
  samples_s.reserve(static_cast<std::size_t>(repeats));
  try {
    for (cudaEvent_t& event : events) check_cuda(cudaEventCreate(&event), "cudaEventCreate");
    for (std::size_t i = 0; i < events.size(); i += 2) {
      flush.enqueue(stream);
      check_cuda(cudaEventRecord(events[i], stream), "cudaEventRecord");
      launch();
      check_cuda(cudaEventRecord(events[i + 1], stream), "cudaEventRecord");
    }
    check_cuda(cudaGetLastError(), "timed launch");
    check_cuda(cudaStreamSynchronize(stream), "timed executions");
    for (std::size_t i = 0; i < events.size(); i += 2) {
      float elapsed_ms = 0.0f;
      check_cuda(cudaEventElapsedTime(&elapsed_ms, events[i], events[i + 1]), "cudaEventElapsedTime");
      samples_s.push_back(static_cast<double>(elapsed_ms) * 1e-3);
    }
  } catch (...) {
    destroy();
    throw;
  }
  destroy();
  return samples_s;
}

TimingSummary time_op_cold(const std::function<void()>& launch, int warmup, int repeats,
                           cudaStream_t stream, const L2Flush& flush) {
  return summarize(time_repeats_cold(launch, warmup, repeats, stream, flush));
}

DeviceInfo current_device_info() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  DeviceInfo info;
  info.name = properties.name;
  info.sm_count = properties.multiProcessorCount;
  info.compute_capability = properties.major * 10 + properties.minor;
  info.l2_bytes = static_cast<std::size_t>(properties.l2CacheSize);
  info.global_memory_bytes = properties.totalGlobalMem;
  return info;
}

namespace {

std::string today_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d", &utc);
  return buffer;
}

bool has_key(const CalibrationMetadata& metadata, const std::string& key) {
  for (const auto& entry : metadata) {
    if (entry.first == key) return true;
  }
  return false;
}

}  // namespace

int run_benchmark(int argc, char** argv, const std::string& tool,
                  const std::function<std::vector<CalibrationRow>(const BenchArgs&,
                                                                  const std::string& source)>&
                      measure,
                  const std::vector<std::string>& shape_sets) {
  BenchArgs args;
  try {
    args = parse_bench_args(std::vector<std::string>(argv + 1, argv + argc));
    bool supported = false;
    for (const std::string& set : shape_sets) supported = supported || set == args.shapes;
    if (!supported) {
      throw std::invalid_argument("--shapes " + args.shapes + " is not measured by this program");
    }
  } catch (const std::invalid_argument& error) {
    std::cerr << tool << ": " << error.what() << '\n' << bench_usage(tool) << '\n';
    return 64;
  }
  try {
    require_cuda_device();
    CalibrationMetadata metadata = args.metadata;
    if (!has_key(metadata, "gpu")) metadata.emplace_back("gpu", current_device_info().name);
    if (!has_key(metadata, "date")) metadata.emplace_back("date", today_iso());
    if (!has_key(metadata, "cuda")) {
      int runtime_version = 0;
      check_cuda(cudaRuntimeGetVersion(&runtime_version), "cudaRuntimeGetVersion");
      metadata.emplace_back("cuda", std::to_string(runtime_version / 1000) + "." +
                                        std::to_string((runtime_version % 1000) / 10));
    }
    if (!has_key(metadata, "tool")) metadata.emplace_back("tool", "validation/kernels/" + tool);
    if (args.shapes != "default" && !has_key(metadata, "shapes")) metadata.emplace_back("shapes", args.shapes);
    std::string date;
    for (const auto& [key, value] : metadata) {
      if (key == "date") date = value;
    }
    const std::string source =
        args.source.empty() ? "validation/kernels/" + tool + " " + date.substr(0, 10) : args.source;
    const std::vector<CalibrationRow> rows = measure(args, source);
    std::ostringstream text;
    write_calibration_csv(text, metadata, rows);
    std::ofstream file(args.out_path);
    if (!file) throw std::runtime_error("cannot open '" + args.out_path + "' for writing");
    file << text.str();
    if (!file) throw std::runtime_error("cannot write '" + args.out_path + "'");
    std::cerr << tool << ": wrote " << rows.size() << " rows to " << args.out_path << '\n';
    return 0;
  } catch (const NoDeviceError& error) {
    std::cerr << tool << ": " << error.what() << '\n';
    return 2;
  } catch (const std::exception& error) {
    std::cerr << tool << ": error: " << error.what() << '\n';
    return 1;
  }
}

}  // namespace clustersim::kernels
