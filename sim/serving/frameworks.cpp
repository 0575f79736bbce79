#include "sim/serving/frameworks.hpp"

#include <algorithm>

namespace clustersim::serving {

const config::NameTable<Framework>& framework_names() {
  static const config::NameTable<Framework> names("serving framework", {{"vllm-0.8", Framework::vllm_v1},
                                                                        {"vllm-0.6", Framework::vllm_v0},
                                                                        {"trtllm-ifb", Framework::trtllm_ifb},
                                                                        {"trtllm-static", Framework::trtllm_static},
                                                                        {"sglang-0.4", Framework::sglang}});
  return names;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// vLLM 0.8 (V1): arg_utils.py _set_default_args_v1 (docs/serving-frameworks.md V4).
SchedulerSpec vllm_v1(const FrameworkContext& c) {
  SchedulerSpec s;
  const bool large = c.hbm_bytes >= 70 * kGiB;
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
  s.memory_utilisation = std::clamp((c.hbm_bytes - reserved_gib * kGiB) / c.hbm_bytes, 0.05, 1.0);
  s.prefix_caching = true;
  s.iteration_overhead_s = 3e-3;  // CPU per step at most (H3), hidden behind the GPU's by the overlap scheduler
  s.overlap_host = true;
  return s;
}

}  // namespace

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
  }
  return vllm_v1(context);
}

}  // namespace clustersim::serving
