// A FlashAttention-style tiled forward kernel (bf16 in/out, fp32 accumulation, tensor cores via
// WMMA, online softmax, causal masking, GQA), checked against a naive reference on a small
// shape before it is timed. The suite uses attention_sdpa.py (PyTorch SDPA, forward and
// backward) instead when torch is installed; this kernel is the fallback that needs only CUDA.
//
// --shapes decode: one query token per sequence against a bf16 KV cache (common/
// decode_attention.hpp) with a simple split-KV ("flash-decoding") kernel: each block reads one
// slice of one (sequence, kv head)'s cache for all the query heads sharing it, a second kernel
// merges the slices. Memory-bound; self-checked like the forward kernel; L2 flushed before each
// timed execution (a decode step reads each layer's cache from HBM once).

#include <mma.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "common/cuda_bench.cuh"
#include "common/decode_attention.hpp"
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

// --- decode: one query token per sequence --------------------------------------------------

constexpr int kDecodeWarps = 4;
constexpr int kDecodeThreads = 32 * kDecodeWarps;  // = kHeadDim: one thread per dim when merging
constexpr int kDecodeUnroll = 4;                   // keys in flight per warp
static_assert(kDecodeThreads == kHeadDim, "the merges map one thread to one head dim");

struct DecodeProblem {
  int batch, heads, kv_heads, seq_kv;
  int splits, keys_per_split;
};

__device__ __forceinline__ void load_bf16x4(const __nv_bfloat16* p, float out[4]) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const __nv_bfloat162 lo = *reinterpret_cast<const __nv_bfloat162*>(&raw.x);
  const __nv_bfloat162 hi = *reinterpret_cast<const __nv_bfloat162*>(&raw.y);
  const float2 a = __bfloat1622float2(lo);
  const float2 b = __bfloat1622float2(hi);
  out[0] = a.x;
  out[1] = a.y;
  out[2] = b.x;
  out[3] = b.y;
}

