// The framework profiles of the releases served today (issue 30): vLLM 0.10/0.11, TensorRT-LLM
// 1.0/1.1 (PyTorch backend, LLM API and trtllm-bench), SGLang 0.5. Values from
// docs/serving-frameworks.md sections 2.5 and 7; the sizing rules derived by hand.
#include <doctest/doctest.h>

#include "sim/config/units.hpp"
#include "sim/serving/frameworks.hpp"

namespace frameworks_test {

using namespace clustersim::serving;

namespace {
using clustersim::config::kGiB;

FrameworkContext h100() {
  FrameworkContext c;
  c.hbm_bytes = 80 * kGiB;
  c.accelerator = "h100-sxm";
  return c;
}
}  // namespace

TEST_CASE("every profile name parses") {
  for (const char* name : {"vllm-0.8", "vllm-0.10", "vllm-0.6", "trtllm-ifb", "trtllm-static", "trtllm-1.0",
                           "trtllm-bench-1.0", "sglang-0.4", "sglang-0.5"}) {
    CAPTURE(name);
    CHECK(framework_names().name(framework_names().parse(name)) == name);
  }
}

TEST_CASE("vllm-0.10: the A100 keeps the small-GPU limits; sequences never exceed the token budget") {
  FrameworkContext c = h100();
  SchedulerSpec s = framework_scheduler(Framework::vllm_v1_010, c);
  CHECK(s.max_sequences == 1024);
  CHECK(s.max_batched_tokens == 8192);
  c.offline = true;
  CHECK(framework_scheduler(Framework::vllm_v1_010, c).max_batched_tokens == 16384);
  c.offline = false;
  c.accelerator = "a100-sxm-80gb";
  s = framework_scheduler(Framework::vllm_v1_010, c);
  CHECK(s.max_sequences == 256);
  CHECK(s.max_batched_tokens == 2048);
  // vLLM 0.8 applied the 70 GiB rule to the A100 80 GB as well.
  CHECK(framework_scheduler(Framework::vllm_v1, c).max_sequences == 1024);
  CHECK(s.chunked_prefill);
  CHECK(s.prefix_caching);
  CHECK_FALSE(s.overlap_host);  // async scheduling off until after 0.11
}

TEST_CASE("trtllm-1.0: no chunking, no eviction, 32-token blocks, KV of the free memory, overlap on") {
  const SchedulerSpec s = framework_scheduler(Framework::trtllm_torch, h100());
  CHECK(s.max_sequences == 2048);
  CHECK(s.max_batched_tokens == 8192);
  CHECK_FALSE(s.chunked_prefill);
  CHECK(s.policy == SchedulePolicy::decode_first);
  CHECK(s.reserve_output);
  CHECK(s.block_size == 32);
  CHECK(s.kv_of_free_memory);
  CHECK(s.memory_utilisation == doctest::Approx(0.9).epsilon(1e-12));
  CHECK(s.prefix_caching);
  CHECK(s.overlap_host);
}

TEST_CASE("trtllm-bench-1.0: chunking on, reuse off, limits from calc_engine_setting") {
  FrameworkContext c = h100();
  // Llama-3-8B bf16 on one H100: 8.03e9 x 2 B of weights; 32 layers x 2 x 8 KV heads x 128 x 2 B
  // = 131,072 B per token; ISL 600, OSL 250. KV = 0.9 x (85.90e9 - 16.06e9) = 62.86e9 B, so
  // 62.86e9 / (131,072 x 850) = 564.2 requests: batch 564.2 -> 640 (multiple of 128 under 1,024);
  // tokens 564.2 x (1 + 600 / 250) = 1,918 -> 2,048 (floor under 4,096).
  c.weight_bytes = 8.03e9 * 2;
  c.kv_bytes_per_token = 131072;
  c.mean_input = 600;
  c.mean_output = 250;
  const auto limits = trtllm_bench_limits(c);
  REQUIRE(limits);
  CHECK(limits->max_sequences == 640);
  CHECK(limits->max_batched_tokens == 2048);
  const SchedulerSpec s = framework_scheduler(Framework::trtllm_bench, c);
  CHECK(s.max_sequences == 640);
  CHECK(s.chunked_prefill);
  CHECK_FALSE(s.prefix_caching);
  // Long prompts, short answers: ISL 8,000, OSL 100 -> 62.86e9 / (131,072 x 8,100) = 59.2
  // requests: batch 64 (floor); tokens 59.2 x 81 = 4,796 -> 5,120 (multiple of 512 under 8,192).
  c.mean_input = 8000;
  c.mean_output = 100;
  const auto long_prompts = trtllm_bench_limits(c);
  REQUIRE(long_prompts);
  CHECK(long_prompts->max_sequences == 64);
  CHECK(long_prompts->max_batched_tokens == 5120);
  // Without lengths the build defaults stand.
  c.mean_input = 0;
  CHECK_FALSE(trtllm_bench_limits(c));
  CHECK(framework_scheduler(Framework::trtllm_bench, c).max_sequences == 2048);
}

TEST_CASE("sglang-0.5: chunk and reservation by GPU memory; running requests from the KV pool") {
  FrameworkContext c = h100();
  SchedulerSpec s = framework_scheduler(Framework::sglang_05, c);
  CHECK(s.max_batched_tokens == 8192);
  // Reserved MiB = 512 + 1.5 x 8192 + 2 x 256 (graph batch, tp 1) + 1 x 1 / 8 x 1024 = 13,440.
  CHECK(s.memory_utilisation == doctest::Approx((81920.0 - 13440.0) / 81920.0).epsilon(1e-12));
  CHECK(s.kv_sized_sequences);
  // 8 x 24 GB card: 2,048-token chunks; reservation 512 + 3,072 + 32 + 128 = 3,744 MiB (no floor).
  c.hbm_bytes = 24 * kGiB;
  s = framework_scheduler(Framework::sglang_05, c);
  CHECK(s.max_batched_tokens == 2048);
  CHECK(s.memory_utilisation == doctest::Approx((24576.0 - 3744.0) / 24576.0).epsilon(1e-12));
  // B200 (179 GiB): 16,384-token chunks.
  c.hbm_bytes = 183359.0 * 1024 * 1024;
  CHECK(framework_scheduler(Framework::sglang_05, c).max_batched_tokens == 16384);
  // KV 393,587 tokens, context 8,192: pool 24,599 -> 4,096; min(196,793, 4,096).
  CHECK(sglang_max_running_requests(393587, 8192) == 4096);
  // Context 131,072: pool 1,537 -> 2,048.
  CHECK(sglang_max_running_requests(393587, 131072) == 2048);
  // A small cache: KV / 2 binds.
  CHECK(sglang_max_running_requests(3000, 8192) == 1500);
}

}  // namespace frameworks_test
