// One GPT-style transformer layer on one tensor-parallel rank (GPT-3 175B at tp 8, sequence
// 2048, micro-batch 1, bf16), forward and backward, timed end to end: cuBLASLt GEMMs plus
// simple layer-norm, softmax (unfused causal attention), GeLU, residual and head-permute
// kernels. No communication (the tp all-reduces are the comm model's job). Also times the
// layer's layer-norm, softmax and GeLU kernels alone, forward and backward.

#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

#include "common/cuda_bench.cuh"
#include "common/lt_gemm.cuh"

namespace ck = clustersim::kernels;
using bf16 = __nv_bfloat16;

namespace {

constexpr std::size_t kWorkspaceBytes = 64ull << 20;
constexpr int kThreads = 256;

struct LayerShape {
  const char* label = "gpt3-175b tp8 s2048 mb1";
  int seq = 2048, batch = 1, hidden = 12288, heads = 12 /* per rank */, head_dim = 128,
      ffn = 6144 /* per rank */;
  int tokens() const { return seq * batch; }
};

__device__ float block_sum(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) total += scratch[w];
  return total;
}

__device__ float block_max(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  float total = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) total = fmaxf(total, scratch[w]);
  return total;
}

// One block per row.
__global__ void layernorm_forward(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y,
                                  float* mean_out, float* rstd_out, int cols) {
  __shared__ float scratch[32];
  const bf16* row = x + static_cast<std::size_t>(blockIdx.x) * cols;
  float sum = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += blockDim.x) sum += __bfloat162float(row[c]);
  const float mean = block_sum(sum, scratch) / static_cast<float>(cols);
  float squares = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += blockDim.x) {
    const float centered = __bfloat162float(row[c]) - mean;
    squares += centered * centered;
  }
  const float rstd = rsqrtf(block_sum(squares, scratch) / static_cast<float>(cols) + 1e-5f);
  bf16* out = y + static_cast<std::size_t>(blockIdx.x) * cols;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += blockDim.x) {
    out[c] = __float2bfloat16((__bfloat162float(row[c]) - mean) * rstd * __bfloat162float(gamma[c]) +
                              __bfloat162float(beta[c]));
  }
  if (threadIdx.x == 0) {
    mean_out[blockIdx.x] = mean;
    rstd_out[blockIdx.x] = rstd;
  }
}

// dx = residual + LN'(dy); one block per row.
__global__ void layernorm_backward(const bf16* dy, const bf16* x, const bf16* gamma,
                                   const float* mean, const float* rstd, const bf16* residual,
                                   bf16* dx, int cols) {
  __shared__ float scratch[32];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * cols;
  const float mu = mean[blockIdx.x];
  const float r = rstd[blockIdx.x];
  float sum_g = 0.0f, sum_gx = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += blockDim.x) {
    const float g = __bfloat162float(dy[base + c]) * __bfloat162float(gamma[c]);
    const float xhat = (__bfloat162float(x[base + c]) - mu) * r;
    sum_g += g;
    sum_gx += g * xhat;
  }
  const float mean_g = block_sum(sum_g, scratch) / static_cast<float>(cols);
  const float mean_gx = block_sum(sum_gx, scratch) / static_cast<float>(cols);
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += blockDim.x) {
    const float g = __bfloat162float(dy[base + c]) * __bfloat162float(gamma[c]);
    const float xhat = (__bfloat162float(x[base + c]) - mu) * r;
    dx[base + c] = __float2bfloat16(__bfloat162float(residual[base + c]) + r * (g - mean_g - xhat * mean_gx));
  }
}

// dgamma, dbeta: one thread per column, coalesced over columns.
__global__ void layernorm_param_grad(const bf16* dy, const bf16* x, const float* mean,
                                     const float* rstd, bf16* dgamma, bf16* dbeta, int rows,
                                     int cols) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cols) return;
  float sum_gamma = 0.0f, sum_beta = 0.0f;
  for (int row = 0; row < rows; ++row) {
    const std::size_t i = static_cast<std::size_t>(row) * cols + c;
    const float d = __bfloat162float(dy[i]);
    sum_gamma += d * (__bfloat162float(x[i]) - mean[row]) * rstd[row];
    sum_beta += d;
  }
  dgamma[c] = __float2bfloat16(sum_gamma);
  dbeta[c] = __float2bfloat16(sum_beta);
}