// q, o: [batch, heads, 128]; k, v: [batch, kv_heads, seq_kv, 128]. Block (split, kv head, batch);
// warp w takes keys [base + w U, base + w U + U) of every step of kDecodeWarps U keys; lane l
// holds dims 4l..4l+3. Writes the split's unnormalized output, running max (log2 units) and sum.
template <int kGroup>
__global__ void __launch_bounds__(kDecodeThreads)
decode_partial(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
               float* part_o, float* part_ml, DecodeProblem p) {
  __shared__ float s_acc[kDecodeWarps][kGroup][kHeadDim];
  __shared__ float s_m[kDecodeWarps][kGroup];
  __shared__ float s_l[kDecodeWarps][kGroup];
  const int split = static_cast<int>(blockIdx.x);
  const int kv_head = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(blockIdx.z);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int key_begin = split * p.keys_per_split;
  const int key_end = min(p.seq_kv, key_begin + p.keys_per_split);
  const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(kHeadDim));

  float qf[kGroup][4], m[kGroup], l[kGroup], acc[kGroup][4];
  for (int g = 0; g < kGroup; ++g) {
    const int head = kv_head * kGroup + g;
    load_bf16x4(q + (static_cast<std::size_t>(b) * p.heads + head) * kHeadDim + lane * 4, qf[g]);
    for (int d = 0; d < 4; ++d) {
      qf[g][d] *= scale_log2;
      acc[g][d] = 0.0f;
    }
    m[g] = -INFINITY;
    l[g] = 0.0f;
  }
  const std::size_t cache = (static_cast<std::size_t>(b) * p.kv_heads + kv_head) *
                            static_cast<std::size_t>(p.seq_kv) * kHeadDim;
  const __nv_bfloat16* k_head = k + cache;
  const __nv_bfloat16* v_head = v + cache;
  for (int base = key_begin + warp * kDecodeUnroll; base < key_end; base += kDecodeWarps * kDecodeUnroll) {
    // Fully unrolled (constant indices keep kf and vf in registers); keys past the end are
    // skipped by a uniform branch.
    float kf[kDecodeUnroll][4], vf[kDecodeUnroll][4];
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {  // issue every load before using any
      if (base + u < key_end) {
        load_bf16x4(k_head + static_cast<std::size_t>(base + u) * kHeadDim + lane * 4, kf[u]);
        load_bf16x4(v_head + static_cast<std::size_t>(base + u) * kHeadDim + lane * 4, vf[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      if (base + u >= key_end) break;
      float score[kGroup];
      for (int g = 0; g < kGroup; ++g) {
        score[g] = qf[g][0] * kf[u][0] + qf[g][1] * kf[u][1] + qf[g][2] * kf[u][2] + qf[g][3] * kf[u][3];
      }
      for (int offset = 16; offset > 0; offset /= 2) {
        for (int g = 0; g < kGroup; ++g) score[g] += __shfl_xor_sync(0xffffffffu, score[g], offset);
      }
      for (int g = 0; g < kGroup; ++g) {
        const float new_m = fmaxf(m[g], score[g]);
        const float correction = exp2f(m[g] - new_m);  // 0 on the warp's first key
        const float weight = exp2f(score[g] - new_m);
        l[g] = l[g] * correction + weight;
        for (int d = 0; d < 4; ++d) acc[g][d] = acc[g][d] * correction + weight * vf[u][d];
        m[g] = new_m;
      }
    }
  }
  for (int g = 0; g < kGroup; ++g) {
    for (int d = 0; d < 4; ++d) s_acc[warp][g][lane * 4 + d] = acc[g][d];
    if (lane == 0) {
      s_m[warp][g] = m[g];
      s_l[warp][g] = l[g];
    }
  }
  __syncthreads();
  // Merge the warps: thread t owns dim t of every query head of the group.
  const int dim = static_cast<int>(threadIdx.x);
  for (int g = 0; g < kGroup; ++g) {
    float block_m = -INFINITY;
    for (int w = 0; w < kDecodeWarps; ++w) block_m = fmaxf(block_m, s_m[w][g]);
    float sum = 0.0f, out = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w) {
      if (s_m[w][g] == -INFINITY) continue;  // a warp that got no key
      const float factor = exp2f(s_m[w][g] - block_m);
      sum += s_l[w][g] * factor;
      out += s_acc[w][g][dim] * factor;
    }
    const std::size_t part = (static_cast<std::size_t>(b) * p.heads + kv_head * kGroup + g) * p.splits + split;
    part_o[part * kHeadDim + dim] = out;
    if (dim == 0) {
      part_ml[2 * part] = block_m;
      part_ml[2 * part + 1] = sum;
    }
  }
}

// Block (head, batch), thread = dim: merges the splits of one query head into o.
__global__ void __launch_bounds__(kDecodeThreads)
decode_combine(const float* part_o, const float* part_ml, __nv_bfloat16* o, DecodeProblem p) {
  const int head = static_cast<int>(blockIdx.x);
  const int b = static_cast<int>(blockIdx.y);
  const int dim = static_cast<int>(threadIdx.x);
  const std::size_t first = (static_cast<std::size_t>(b) * p.heads + head) * p.splits;
  float global_m = -INFINITY;
  for (int s = 0; s < p.splits; ++s) global_m = fmaxf(global_m, part_ml[2 * (first + s)]);
  float sum = 0.0f, out = 0.0f;
  for (int s = 0; s < p.splits; ++s) {
    const float factor = exp2f(part_ml[2 * (first + s)] - global_m);  // every split has keys
    sum += part_ml[2 * (first + s) + 1] * factor;
    out += part_o[(first + s) * kHeadDim + dim] * factor;
  }
  o[(static_cast<std::size_t>(b) * p.heads + head) * kHeadDim + dim] = __float2bfloat16(out / sum);
}

// One thread per (sequence, query head), fp32: the decode self-check's reference.
__global__ void reference_decode(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                 float* o, DecodeProblem p) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= p.batch * p.heads) return;
  const int head = index % p.heads;
  const int b = index / p.heads;
  const int kv_head = head / (p.heads / p.kv_heads);
  const __nv_bfloat16* q_row = q + static_cast<std::size_t>(index) * kHeadDim;
  const std::size_t base = (static_cast<std::size_t>(b) * p.kv_heads + kv_head) * p.seq_kv * kHeadDim;
  const float scale = 1.0f / sqrtf(static_cast<float>(kHeadDim));
  float max_logit = -INFINITY;
  for (int j = 0; j < p.seq_kv; ++j) {
    float dot = 0.0f;
    for (int d = 0; d < kHeadDim; ++d) {
      dot += __bfloat162float(q_row[d]) * __bfloat162float(k[base + static_cast<std::size_t>(j) * kHeadDim + d]);
    }
    max_logit = fmaxf(max_logit, dot * scale);
  }
  float* o_row = o + static_cast<std::size_t>(index) * kHeadDim;
  for (int d = 0; d < kHeadDim; ++d) o_row[d] = 0.0f;
  float sum = 0.0f;
  for (int j = 0; j < p.seq_kv; ++j) {
    float dot = 0.0f;
    for (int d = 0; d < kHeadDim; ++d) {
      dot += __bfloat162float(q_row[d]) * __bfloat162float(k[base + static_cast<std::size_t>(j) * kHeadDim + d]);
    }
    const float weight = expf(dot * scale - max_logit);
    sum += weight;
    for (int d = 0; d < kHeadDim; ++d) {
      o_row[d] += weight * __bfloat162float(v[base + static_cast<std::size_t>(j) * kHeadDim + d]);
    }
  }
  for (int d = 0; d < kHeadDim; ++d) o_row[d] /= sum;
}

