// A FlashAttention-style tiled forward kernel (bf16 in/out, fp32 accumulation, tensor cores via
// WMMA, online softmax, causal masking, GQA), checked against a naive reference on a small
// shape before it is timed. The suite uses attention_sdpa.py (PyTorch SDPA, forward and
// backward) instead when torch is installed; this kernel is the fallback that needs only CUDA.

#include <mma.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "common/cuda_bench.cuh"
#include "common/lt_gemm.cuh"

namespace ck = clustersim::kernels;
using namespace nvcuda;

namespace {

constexpr int kHeadDim = 128;
constexpr int kRowsPerWarp = 16;
constexpr int kWarps = 4;
constexpr int kBlockRows = kRowsPerWarp * kWarps;  // query rows per block (Br)
constexpr int kBlockCols = 64;                     // keys per tile (Bc)
constexpr int kThreads = 32 * kWarps;

constexpr std::size_t kSharedBytes =
    sizeof(__nv_bfloat16) * (kBlockRows * kHeadDim + 2 * kBlockCols * kHeadDim) +  // Q, K, V
    sizeof(float) * kWarps * kRowsPerWarp * kBlockCols +                           // S
    sizeof(__nv_bfloat16) * kWarps * kRowsPerWarp * kBlockCols +                   // P
    sizeof(float) * kWarps * kRowsPerWarp * kHeadDim;                              // O

struct AttentionShape {
  const char* label;
  int batch, heads, kv_heads, seq;
  bool causal;
};

// Copies rows x kHeadDim bf16 from global (row stride kHeadDim) to shared with 16-byte loads.
__device__ void load_tile(__nv_bfloat16* shared, const __nv_bfloat16* global, int rows) {
  const int vectors = rows * kHeadDim / 8;
  const uint4* src = reinterpret_cast<const uint4*>(global);
  uint4* dst = reinterpret_cast<uint4*>(shared);
  for (int i = static_cast<int>(threadIdx.x); i < vectors; i += kThreads) dst[i] = src[i];
}

// q, o: [batch, heads, seq, 128]; k, v: [batch, kv_heads, seq, 128]. seq % 64 == 0.
__global__ void __launch_bounds__(kThreads)
flash_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
              __nv_bfloat16* o, int heads, int kv_heads, int seq, bool causal) {
  extern __shared__ __align__(128) unsigned char shared_raw[];
  __nv_bfloat16* q_tile = reinterpret_cast<__nv_bfloat16*>(shared_raw);
  __nv_bfloat16* k_tile = q_tile + kBlockRows * kHeadDim;
  __nv_bfloat16* v_tile = k_tile + kBlockCols * kHeadDim;
  float* s_all = reinterpret_cast<float*>(v_tile + kBlockCols * kHeadDim);
  __nv_bfloat16* p_all = reinterpret_cast<__nv_bfloat16*>(s_all + kWarps * kRowsPerWarp * kBlockCols);
  float* o_all = reinterpret_cast<float*>(p_all + kWarps * kRowsPerWarp * kBlockCols);

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int q_block = static_cast<int>(blockIdx.x);
  const int head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int kv_head = head / (heads / kv_heads);
  const std::size_t q_offset = ((static_cast<std::size_t>(batch) * heads + head) * seq +
                                static_cast<std::size_t>(q_block) * kBlockRows) * kHeadDim;
  const std::size_t kv_offset = (static_cast<std::size_t>(batch) * kv_heads + kv_head) *
                                static_cast<std::size_t>(seq) * kHeadDim;

  float* s_warp = s_all + warp * kRowsPerWarp * kBlockCols;
  __nv_bfloat16* p_warp = p_all + warp * kRowsPerWarp * kBlockCols;
  float* o_warp = o_all + warp * kRowsPerWarp * kHeadDim;
  const __nv_bfloat16* q_warp = q_tile + warp * kRowsPerWarp * kHeadDim;

  load_tile(q_tile, q + q_offset, kBlockRows);
  for (int i = lane; i < kRowsPerWarp * kHeadDim; i += 32) o_warp[i] = 0.0f;

  // Each lane owns half of one row of the warp's 16 rows.
  const int my_row = lane / 2;
  const int my_half = lane % 2;
  const int global_row = q_block * kBlockRows + warp * kRowsPerWarp + my_row;
  const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(kHeadDim));
  float row_max = -INFINITY;
  float row_sum = 0.0f;

  const int kv_end = causal ? (q_block + 1) * kBlockRows : seq;
  for (int kv0 = 0; kv0 < kv_end; kv0 += kBlockCols) {
    __syncthreads();  // previous tile fully consumed
    load_tile(k_tile, k + kv_offset + static_cast<std::size_t>(kv0) * kHeadDim, kBlockCols);
    load_tile(v_tile, v + kv_offset + static_cast<std::size_t>(kv0) * kHeadDim, kBlockCols);
    __syncthreads();

    // S = Q K^T for the warp's 16 rows and the tile's 64 keys.
    for (int j = 0; j < kBlockCols / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> s_frag;
      wmma::fill_fragment(s_frag, 0.0f);
      for (int kk = 0; kk < kHeadDim / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a_frag;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b_frag;
        wmma::load_matrix_sync(a_frag, q_warp + kk * 16, kHeadDim);
        wmma::load_matrix_sync(b_frag, k_tile + j * 16 * kHeadDim + kk * 16, kHeadDim);
        wmma::mma_sync(s_frag, a_frag, b_frag, s_frag);
      }
      wmma::store_matrix_sync(s_warp + j * 16, s_frag, kBlockCols, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax on the lane's 32 columns, combined with the partner lane.
    float* s_row = s_warp + my_row * kBlockCols + my_half * 32;
    float tile_max = -INFINITY;
    for (int c = 0; c < 32; ++c) {
      const int key = kv0 + my_half * 32 + c;
      const float logit = (causal && key > global_row) ? -INFINITY : s_row[c] * scale_log2;
      s_row[c] = logit;
      tile_max = fmaxf(tile_max, logit);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float new_max = fmaxf(row_max, tile_max);
    __nv_bfloat16* p_row = p_warp + my_row * kBlockCols + my_half * 32;
    float tile_sum = 0.0f;
    for (int c = 0; c < 32; ++c) {
      const float p = exp2f(s_row[c] - new_max);
      tile_sum += p;
      p_row[c] = __float2bfloat16(p);
    }
    tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
    const float correction = exp2f(row_max - new_max);  // 0 on the first tile
    row_sum = row_sum * correction + tile_sum;
    row_max = new_max;
    float* o_row = o_warp + my_row * kHeadDim + my_half * (kHeadDim / 2);
    for (int c = 0; c < kHeadDim / 2; ++c) o_row[c] *= correction;
    __syncwarp();

    // O += P V.
    for (int j = 0; j < kHeadDim / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> o_frag;
      wmma::load_matrix_sync(o_frag, o_warp + j * 16, kHeadDim, wmma::mem_row_major);
      for (int kk = 0; kk < kBlockCols / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a_frag;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b_frag;
        wmma::load_matrix_sync(a_frag, p_warp + kk * 16, kBlockCols);
        wmma::load_matrix_sync(b_frag, v_tile + kk * 16 * kHeadDim + j * 16, kHeadDim);
        wmma::mma_sync(o_frag, a_frag, b_frag, o_frag);
      }
      wmma::store_matrix_sync(o_warp + j * 16, o_frag, kHeadDim, wmma::mem_row_major);
    }
    __syncwarp();
  }

  const float inverse_sum = 1.0f / row_sum;
  const float* o_row = o_warp + my_row * kHeadDim + my_half * (kHeadDim / 2);
  __nv_bfloat16* out = o + q_offset + static_cast<std::size_t>(warp * kRowsPerWarp + my_row) * kHeadDim +
                       my_half * (kHeadDim / 2);
  for (int c = 0; c < kHeadDim / 2; ++c) out[c] = __float2bfloat16(o_row[c] * inverse_sum);
}

// One thread per query row, fp32 throughout: the self-check's reference.
__global__ void reference_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                    const __nv_bfloat16* v, float* o, int batch, int heads,
                                    int kv_heads, int seq, bool causal) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= batch * heads * seq) return;
  const int row = index % seq;
  const int head = (index / seq) % heads;
  const int b = index / (seq * heads);
  const int kv_head = head / (heads / kv_heads);
  const __nv_bfloat16* q_row = q + static_cast<std::size_t>(index) * kHeadDim;
  const std::size_t kv_base = (static_cast<std::size_t>(b) * kv_heads + kv_head) * seq * kHeadDim;
  const float scale = 1.0f / sqrtf(static_cast<float>(kHeadDim));
  const int keys = causal ? row + 1 : seq;
  float max_logit = -INFINITY;
  for (int j = 0; j < keys; ++j) {
    float dot = 0.0f;
    for (int d = 0; d < kHeadDim; ++d) {
      dot += __bfloat162float(q_row[d]) * __bfloat162float(k[kv_base + j * kHeadDim + d]);
    }
    max_logit = fmaxf(max_logit, dot * scale);
  }
  float* o_row = o + static_cast<std::size_t>(index) * kHeadDim;
  for (int d = 0; d < kHeadDim; ++d) o_row[d] = 0.0f;
  float sum = 0.0f;
  for (int j = 0; j < keys; ++j) {
    float dot = 0.0f;
    for (int d = 0; d < kHeadDim; ++d) {
      dot += __bfloat162float(q_row[d]) * __bfloat162float(k[kv_base + j * kHeadDim + d]);
    }
    const float p = expf(dot * scale - max_logit);
    sum += p;
    for (int d = 0; d < kHeadDim; ++d) o_row[d] += p * __bfloat162float(v[kv_base + j * kHeadDim + d]);
  }
  for (int d = 0; d < kHeadDim; ++d) o_row[d] /= sum;
}