// In-place causal softmax of scale * scores; one block per row of [batch*heads*seq, seq].
__global__ void softmax_forward(bf16* scores, int seq, float scale) {
  __shared__ float scratch[32];
  const int query = static_cast<int>(blockIdx.x) % seq;
  bf16* row = scores + static_cast<std::size_t>(blockIdx.x) * seq;
  float local_max = -INFINITY;
  for (int c = static_cast<int>(threadIdx.x); c <= query; c += blockDim.x) {
    local_max = fmaxf(local_max, __bfloat162float(row[c]) * scale);
  }
  const float row_max = block_max(local_max, scratch);
  float local_sum = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c <= query; c += blockDim.x) {
    local_sum += __expf(__bfloat162float(row[c]) * scale - row_max);
  }
  const float inverse = 1.0f / block_sum(local_sum, scratch);
  for (int c = static_cast<int>(threadIdx.x); c < seq; c += blockDim.x) {
    row[c] = __float2bfloat16(c <= query ? __expf(__bfloat162float(row[c]) * scale - row_max) * inverse : 0.0f);
  }
}

// dS = scale * P * (dP - sum(dP * P)), in place over dP.
__global__ void softmax_backward(bf16* grad, const bf16* probs, int seq, float scale) {
  __shared__ float scratch[32];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * seq;
  float local = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c < seq; c += blockDim.x) {
    local += __bfloat162float(grad[base + c]) * __bfloat162float(probs[base + c]);
  }
  const float dot = block_sum(local, scratch);
  for (int c = static_cast<int>(threadIdx.x); c < seq; c += blockDim.x) {
    const float p = __bfloat162float(probs[base + c]);
    grad[base + c] = __float2bfloat16(scale * p * (__bfloat162float(grad[base + c]) - dot));
  }
}

__device__ float gelu(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }

__device__ float gelu_derivative(float x) {
  const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
  const float t = tanhf(inner);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
}

__global__ void gelu_forward(const bf16* x, bf16* y, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    y[i] = __float2bfloat16(gelu(__bfloat162float(x[i])));
  }
}

__global__ void gelu_backward(const bf16* dy, const bf16* x, bf16* dx, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dx[i] = __float2bfloat16(__bfloat162float(dy[i]) * gelu_derivative(__bfloat162float(x[i])));
  }
}

__global__ void add(const bf16* a, const bf16* b, bf16* out, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
  }
}

// [tokens = seq*batch (seq-major), parts, heads, head_dim] <-> parts x [batch*heads, seq, head_dim].
// to_heads: packed -> per-head; otherwise per-head -> packed.
__global__ void permute_heads(bf16* packed, bf16* q, bf16* k, bf16* v, int seq, int batch,
                              int heads, int head_dim, int parts, bool to_heads) {
  const std::size_t total = static_cast<std::size_t>(seq) * batch * parts * heads * head_dim;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int d = static_cast<int>(i % head_dim);
    const int h = static_cast<int>((i / head_dim) % heads);
    const int part = static_cast<int>((i / (static_cast<std::size_t>(head_dim) * heads)) % parts);
    const std::size_t token = i / (static_cast<std::size_t>(head_dim) * heads * parts);
    const int s = static_cast<int>(token / batch);
    const int b = static_cast<int>(token % batch);
    bf16* target = part == 0 ? q : (part == 1 ? k : v);
    const std::size_t j = ((static_cast<std::size_t>(b) * heads + h) * seq + s) * head_dim + d;
    if (to_heads) {
      target[j] = packed[i];
    } else {
      packed[i] = target[j];
    }
  }
}

class DeviceArena {
 public:
  ~DeviceArena() {
    for (void* pointer : pointers_) cudaFree(pointer);
  }
  bf16* bf16s(std::size_t count) { return static_cast<bf16*>(allocate(count * sizeof(bf16))); }
  float* floats(std::size_t count) { return static_cast<float*>(allocate(count * sizeof(float))); }
  void* allocate(std::size_t bytes) {
    void* pointer = nullptr;
    ck::check_cuda(cudaMalloc(&pointer, bytes), "cudaMalloc");
    pointers_.push_back(pointer);
    return pointer;
  }