DecodeProblem decode_problem(const ck::DecodeAttentionShape& shape, int sm_count) {
  const ck::DecodeSplitPlan plan = ck::plan_decode_splits(shape.batch, shape.kv_heads, shape.seq_kv, sm_count);
  return {static_cast<int>(shape.batch), static_cast<int>(shape.heads), static_cast<int>(shape.kv_heads),
          static_cast<int>(shape.seq_kv), static_cast<int>(plan.splits), static_cast<int>(plan.keys_per_split)};
}

void launch_decode(const DecodeProblem& p, const __nv_bfloat16* q, const __nv_bfloat16* k,
                   const __nv_bfloat16* v, float* part_o, float* part_ml, __nv_bfloat16* o,
                   cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(p.splits), static_cast<unsigned>(p.kv_heads),
                  static_cast<unsigned>(p.batch));
  switch (p.heads / p.kv_heads) {
    case 1: decode_partial<1><<<grid, kDecodeThreads, 0, stream>>>(q, k, v, part_o, part_ml, p); break;
    case 2: decode_partial<2><<<grid, kDecodeThreads, 0, stream>>>(q, k, v, part_o, part_ml, p); break;
    case 4: decode_partial<4><<<grid, kDecodeThreads, 0, stream>>>(q, k, v, part_o, part_ml, p); break;
    case 8: decode_partial<8><<<grid, kDecodeThreads, 0, stream>>>(q, k, v, part_o, part_ml, p); break;
    default:
      throw std::runtime_error("decode kernel: heads / kv_heads must be 1, 2, 4 or 8, got " +
                               std::to_string(p.heads / p.kv_heads));
  }
  decode_combine<<<dim3(static_cast<unsigned>(p.heads), static_cast<unsigned>(p.batch)), kDecodeThreads, 0,
                   stream>>>(part_o, part_ml, o, p);
}

// Decode kernel against the reference: GQA groups 4 and 8, a cache length that is no multiple
// of the split size, and one split as well as several.
void decode_self_check(int sm_count, cudaStream_t stream) {
  const ck::DecodeAttentionShape shapes[] = {
      {"self-check", 3, 8, 2, 1000, kHeadDim}, {"self-check", 2, 16, 2, 1000, kHeadDim},
      {"self-check", 1, 8, 8, 77, kHeadDim}};
  for (const ck::DecodeAttentionShape& shape : shapes) {
    const DecodeProblem p = decode_problem(shape, sm_count);
    const std::size_t q_elements = static_cast<std::size_t>(p.batch) * p.heads * kHeadDim;
    const std::size_t kv_elements = static_cast<std::size_t>(p.batch) * p.kv_heads * p.seq_kv * kHeadDim;
    const std::size_t parts = static_cast<std::size_t>(p.batch) * p.heads * p.splits;
    __nv_bfloat16 *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
    float *reference = nullptr, *part_o = nullptr, *part_ml = nullptr;
    ck::check_cuda(cudaMalloc(&q, q_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&k, kv_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&v, kv_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&o, q_elements * 2), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&reference, q_elements * 4), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&part_o, parts * kHeadDim * 4), "cudaMalloc");
    ck::check_cuda(cudaMalloc(&part_ml, parts * 2 * 4), "cudaMalloc");
    ck::fill_random(q, q_elements, ck::GemmDtype::bf16, false, 1.0f, 31u, stream);
    ck::fill_random(k, kv_elements, ck::GemmDtype::bf16, false, 1.0f, 32u, stream);
    ck::fill_random(v, kv_elements, ck::GemmDtype::bf16, false, 1.0f, 33u, stream);
    launch_decode(p, q, k, v, part_o, part_ml, o, stream);
    const int rows = p.batch * p.heads;
    reference_decode<<<(rows + 127) / 128, 128, 0, stream>>>(q, k, v, reference, p);
    ck::check_cuda(cudaStreamSynchronize(stream), "decode self-check");
    std::vector<__nv_bfloat16> got(q_elements);
    std::vector<float> want(q_elements);
    ck::check_cuda(cudaMemcpy(got.data(), o, q_elements * 2, cudaMemcpyDeviceToHost), "copy");
    ck::check_cuda(cudaMemcpy(want.data(), reference, q_elements * 4, cudaMemcpyDeviceToHost), "copy");
    double worst = 0.0;
    for (std::size_t i = 0; i < q_elements; ++i) {
      const double error = std::fabs(static_cast<double>(__bfloat162float(got[i])) - want[i]);
      worst = std::isfinite(error) ? std::max(worst, error) : 1e30;
    }
    for (void* buffer : {static_cast<void*>(part_ml), static_cast<void*>(part_o), static_cast<void*>(reference),
                         static_cast<void*>(o), static_cast<void*>(v), static_cast<void*>(k), static_cast<void*>(q)}) {
      cudaFree(buffer);
    }
    if (worst > 2e-2) {
      throw std::runtime_error("decode attention self-check failed (batch " + std::to_string(p.batch) +
                               ", heads " + std::to_string(p.heads) + "/" + std::to_string(p.kv_heads) +
                               ", seq_kv " + std::to_string(p.seq_kv) + ", " + std::to_string(p.splits) +
                               " splits): max |error| " + std::to_string(worst) + " > 0.02");
    }
    std::fprintf(stderr, "attention_bench: decode self-check heads %d/%d seq_kv %d splits %d max |error| %.2e\n",
                 p.heads, p.kv_heads, p.seq_kv, p.splits, worst);
  }
}