void launch_flash(const AttentionShape& shape, const __nv_bfloat16* q, const __nv_bfloat16* k,
                  const __nv_bfloat16* v, __nv_bfloat16* o, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(shape.seq / kBlockRows), static_cast<unsigned>(shape.heads),
                  static_cast<unsigned>(shape.batch));
  flash_forward<<<grid, kThreads, kSharedBytes, stream>>>(q, k, v, o, shape.heads, shape.kv_heads,
                                                          shape.seq, shape.causal);
}

// Runs both kernels on a small GQA shape, causal and not; throws when they disagree.
void self_check(cudaStream_t stream) {
  for (bool causal : {false, true}) {
    const AttentionShape shape{"self-check", 2, 4, 2, 192, causal};
    const std::size_t q_elements = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq * kHeadDim;
    const std::size_t kv_elements = static_cast<std::size_t>(shape.batch) * shape.kv_heads * shape.seq * kHeadDim;
    __nv_bfloat16 *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
    float* reference = nullptr;
    ck::check_cuda(cudaMalloc(&q, q_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&k, kv_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&v, kv_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&o, q_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&reference, q_elements * 4), "cudaMalloc");
    ck::fill_random(q, q_elements, ck::GemmDtype::bf16, false, 1.0f, 11u, stream);
    ck::fill_random(k, kv_elements, ck::GemmDtype::bf16, false, 1.0f, 12u, stream);
    ck::fill_random(v, kv_elements, ck::GemmDtype::bf16, false, 1.0f, 13u, stream);
    launch_flash(shape, q, k, v, o, stream);
    const int rows = shape.batch * shape.heads * shape.seq;
    reference_attention<<<(rows + 127) / 128, 128, 0, stream>>>(q, k, v, reference, shape.batch,
                                                                shape.heads, shape.kv_heads,
                                                                shape.seq, shape.causal);
    ck::check_cuda(cudaStreamSynchronize(stream), "attention self-check");
    std::vector<__nv_bfloat16> got(q_elements);
    std::vector<float> want(q_elements);
    ck::check_cuda(cudaMemcpy(got.data(), o, q_elements * 2, cudaMemcpyDeviceToHost), "copy");
    ck::check_cuda(cudaMemcpy(want.data(), reference, q_elements * 4, cudaMemcpyDeviceToHost), "copy");
    double worst = 0.0;
    for (std::size_t i = 0; i < q_elements; ++i) {
      const double error = std::fabs(static_cast<double>(__bfloat162float(got[i])) - want[i]);
      worst = std::isfinite(error) ? std::max(worst, error) : 1e30;
    }
    cudaFree(reference);
    cudaFree(o);
    cudaFree(v);
    cudaFree(k);
    cudaFree(q);
    if (worst > 2e-2) {
      throw std::runtime_error("attention self-check failed (causal=" + std::to_string(causal) +
                               "): max |error| " + std::to_string(worst) + " > 0.02");
    }
    std::fprintf(stderr, "attention_bench: self-check causal=%d max |error| %.2e\n", causal ? 1 : 0,
                 worst);
  }
}

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  if (ck::current_device_info().compute_capability < 80) {
    throw std::runtime_error("attention_bench needs compute capability >= 8.0 (bf16 WMMA)");
  }
  ck::check_cuda(cudaFuncSetAttribute(flash_forward, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(kSharedBytes)),
                 "opt in to large shared memory");
  cudaStream_t stream = nullptr;
  ck::check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  self_check(stream);

  std::vector<AttentionShape> shapes = {
      {"llama-3-70b tp8 s8192 mb1", 1, 8, 1, 8192, true},
      {"gpt3-175b tp8 s2048 mb1", 1, 12, 12, 2048, true},
  };
  const std::vector<int> sweep = args.quick ? std::vector<int>{2048} : std::vector<int>{1024, 2048, 4096, 8192, 16384};
  for (int seq : sweep) {
    shapes.push_back({"sweep 16 heads", 1, 16, 16, seq, false});
    shapes.push_back({"sweep 16 heads", 1, 16, 16, seq, true});
  }
  std::size_t q_max = 0, kv_max = 0;
  for (const AttentionShape& shape : shapes) {
    q_max = std::max(q_max, static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq * kHeadDim);
    kv_max = std::max(kv_max, static_cast<std::size_t>(shape.batch) * shape.kv_heads * shape.seq * kHeadDim);
  }
  __nv_bfloat16 *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  ck::check_cuda(cudaMalloc(&q, q_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&k, kv_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&v, kv_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&o, q_max * 2), "cudaMalloc");
  ck::fill_random(q, q_max, ck::GemmDtype::bf16, false, 1.0f, 21u, stream);
  ck::fill_random(k, kv_max, ck::GemmDtype::bf16, false, 1.0f, 22u, stream);
  ck::fill_random(v, kv_max, ck::GemmDtype::bf16, false, 1.0f, 23u, stream);

  std::vector<ck::CalibrationRow> rows;
  for (const AttentionShape& shape : shapes) {
    const ck::TimingSummary timing = ck::time_op([&] { launch_flash(shape, q, k, v, o, stream); },
                                                 args.warmup, args.repeats, stream);
    ck::CalibrationRow row;
    row.accelerator = args.accelerator;
    row.op = "attention";
    row.dtype = "bf16";
    row.batch = shape.batch;
    row.heads = shape.heads;
    row.kv_heads = shape.kv_heads;
    row.seq_q = shape.seq;
    row.seq_kv = shape.seq;
    row.head_dim = kHeadDim;
    row.causal = shape.causal;
    row.backward = false;
    row.time_s = timing.median_s;
    row.spread_s = timing.spread_s;
    row.repeats = timing.repeats;
    row.source = source + "; simple WMMA flash forward (not FlashAttention-2/3); " + shape.label;
    rows.push_back(row);
    const double flops = 4.0 * shape.batch * shape.heads * static_cast<double>(shape.seq) *
                         shape.seq * kHeadDim * (shape.causal ? 0.5 : 1.0);
    std::fprintf(stderr, "attention_bench: %-28s seq %5d causal %d %9.3f ms %7.1f TFLOP/s\n",
                 shape.label, shape.seq, shape.causal ? 1 : 0, timing.median_s * 1e3,
                 flops / timing.median_s * 1e-12);
  }
  cudaFree(o);
  cudaFree(v);
  cudaFree(k);
  cudaFree(q);
  cudaStreamDestroy(stream);
  return rows;
}

}  // namespace

int main(int argc, char** argv) { return ck::run_benchmark(argc, argv, "attention_bench", measure); }
