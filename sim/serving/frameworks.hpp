#pragma once
/// One documented set of scheduler defaults per serving framework and version
/// (`workload.framework`): what a scenario or a validation row leaves unstated is filled from
/// here, never chosen per row. Values and sources: docs/serving-frameworks.md (section 7 is
/// this table). Some defaults are the framework's own rules of the GPU (vLLM 0.8's limits on
/// GPUs of 70 GiB and more, SGLang's memory reservation), applied as the framework does.
#include <cstdint>
#include <optional>
#include <string>

#include "models/accelerator/accelerator_spec.hpp"
#include "sim/config/name_table.hpp"
#include "sim/serving/replica.hpp"

namespace clustersim::serving {

enum class Framework : std::uint8_t {
  vllm_v1,        ///< vLLM 0.8 (V1 engine)
  vllm_v1_010,    ///< vLLM 0.10 and 0.11 (V1 engine)
  vllm_v0,        ///< vLLM 0.6 (V0 engine)
  trtllm_ifb,     ///< TensorRT-LLM's C++ executor with TensorRT engines (~v0.9-v0.1x)
  trtllm_static,  ///< TensorRT-LLM static batching (v0.5-v0.6.1)
  trtllm_torch,   ///< TensorRT-LLM 1.0 and 1.1, PyTorch backend: LLM API and trtllm-serve
  trtllm_bench,   ///< TensorRT-LLM 1.0 and 1.1, PyTorch backend, `trtllm-bench throughput`
  sglang,         ///< SGLang 0.4
  sglang_05,      ///< SGLang 0.5.3 and later 0.5.x
};
/// "vllm-0.8", "vllm-0.10", "vllm-0.6", "trtllm-ifb", "trtllm-static", "trtllm-1.0",
/// "trtllm-bench-1.0", "sglang-0.4", "sglang-0.5".
const config::NameTable<Framework>& framework_names();

/// What a framework's defaults depend on.
struct FrameworkContext {
  double hbm_bytes = 80e9;                    ///< one accelerator's memory
  int instance_accelerators = 1;              ///< tp x pp
  bool offline = false;                       ///< every request at once (vLLM's LLM class, trtllm-bench)
  std::int64_t max_model_len = 0;             ///< the model's context (max_position_embeddings; 0: unknown)
  std::string accelerator;                    ///< library name (vLLM 0.10 treats the A100 apart)
  int tp = 1, pp = 1;                         ///< the instance's split
  /// What trtllm-bench sizes its limits from (tuning.py calc_engine_setting): the whole model's
  /// weight bytes, the instance's KV bytes per token (every layer, max(tp, kv heads) heads), and
  /// the dataset's mean prompt and output lengths. 0: unknown (the build defaults stand).
  double weight_bytes = 0;
  double kv_bytes_per_token = 0;
  double mean_input = 0, mean_output = 0;
};

/// The framework's scheduler settings for that context.
SchedulerSpec framework_scheduler(Framework framework, const FrameworkContext& context);

/// trtllm-bench's limits when none is given (TensorRT-LLM `bench/build/tuning.py`
/// calc_engine_setting, 1.0/1.1): KV-resident requests = 0.90 x (HBM x GPUs - weights) /
/// (KV bytes per token x (ISL + OSL)); batch = min(that, 4096) / pp, rounded up (to 32 with a
/// floor of 64 under 256, to 128 under 1,024, else to 256); tokens = min(batch x (1 + ISL/OSL),
/// 32,768), rounded up (to 256 with a floor of 2,048 under 4,096, to 512 under 8,192, else to
/// 1,024). nullopt when the context lacks the weights, KV bytes or lengths.
struct BenchLimits {
  int max_sequences = 0;
  std::int64_t max_batched_tokens = 0;
};
std::optional<BenchLimits> trtllm_bench_limits(const FrameworkContext& context);

/// SGLang's running-request limit when `max_running_requests` is unset (tp_worker.py,
/// model_runner.py, 0.4-0.5): min(KV tokens / 2, the request pool), the pool being
/// KV tokens / context x 512 clamped to [2,048, 4,096].
int sglang_max_running_requests(std::int64_t kv_tokens, std::int64_t context);

/// What a framework's kernels do that its scheduler settings do not say.
struct FrameworkKernels {
  /// Decode attention loads K and V once per query head, not once per KV head
  /// (models::TransformerSharding::decode_kv_per_query_head).
  bool decode_kv_per_query_head = false;
};
FrameworkKernels framework_kernels(Framework framework);

}  // namespace clustersim::serving
