#pragma once
/// The serving workload (`workload.kind: serving`): pools of model instances behind a router,
/// fed by a request generator, on the platform's engine and network. Each instance is a
/// Replica (continuous batching over a paged KV cache) whose iterations the IterationCostModel
/// times with the pool's accelerator; disaggregated pools move each request's KV cache from
/// its prefill instance to a decode instance through the communication runtime (flows that
/// contend with other traffic under the flow fidelity).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_spec.hpp"
#include "models/llm/moe_runtime.hpp"
#include "models/llm/transformer_spec.hpp"
#include "sim/config/name_table.hpp"
#include "sim/platform/workload.hpp"
#include "sim/serving/frameworks.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/replica.hpp"
#include "sim/serving/requests.hpp"

namespace clustersim::serving {

/// How the layers' weights are stored and multiplied (`workload.precision.weights`).
enum class WeightFormat : std::uint8_t {
  bf16,  ///< bf16 weights and math
  fp16,
  fp8,   ///< W8A8 fp8: fp8 weights and activations in the GEMMs (fp8 peak)
  int8,  ///< W8A16 weight-only int8: 1-byte weights dequantised into bf16 math
  int4,  ///< W4A16 weight-only int4 (AWQ, GPTQ): 0.5-byte weights, bf16 math
  fp4,   ///< W4A4 fp4 (NVFP4, MXFP4): fp4 weights and math (Blackwell's fp4 peak)
};
const config::NameTable<WeightFormat>& weight_format_names();
/// Bytes per stored weight element.
double weight_format_bytes(WeightFormat format);
/// The GEMMs' math format.
models::Dtype weight_format_math(WeightFormat format);

struct ServingPrecision {
  WeightFormat weights = WeightFormat::bf16;
  models::Dtype activations = models::Dtype::bf16;
  models::Dtype kv_cache = models::Dtype::bf16;
};

/// A pool of identical instances (`workload.pools.NAME`).
struct PoolSpec {
  std::string name;
  ReplicaRole role = ReplicaRole::mixed;
  std::string accelerator_name;                      ///< empty: the cluster's accelerator
  std::optional<models::AcceleratorSpec> accelerator;  ///< read from the preset when named
  int replicas = 1;
  int tp = 1, pp = 1, ep = 1;
  /// The pool's rental price, $ per accelerator-hour (`hour_usd`); unset: cost.accelerator_hour_usd.
  std::optional<double> hour_usd;
  int accelerators() const { return replicas * tp * pp; }
};

/// Where the router sends a request (`workload.router`, `workload.decode_router`).
enum class RouterPolicy : std::uint8_t {
  round_robin,
  least_outstanding,
  shortest_queue,
  prefix_aware,
  /// NVIDIA Dynamo's KV router (`--router-mode kv`): the lowest prompt blocks not cached there
  /// plus the instance's active prompt blocks; on decode pools the cached term is 0 (Dynamo's
  /// frontend routes decode by load alone).
  kv_cost,
  /// llm-d's scheduler as its sample P/D configuration scores: 2 x the prompt's cached fraction
  /// plus 1 x (max queue - queue) / (max queue - min queue) over the candidates; highest wins.
  prefix_queue,
};
const config::NameTable<RouterPolicy>& router_policy_names();

/// How a disaggregated deployment moves a prompt's KV cache (`workload.kv_transfer`).
enum class KvTransfer : std::uint8_t {
  push,  ///< the prefill instance sends it when the prompt ends; its sampled token is the first
  pull,  ///< vLLM's NixlConnector (Dynamo, llm-d): the decode instance reads it when it admits the request
};
const config::NameTable<KvTransfer>& kv_transfer_names();

/// Conditional disaggregation (`workload.conditional_disaggregation`): a prompt with fewer than
/// `max_uncached_tokens` tokens not cached on the decode instance the decode router picks (and,
/// with `max_uncached_ratio` < 1, that share of its prompt uncached below the ratio) is
/// prefilled there rather than on a prefill instance. Dynamo's `isl_bounding` policy: 2048 and
/// 0.7; llm-d's prefix-based decider: its `nonCachedTokens` and 1.
struct ConditionalDisaggregation {
  std::int64_t max_uncached_tokens = 0;  ///< 0: every prompt is prefilled on a prefill instance
  double max_uncached_ratio = 1;         ///< 1: no ratio condition
  bool on() const { return max_uncached_tokens > 0; }
};

/// Latency objectives (`workload.slo`); 0: none.
struct SloSpec {
  double ttft_s = 0;
  double tpot_s = 0;
  double percentile = 99;  ///< the percentile capacity planning holds to the targets
  /// How long requests arrive, the window a capacity trial is judged over: the run sends
  /// arrival.rate x window requests (requests.count is not used); 0: requests.count.
  double window_s = 0;
};

/// The serving workload's settings.
class ServingSpec final : public platform::WorkloadSpec {
 public:
  models::TransformerSpec model;
  std::optional<models::TransformerSpec> draft_model;  ///< speculative.draft_model, resolved
  ServingPrecision precision;
  std::vector<PoolSpec> pools;  ///< in name order; accelerators assigned pool by pool
  SchedulerSpec scheduler;
  KvOffloadSpec kv_offload;  ///< KV-cache tiers below HBM (kv_tiers.hpp)
  SpeculativeSpec speculative;
  RouterPolicy router = RouterPolicy::least_outstanding;
  RouterPolicy decode_router = RouterPolicy::least_outstanding;  ///< disaggregated: how a prefilled request finds its decode instance
  KvTransfer kv_transfer = KvTransfer::push;
  ConditionalDisaggregation conditional;  ///< disaggregated: short uncached prompts prefilled at decode
  RequestsSpec requests;
  SloSpec slo;
  models::MoeRuntime moe;
  Framework framework = Framework::vllm_v1;  ///< whose defaults fill unset scheduler keys (frameworks.hpp)
  /// Decode attention reads K and V once per query head (TensorRT-LLM's masked MHA before XQA);
  /// default: the framework's (framework_kernels()).
  bool decode_kv_per_query_head = false;
  bool exact_cost = false;         ///< cost every iteration op by op (no memo): slower, the reference
  /// As one of `jobs:`, the accelerators it is pinned to; count 0: unpinned (the primary's).
  platform::Allocation placement;