 private:
  std::vector<void*> pointers_;
};

/// Row-major C = op(A) op(B). row_major_gemm describes it as the column-major problem
/// C^T = op(B)^T op(A)^T, whose first operand is B: run() takes the row-major operands in their
/// own order and passes them swapped (passing A first made cuBLASLt read B's shape from A's
/// smaller buffer: "cuBLAS status 13" on the first H200 run, 2026-12-04).
class RowMajorGemm {
 public:
  RowMajorGemm(cublasLtHandle_t handle, const ck::LtGemmSpec& spec) : gemm_(handle, spec, kWorkspaceBytes) {}
  void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const {
    gemm_.run(b, a, c, workspace, stream);
  }

 private:
  ck::LtGemm gemm_;
};

unsigned grid_for(std::size_t count) {
  return static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 65536));
}

ck::CalibrationRow base_row(const ck::BenchArgs& args, const char* op, bool backward,
                            const ck::TimingSummary& timing, const std::string& source) {
  ck::CalibrationRow row;
  row.accelerator = args.accelerator;
  row.op = op;
  row.dtype = "bf16";
  row.backward = backward;
  row.time_s = timing.median_s;
  row.spread_s = timing.spread_s;
  row.repeats = timing.repeats;
  row.source = source;
  std::fprintf(stderr, "layer_bench: %-11s backward=%d %9.3f ms\n", op, backward ? 1 : 0,
               timing.median_s * 1e3);
  return row;
}