std::vector<ck::CalibrationRow> measure_decode(const ck::BenchArgs& args, const std::string& source) {
  const ck::DeviceInfo device = ck::current_device_info();
  cudaStream_t stream = nullptr;
  ck::check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  decode_self_check(device.sm_count, stream);

  const std::vector<ck::DecodeAttentionShape> shapes = ck::decode_attention_sweep(args.quick);
  std::size_t q_max = 0, kv_max = 0, parts_max = 0;
  for (const ck::DecodeAttentionShape& shape : shapes) {
    const DecodeProblem p = decode_problem(shape, device.sm_count);
    q_max = std::max(q_max, static_cast<std::size_t>(p.batch) * p.heads * kHeadDim);
    kv_max = std::max(kv_max, static_cast<std::size_t>(p.batch) * p.kv_heads * p.seq_kv * kHeadDim);
    parts_max = std::max(parts_max, static_cast<std::size_t>(p.batch) * p.heads * p.splits);
  }
  __nv_bfloat16 *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  float *part_o = nullptr, *part_ml = nullptr;
  ck::check_cuda(cudaMalloc(&q, q_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&k, kv_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&v, kv_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&o, q_max * 2), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&part_o, parts_max * kHeadDim * 4), "cudaMalloc");
  ck::check_cuda(cudaMalloc(&part_ml, parts_max * 2 * 4), "cudaMalloc");
  ck::fill_random(q, q_max, ck::GemmDtype::bf16, false, 1.0f, 41u, stream);
  ck::fill_random(k, kv_max, ck::GemmDtype::bf16, false, 1.0f, 42u, stream);
  ck::fill_random(v, kv_max, ck::GemmDtype::bf16, false, 1.0f, 43u, stream);
  const ck::L2Flush flush(device.l2_bytes);

  std::vector<ck::CalibrationRow> rows;
  for (const ck::DecodeAttentionShape& shape : shapes) {
    const DecodeProblem p = decode_problem(shape, device.sm_count);
    const ck::TimingSummary timing = ck::time_op_cold(
        [&] { launch_decode(p, q, k, v, part_o, part_ml, o, stream); }, args.warmup, args.repeats, stream, flush);
    ck::CalibrationRow row;
    row.accelerator = args.accelerator;
    row.op = "attention";
    row.dtype = "bf16";
    row.batch = shape.batch;
    row.heads = shape.heads;
    row.kv_heads = shape.kv_heads;
    row.seq_q = 1;
    row.seq_kv = shape.seq_kv;
    row.head_dim = shape.head_dim;
    row.causal = false;
    row.backward = false;
    row.time_s = timing.median_s;
    row.spread_s = timing.spread_s;
    row.repeats = timing.repeats;
    row.source = source + "; simple split-KV decode kernel (not FlashAttention/FlashInfer), " +
                 std::to_string(p.splits) + " splits; L2 flushed; " + shape.label + " decode";
    rows.push_back(row);
    std::fprintf(stderr, "attention_bench: decode %-15s batch %3d heads %2d/%d seq_kv %5d %9.4f ms %7.0f GB/s\n",
                 shape.label.c_str(), p.batch, p.heads, p.kv_heads, p.seq_kv, timing.median_s * 1e3,
                 static_cast<double>(ck::decode_kv_bytes(shape)) / timing.median_s * 1e-9);
  }
  for (void* buffer : {static_cast<void*>(part_ml), static_cast<void*>(part_o), static_cast<void*>(o),
                       static_cast<void*>(v), static_cast<void*>(k), static_cast<void*>(q)}) {
    cudaFree(buffer);
  }
  cudaStreamDestroy(stream);
  return rows;
}

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  if (args.shapes == "decode") {
    if (ck::current_device_info().compute_capability < 80) {
      throw std::runtime_error("attention_bench needs compute capability >= 8.0 (bf16)");
    }
    return measure_decode(args, source);
  }
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

int main(int argc, char** argv) {
  return ck::run_benchmark(argc, argv, "attention_bench", measure, {"default", "decode"});
}