  std::optional<platform::Allocation> pinned() const override {
    return placement.count > 0 ? std::optional<platform::Allocation>(placement) : std::nullopt;
  }

  std::string_view kind() const override { return "serving"; }
  /// Checks the pools against the allocation and every instance's memory (weights must fit with
  /// room for the KV cache: models::DoesNotFitError otherwise) and builds the running workload.
  std::unique_ptr<platform::Workload> instantiate(const platform::Platform& platform,
                                                  const platform::Allocation& allocation,
                                                  const platform::SessionOptions& options) const override;
  /// Accelerators every pool needs together.
  int accelerators() const;
  /// Is it disaggregated (prefill and decode pools)?
  bool disaggregated() const;
};

/// Memory of one instance's device (the worst stage), bytes.
struct InstanceMemory {
  double capacity = 0;          ///< HBM x memory_utilisation
  double weights = 0;
  double activations = 0;       ///< the largest iteration's activations and workspace
  double kv_cache = 0;          ///< what is left
  double kv_bytes_per_token = 0;
  std::int64_t kv_blocks = 0;
};

/// A pool's memory plan (throws models::DoesNotFitError when the weights leave no KV cache).
InstanceMemory plan_instance_memory(const ServingSpec& spec, const PoolSpec& pool, const models::AcceleratorSpec& accelerator);

/// One pool's figures in the result.
struct PoolResult {
  std::string name;
  std::string role;
  std::string accelerator;
  int replicas = 0, tp = 1, pp = 1, ep = 1;
  InstanceMemory memory;
  double utilisation = 0;          ///< busy time / (replicas x duration)
  double kv_utilisation_mean = 0;  ///< used blocks / blocks, time-weighted
  double kv_utilisation_peak = 0;
  std::int64_t iterations = 0;
  double mean_batch_tokens = 0;
  /// Shares of busy time: compute-bound ops, memory-bound ops, communication, host overhead.
  double compute_share = 0, memory_share = 0, communication_share = 0, host_share = 0;
};

/// One KV-cache tier's figures in the result (`kv_offload.tiers`), summed over the schedulers.
struct KvTierResult {
  std::string tier;                ///< "host", "cxl", "ssd", "pool"
  double capacity_bytes = 0;       ///< per accelerator, for the KV cache (the shared pool: one pool's)
  std::int64_t hits = 0;           ///< requests that loaded part of their prompt from it
  std::int64_t hit_tokens = 0;     ///< prompt tokens loaded from it
  double hit_rate = 0;             ///< hit tokens / prompt tokens
  double stored_bytes = 0, loaded_bytes = 0, evicted_bytes = 0;  ///< all of an instance's accelerators
  double load_s = 0;               ///< transfer time of its loads
  double prefill_avoided_s = 0;    ///< estimate: prefill time its hits' tokens would have cost
};

/// A point of the time series (per second of simulated time).
struct ServingSample {
  double time_s = 0;
  std::int64_t queued = 0;          ///< waiting requests, all replicas
  double kv_utilisation = 0;        ///< used / all blocks, all replicas
  double output_tokens_per_s = 0;   ///< over the second that ended here
};

/// Faults of a serving run (faults.hpp; docs/reliability.md, "Faults in serving"): present when
/// simulation.variability, cluster.stragglers or simulation.failures is set.
struct ServingFaults {
  bool modelled = false;
  int instances = 0;
  int straggler_instances = 0;       ///< instances with an accelerator on a slow node
  std::int64_t failures = 0;         ///< instance failures during the run
  double expected_failures = 0;      ///< duration x sum over instances of 1 / (MTBF + restart)
  double instance_mtbf_s = 0;        ///< mean time between failures of one instance (the first pool's)
  double restart_s = 0;              ///< downtime after each failure
  double availability = 1;           ///< 1 - instance downtime / (instances x duration)
  std::int64_t requeued_requests = 0;  ///< times a failure sent a request back to the router
  std::int64_t reprefill_tokens = 0;   ///< tokens prefilled again because a failure lost their KV cache
  double useful_work_share = 1;      ///< 1 - reprefill tokens / all tokens the iterations processed
  /// Shares of the schedulers' time (instances x duration when pp = 1) each cause cost.
  double jitter_share = 0, host_noise_share = 0, straggler_share = 0, downtime_share = 0, reprefill_share = 0,
         lost_work_share = 0;
};

/// What a serving run produced.
struct ServingResult final : public platform::WorkloadResult {
  /// Throughput and the median TTFT and TPOT.
  std::vector<platform::Metric> headline() const override {
    return {{"throughput", throughput_tokens_per_s, "tok/s"}, {"ttft_p50", ttft_s.p50, "s"}, {"tpot_p50", tpot_s.p50, "s"}};
  }
  double duration_s = 0;  ///< first arrival to last completion
  std::int64_t requests = 0, completed = 0, rejected = 0, preemptions = 0;
  /// The rejected by cause (Rejection): KV capacity, the token budget without chunked prefill,
  /// a full waiting queue.
  std::int64_t rejected_kv_capacity = 0, rejected_token_budget = 0, rejected_queue_full = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  double throughput_tokens_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, requests_per_s = 0;
  double goodput_requests_per_s = 0;  ///< completed requests meeting every SLO target
  Distribution ttft_s, tpot_s, itl_s, e2e_s, queue_s;
  double kv_utilisation_mean = 0, kv_utilisation_peak = 0;
  double prefix_hit_rate = 0;   ///< prompt tokens served from the prefix cache (HBM or a tier) / prompt tokens
  double hbm_hit_rate = 0;      ///< the share of those HBM served
  std::vector<KvTierResult> kv_tiers;  ///< empty without kv_offload
  TierWrite kv_write = TierWrite::write_through;
  TierLoad kv_load = TierLoad::async;
  double tier_wait_share = 0;   ///< blocking tier loads' share of the iterations' time
  double gpu_utilisation = 0;   ///< busy accelerator time / (accelerators x duration)
  std::optional<double> energy_per_token_j;
  std::optional<double> device_energy_per_token_j;  ///< the accelerators' energy alone
  std::optional<double> cost_per_million_tokens;
  double average_power_w = 0;          ///< devices, nodes, NICs, switches, power supplies
  double devices_average_power_w = 0;  ///< the accelerators' board power alone
  int accelerators = 0;
  std::vector<PoolResult> pools;
  std::vector<ServingSample> series;
  SloSpec slo;
  double ttft_at_slo_percentile_s = 0, tpot_at_slo_percentile_s = 0;  ///< at slo.percentile
  bool slo_met = true;                 ///< the percentile of TTFT and TPOT within the targets
  std::string limiter;                 ///< what bounds it: compute, HBM bandwidth, KV capacity, network, host, queueing
  ServingFaults faults;
  std::vector<RequestRecord> records;  ///< every request (kept for the trace and reports)
};

}  // namespace clustersim::serving