std::vector<ck::CalibrationRow> measure(const ck::BenchArgs& args, const std::string& source) {
  const LayerShape shape;
  const std::size_t T = static_cast<std::size_t>(shape.tokens());
  const std::size_t H = static_cast<std::size_t>(shape.hidden);
  const std::size_t F = static_cast<std::size_t>(shape.ffn);
  const std::size_t A = static_cast<std::size_t>(shape.heads) * shape.head_dim;  // per-rank attention width
  const std::size_t BH = static_cast<std::size_t>(shape.batch) * shape.heads;
  const std::size_t S = static_cast<std::size_t>(shape.seq);
  const int hidden = shape.hidden;
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));

  cudaStream_t stream = nullptr;
  ck::check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  cublasLtHandle_t handle = nullptr;
  ck::check_cublas(cublasLtCreate(&handle), "cublasLtCreate");
  DeviceArena arena;
  void* workspace = arena.allocate(kWorkspaceBytes);
  // Parameters.
  bf16 *w_qkv = arena.bf16s(H * 3 * A), *w_o = arena.bf16s(A * H), *w_1 = arena.bf16s(H * F),
       *w_2 = arena.bf16s(F * H), *gamma1 = arena.bf16s(H), *beta1 = arena.bf16s(H),
       *gamma2 = arena.bf16s(H), *beta2 = arena.bf16s(H);
  // Activations saved for backward.
  bf16 *x = arena.bf16s(T * H), *xn1 = arena.bf16s(T * H), *qkv = arena.bf16s(T * 3 * A),
       *q = arena.bf16s(BH * S * shape.head_dim), *k = arena.bf16s(BH * S * shape.head_dim),
       *v = arena.bf16s(BH * S * shape.head_dim), *probs = arena.bf16s(BH * S * S),
       *context_heads = arena.bf16s(BH * S * shape.head_dim), *context = arena.bf16s(T * A),
       *attn_out = arena.bf16s(T * H), *x1 = arena.bf16s(T * H), *xn2 = arena.bf16s(T * H),
       *fc1 = arena.bf16s(T * F), *act = arena.bf16s(T * F), *fc2 = arena.bf16s(T * H),
       *y = arena.bf16s(T * H);
  float *mean1 = arena.floats(T), *rstd1 = arena.floats(T), *mean2 = arena.floats(T),
        *rstd2 = arena.floats(T);
  // Gradients.
  bf16 *dy = arena.bf16s(T * H), *d_act = arena.bf16s(T * F), *d_fc1 = arena.bf16s(T * F),
       *d_xn2 = arena.bf16s(T * H), *d_x1 = arena.bf16s(T * H), *d_context = arena.bf16s(T * A),
       *d_context_heads = arena.bf16s(BH * S * shape.head_dim), *d_probs = arena.bf16s(BH * S * S),
       *dq = arena.bf16s(BH * S * shape.head_dim), *dk = arena.bf16s(BH * S * shape.head_dim),
       *dv = arena.bf16s(BH * S * shape.head_dim), *d_qkv = arena.bf16s(T * 3 * A),
       *d_xn1 = arena.bf16s(T * H), *dx = arena.bf16s(T * H), *dw_qkv = arena.bf16s(H * 3 * A),
       *dw_o = arena.bf16s(A * H), *dw_1 = arena.bf16s(H * F), *dw_2 = arena.bf16s(F * H),
       *d_gamma = arena.bf16s(H), *d_beta = arena.bf16s(H);
  const float weight_scale = 0.02f;
  std::uint32_t seed = 100;
  for (auto [pointer, count, amplitude] :
       {std::tuple{w_qkv, H * 3 * A, weight_scale}, std::tuple{w_o, A * H, weight_scale},
        std::tuple{w_1, H * F, weight_scale}, std::tuple{w_2, F * H, weight_scale},
        std::tuple{gamma1, H, 1.0f}, std::tuple{beta1, H, 0.1f}, std::tuple{gamma2, H, 1.0f},
        std::tuple{beta2, H, 0.1f}, std::tuple{x, T * H, 1.0f}, std::tuple{dy, T * H, 1.0f}}) {
    ck::fill_random(pointer, count, ck::GemmDtype::bf16, false, amplitude, seed++, stream);
  }

  const auto plan = [&](bool ta, bool tb, std::size_t m, std::size_t n, std::size_t kk, std::size_t batch = 1) {
    return std::make_unique<RowMajorGemm>(
        handle, ck::row_major_gemm(ck::GemmDtype::bf16, ta, tb, static_cast<std::int64_t>(m),
                                   static_cast<std::int64_t>(n), static_cast<std::int64_t>(kk),
                                   static_cast<std::int32_t>(batch)));
  };
  // Forward.
  auto qkv_fwd = plan(false, false, T, 3 * A, H);
  auto scores_fwd = plan(false, true, S, S, shape.head_dim, BH);
  auto context_fwd = plan(false, false, S, shape.head_dim, S, BH);
  auto out_fwd = plan(false, false, T, H, A);
  auto fc1_fwd = plan(false, false, T, F, H);
  auto fc2_fwd = plan(false, false, T, H, F);
  // Backward: dgrad (dY W^T) and wgrad (X^T dY) per linear; attention's four batched GEMMs.
  auto fc2_dgrad = plan(false, true, T, F, H), fc2_wgrad = plan(true, false, F, H, T);
  auto fc1_dgrad = plan(false, true, T, H, F), fc1_wgrad = plan(true, false, H, F, T);
  auto out_dgrad = plan(false, true, T, A, H), out_wgrad = plan(true, false, A, H, T);
  auto qkv_dgrad = plan(false, true, T, H, 3 * A), qkv_wgrad = plan(true, false, H, 3 * A, T);
  auto d_probs_gemm = plan(false, true, S, S, shape.head_dim, BH);   // dP = dC V^T
  auto dv_gemm = plan(true, false, S, shape.head_dim, S, BH);         // dV = P^T dC
  auto dq_gemm = plan(false, false, S, shape.head_dim, S, BH);        // dQ = dS K
  auto dk_gemm = plan(true, false, S, shape.head_dim, S, BH);         // dK = dS^T Q

  const auto rows_grid = static_cast<unsigned>(T);
  const auto score_rows = static_cast<unsigned>(BH * S);
  const auto forward = [&] {
    layernorm_forward<<<rows_grid, kThreads, 0, stream>>>(x, gamma1, beta1, xn1, mean1, rstd1, hidden);
    qkv_fwd->run(xn1, w_qkv, qkv, workspace, stream);
    permute_heads<<<grid_for(T * 3 * A), kThreads, 0, stream>>>(qkv, q, k, v, shape.seq, shape.batch,
                                                                shape.heads, shape.head_dim, 3, true);
    scores_fwd->run(q, k, probs, workspace, stream);
    softmax_forward<<<score_rows, kThreads, 0, stream>>>(probs, shape.seq, scale);
    context_fwd->run(probs, v, context_heads, workspace, stream);
    permute_heads<<<grid_for(T * A), kThreads, 0, stream>>>(context, context_heads, nullptr, nullptr,
                                                            shape.seq, shape.batch, shape.heads,
                                                            shape.head_dim, 1, false);
    out_fwd->run(context, w_o, attn_out, workspace, stream);
    add<<<grid_for(T * H), kThreads, 0, stream>>>(x, attn_out, x1, T * H);
    layernorm_forward<<<rows_grid, kThreads, 0, stream>>>(x1, gamma2, beta2, xn2, mean2, rstd2, hidden);
    fc1_fwd->run(xn2, w_1, fc1, workspace, stream);
    gelu_forward<<<grid_for(T * F), kThreads, 0, stream>>>(fc1, act, T * F);
    fc2_fwd->run(act, w_2, fc2, workspace, stream);
    add<<<grid_for(T * H), kThreads, 0, stream>>>(x1, fc2, y, T * H);
  };
  const auto backward = [&] {
    // MLP.
    fc2_dgrad->run(dy, w_2, d_act, workspace, stream);
    fc2_wgrad->run(act, dy, dw_2, workspace, stream);
    gelu_backward<<<grid_for(T * F), kThreads, 0, stream>>>(d_act, fc1, d_fc1, T * F);
    fc1_dgrad->run(d_fc1, w_1, d_xn2, workspace, stream);
    fc1_wgrad->run(xn2, d_fc1, dw_1, workspace, stream);
    layernorm_backward<<<rows_grid, kThreads, 0, stream>>>(d_xn2, x1, gamma2, mean2, rstd2, dy, d_x1, hidden);
    layernorm_param_grad<<<grid_for(H), kThreads, 0, stream>>>(d_xn2, x1, mean2, rstd2, d_gamma, d_beta,
                                                               static_cast<int>(T), hidden);
    // Attention.
    out_dgrad->run(d_x1, w_o, d_context, workspace, stream);
    out_wgrad->run(context, d_x1, dw_o, workspace, stream);
    permute_heads<<<grid_for(T * A), kThreads, 0, stream>>>(d_context, d_context_heads, nullptr, nullptr,
                                                            shape.seq, shape.batch, shape.heads,
                                                            shape.head_dim, 1, true);
    d_probs_gemm->run(d_context_heads, v, d_probs, workspace, stream);
    dv_gemm->run(probs, d_context_heads, dv, workspace, stream);
    softmax_backward<<<score_rows, kThreads, 0, stream>>>(d_probs, probs, shape.seq, scale);
    dq_gemm->run(d_probs, k, dq, workspace, stream);
    dk_gemm->run(d_probs, q, dk, workspace, stream);
    permute_heads<<<grid_for(T * 3 * A), kThreads, 0, stream>>>(d_qkv, dq, dk, dv, shape.seq, shape.batch,
                                                                shape.heads, shape.head_dim, 3, false);
    qkv_dgrad->run(d_qkv, w_qkv, d_xn1, workspace, stream);
    qkv_wgrad->run(xn1, d_qkv, dw_qkv, workspace, stream);
    layernorm_backward<<<rows_grid, kThreads, 0, stream>>>(d_xn1, x, gamma1, mean1, rstd1, d_x1, dx, hidden);
    layernorm_param_grad<<<grid_for(H), kThreads, 0, stream>>>(d_xn1, x, mean1, rstd1, d_gamma, d_beta,
                                                               static_cast<int>(T), hidden);
  };
  forward();  // the saved activations backward reads
  ck::check_cuda(cudaStreamSynchronize(stream), "first forward");

  const std::string layer_source = source + "; " + shape.label +
                                   " per rank, unfused causal attention, no tp communication; "
                                   "m = tokens, n = hidden, k = intermediate per rank";
  const auto layer_row = [&](const char* op, bool is_backward, const ck::TimingSummary& timing) {
    ck::CalibrationRow row = base_row(args, op, is_backward, timing, layer_source);
    row.m = static_cast<std::int64_t>(T);
    row.n = hidden;
    row.k = shape.ffn;
    row.batch = shape.batch;
    row.heads = shape.heads;
    row.kv_heads = shape.heads;
    row.seq_q = shape.seq;
    row.seq_kv = shape.seq;
    row.head_dim = shape.head_dim;
    row.causal = true;
    return row;
  };
  std::vector<ck::CalibrationRow> rows;
  rows.push_back(layer_row("layer_fwd", false, ck::time_op(forward, args.warmup, args.repeats, stream)));
  rows.push_back(layer_row("layer_bwd", true, ck::time_op(backward, args.warmup, args.repeats, stream)));

  // The layer's non-GEMM kernels alone.
  const auto op_source = source + "; " + shape.label + " layer kernel";
  const auto time = [&](const std::function<void()>& launch) {
    return ck::time_op(launch, args.warmup, args.repeats, stream);
  };
  const double tokens_hidden_bytes = static_cast<double>(T * H * sizeof(bf16));
  ck::CalibrationRow ln_fwd = base_row(args, "layernorm", false, time([&] {
    layernorm_forward<<<rows_grid, kThreads, 0, stream>>>(x, gamma1, beta1, xn1, mean1, rstd1, hidden);
  }), op_source);
  ln_fwd.m = static_cast<std::int64_t>(T);
  ln_fwd.n = hidden;
  ln_fwd.bytes = 2 * tokens_hidden_bytes;
  rows.push_back(ln_fwd);
  ck::CalibrationRow ln_bwd = base_row(args, "layernorm", true, time([&] {
    layernorm_backward<<<rows_grid, kThreads, 0, stream>>>(d_xn1, x, gamma1, mean1, rstd1, d_x1, dx, hidden);
    layernorm_param_grad<<<grid_for(H), kThreads, 0, stream>>>(d_xn1, x, mean1, rstd1, d_gamma, d_beta,
                                                               static_cast<int>(T), hidden);
  }), op_source + " (dx plus dgamma/dbeta)");
  ln_bwd.m = static_cast<std::int64_t>(T);
  ln_bwd.n = hidden;
  ln_bwd.bytes = 6 * tokens_hidden_bytes;  // dx: read dy, x, residual, write dx; params: read dy, x
  rows.push_back(ln_bwd);

  const double score_bytes = static_cast<double>(BH * S * S * sizeof(bf16));
  const auto softmax_row = [&](bool is_backward, const ck::TimingSummary& timing) {
    ck::CalibrationRow row = base_row(args, "softmax", is_backward, timing, op_source + " (causal, unfused)");
    row.batch = shape.batch;
    row.heads = shape.heads;
    row.seq_q = shape.seq;
    row.seq_kv = shape.seq;
    row.causal = true;
    row.bytes = (is_backward ? 3 : 2) * score_bytes;
    return row;
  };
  // Forward softmax runs in place: each repeat re-normalizes probabilities, same work.
  rows.push_back(softmax_row(false, time([&] {
    softmax_forward<<<score_rows, kThreads, 0, stream>>>(d_probs, shape.seq, scale);
  })));
  rows.push_back(softmax_row(true, time([&] {
    softmax_backward<<<score_rows, kThreads, 0, stream>>>(d_probs, probs, shape.seq, scale);
  })));

  const double act_bytes = static_cast<double>(T * F * sizeof(bf16));
  ck::CalibrationRow gelu_fwd = base_row(args, "elementwise", false, time([&] {
    gelu_forward<<<grid_for(T * F), kThreads, 0, stream>>>(fc1, act, T * F);
  }), op_source + " (gelu)");
  gelu_fwd.m = static_cast<std::int64_t>(T);
  gelu_fwd.n = shape.ffn;
  gelu_fwd.bytes = 2 * act_bytes;
  rows.push_back(gelu_fwd);
  ck::CalibrationRow gelu_bwd = base_row(args, "elementwise", true, time([&] {
    gelu_backward<<<grid_for(T * F), kThreads, 0, stream>>>(d_act, fc1, d_fc1, T * F);
  }), op_source + " (gelu)");
  gelu_bwd.m = static_cast<std::int64_t>(T);
  gelu_bwd.n = shape.ffn;
  gelu_bwd.bytes = 3 * act_bytes;
  rows.push_back(gelu_bwd);

  ck::check_cuda(cudaStreamSynchronize(stream), "layer_bench");
  cublasLtDestroy(handle);
  cudaStreamDestroy(stream);
  return rows;
}

}  // namespace

int main(int argc, char** argv) { return ck::run_benchmark(argc, argv, "layer_bench", measure); }
