#include "lt_gemm.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda_bench.cuh"

namespace clustersim::kernels {

const char* dtype_name(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::tf32: return "tf32";
    case GemmDtype::bf16: return "bf16";
    case GemmDtype::fp16: return "fp16";
    case GemmDtype::fp8: return "fp8";
  }
  return "?";
}

std::size_t input_element_bytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::tf32: return 4;
    case GemmDtype::bf16:
    case GemmDtype::fp16: return 2;
    case GemmDtype::fp8: return 1;
  }
  return 0;
}

std::size_t output_element_bytes(GemmDtype dtype) {
  return dtype == GemmDtype::tf32 ? 4 : 2;  // fp8 GEMMs write bf16
}

namespace {

cudaDataType_t input_type(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::tf32: return CUDA_R_32F;
    case GemmDtype::bf16: return CUDA_R_16BF;
    case GemmDtype::fp16: return CUDA_R_16F;
    case GemmDtype::fp8: return CUDA_R_8F_E4M3;
  }
  return CUDA_R_32F;
}

cudaDataType_t output_type(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::tf32: return CUDA_R_32F;
    case GemmDtype::fp16: return CUDA_R_16F;
    case GemmDtype::bf16:
    case GemmDtype::fp8: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols,
                                   std::int64_t ld, std::int32_t batch, std::int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                          static_cast<std::uint64_t>(cols), ld),
               "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    check_cublas(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &batch, sizeof batch),
                 "set batch count");
    check_cublas(cublasLtMatrixLayoutSetAttribute(
                     layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                 "set batch stride");
  }
  return layout;
}

}  // namespace

LtGemmSpec row_major_gemm(GemmDtype dtype, bool trans_a, bool trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, std::int32_t batch) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap operands and m/n;
  // a row-major matrix read column-major is its transpose, so the trans flags carry over.
  LtGemmSpec spec;
  spec.dtype = dtype;
  spec.trans_a = trans_b;
  spec.trans_b = trans_a;
  spec.m = n;
  spec.n = m;
  spec.k = k;
  spec.lda = trans_b ? k : n;
  spec.ldb = trans_a ? m : k;
  spec.ldc = n;
  spec.batch = batch;
  spec.stride_a = k * n;
  spec.stride_b = m * k;
  spec.stride_c = m * n;
  return spec;
}

LtGemmSpec tn_gemm(GemmDtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int32_t batch) {
  LtGemmSpec spec;
  spec.dtype = dtype;
  spec.trans_a = true;
  spec.trans_b = false;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.lda = k;
  spec.ldb = k;
  spec.ldc = m;
  spec.batch = batch;
  spec.stride_a = m * k;
  spec.stride_b = k * n;
  spec.stride_c = m * n;
  return spec;
}

LtGemm::LtGemm(cublasLtHandle_t handle, const LtGemmSpec& spec, std::size_t workspace_bytes)
    : handle_(handle), workspace_bytes_(workspace_bytes) {
  try {
    prepare(spec);
  } catch (...) {
    release();  // a throwing constructor runs no destructor
    throw;
  }
}

void LtGemm::prepare(const LtGemmSpec& spec) {
  const cublasComputeType_t compute =
      spec.dtype == GemmDtype::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check_cublas(cublasLtMatmulDescCreate(&operation_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_a = spec.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = spec.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(operation_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a,
                                              sizeof op_a),
               "set transa");
  check_cublas(cublasLtMatmulDescSetAttribute(operation_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b,
                                              sizeof op_b),
               "set transb");
  if (spec.dtype == GemmDtype::fp8) {
    // Transformer Engine's forward setting; documented in docs/validation.md.
    const std::int8_t fast_accumulate = 1;
    check_cublas(cublasLtMatmulDescSetAttribute(operation_, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                &fast_accumulate, sizeof fast_accumulate),
                 "set fast accumulation");
  }
  const cudaDataType_t in = input_type(spec.dtype);
  const cudaDataType_t out = output_type(spec.dtype);
  layout_a_ = make_layout(in, spec.trans_a ? spec.k : spec.m, spec.trans_a ? spec.m : spec.k,
                          spec.lda, spec.batch, spec.stride_a);
  layout_b_ = make_layout(in, spec.trans_b ? spec.n : spec.k, spec.trans_b ? spec.k : spec.n,
                          spec.ldb, spec.batch, spec.stride_b);
  layout_c_ = make_layout(out, spec.m, spec.n, spec.ldc, spec.batch, spec.stride_c);

  cublasLtMatmulPreference_t preference = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  check_cublas(cublasLtMatmulPreferenceSetAttribute(preference,
                                                    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes_, sizeof workspace_bytes_),
               "set workspace");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, operation_, layout_a_, layout_b_, layout_c_, layout_c_, preference, 1, &result,
      &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw UnsupportedGemm(std::string("cuBLASLt has no ") + dtype_name(spec.dtype) +
                          " algorithm for m=" + std::to_string(spec.m) + " n=" +
                          std::to_string(spec.n) + " k=" + std::to_string(spec.k) +
                          " (status " + std::to_string(static_cast<int>(status)) + ")");
  }
  algo_ = result.algo;
}

