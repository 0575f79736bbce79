#include "sim/serving/frameworks.hpp"

#include <algorithm>
#include <cmath>

#include "sim/config/units.hpp"

namespace clustersim::serving {

const config::NameTable<Framework>& framework_names() {
  static const config::NameTable<Framework> names("serving framework",
                                                  {{"vllm-0.8", Framework::vllm_v1},
                                                   {"vllm-0.10", Framework::vllm_v1_010},
                                                   {"vllm-0.6", Framework::vllm_v0},
                                                   {"trtllm-ifb", Framework::trtllm_ifb},
                                                   {"trtllm-static", Framework::trtllm_static},
                                                   {"trtllm-1.0", Framework::trtllm_torch},
                                                   {"trtllm-bench-1.0", Framework::trtllm_bench},
                                                   {"sglang-0.4", Framework::sglang},
                                                   {"sglang-0.5", Framework::sglang_05}});
  return names;
}

namespace {


// vLLM 0.8 (V1): arg_utils.py _set_default_args_v1 (docs/serving-frameworks.md V4).
SchedulerSpec vllm_v1(const FrameworkContext& c) {
  SchedulerSpec s;
  const bool large = c.hbm_bytes >= 70 * config::kGiB;
  s.max_sequences = large ? 1024 : 256;
  s.max_batched_tokens = large ? (c.offline ? 16384 : 8192) : (c.offline ? 8192 : 2048);
  s.chunked_prefill = true;
  s.policy = SchedulePolicy::decode_first;
  s.block_size = 16;
  s.memory_utilisation = 0.9;
  s.prefix_caching = true;
  s.iteration_overhead_s = 0.5e-3;  // estimate: the exposed part after V1's engine-core split (H2)
  return s;
}

// vLLM 0.10 and 0.11 (V1): arg_utils.py _set_default_args_v1 / get_batch_defaults at the
// release-date snapshots 2025-07-24 .. 2025-11-18 (docs/serving-frameworks.md V6). As 0.8 except
// that the A100 keeps the small-GPU limits, max_num_seqs never exceeds the token budget (0.10.1),
// and the engine still runs the host's work between GPU steps (async_scheduling off until after
// 0.11).
SchedulerSpec vllm_v1_010(const FrameworkContext& c) {
  SchedulerSpec s = vllm_v1(c);
  const bool large = c.hbm_bytes >= 70 * config::kGiB && c.accelerator.find("a100") == std::string::npos;
  s.max_sequences = large ? 1024 : 256;
  s.max_batched_tokens = large ? (c.offline ? 16384 : 8192) : (c.offline ? 8192 : 2048);
  s.max_sequences = static_cast<int>(std::min<std::int64_t>(s.max_sequences, s.max_batched_tokens));
  return s;
}

// vLLM 0.6 (V0): arg_utils.py / config.py at v0.6.1.post2 (V1, V3).
SchedulerSpec vllm_v0(const FrameworkContext& c) {
  SchedulerSpec s;
  s.max_sequences = 256;
  s.chunked_prefill = c.max_model_len > 32768;
  s.max_batched_tokens = s.chunked_prefill ? 2048 : std::max<std::int64_t>(c.max_model_len, 2048);
  s.policy = SchedulePolicy::prefill_first;
  s.block_size = 16;
  s.memory_utilisation = 0.9;
  s.prefix_caching = false;
  // estimate: a line through Vidur's profiled medians (2.0 ms at 8, 7.6 ms at 64 sequences; H5)
  s.iteration_overhead_s = 1.2e-3;
  s.iteration_overhead_per_sequence_s = 0.1e-3;
  return s;
}

// TensorRT-LLM in-flight batching (C++ executor, ~v0.9-0.1x): T2, T3.
SchedulerSpec trtllm_ifb(const FrameworkContext& /*c*/) {
  SchedulerSpec s;
  s.max_sequences = 2048;
  s.max_batched_tokens = 8192;
  s.chunked_prefill = false;
  s.policy = SchedulePolicy::decode_first;
  s.block_size = 64;
  s.memory_utilisation = 0.9;
  s.kv_of_free_memory = true;   // free_gpu_memory_fraction: of the memory left after weights
  s.reserve_output = true;      // GUARANTEED_NO_EVICT
  s.prefix_caching = false;
  s.iteration_overhead_s = 0.5e-3;  // estimate: no published figure
  return s;
}

// TensorRT-LLM static batching (gptSessionBenchmark, v0.5-0.6.1; Azure's legacy benchmark).
SchedulerSpec trtllm_static(const FrameworkContext& c) {
  SchedulerSpec s = trtllm_ifb(c);
  s.policy = SchedulePolicy::static_batch;
  s.max_batched_tokens = std::int64_t{1} << 40;  // the whole batch's prompts in one step
  s.reserve_output = true;
  // GptSession::setup(batch, beam, input + output length) sizes the KV cache for the run's batch
  // from all the memory left (gptSessionBenchmark.cpp; a contiguous cache of batch x max_seqlen,
  // gpt-attention.md): no free-memory fraction as the in-flight executor's 0.9 (T8).
  s.memory_utilisation = 1.0;
  s.iteration_overhead_s = 0.3e-3;  // estimate
  return s;
}

// TensorRT-LLM 1.0 / 1.1, PyTorch backend, LLM API and trtllm-serve (T9): BuildConfig's limits,
// chunked prefill off (a prompt over the token budget is refused), GUARANTEED_NO_EVICT, 32-token
// blocks, 0.9 of the memory free after weights and the profiling pass, block reuse on, the
// overlap scheduler on.
SchedulerSpec trtllm_torch(const FrameworkContext& /*c*/) {
  SchedulerSpec s;
  s.max_sequences = 2048;
  s.max_batched_tokens = 8192;
  s.chunked_prefill = false;
  s.policy = SchedulePolicy::decode_first;
  s.block_size = 32;
  s.memory_utilisation = 0.9;
  s.kv_of_free_memory = true;
  s.reserve_output = true;
  s.prefix_caching = true;
  // estimate: no published figure for the PyTorch executor's Python loop; SGLang's (also a
  // Python scheduler) bound of 3 ms (H3), hidden by the overlap scheduler (H6).
  s.iteration_overhead_s = 3e-3;
  s.overlap_host = true;
  return s;
}

// trtllm-bench throughput on the PyTorch backend (T9): as the LLM API, but chunked context on
// (first come, first served), block reuse off, and without --max_batch_size / --max_num_tokens
// the limits from calc_engine_setting (trtllm_bench_limits).
SchedulerSpec trtllm_bench(const FrameworkContext& c) {
  SchedulerSpec s = trtllm_torch(c);
  s.chunked_prefill = true;
  s.prefix_caching = false;
  if (const auto limits = trtllm_bench_limits(c)) {
    s.max_sequences = limits->max_sequences;
    s.max_batched_tokens = limits->max_batched_tokens;
  }
  return s;
}

// SGLang 0.4: server_args.py (S1), the overlap scheduler (H3, H4).
SchedulerSpec sglang(const FrameworkContext& c) {
  SchedulerSpec s;
  const double gb = c.hbm_bytes / 1e9;
  s.max_sequences = 4096;  // max_running_requests unset: the KV pool limits it
  s.max_batched_tokens = gb >= 160 ? 16384 : gb >= 35 ? 8192 : 2048;
  s.chunked_prefill = true;
  s.policy = SchedulePolicy::prefill_first;
  s.block_size = 1;
  const double reserved_gib = (gb < 90 ? 9.5 : gb < 160 ? 12.0 : 32.0) + c.instance_accelerators / 2.0;
  s.memory_utilisation = std::clamp((c.hbm_bytes - reserved_gib * config::kGiB) / c.hbm_bytes, 0.05, 1.0);
  s.prefix_caching = true;
  s.iteration_overhead_s = 3e-3;  // CPU per step at most (H3), hidden behind the GPU's by the overlap scheduler
  s.overlap_host = true;
  return s;
}

// SGLang 0.5.3 and later 0.5.x: server_args.py _handle_gpu_memory_settings (S5). Chunk and CUDA
// graph batch by GPU memory, the memory reserved beside weights and KV from them, the running
// requests from the KV pool (sglang_max_running_requests, when the instance is built).
SchedulerSpec sglang_05(const FrameworkContext& c) {
  SchedulerSpec s = sglang(c);
  const double gb = c.hbm_bytes / 1e9;
  const double mib = c.hbm_bytes / (1024.0 * 1024.0);
  s.max_batched_tokens = gb < 35 ? 2048 : gb < 60 ? 4096 : gb < 160 ? 8192 : 16384;
  const int tp = std::max(1, c.tp);
  const double graph_bs = gb < 35 ? (tp < 4 ? 16 : 80) : gb < 60 ? (tp < 4 ? 32 : 160) : gb < 160 ? (tp < 4 ? 256 : 512)
                                                                                                     : 512;
  double reserved_mib = 512 + 1.5 * static_cast<double>(std::max<std::int64_t>(s.max_batched_tokens, 2048)) +
                        2 * graph_bs + tp * std::max(1, c.pp) / 8.0 * 1024;
  if (gb > 60) reserved_mib = std::max(reserved_mib, 10.0 * 1024);
  s.memory_utilisation = std::clamp((mib - reserved_mib) / mib, 0.05, 1.0);
  s.kv_sized_sequences = true;
  return s;
}

}  // namespace

std::optional<BenchLimits> trtllm_bench_limits(const FrameworkContext& c) {
  if (!(c.weight_bytes > 0) || !(c.kv_bytes_per_token > 0) || !(c.mean_input > 0) || !(c.mean_output > 0)) {
    return std::nullopt;
  }
  const int gpus = std::max(1, c.tp) * std::max(1, c.pp);
  const double cache = 0.90 * (c.hbm_bytes * gpus - c.weight_bytes);
  if (!(cache > 0)) return std::nullopt;
  const double requests = cache / (c.kv_bytes_per_token * (c.mean_input + c.mean_output));
  const double batch = std::min(requests, 4096.0) / std::max(1, c.pp);
  const double tokens = std::min(batch * (1 + c.mean_input / c.mean_output), 32768.0);
  const auto up = [](double v, double step) { return std::ceil(v / step) * step; };
  BenchLimits limits;
  limits.max_sequences = static_cast<int>(batch < 256 ? std::max(64.0, up(batch, 32)) : batch < 1024 ? up(batch, 128)
                                                                                                      : up(batch, 256));
  limits.max_batched_tokens = static_cast<std::int64_t>(
      tokens < 4096 ? std::max(2048.0, up(tokens, 256)) : tokens < 8192 ? up(tokens, 512) : up(tokens, 1024));
  return limits;
}

int sglang_max_running_requests(std::int64_t kv_tokens, std::int64_t context) {
  const double pool = context > 0 ? static_cast<double>(kv_tokens) / static_cast<double>(context) * 512 : 4096;
  const double clamped = std::clamp(std::floor(pool), 2048.0, 4096.0);
  return static_cast<int>(std::max<double>(1, std::min(static_cast<double>(kv_tokens / 2), clamped)));
}

FrameworkKernels framework_kernels(Framework framework) {
  FrameworkKernels k;
  // TensorRT-LLM v0.5-v0.6.1 ran the generation phase's attention as masked MHA, one thread block
  // per query head (gpt-attention.md); the XQA kernel that shares a GQA group's K/V loads came in
  // v0.8, up to 2.4x Llama-70B throughput (XQA-kernel.md, Falcon180B-H200.md): T7.
  k.decode_kv_per_query_head = framework == Framework::trtllm_static;
  return k;
}

SchedulerSpec framework_scheduler(Framework framework, const FrameworkContext& context) {
  switch (framework) {
    case Framework::vllm_v1:
      return vllm_v1(context);
    case Framework::vllm_v0:
      return vllm_v0(context);
    case Framework::trtllm_ifb:
      return trtllm_ifb(context);
    case Framework::trtllm_static:
      return trtllm_static(context);
    case Framework::sglang:
      return sglang(context);
    case Framework::vllm_v1_010:
      return vllm_v1_010(context);
    case Framework::trtllm_torch:
      return trtllm_torch(context);
    case Framework::trtllm_bench:
      return trtllm_bench(context);
    case Framework::sglang_05:
      return sglang_05(context);
  }
  return vllm_v1(context);
}

}  // namespace clustersim::serving
