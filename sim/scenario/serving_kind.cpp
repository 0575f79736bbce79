// The serving workload kind: its keys (`workload.*` when `kind: serving`), declared once and
// bound to serving::ServingSpec, and what they cannot say: the model and pool-accelerator
// lookups, the framework's defaults for unwritten scheduler keys, and the checks between the
// pools, the model, the requests and the platform.
#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "models/accelerator/dtype.hpp"
#include "models/llm/parallel_rules.hpp"
#include "models/llm/transformer_keys.hpp"
#include "models/llm/memory_footprint.hpp"
#include "sim/engine/error.hpp"
#include "sim/config/units.hpp"
#include "sim/platform/resource_limits.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/preset_readers.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "sim/serving/frameworks.hpp"
#include "sim/serving/requests.hpp"
#include "sim/serving/serving_workload.hpp"
#include "topologies/registry.hpp"

namespace clustersim::scenario {
namespace {

using config::ConfigNode;
using config::Declarations;
using config::Dimension;
using config::member;
using serving::ServingSpec;

Declarations<serving::LengthSpec> length_keys() {
  using L = serving::LengthSpec;
  Declarations<L> keys;
  keys.enumeration("distribution", &L::kind, serving::length_kind_names(),
                   "fixed (value), uniform (min..max), normal or lognormal (mean, stddev), empirical (file), dataset "
                   "(a public trace's lengths the library ships: dataset)");
  keys.number("value", &L::value, "tokens, for a fixed length").range(1, 1e9);
  keys.number("min", &L::min, "smallest length; every distribution is clamped to [min, max]").range(1, 1e9);
  keys.number("max", &L::max, "largest length").range(1, 1e9);
  keys.number("mean", &L::mean, "mean tokens (normal, lognormal)").range(0, 1e9);
  keys.number("stddev", &L::stddev, "standard deviation of the tokens (normal, lognormal)").range(0, 1e9);
  keys.file("file", &L::file, "empirical: a CSV of `length[,weight]` rows (a header line is allowed)");
  keys.string("dataset", &L::dataset,
              "dataset: the profile, a public trace's lengths (models/data/datasets: azure-conv-2023, azure-code-2023, "
              "arxiv-summarization-4k)");
  return keys;
}

Declarations<serving::RequestsSpec> requests_keys() {
  using R = serving::RequestsSpec;
  using A = serving::ArrivalSpec;
  Declarations<A> arrival;
  arrival.enumeration("process", &A::process, serving::arrival_process_names(),
                      "poisson, gamma (bursty: cv), constant, ramp (rate to rate_end over ramp_duration), closed_loop "
                      "(clients with think_time), offline (all at time 0), trace (requests.trace)");
  arrival.number("rate", &A::rate_per_s, "requests per second (poisson, gamma, constant; ramp: the start)").positive();
  arrival.number("cv", &A::cv, "gamma: coefficient of variation of the gaps (1 = Poisson, > 1 bursty)").positive();
  arrival.number("rate_end", &A::rate_end_per_s, "ramp: requests per second reached at ramp_duration").range(0, 1e12);
  arrival.quantity("ramp_duration", &A::ramp_duration_s, Dimension::seconds, "ramp: time to reach rate_end");
  arrival.integer("clients", &A::clients, "closed_loop: concurrent users").range(1, 1e9);
  arrival.quantity("think_time", &A::think_time_s, Dimension::seconds,
                   "closed_loop: mean time between an answer and the user's next request (exponential)");
  Declarations<serving::PrefixSpec> prefix;
  prefix.integer("groups", &serving::PrefixSpec::groups, "system prompts shared by groups of requests; 0: none")
      .range(0, 1e9);
  prefix.integer("tokens", &serving::PrefixSpec::tokens, "tokens of a system prompt (added in front of the input)")
      .range(0, 1e9);
  prefix.integer("turns", &serving::PrefixSpec::turns,
                 "turns per session (closed_loop): each turn's prompt carries the conversation so far")
      .range(1, 1e6);
  Declarations<R> keys;
  keys.integer("count", &R::count, "requests to send (a trace: at most this many rows; 0: every row)").range(0, 1e12);
  keys.object("arrival", &R::arrival, arrival, "the arrival process");
  keys.object("input", &R::input, length_keys(), "prompt length distribution, tokens");
  keys.object("output", &R::output, length_keys(), "output length distribution, tokens (the first included)");
  keys.object("prefix", &R::prefix, prefix, "shared prefixes: system prompts and multi-turn sessions");
  keys.file("trace", &R::trace_file,
            "a CSV with a header naming arrival_s, input_tokens, output_tokens (optionally prefix_id, prefix_tokens): "
            "replayed with arrival.process: trace");
  return keys;
}

Declarations<serving::SchedulerSpec> scheduler_keys() {
  using S = serving::SchedulerSpec;
  Declarations<S> keys;
  keys.integer("max_sequences", &S::max_sequences, "sequences in one batch (vLLM max_num_seqs); default: the framework's")
      .range(1, 1e7);
  keys.integer("max_batched_tokens", &S::max_batched_tokens,
               "query tokens in one iteration (vLLM max_num_batched_tokens); default: the framework's")
      .range(1, 1e9);
  keys.boolean("chunked_prefill", &S::chunked_prefill,
               "split prompts into chunks that fill the token budget beside decodes (Sarathi-Serve)");
  keys.enumeration("policy", &S::policy, serving::schedule_policy_names(),
                   "decode_first: running decodes, then prompt chunks; prefill_first: waiting prompts first; "
                   "static_batch: a batch runs to its end before the next is admitted");
  keys.integer("block_size", &S::block_size, "tokens per KV-cache block (page)").range(1, 1e6);
  keys.number("memory_utilisation", &S::memory_utilisation,
              "fraction of HBM for weights, activations and the KV cache (vLLM gpu_memory_utilization)")
      .range(0.05, 1);
  keys.enumeration("preemption", &S::preemption, serving::preemption_mode_names(),
                   "when the KV cache is full: recompute (drop the blocks, prefill again) or swap (to host memory)");
  keys.integer("max_queue", &S::max_queue, "waiting requests a replica accepts (more are rejected); 0: unbounded")
      .range(0, 1e12);
  keys.boolean("prefix_caching", &S::prefix_caching,
               "keep the blocks of shared prefixes cached (LRU) for later requests");
  keys.quantity("iteration_overhead", &S::iteration_overhead_s, Dimension::seconds,
                "host time per iteration (scheduling, sampling, launches); default: the framework's");
  keys.quantity("iteration_overhead_per_sequence", &S::iteration_overhead_per_sequence_s, Dimension::seconds,
                "more host time per sequence of the batch; default: the framework's");
  keys.boolean("overlap_host", &S::overlap_host,
               "the host prepares the next iteration while the GPU runs this one (SGLang's overlap scheduler)");
  keys.boolean("reserve_output", &S::reserve_output,
               "admission reserves KV blocks for the whole output, so nothing is preempted (TensorRT-LLM "
               "GUARANTEED_NO_EVICT)");
  keys.boolean("kv_of_free_memory", &S::kv_of_free_memory,
               "memory_utilisation applies to the memory left after weights and activations (TensorRT-LLM), not "
               "to all of it (vLLM)");
  keys.integer("recv_interval", &S::recv_interval,
               "decode iterations between the times a decoding instance takes in new requests (SGLang "
               "--scheduler-recv-interval; an iteration with prefill work, or an idle instance, takes them in at once)")
      .range(1, 1e6);
  return keys;
}

Declarations<serving::KvOffloadSpec> kv_offload_keys() {
  using K = serving::KvOffloadSpec;
  Declarations<K> keys;
  keys.string_list("tiers", &K::tiers, "a KV-cache tier",
                   "KV-cache tiers below HBM, nearest first: host, cxl, ssd (each needs the accelerator's "
                   "memory.<tier>_capacity and memory.<tier>_bandwidth; prefix caching on)");
  const auto capacity = [&keys](const char* key, double K::*member, const char* tier) {
    keys.quantity(key, member, Dimension::bytes,
                  fmt::format("{} per accelerator given to the KV cache; unset: the accelerator's memory.{}", tier, key))
        .positive()
        .optional();
  };
  capacity("host_capacity", &K::host_capacity_bytes, "host DRAM");
  capacity("cxl_capacity", &K::cxl_capacity_bytes, "CXL memory");
  capacity("ssd_capacity", &K::ssd_capacity_bytes, "local NVMe");
  keys.enumeration("write", &K::write, serving::tier_write_names(),
                   "write_through: a request's reusable context is copied to the first tier when it ends (vLLM's "
                   "OffloadingConnector, Dynamo KVBM, LMCache); write_back: only when HBM evicts it");
  keys.enumeration("load", &K::load, serving::tier_load_names(),
                   "async: a request waits for its prefix's copy while the batch runs on (vLLM, KVBM); blocking: "
                   "the iteration that admits it waits (LMCache without its layer-wise mode)");
  return keys;
}

const Declarations<serving::PoolSpec>& pool_keys() {
  static const Declarations<serving::PoolSpec> keys = [] {
    Declarations<serving::PoolSpec> pool;
    pool.enumeration("role", &serving::PoolSpec::role, serving::replica_role_names(),
                     "mixed (prefill and decode), or prefill / decode pools of a disaggregated deployment");
    pool.declare(config::string_field("accelerator",
                                      "the pool's accelerator (the scenario's `accelerators:` map, then the library); "
                                      "default: the cluster's"));
    pool.integer("replicas", &serving::PoolSpec::replicas, "model instances in the pool").range(1, 1e6);
    pool.integer("tp", &serving::PoolSpec::tp, "tensor-parallel ranks per instance").range(1, 1e4);
    pool.integer("pp", &serving::PoolSpec::pp, "pipeline stages per instance").range(1, 1e4);
    pool.integer("ep", &serving::PoolSpec::ep, "expert-parallel ranks (MoE; <= tp, the instance's ranks)").range(1, 1e4);
    pool.number("hour_usd", &serving::PoolSpec::hour_usd,
                "rental price of the pool's accelerators, $ per accelerator-hour (a fleet of several parts); unset: "
                "cost.accelerator_hour_usd")
        .positive()
        .optional();
    return pool;
  }();
  return keys;
}

Declarations<ServingSpec> declare_serving_keys() {
  using W = ServingSpec;
  Declarations<serving::ServingPrecision> precision;
  precision.enumeration("weights", &serving::ServingPrecision::weights, serving::weight_format_names(),
                        "bf16, fp16, fp8 (W8A8), int8 / int4 (weight-only, bf16 math), fp4 (W4A4, Blackwell)");
  precision.enumeration("activations", &serving::ServingPrecision::activations,
                        models::dtype_names().only({"bf16", "fp16"}), "activations");
  precision.enumeration("kv_cache", &serving::ServingPrecision::kv_cache,
                        models::dtype_names().only({"bf16", "fp16", "fp8"}), "KV-cache elements");
  Declarations<serving::SpeculativeSpec> speculative;
  speculative.integer("tokens", &serving::SpeculativeSpec::tokens, "draft tokens proposed per step; 0: off").range(0, 64);
  speculative.number("acceptance", &serving::SpeculativeSpec::acceptance,
                     "probability each draft token is accepted (until the first rejection)")
      .range(0, 1);
  speculative.number("draft_cost_fraction", &serving::SpeculativeSpec::draft_cost_fraction,
                     "without draft_model: one draft token's cost / one target iteration (an MTP head ~1 / layers)")
      .range(0, 10);
  speculative.string("draft_model", &serving::SpeculativeSpec::draft_model,
                     "a draft model (the scenario's `models:` map, then the library): each proposed token is one of "
                     "its decode steps, costed on the same instance; its weights and KV cache share the memory");
  Declarations<serving::SloSpec> slo;
  slo.quantity("ttft", &serving::SloSpec::ttft_s, Dimension::seconds, "time-to-first-token target; 0: none");
  slo.quantity("tpot", &serving::SloSpec::tpot_s, Dimension::seconds, "time-per-output-token target; 0: none");
  slo.number("percentile", &serving::SloSpec::percentile, "the percentile held to the targets").range(1, 100);
  slo.quantity("window", &serving::SloSpec::window_s, Dimension::seconds,
                "how long requests arrive: the run sends arrival.rate x window requests (requests.count is then not "
                "used), and each `clustersim capacity` trial is judged over this window at its own rate; 0: "
                "requests.count (a capacity trial then lasts requests.count / arrival.rate)");
  Declarations<models::MoeRuntime> moe;
  moe.number("imbalance", &models::MoeRuntime::imbalance, "busiest expert's tokens / mean tokens per expert").range(1, 1e6);
  Declarations<W> keys;
  keys.declare(config::string_or_object_field("model", models::transformer_keys().fields(),
                                              "model name (the scenario's `models:` map, then the library) or inline "
                                              "Hugging Face fields"))
      .need();
  keys.enumeration("framework", &W::framework, serving::framework_names(),
                   "serving framework whose defaults fill the scheduler keys left unset (docs/serving-frameworks.md)");
  keys.boolean("decode_kv_per_query_head", &W::decode_kv_per_query_head,
               "decode attention loads K and V once per query head (one thread block per head: TensorRT-LLM's "
               "masked MHA before XQA), so a GQA group reads them once per query head; default: the framework's");
  keys.object("precision", &W::precision, precision, "number formats");
  keys.declare(config::map_field("pools", pool_keys().fields(), "pools of model instances, by name (accelerators in name order)"))
      .need();
  keys.object("scheduler", &W::scheduler, scheduler_keys(), "continuous batching and the KV cache");
  keys.object("kv_offload", &W::kv_offload, kv_offload_keys(),
              "KV-cache tiers below HBM: prefixes HBM lets go kept in host DRAM, a CXL pool or local NVMe");
  keys.object("speculative", &W::speculative, speculative, "speculative decoding");
  keys.enumeration("router", &W::router, serving::router_policy_names(),
                   "how requests are spread over instances (kv_cost: NVIDIA Dynamo's KV router; prefix_queue: llm-d's "
                   "prefix and queue scorers)");
  keys.enumeration("decode_router", &W::decode_router, serving::router_policy_names(),
                   "disaggregated: how a prefilled request finds its decode instance (Dynamo: the frontend's router "
                   "mode, kv_cost by load alone; llm-d: prefix_queue)");
  Declarations<serving::ConditionalDisaggregation> conditional;
  conditional
      .integer("max_uncached_tokens", &serving::ConditionalDisaggregation::max_uncached_tokens,
               "a prompt with fewer tokens than this not cached on the decode instance the decode router picks is "
               "prefilled there (Dynamo's isl_bounding: 2048; llm-d's nonCachedTokens); 0: none")
      .range(0, 1e12);
  conditional
      .number("max_uncached_ratio", &serving::ConditionalDisaggregation::max_uncached_ratio,
              "... and, below 1, only if its uncached share of the prompt is below this (Dynamo: 0.7); 1: no share "
              "condition")
      .range(1e-9, 1);
  keys.object("conditional_disaggregation", &W::conditional, conditional,
              "disaggregated: short uncached prompts prefilled on their decode instance (Dynamo's conditional "
              "disaggregation, llm-d's prefix-based P/D decider)");
  keys.enumeration("kv_transfer", &W::kv_transfer, serving::kv_transfer_names(),
                   "disaggregated: push (the prefill instance sends the KV cache when the prompt ends; its token is the "
                   "first) or pull (vLLM's NixlConnector under Dynamo and llm-d: the decode instance reads what it has "
                   "not cached when it admits the request, then computes the last prompt token for the first one)");
  keys.object("requests", &W::requests, requests_keys(), "the request stream").need();
  keys.object("slo", &W::slo, slo, "latency objectives (goodput, capacity)");
  keys.object("moe", &W::moe, moe, "mixture-of-experts routing (MoE models only)");
  Declarations<platform::Allocation> placement;
  placement.integer("first", &platform::Allocation::first, "the first accelerator (global, node-major index)")
      .range(0, 1e9);
  placement.integer("count", &platform::Allocation::count, "accelerators; 0: the primary workload's").range(0, 1e9);
  keys.object("accelerators", &W::placement, placement,
              "as one of `jobs:`: the accelerators it runs on (beside a training workload); unset: the primary's");
  keys.boolean("exact_cost", &W::exact_cost,
               "cost every iteration op by op (the reference the memoised cost is held to within 1 %; slower)");
  return keys;
}

/// What trtllm-bench sizes its limits from: the whole model's weights, the first pool's KV bytes
/// per token over its GPUs, the dataset's mean lengths (as RequestGenerator draws them). A
/// replayed trace's lengths are read only when the run starts, so the build defaults stand and
/// a warning says so.
void fill_bench_context(const WorkloadReadContext& c, const ServingSpec& w, serving::FrameworkContext& context) {
  if (w.model.num_hidden_layers <= 0 || w.model.num_key_value_heads <= 0) return;  // reported at the model
  context.weight_bytes = w.model.total_parameters() * serving::weight_format_bytes(w.precision.weights);
  const int tp = std::max(1, context.tp);
  context.kv_bytes_per_token =
      models::kv_cache_bytes(w.model, 1.0, models::dtype_bytes(w.precision.kv_cache), tp) * tp;
  if (w.requests.arrival.process == serving::ArrivalProcess::trace) {
    c.problems.warn(c.position("framework"), c.key("framework"),
                    "trtllm-bench-1.0 sizes max_batch_size and max_num_tokens from the dataset's mean lengths, which a "
                    "replayed trace gives only when the run starts: the build defaults (2048 sequences, 8192 tokens) "
                    "stand",
                    "set scheduler.max_sequences and scheduler.max_batched_tokens to the values trtllm-bench printed");
    return;
  }
  try {
    context.mean_input = serving::LengthSampler(w.requests.input).mean() +
                         (w.requests.prefix.groups > 0 ? static_cast<double>(w.requests.prefix.tokens) : 0.0);
    context.mean_output = serving::LengthSampler(w.requests.output).mean();
  } catch (const ConfigError&) {  // a bad distribution is reported at its keys
    context.mean_input = context.mean_output = 0;
  }
}

/// Unwritten scheduler keys take the framework's values (for the first pool's accelerator).
void apply_framework_defaults(const WorkloadReadContext& c, ServingSpec& w) {
  serving::FrameworkContext context;
  const serving::PoolSpec* first = w.pools.empty() ? nullptr : &w.pools.front();
  const models::AcceleratorSpec& accelerator =
      first != nullptr && first->accelerator ? *first->accelerator : c.platform.cluster.accelerator;
  if (accelerator.hbm_capacity_bytes > 0) context.hbm_bytes = accelerator.hbm_capacity_bytes;
  if (first != nullptr) {
    context.instance_accelerators = first->tp * first->pp;
    context.tp = first->tp;
    context.pp = first->pp;
  }
  context.accelerator = accelerator.name;
  context.offline = w.requests.arrival.process == serving::ArrivalProcess::offline;
  context.max_model_len = w.model.max_position_embeddings;
  if (w.framework == serving::Framework::trtllm_bench) fill_bench_context(c, w, context);
  const serving::SchedulerSpec d = serving::framework_scheduler(w.framework, context);
  serving::SchedulerSpec& s = w.scheduler;
  // Each key the scenario leaves unwritten takes the framework's value, and the resolved keys
  // record that value (their declared defaults are not what runs).
  const auto take = [&](const char* key, auto& member, const auto& value, std::string text) {
    if (c.has(std::string("scheduler.") + key)) return false;
    member = value;
    if (c.resolved != nullptr) (*c.resolved)[c.key(std::string("scheduler.") + key)] = std::move(text);
    return true;
  };
  const auto flag = [](bool on) { return std::string(on ? "true" : "false"); };
  if (take("max_sequences", s.max_sequences, d.max_sequences,
           d.kv_sized_sequences ? fmt::format("sized from the KV cache (at most {})", d.max_sequences)
                                : std::to_string(d.max_sequences))) {
    s.kv_sized_sequences = d.kv_sized_sequences;
  }
  take("max_batched_tokens", s.max_batched_tokens, d.max_batched_tokens, std::to_string(d.max_batched_tokens));
  take("chunked_prefill", s.chunked_prefill, d.chunked_prefill, flag(d.chunked_prefill));
  take("policy", s.policy, d.policy, std::string(serving::schedule_policy_names().name(d.policy)));
  take("block_size", s.block_size, d.block_size, std::to_string(d.block_size));
  take("memory_utilisation", s.memory_utilisation, d.memory_utilisation, fmt::format("{:g}", d.memory_utilisation));
  take("preemption", s.preemption, d.preemption, std::string(serving::preemption_mode_names().name(d.preemption)));
  take("prefix_caching", s.prefix_caching, d.prefix_caching, flag(d.prefix_caching));
  // The per-sequence overhead goes with the per-iteration one (the framework's pair).
  if (take("iteration_overhead", s.iteration_overhead_s, d.iteration_overhead_s,
           fmt::format("{:g} s", d.iteration_overhead_s))) {
    s.iteration_overhead_per_sequence_s = d.iteration_overhead_per_sequence_s;
    if (c.resolved != nullptr) {
      (*c.resolved)[c.key("scheduler.iteration_overhead_per_sequence")] =
          fmt::format("{:g} s", d.iteration_overhead_per_sequence_s);
    }
  }
  take("overlap_host", s.overlap_host, d.overlap_host, flag(d.overlap_host));
  take("reserve_output", s.reserve_output, d.reserve_output, flag(d.reserve_output));
  take("kv_of_free_memory", s.kv_of_free_memory, d.kv_of_free_memory, flag(d.kv_of_free_memory));
  take("recv_interval", s.recv_interval, d.recv_interval, std::to_string(d.recv_interval));
  if (!c.has("decode_kv_per_query_head")) {
    w.decode_kv_per_query_head = serving::framework_kernels(w.framework).decode_kv_per_query_head;
  }
}

/// The pools, in name order, with their accelerators.
void read_pools(const WorkloadReadContext& c, ServingSpec& w) {
  const ConfigNode* pools = c.root.find_path(c.key("pools"));
  if (pools == nullptr || !pools->is_mapping()) return;
  std::vector<std::string> names = pools->keys();
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = c.key("pools." + name);
    serving::PoolSpec pool;
    pool.name = name;
    pool_keys().read(*pools->find(name), path, pool, c.problems);
    if (const ConfigNode* accelerator = pools->find(name)->find("accelerator"); accelerator && accelerator->is_scalar()) {
      pool.accelerator_name = accelerator->text;
      const ConfigNode* library = c.root.find("accelerators");
      const ConfigNode* entry = library != nullptr && library->is_mapping() ? library->find(pool.accelerator_name) : nullptr;
      if (entry == nullptr) {
        c.problems.add(accelerator->position, path + ".accelerator", "unknown accelerator '" + pool.accelerator_name + "'",
                       unknown_name_hint(pool.accelerator_name, library_names(LibraryKind::accelerators, c.data_dir)));
      } else {
        pool.accelerator = read_accelerator(*entry, "accelerators." + pool.accelerator_name, pool.accelerator_name,
                                            c.problems);
      }
    }
    w.pools.push_back(std::move(pool));
  }
}

void check_pools(const WorkloadReadContext& c, const ServingSpec& w, bool model_ok) {
  config::Problems& problems = c.problems;
  int mixed = 0, prefill = 0, decode = 0;
  for (const serving::PoolSpec& pool : w.pools) {
    const std::string path = "pools." + pool.name;
    (pool.role == serving::ReplicaRole::mixed ? mixed : pool.role == serving::ReplicaRole::prefill ? prefill : decode)++;
    if (model_ok && !problems.bad(c.key(path + ".tp"))) {
      if (const auto problem = models::tensor_parallel_problem(w.model, pool.tp)) {
        problems.add(c.position(path + ".tp"), c.key(path + ".tp"), problem->message);
      }
    }
    if (pool.ep > pool.tp) {
      problems.add(c.position(path + ".ep"), c.key(path + ".ep"),
                   "ep " + std::to_string(pool.ep) + " exceeds tp " + std::to_string(pool.tp) +
                       ": an instance spreads its experts over its own TP ranks");
    } else if (model_ok && pool.ep > 1 && (!w.model.is_moe() || w.model.moe.num_experts % pool.ep != 0)) {
      problems.add(c.position(path + ".ep"), c.key(path + ".ep"),
                   w.model.is_moe() ? "ep " + std::to_string(pool.ep) + " does not divide the model's " +
                                          std::to_string(w.model.moe.num_experts) + " routed experts"
                                    : "ep > 1 needs a mixture-of-experts model; '" + w.model.name + "' has no experts");
    }
    if (model_ok && pool.pp > w.model.num_hidden_layers) {
      problems.add(c.position(path + ".pp"), c.key(path + ".pp"),
                   "pp " + std::to_string(pool.pp) + " exceeds the model's " +
                       std::to_string(w.model.num_hidden_layers) + " layers");
    }
    const models::AcceleratorSpec& accelerator = pool.accelerator.value_or(c.platform.cluster.accelerator);
    const models::Dtype math = serving::weight_format_math(w.precision.weights);
    if ((c.platform_ok || pool.accelerator) && !accelerator.peak_flops_per_s.count(math) &&
        !problems.bad(c.key("precision.weights"))) {
      problems.add(c.position("precision.weights"), c.key("precision.weights"),
                   "weights " + std::string(serving::weight_format_names().name(w.precision.weights)) + " need a " +
                       std::string(models::dtype_name(math)) + " peak, but accelerator '" + accelerator.name +
                       "' (pool " + pool.name + ") has none");
    }
  }
  if ((prefill > 0 || decode > 0) && (mixed > 0 || prefill == 0 || decode == 0)) {
    problems.add(c.position("pools"), c.key("pools"),
                 "a disaggregated deployment needs prefill and decode pools and no mixed one (has " +
                     std::to_string(mixed) + " mixed, " + std::to_string(prefill) + " prefill, " +
                     std::to_string(decode) + " decode)");
  }
  // A job has the accelerators it is pinned to; the primary workload what the jobs leave.
  const bool job = c.path != "workload";
  if (job && w.placement.count == 0) {
    problems.add(c.position("accelerators"), c.key("accelerators.count"),
                 "a serving job needs its accelerators: accelerators: {first, count}");
    return;
  }
  const int available = job ? w.placement.count : c.accelerators;
  if (available >= 0 && c.platform_ok && !problems.any_bad(c.key("pools"), "cluster.nodes", "cluster.node.per_node") &&
      w.accelerators() > available) {
    problems.add(c.position("pools"), c.key("pools"),
                 "the pools need " + std::to_string(w.accelerators()) + " accelerators (replicas x tp x pp), but the "
                 "workload has " + std::to_string(available));
  }
}

void check_requests(const WorkloadReadContext& c, const ServingSpec& w) {
  const serving::RequestsSpec& r = w.requests;
  config::Problems& problems = c.problems;
  if (problems.any_bad(c.key("requests"))) return;
  using P = serving::ArrivalProcess;
  const P process = r.arrival.process;
  if (process == P::trace && r.trace_file.empty()) {
    problems.add(c.position("requests.arrival.process"), c.key("requests.trace"),
                 "arrival.process: trace needs requests.trace (a CSV file)");
    return;
  }
  if (process != P::trace && c.has("requests.trace")) {
    problems.add(c.position("requests.trace"), c.key("requests.trace"),
                 "requests.trace is replayed only with arrival.process: trace (it is '" +
                     std::string(serving::arrival_process_names().name(process)) + "')");
  }
  if (process == P::ramp && (!c.has("requests.arrival.rate_end") || !c.has("requests.arrival.ramp_duration"))) {
    problems.add(c.position("requests.arrival.process"), c.key("requests.arrival.process"),
                 "a ramp needs arrival.rate_end and arrival.ramp_duration");
  }
  if (r.prefix.turns > 1 && process != P::closed_loop) {
    problems.add(c.position("requests.prefix.turns"), c.key("requests.prefix.turns"),
                 "multi-turn sessions need arrival.process: closed_loop (a turn follows its answer)");
  }
  for (const char* which : {"input", "output"}) {
    const serving::LengthSpec& l = std::string(which) == "input" ? r.input : r.output;
    const std::string base = std::string("requests.") + which;
    if (l.max < l.min) {
      problems.add(c.position(base + ".max"), c.key(base + ".max"), "max is below min");
    } else if (l.kind == serving::LengthKind::empirical && l.file.empty()) {
      problems.add(c.position(base + ".distribution"), c.key(base + ".file"), "an empirical distribution needs a file");
    } else if ((l.kind == serving::LengthKind::normal || l.kind == serving::LengthKind::lognormal) &&
               !c.has(base + ".mean")) {
      problems.add(c.position(base + ".distribution"), c.key(base + ".mean"),
                   "a normal or lognormal distribution needs mean (and stddev)");
    }
  }
  if (problems.any_bad(c.key("requests"))) return;
  try {  // reads the trace and length files: their own errors name file, line and column
    (void)serving::RequestGenerator(r, 1);
  } catch (const ConfigError& e) {
    using K = serving::LengthKind;
    const char* key = process == P::trace                ? "requests.trace"
                      : r.input.kind == K::empirical    ? "requests.input.file"
                      : r.output.kind == K::empirical   ? "requests.output.file"
                      : r.input.kind == K::dataset      ? "requests.input.dataset"
                      : r.output.kind == K::dataset     ? "requests.output.dataset"
                                                        : "requests";
    problems.add(c.position(key), c.key(key), e.what());
  }
}

/// Without chunked prefill a prompt longer than the iteration's token budget can never be
/// scheduled (the replica rejects it): an error when every prompt is, a warning when some can be.
void check_token_budget(const WorkloadReadContext& c, const ServingSpec& w) {
  const serving::SchedulerSpec& s = w.scheduler;
  const serving::RequestsSpec& r = w.requests;
  if (s.chunked_prefill || s.policy == serving::SchedulePolicy::static_batch ||
      r.arrival.process == serving::ArrivalProcess::trace || c.problems.any_bad(c.key("requests"), c.key("scheduler"))) {
    return;
  }
  using K = serving::LengthKind;
  const serving::LengthSpec& in = r.input;
  if (in.kind == K::empirical || in.kind == K::dataset) return;  // checked by the run (rejections are reported)
  const double prefix = static_cast<double>(r.prefix.tokens);
  const double shortest = prefix + (in.kind == K::fixed ? std::clamp(in.value, in.min, in.max) : in.min);
  const double longest = prefix + (in.kind == K::fixed ? std::clamp(in.value, in.min, in.max) : in.max);
  const auto budget = static_cast<double>(s.max_batched_tokens);
  const std::string framework(serving::framework_names().name(w.framework));
  const std::string where = c.has("scheduler.chunked_prefill") ? std::string("set in the scenario")
                                                               : "the " + framework + " default";
  const std::string hint = fmt::format(
      "set {} (vLLM's V1 engine and trtllm-bench chunk prompts by default; TensorRT-LLM 1.x's LLM API and "
      "trtllm-serve refuse such a prompt unless enable_chunked_prefill is set) or {} to at least the longest prompt",
      c.key("scheduler.chunked_prefill") + ": true", c.key("scheduler.max_batched_tokens"));
  const std::string key = c.key("requests.input");
  if (shortest > budget) {
    c.problems.add(c.position("requests.input"), key,
                   fmt::format("every prompt ({:g} tokens or more) exceeds the iteration's token budget "
                               "(scheduler.max_batched_tokens {:g}) and chunked prefill is off ({}): no request "
                               "could be scheduled, every one would be rejected",
                               shortest, budget, where),
                   hint);
  } else if (longest > budget && longest < 1e9) {
    c.problems.warn(c.position("requests.input"), key,
                    fmt::format("prompts over {:g} tokens (scheduler.max_batched_tokens) are rejected: chunked prefill is "
                                "off ({}) and the distribution reaches {:g}",
                                budget, where, longest),
                    hint);
  }
}

/// Memory a serving run keeps per request: its record, its latency samples and its share of the
/// per-replica structures. Measured: 300,000 against 100,000 requests of
/// examples/guide/70b-h200-serving.yaml (16 instances, 200 req/s) peak at 132.7 and 57.9 MB
/// (2026-12-06), 383 B a request; rounded up.
constexpr double kServingBytesPerRequest = 400;

/// slo.window: requests for that long at the arrival rate (processes with one rate), instead
/// of requests.count; a written count it replaces, or a process without a rate, is said.
void apply_slo_window(const WorkloadReadContext& c, ServingSpec& w) {
  if (!(w.slo.window_s > 0) || c.problems.bad(c.key("slo.window"))) return;
  using P = serving::ArrivalProcess;
  const P process = w.requests.arrival.process;
  if (process != P::poisson && process != P::gamma && process != P::constant) {
    warn_no_effect(c.root, c.problems, c.key("slo.window"),
                   fmt::format("arrival.process {} has no single rate to send requests at for a window; the run sends "
                               "requests.count",
                               serving::arrival_process_names().name(process)));
    return;
  }
  const double rate = w.requests.arrival.rate_per_s;
  const auto count = std::max<std::int64_t>(1, std::llround(rate * w.slo.window_s));
  warn_no_effect(c.root, c.problems, c.key("requests.count"),
                 fmt::format("slo.window sets the requests: arrival.rate {:g}/s x {:g} s = {}", rate, w.slo.window_s, count));
  w.requests.count = count;
}

/// requests.input / output `distribution: dataset`: the library profile's table for that side.
void resolve_datasets(const WorkloadReadContext& c, ServingSpec& w) {
  for (const char* side : {"input", "output"}) {
    serving::LengthSpec& l = std::string(side) == "input" ? w.requests.input : w.requests.output;
    const std::string base = std::string("requests.") + side;
    if (l.kind != serving::LengthKind::dataset || c.problems.bad(c.key(base))) continue;
    const std::vector<std::string> names = serving::dataset_profiles(c.data_dir);
    const std::string known = names.empty() ? "none in the library" : fmt::format("{}", fmt::join(names, ", "));
    if (l.dataset.empty()) {
      c.problems.add(c.position(base + ".distribution"), c.key(base + ".dataset"),
                     "a dataset distribution needs dataset: a profile's name", "choices: " + known);
    } else if (std::find(names.begin(), names.end(), l.dataset) == names.end()) {
      c.problems.add(c.position(base + ".dataset"), c.key(base + ".dataset"),
                     "unknown dataset profile '" + l.dataset + "'", "choices: " + known);
    } else {
      l.file = serving::dataset_profile_file(c.data_dir, l.dataset, side).string();
    }
  }
}

/// requests.count within simulation.limits.memory: a count the run cannot hold (1e9) is refused
/// at the key with the estimate and the count that fits, rather than run until killed.
void check_request_count(const WorkloadReadContext& c, const ServingSpec& w) {
  if (c.problems.bad(c.key("requests.count")) || w.requests.arrival.process == serving::ArrivalProcess::trace) return;
  const double limit = platform::memory_limit_bytes(c.simulation.limits);
  const double needed = static_cast<double>(w.requests.count) * kServingBytesPerRequest;
  if (!(limit > 0) || needed <= limit) return;
  c.problems.add(c.position("requests.count"), c.key("requests.count"),
                 fmt::format("{} requests need about {} for their records ({:g} B a request), over the run's memory "
                             "limit of {} (simulation.limits.memory; unset: 80 % of this machine's memory)",
                             w.requests.count, config::format_quantity(needed, Dimension::bytes), kServingBytesPerRequest,
                             config::format_quantity(limit, Dimension::bytes)),
                 fmt::format("at most {} requests fit", static_cast<std::int64_t>(limit / kServingBytesPerRequest)));
}

/// speculative.draft_model: a model entry, sharing the target's tokenizer and TP split.
void read_draft_model(const WorkloadReadContext& c, ServingSpec& w, bool model_ok) {
  const std::string& name = w.speculative.draft_model;
  if (name.empty()) return;
  const std::string key = c.key("speculative.draft_model");
  const ConfigNode* models_map = c.root.find("models");
  const ConfigNode* entry = models_map != nullptr && models_map->is_mapping() ? models_map->find(name) : nullptr;
  if (entry == nullptr) {
    c.problems.add(c.position("speculative.draft_model"), key, "unknown model '" + name + "'",
                   unknown_name_hint(name, library_names(LibraryKind::models, c.data_dir)));
    return;
  }
  w.draft_model = read_model(*entry, "models." + name, name, c.problems);
  if (!model_ok || c.problems.bad("models." + name)) return;
  if (w.draft_model->vocab_size != w.model.vocab_size) {
    c.problems.add(c.position("speculative.draft_model"), key,
                   "draft model '" + name + "' has a vocabulary of " + std::to_string(w.draft_model->vocab_size) +
                       " tokens, the target '" + w.model.name + "' " + std::to_string(w.model.vocab_size) +
                       ": a draft must share the target's tokenizer");
  }
  for (const serving::PoolSpec& pool : w.pools) {
    if (const auto problem = models::tensor_parallel_problem(*w.draft_model, pool.tp)) {
      c.problems.add(c.position("speculative.draft_model"), key, "draft model: " + problem->message);
      break;
    }
  }
}

/// Fault keys (docs/reliability.md, "Faults in serving") that serving, or the rest of the
/// scenario, leaves without effect.
void warn_ineffective_faults(const WorkloadReadContext& c, const ServingSpec& w) {
  warn_no_effect(c.root, c.problems, "simulation.iterations",
                 "a serving run is one deployment serving its requests, drawing afresh for every batch iteration; "
                 "for other draws of the whole run, sweep simulation.seed");
  const platform::Stragglers& stragglers = c.platform.cluster.stragglers;
  warn_idle_fault_settings(c.root, c.problems, c.simulation, c.platform_ok ? &stragglers : nullptr,
                           "no instance fails");
  if (!c.simulation.failures.enabled) return;
  for (const char* key : {"checkpoint_interval", "storage_bandwidth", "node_bandwidth"}) {
    warn_no_effect(c.root, c.problems, std::string("simulation.failures.") + key,
                   "a serving instance writes no checkpoint: after a failure it is down for "
                   "simulation.failures.restart_time and its requests are prefilled again elsewhere");
  }
  if (w.disaggregated()) {
    warn_no_effect(c.root, c.problems, "simulation.failures.enabled",
                   "failures are modelled for mixed pools only: the instances of prefill and decode pools stay up");
  }
}

/// Whether an instance of the workload spans more than one scale-up domain: its TP, EP or PP
/// collectives across them then run on the network model (Replica::set_fabric_groups). On
/// networks without a scale-up switch (torus, custom) every accelerator is its own domain.
bool instances_span_domains(const WorkloadReadContext& c, const ServingSpec& w) {
  if (!c.platform_ok) return false;
  const auto& net = c.platform.cluster.network;
  const bool direct = topologies::find_direct_builder(net.scale_out.topology) != nullptr;
  const int domain = std::max(1, net.scale_up_domain_size());
  int next = w.placement.count > 0 ? w.placement.first : 0;
  for (const serving::PoolSpec& pool : w.pools) {
    const int size = pool.tp * pool.pp;
    for (int i = 0; i < pool.replicas; ++i, next += size) {
      if (size > 1 && (direct || next / domain != (next + size - 1) / domain)) return true;
    }
  }
  return false;
}

/// The run options a serving workload does not read (as the primary workload; beside a training
/// workload they are the training step's).
void warn_ineffective_simulation(const WorkloadReadContext& c, const ServingSpec& w) {
  if (c.path != "workload") return;
  warn_no_effect(c.root, c.problems, "simulation.mode",
                 "a serving workload simulates every instance and request; the mode chooses which ranks of a "
                 "training step are simulated");
  warn_no_effect(c.root, c.problems, "power.apply_throttling",
                 "a serving workload reports its power but never slows its clock by the TDP throttle factor (a "
                 "training step does)");
  warn_ineffective_faults(c, w);
  const bool spans = instances_span_domains(c, w);
  if (!w.disaggregated() && !config::has_value(c.root, "jobs") && !spans) {
    warn_no_effect(c.root, c.problems, "simulation.fidelity",
                   "without prefill and decode pools, other jobs or an instance spanning scale-up domains nothing "
                   "runs on the network model: an instance's TP, PP and EP collectives inside its scale-up domain "
                   "are costed in closed form at either fidelity");
  }
  const bool on_links = (w.disaggregated() || config::has_value(c.root, "jobs") || spans) &&
                        c.simulation.fidelity == platform::Fidelity::flow;
  if (!on_links) {
    warn_no_effect(c.root, c.problems, "cluster.network.faults",
                   "a serving instance's collectives inside its scale-up domain are costed in closed form; only a "
                   "disaggregated deployment's KV-cache transfers, collectives of instances spanning scale-up "
                   "domains and other jobs run as flows on links, under simulation.fidelity: flow");
  }
}

/// Keys a scenario writes that the rest of it makes ineffective: warnings (the result's notes),
/// never silently ignored.
void warn_ineffective(const WorkloadReadContext& c, const ServingSpec& w) {
  using P = serving::ArrivalProcess;
  const P process = w.requests.arrival.process;
  const std::string name(serving::arrival_process_names().name(process));
  const auto unused = [&](const char* key, bool used, const std::string& why) { c.warn_unless(used, key, why); };
  const bool rated = process == P::poisson || process == P::gamma || process == P::constant || process == P::ramp;
  unused("requests.arrival.rate", rated, "arrival.process is " + name + ", which has no rate");
  unused("requests.arrival.cv", process == P::gamma, "only gamma arrivals have a cv (arrival.process is " + name + ")");
  unused("requests.arrival.rate_end", process == P::ramp, "only a ramp has rate_end");
  unused("requests.arrival.ramp_duration", process == P::ramp, "only a ramp has ramp_duration");
  unused("requests.arrival.clients", process == P::closed_loop, "only closed_loop arrivals have clients");
  unused("requests.arrival.think_time", process == P::closed_loop, "only closed_loop arrivals think");
  const bool trace = process == P::trace;
  for (const char* key : {"requests.input", "requests.output", "requests.prefix"}) {
    unused(key, !trace, "a replayed trace gives every request's lengths and prefix");
  }
  const bool speculates = w.speculative.tokens > 0;
  for (const char* key : {"speculative.acceptance", "speculative.draft_model", "speculative.draft_cost_fraction"}) {
    unused(key, speculates, "speculative.tokens is 0 (speculative decoding is off)");
  }
  unused("speculative.draft_cost_fraction", w.speculative.draft_model.empty(),
         "a draft_model is named; its own decode steps are costed instead");
  if (!trace) {
    using K = serving::LengthKind;
    for (const char* which : {"input", "output"}) {
      const serving::LengthSpec& l = std::string(which) == "input" ? w.requests.input : w.requests.output;
      const std::string base = std::string("requests.") + which + ".";
      const std::string kind(serving::length_kind_names().name(l.kind));
      const std::string why = "distribution " + kind + " does not read it";
      unused((base + "value").c_str(), l.kind == K::fixed, why + " (value is for fixed)");
      unused((base + "mean").c_str(), l.kind == K::normal || l.kind == K::lognormal, why + " (mean is for normal, lognormal)");
      unused((base + "stddev").c_str(), l.kind == K::normal || l.kind == K::lognormal,
             why + " (stddev is for normal, lognormal)");
      unused((base + "file").c_str(), l.kind == K::empirical, why + " (file is for empirical)");
      unused((base + "dataset").c_str(), l.kind == K::dataset, why + " (dataset is for dataset)");
      if (l.kind == K::fixed && (l.value > l.max || l.value < l.min) && c.has(base + "value")) {
        const double clamped = std::clamp(l.value, l.min, l.max);
        c.problems.warn(c.position(base + "value"), c.key(base + "value"),
                        fmt::format("{:g} is outside [{:g}, {:g}] ({}min, {}max): every length is clamped to {:g}",
                                    l.value, l.min, l.max, base, base, clamped),
                        "remove " + base + (l.value > l.max ? "max" : "min") + " or set the value inside it");
      }
    }
  }
  unused("slo.percentile", w.slo.ttft_s > 0 || w.slo.tpot_s > 0, "no slo.ttft or slo.tpot target is set");
  unused("scheduler.preemption", !w.scheduler.reserve_output,
         "reserve_output takes the blocks of the whole output at admission, so nothing is preempted");
  int instances = 0;
  for (const serving::PoolSpec& pool : w.pools) instances += pool.role == serving::ReplicaRole::decode ? 0 : pool.replicas;
  unused("router", instances > 1, "there is one instance to route to");
  const bool disaggregated = w.disaggregated();
  int decode_instances = 0;
  for (const serving::PoolSpec& pool : w.pools) decode_instances += pool.role == serving::ReplicaRole::decode ? pool.replicas : 0;
  unused("kv_transfer", disaggregated, "there are no prefill and decode pools");
  unused("conditional_disaggregation.max_uncached_tokens", disaggregated, "there are no prefill and decode pools");
  unused("conditional_disaggregation.max_uncached_ratio", disaggregated && w.conditional.on(),
         disaggregated ? "conditional_disaggregation.max_uncached_tokens is 0" : "there are no prefill and decode pools");
  unused("decode_router", disaggregated && decode_instances > 1,
         disaggregated ? "there is one decode instance to route to" : "there are no prefill and decode pools");
  warn_ineffective_simulation(c, w);
}

/// `kv_offload`: known tiers, nearest first, each present on every pool's accelerator and no
/// larger than it; prefix caching on; capacities and policies that no tier reads warned.
void check_kv_offload(const WorkloadReadContext& c, const ServingSpec& w) {
  const serving::KvOffloadSpec& offload = w.kv_offload;
  const std::string list = c.key("kv_offload.tiers");
  if (!offload.on()) {
    for (const char* key : {"kv_offload.host_capacity", "kv_offload.cxl_capacity", "kv_offload.ssd_capacity",
                            "kv_offload.write", "kv_offload.load"}) {
      c.warn_unless(false, key, "kv_offload.tiers lists no tier");
    }
    return;
  }
  const ConfigNode* node = c.root.find_path(list);
  std::vector<models::MemoryLevelKind> levels;
  std::vector<config::Position> written;  // where each of `levels` is written
  std::vector<std::string> valid = serving::kv_tier_level_names().names();
  valid.emplace_back(serving::kPoolTier);
  std::optional<config::Position> pool_at;
  for (std::size_t i = 0; i < offload.tiers.size(); ++i) {
    const config::Position at =
        node != nullptr && node->is_sequence() && i < node->items.size() ? node->items[i].position : c.position("kv_offload.tiers");
    const auto level = serving::kv_tier_level_names().find(offload.tiers[i]);
    if (pool_at) {
      c.problems.add(at, list, "tier '" + offload.tiers[i] + "' follows the shared pool",
                     "list the tiers nearest first, the shared pool last: " + fmt::format("{}", fmt::join(valid, ", ")));
      continue;
    }
    if (offload.tiers[i] == serving::kPoolTier) {
      pool_at = at;
      continue;
    }
    if (!level) {
      c.problems.add(at, list, "unknown KV-cache tier '" + offload.tiers[i] + "'",
                     "valid: " + fmt::format("{}", fmt::join(valid, ", ")));
      continue;
    }
    if (!levels.empty() && *level <= levels.back()) {
      c.problems.add(at, list, "tier '" + offload.tiers[i] + "' " + (*level == levels.back() ? "is listed twice" : "is out of order"),
                     "list the tiers nearest first, the shared pool last: " + fmt::format("{}", fmt::join(valid, ", ")));
      continue;
    }
    levels.push_back(*level);
    written.push_back(at);
  }
  if (pool_at && c.platform_ok && !c.platform.cluster.memory_pool.on()) {
    c.problems.add(*pool_at, list, "tier 'pool' needs a memory pool, and cluster.memory_pool sets none",
                   "set cluster.memory_pool {accelerators, capacity, bandwidth, link_bandwidth}");
  }
  if (pool_at && offload.load == serving::TierLoad::blocking) {
    c.problems.add(c.position("kv_offload.load"), c.key("kv_offload.load"),
                   "a shared pool's loads are flows on its links, whose time is known only when they arrive: the "
                   "request waits for them",
                   "load: async");
  }
  if (!w.scheduler.prefix_caching) {
    c.problems.add(c.position("kv_offload.tiers"), list,
                   "KV-cache tiers keep the prefix cache's blocks, and prefix caching is off (" +
                       (c.has("scheduler.prefix_caching") ? std::string("scheduler.prefix_caching: false")
                                                          : std::string(serving::framework_names().name(w.framework)) +
                                                                "'s default") +
                       ")",
                   "set scheduler.prefix_caching: true");
  }
  const auto capacity_of = [&](models::MemoryLevelKind level) {
    return level == models::MemoryLevelKind::host  ? offload.host_capacity_bytes
           : level == models::MemoryLevelKind::cxl ? offload.cxl_capacity_bytes
                                                   : offload.ssd_capacity_bytes;
  };
  for (const models::MemoryLevelKind level : {models::MemoryLevelKind::host, models::MemoryLevelKind::cxl,
                                              models::MemoryLevelKind::ssd}) {
    const std::string name(models::memory_level_name(level));
    const auto listed = std::find(levels.begin(), levels.end(), level);
    c.warn_unless(listed != levels.end(), "kv_offload." + name + "_capacity", "kv_offload.tiers does not list " + name);
    if (listed == levels.end() || !c.platform_ok) continue;
    const config::Position at = written[static_cast<std::size_t>(listed - levels.begin())];
    for (const serving::PoolSpec& pool : w.pools) {
      const models::AcceleratorSpec& accelerator = pool.accelerator ? *pool.accelerator : c.platform.cluster.accelerator;
      const std::vector<models::MemoryLevel> present = accelerator.memory_levels();
      const auto found = std::find_if(present.begin(), present.end(), [level](const models::MemoryLevel& l) { return l.kind == level; });
      if (found == present.end()) {
        c.problems.add(at, list,
                       fmt::format("tier '{}' needs memory.{}_capacity and memory.{}_bandwidth on accelerator '{}' (pool "
                                   "'{}'), which has neither or one",
                                   name, name, name, accelerator.name, pool.name),
                       fmt::format("set them under accelerators.{}.memory, or drop the tier", accelerator.name));
      } else if (capacity_of(level) > found->capacity_bytes) {
        const std::string key = c.key("kv_offload." + name + "_capacity");
        c.problems.add(c.position("kv_offload." + name + "_capacity"), key,
                       fmt::format("{:.1f} GiB per accelerator exceeds {}'s memory.{}_capacity, {:.1f} GiB",
                                   capacity_of(level) / config::kGiB, accelerator.name, name, found->capacity_bytes / config::kGiB),
                       "set at most the accelerator's capacity");
      }
    }
  }
  const bool shares = w.requests.arrival.process == serving::ArrivalProcess::trace || w.requests.prefix.groups > 0 ||
                      w.requests.prefix.turns > 1;
  c.warn_unless(shares, "kv_offload.tiers",
                "no request shares a prefix (requests.prefix sets no groups and no turns), so nothing is read back "
                "from a tier");
}

void complete_serving(const WorkloadReadContext& c, ServingSpec& w) {
  resolve_datasets(c, w);
  std::string model_path, model_name;
  const ConfigNode* model_entry = find_model(c, model_path, model_name);
  if (model_entry != nullptr) w.model = read_model(*model_entry, model_path, model_name, c.problems);
  const bool model_ok = model_entry != nullptr && !c.problems.bad(model_path) && w.model.num_attention_heads > 0 &&
                        w.model.num_key_value_heads > 0 && w.model.num_hidden_layers > 0;
  read_pools(c, w);
  apply_framework_defaults(c, w);
  check_pools(c, w, model_ok);
  if (c.platform_ok && !c.problems.bad(c.key("pools"))) {
    // Each pool's GEMMs in the weights' math format and its fused attention (the accelerator's
    // family, in the activation format): notices for those without a measurement.
    for (const auto& pool : w.pools) {
      const models::AcceleratorSpec& accelerator = pool.accelerator ? *pool.accelerator : c.platform.cluster.accelerator;
      notice_roofline_estimates(c, accelerator,
                                {{models::OpClass::gemm, serving::weight_format_math(w.precision.weights), std::nullopt},
                                 {models::OpClass::attention, w.precision.activations, accelerator.attention_kernel}});
    }
  }
  apply_slo_window(c, w);
  check_requests(c, w);
  check_token_budget(c, w);
  check_request_count(c, w);
  read_draft_model(c, w, model_ok);
  check_kv_offload(c, w);
  warn_ineffective(c, w);
  if (c.has("moe") && model_ok && !w.model.is_moe()) {
    c.problems.add(c.position("moe"), c.key("moe"),
                   "workload.moe applies only to mixture-of-experts models; model '" + w.model.name + "' has no experts");
  }
}

}  // namespace

WorkloadKind serving_workload_kind() {
  static const Declarations<ServingSpec> keys = declare_serving_keys();
  WorkloadKind kind = declared_workload_kind<ServingSpec>(
      "serving",
      "request-level LLM serving: pools of model instances, continuous batching, paged KV cache, SLOs", keys,
      complete_serving);
  return kind;
}

}  // namespace clustersim::scenario