LtGemm::~LtGemm() { release(); }

GemmBuffers::GemmBuffers(std::size_t a_bytes, std::size_t b_bytes, std::size_t c_bytes,
                         std::size_t workspace_bytes) {
  try {
    check_cuda(cudaMalloc(&a, a_bytes), "cudaMalloc A");
    check_cuda(cudaMalloc(&b, b_bytes), "cudaMalloc B");
    check_cuda(cudaMalloc(&c, c_bytes), "cudaMalloc C");
    check_cuda(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc workspace");
    check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
    check_cublas(cublasLtCreate(&handle), "cublasLtCreate");
  } catch (...) {
    release();
    throw;
  }
}

GemmBuffers::~GemmBuffers() { release(); }

void GemmBuffers::release() {
  if (handle) cublasLtDestroy(handle);
  if (stream) cudaStreamDestroy(stream);
  for (void* buffer : {workspace, c, b, a}) {
    if (buffer) cudaFree(buffer);
  }
  handle = nullptr;
  stream = nullptr;
  a = b = c = workspace = nullptr;
}

void LtGemm::release() {
  if (layout_c_) cublasLtMatrixLayoutDestroy(layout_c_);
  if (layout_b_) cublasLtMatrixLayoutDestroy(layout_b_);
  if (layout_a_) cublasLtMatrixLayoutDestroy(layout_a_);
  if (operation_) cublasLtMatmulDescDestroy(operation_);
  layout_a_ = layout_b_ = layout_c_ = nullptr;
  operation_ = nullptr;
}

void LtGemm::run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream,
                 float alpha, float beta) const {
  check_cublas(cublasLtMatmul(handle_, operation_, &alpha, a, layout_a_, b, layout_b_, &beta, c,
                              layout_c_, c, layout_c_, &algo_, workspace, workspace_bytes_, stream),
               "cublasLtMatmul");
}

namespace {

__device__ float hash_uniform(std::uint32_t seed, std::size_t index) {
  std::uint32_t x = seed ^ static_cast<std::uint32_t>(index * 0x9E3779B1u) ^
                    static_cast<std::uint32_t>(index >> 32);
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f;  // [-1, 1)
}

template <class T>
__global__ void fill_kernel(T* data, std::size_t count, float scale, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    data[i] = T(scale * hash_uniform(seed, i));
  }
}

template <class T>
void launch_fill(void* data, std::size_t count, float scale, std::uint32_t seed,
                 cudaStream_t stream) {
  fill_kernel<T><<<1024, 256, 0, stream>>>(static_cast<T*>(data), count, scale, seed);
  check_cuda(cudaGetLastError(), "fill kernel");
}

}  // namespace

void fill_random(void* data, std::size_t count, GemmDtype dtype, bool output, float scale,
                 std::uint32_t seed, cudaStream_t stream) {
  const cudaDataType_t type = output ? output_type(dtype) : input_type(dtype);
  switch (type) {
    case CUDA_R_32F: launch_fill<float>(data, count, scale, seed, stream); break;
    case CUDA_R_16BF: launch_fill<__nv_bfloat16>(data, count, scale, seed, stream); break;
    case CUDA_R_16F: launch_fill<__half>(data, count, scale, seed, stream); break;
    case CUDA_R_8F_E4M3: launch_fill<__nv_fp8_e4m3>(data, count, scale, seed, stream); break;
    default: throw std::runtime_error("fill_random: unsupported element type");
  }
}

}  // namespace clustersim::kernels
