#pragma once
// A prepared cuBLASLt matmul: descriptors and the heuristic's best algorithm are chosen once,
// so timing loops measure the matmul alone.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace clustersim::kernels {

/// Element types of the suite's GEMMs (inputs; fp8 writes bf16 output, tf32 writes fp32).
enum class GemmDtype { tf32, bf16, fp16, fp8 };

/// The calibration CSV name of a dtype ("tf32", "bf16", ...).
const char* dtype_name(GemmDtype dtype);
/// Bytes per input element (A and B).
std::size_t input_element_bytes(GemmDtype dtype);
/// Bytes per output element (C).
std::size_t output_element_bytes(GemmDtype dtype);

/// Raised when cuBLASLt has no algorithm for a shape/dtype/layout on this device.
class UnsupportedGemm : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A column-major cuBLASLt problem D[m x n] = op(A) op(B) (+ beta C, C = D).
struct LtGemmSpec {
  GemmDtype dtype = GemmDtype::bf16;
  bool trans_a = false;
  bool trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int32_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  ///< elements between batch members
};

/// The column-major problem computing row-major C[m x n] = op(A) op(B), where row-major A is
/// m x k (k x m when trans_a) and B is k x n (n x k when trans_b); strides are dense.
LtGemmSpec row_major_gemm(GemmDtype dtype, bool trans_a, bool trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, std::int32_t batch = 1);

/// The "TN" column-major problem the sweep uses (the layout fp8 requires on Hopper):
/// A stored k x m and transposed, B stored k x n, C m x n.
LtGemmSpec tn_gemm(GemmDtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int32_t batch = 1);

/// A prepared matmul. Throws UnsupportedGemm when the heuristic returns no algorithm.
class LtGemm {
 public:
  LtGemm(cublasLtHandle_t handle, const LtGemmSpec& spec, std::size_t workspace_bytes);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  /// Enqueues D = alpha op(A) op(B) + beta D on `stream`.
  void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream,
           float alpha = 1.0f, float beta = 0.0f) const;

 private:
  void prepare(const LtGemmSpec& spec);
  void release();

  cublasLtHandle_t handle_;
  std::size_t workspace_bytes_;
  cublasLtMatmulDesc_t operation_ = nullptr;
  cublasLtMatrixLayout_t layout_a_ = nullptr, layout_b_ = nullptr, layout_c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

/// What a GEMM benchmark holds: device buffers for A, B and C, a cuBLASLt workspace, a stream
/// and a cuBLASLt handle, released on destruction (also when a later allocation fails).
class GemmBuffers {
 public:
  GemmBuffers(std::size_t a_bytes, std::size_t b_bytes, std::size_t c_bytes, std::size_t workspace_bytes);
  ~GemmBuffers();
  GemmBuffers(const GemmBuffers&) = delete;
  GemmBuffers& operator=(const GemmBuffers&) = delete;

  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* workspace = nullptr;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t handle = nullptr;

 private:
  void release();
};

/// Fills `count` elements of type `dtype` (input type when `output` is false, else output type)
/// with deterministic pseudo-random values uniform in [-scale, scale].
void fill_random(void* data, std::size_t count, GemmDtype dtype, bool output, float scale,
                 std::uint32_t seed, cudaStream_t stream);

}  // namespace clustersim::kernels
