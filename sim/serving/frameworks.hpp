#pragma once
/// One documented set of scheduler defaults per serving framework and version
/// (`workload.framework`): what a scenario or a validation row leaves unstated is filled from
/// here, never chosen per row. Values and sources: docs/serving-frameworks.md (section 7 is
/// this table). Some defaults are the framework's own rules of the GPU (vLLM 0.8's limits on
/// GPUs of 70 GiB and more, SGLang's memory reservation), applied as the framework does.
#include <cstdint>
#include <string>

#include "models/accelerator/accelerator_spec.hpp"
#include "sim/config/name_table.hpp"
#include "sim/serving/replica.hpp"

namespace clustersim::serving {

enum class Framework : std::uint8_t { vllm_v1, vllm_v0, trtllm_ifb, trtllm_static, sglang };
/// "vllm-0.8", "vllm-0.6", "trtllm-ifb", "trtllm-static", "sglang-0.4".
const config::NameTable<Framework>& framework_names();

/// What a framework's defaults depend on.
struct FrameworkContext {
  double hbm_bytes = 80e9;                    ///< one accelerator's memory
  int instance_accelerators = 1;              ///< tp x pp
  bool offline = false;                       ///< every request at once (vLLM's LLM class, trtllm-bench)
  std::int64_t max_model_len = 0;             ///< the model's context (max_position_embeddings; 0: unknown)
};

/// The framework's scheduler settings for that context.
SchedulerSpec framework_scheduler(Framework framework, const FrameworkContext& context);

/// What a framework's kernels do that its scheduler settings do not say.
struct FrameworkKernels {
  /// Decode attention loads K and V once per query head, not once per KV head
  /// (models::TransformerSharding::decode_kv_per_query_head).
  bool decode_kv_per_query_head = false;
};
FrameworkKernels framework_kernels(Framework framework);

}  // namespace clustersim::serving
