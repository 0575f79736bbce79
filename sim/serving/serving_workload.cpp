#include "sim/serving/serving_workload.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "models/llm/parallel_rules.hpp"
#include "models/llm/memory_footprint.hpp"
#include "models/memory/memory_hierarchy.hpp"
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "sim/config/units.hpp"
#include "sim/engine/error.hpp"
#include "sim/platform/energy.hpp"
#include "sim/platform/memory_pool.hpp"
#include "sim/platform/platform.hpp"
#include "sim/serving/faults.hpp"

namespace clustersim::serving {

const config::NameTable<WeightFormat>& weight_format_names() {
  static const config::NameTable<WeightFormat> names(
      "weight format", {{"bf16", WeightFormat::bf16},
                        {"fp16", WeightFormat::fp16},
                        {"fp8", WeightFormat::fp8},
                        {"int8", WeightFormat::int8},
                        {"int4", WeightFormat::int4},
                        {"fp4", WeightFormat::fp4}});
  return names;
}

double weight_format_bytes(WeightFormat format) {
  switch (format) {
    case WeightFormat::bf16:
    case WeightFormat::fp16:
      return 2;
    case WeightFormat::fp8:
    case WeightFormat::int8:
      return 1;
    case WeightFormat::int4:
    case WeightFormat::fp4:
      return 0.5;
  }
  return 2;
}

models::Dtype weight_format_math(WeightFormat format) {
  switch (format) {
    case WeightFormat::fp16:
      return models::Dtype::fp16;
    case WeightFormat::fp8:
      return models::Dtype::fp8;
    case WeightFormat::fp4:
      return models::Dtype::fp4;
    default:
      return models::Dtype::bf16;
  }
}

const config::NameTable<RouterPolicy>& router_policy_names() {
  static const config::NameTable<RouterPolicy> names("router policy",
                                                     {{"round_robin", RouterPolicy::round_robin},
                                                      {"least_outstanding", RouterPolicy::least_outstanding},
                                                      {"shortest_queue", RouterPolicy::shortest_queue},
                                                      {"prefix_aware", RouterPolicy::prefix_aware},
                                                      {"kv_cost", RouterPolicy::kv_cost},
                                                      {"prefix_queue", RouterPolicy::prefix_queue}});
  return names;
}

const config::NameTable<KvTransfer>& kv_transfer_names() {
  static const config::NameTable<KvTransfer> names("KV transfer", {{"push", KvTransfer::push}, {"pull", KvTransfer::pull}});
  return names;
}

int ServingSpec::accelerators() const {
  int total = 0;
  for (const PoolSpec& pool : pools) total += pool.accelerators();
  return total;
}

bool ServingSpec::disaggregated() const {
  return std::any_of(pools.begin(), pools.end(), [](const PoolSpec& p) { return p.role != ReplicaRole::mixed; });
}

namespace {

/// The weights one device of an instance holds, bytes: every parameter over tp x pp, except
/// that with ep > 1 the routed experts are split over ep instead of tp.
double device_weight_bytes(const ServingSpec& spec, const PoolSpec& pool) {
  const models::TransformerSpec& m = spec.model;
  const double bytes = weight_format_bytes(spec.precision.weights);
  const double experts = m.is_moe() ? m.expert_parallel_parameters() : 0.0;
  const double rest = m.total_parameters() - experts;
  const double target = (rest / pool.tp + experts / std::max(pool.ep, 1) * (pool.ep > 1 ? 1.0 : 1.0 / pool.tp)) *
                        bytes / pool.pp;
  // A draft model for speculative decoding sits whole on each stage's TP group.
  const bool drafts = spec.draft_model && spec.speculative.tokens > 0;
  return target + (drafts ? spec.draft_model->total_parameters() * bytes / pool.tp : 0.0);
}

/// The longest prompt the requests can have: the distribution's upper end (fixed: the value;
/// normal and lognormal: mean + 4 standard deviations), within its max, plus a system prompt;
/// a trace, an empirical file or a dataset profile: the model's context (or 32,768 tokens when
/// unknown).
double longest_prompt(const RequestsSpec& requests, std::int64_t context = 0) {
  const LengthSpec& in = requests.input;
  const double fallback = context > 0 ? static_cast<double>(context) : 32768.0;
  double longest = fallback;
  if (requests.arrival.process != ArrivalProcess::trace) {
    switch (in.kind) {
      case LengthKind::fixed:
        longest = in.value;
        break;
      case LengthKind::uniform:
        longest = in.max;
        break;
      case LengthKind::normal:
      case LengthKind::lognormal:
        longest = in.mean + 4 * in.stddev;
        break;
      case LengthKind::empirical:
      case LengthKind::dataset:
        longest = fallback;
        break;
    }
    longest = std::min(longest, in.max) + static_cast<double>(requests.prefix.groups > 0 ? requests.prefix.tokens : 0);
  }
  return std::max(longest, 1.0);
}

/// Peak activations and workspace of the largest iteration on one device, bytes: the hidden
/// states and the widest intermediate (QKV or the MLP's up-projection) of max_batched_tokens
/// tokens, the fp32 logits of max_sequences sequences, and 1 GiB of runtime workspace (CUDA
/// context, cuBLAS and NCCL buffers, CUDA graphs; models::kDefaultWorkspaceBytes).
double device_activation_bytes(const ServingSpec& spec, const PoolSpec& pool) {
  const models::TransformerSpec& m = spec.model;
  const double act = models::dtype_bytes(spec.precision.activations);
  // The largest iteration: the token budget, or the longest prompts of a full batch when the
  // budget is looser (static batching runs a whole batch's prompts at once).
  const double tokens = std::min(static_cast<double>(spec.scheduler.max_batched_tokens),
                                 static_cast<double>(spec.scheduler.max_sequences) * longest_prompt(spec.requests));
  // MLA: the widest attention output is the query or the key/value up-projection.
  const double attention_width =
      m.attention == models::AttentionKind::mla
          ? static_cast<double>(m.num_attention_heads *
                                std::max(m.mla.qk_head_dim(), m.mla.qk_nope_head_dim + m.mla.v_head_dim))
          : static_cast<double>((m.num_attention_heads + 2 * m.num_key_value_heads) * m.head_dim());
  const double widest =
      std::max(attention_width, 2.0 * static_cast<double>(std::max(m.intermediate_size, m.moe.moe_intermediate_size))) /
      pool.tp;
  const double logits = static_cast<double>(spec.scheduler.max_sequences) * static_cast<double>(m.vocab_size) / pool.tp * 4;
  return tokens * (2.0 * static_cast<double>(m.hidden_size) + widest) * act + logits + models::kDefaultWorkspaceBytes;
}

}  // namespace

namespace {

/// The memory plan of one instance of `pool` (kv_blocks may be < 1: it does not fit).
InstanceMemory instance_memory(const ServingSpec& spec, const PoolSpec& pool, const models::AcceleratorSpec& accelerator) {
  InstanceMemory memory;
  memory.capacity = accelerator.hbm_capacity_bytes * spec.scheduler.memory_utilisation;
  memory.weights = device_weight_bytes(spec, pool);
  memory.activations = device_activation_bytes(spec, pool);
  memory.kv_cache = spec.scheduler.kv_of_free_memory
                        ? spec.scheduler.memory_utilisation *
                              (accelerator.hbm_capacity_bytes - memory.weights - memory.activations)
                        : memory.capacity - memory.weights - memory.activations;
  const double kv_element = models::dtype_bytes(spec.precision.kv_cache);
  memory.kv_bytes_per_token = models::kv_cache_bytes(spec.model, 1.0, kv_element, pool.tp) / pool.pp;
  if (spec.draft_model && spec.speculative.tokens > 0) {
    // The draft model keeps its own KV cache of the same tokens.
    memory.kv_bytes_per_token += models::kv_cache_bytes(*spec.draft_model, 1.0, kv_element, pool.tp);
  }
  const double block_bytes = memory.kv_bytes_per_token * spec.scheduler.block_size;
  memory.kv_blocks = memory.kv_cache > 0 ? static_cast<std::int64_t>(std::floor(memory.kv_cache / block_bytes)) : 0;
  return memory;
}

/// The smallest wider tensor-parallel split (tp x 2, x 4, ... up to 64, valid for the model's
/// heads) that leaves room for the KV cache, costed by the same plan; "" when none does.
std::string wider_tp_that_fits(const ServingSpec& spec, const PoolSpec& pool, const models::AcceleratorSpec& accelerator) {
  for (int tp = pool.tp * 2; tp <= 64; tp *= 2) {
    if (models::tensor_parallel_problem(spec.model, tp)) continue;
    PoolSpec wider = pool;
    wider.tp = tp;
    const InstanceMemory memory = instance_memory(spec, wider, accelerator);
    if (memory.kv_blocks >= 1) {
      return fmt::format("tp {} fits ({:.1f} GiB of weights per device, {} KV blocks of {} tokens)", tp,
                         memory.weights / config::kGiB, memory.kv_blocks, spec.scheduler.block_size);
    }
  }
  return "";
}

}  // namespace

InstanceMemory plan_instance_memory(const ServingSpec& spec, const PoolSpec& pool,
                                    const models::AcceleratorSpec& accelerator) {
  const InstanceMemory memory = instance_memory(spec, pool, accelerator);
  if (memory.kv_blocks < 1) {
    const std::string wider = wider_tp_that_fits(spec, pool, accelerator);
    throw models::DoesNotFitError(fmt::format(
        "pool '{}' does not fit: {} on {} (tp {} x pp {}) needs {:.1f} GiB of weights and {:.1f} GiB of activations and "
        "workspace per device, but {:.1f} GiB ({:.0f} % of {:.1f} GiB) leaves no room for one KV block; {}",
        pool.name, spec.model.name, accelerator.name, pool.tp, pool.pp, memory.weights / config::kGiB, memory.activations / config::kGiB,
        memory.capacity / config::kGiB, spec.scheduler.memory_utilisation * 100, accelerator.hbm_capacity_bytes / config::kGiB,
        wider.empty() ? "no tp up to 64 leaves room: split it over more pipeline stages (pp), store the weights in fp8 "
                        "or use an accelerator with more memory"
                      : wider),
        "pools." + pool.name);
  }
  return memory;
}

namespace {

struct Pool {
  const PoolSpec* spec = nullptr;
  std::size_t index = 0;
  models::AcceleratorSpec accelerator;
  std::unique_ptr<models::ComputeModel> own_compute;  // when the pool's accelerator is not the cluster's
  std::unique_ptr<IterationCostModel> cost;
  std::unique_ptr<IterationCostModel> draft;  // speculative decoding's draft model, if any
  InstanceMemory memory;
  int first_accelerator = 0;
  std::vector<int> replicas;  // indices into ServingWorkload::replicas_ (pp schedulers per instance)
  /// The first accelerator of the instance replica `replica` belongs to.
  int first_accelerator_of(int replica) const;
};

class ServingWorkload final : public platform::Workload {
 public:
  ServingWorkload(const ServingSpec& spec, const platform::Platform& platform, const platform::Allocation& allocation,
                  const platform::SessionOptions& options);
  void start(platform::Session& session, std::function<void()> on_done) override;
  std::unique_ptr<platform::WorkloadResult> finish(platform::Session& session) override;

 private:
  double now_s() const { return engine::ps_to_seconds(session_->engine().now()); }
  void schedule_arrival(const Request& request);
  void arrive(std::size_t record);
  void schedule_next_open_loop();
  /// The replica the router picks among those up; nullptr when every candidate is down.
  Replica* route(const RequestRecord& record, ReplicaRole role);
  /// Routes `record` (a new arrival or one a failure sent back), or parks it until an instance
  /// is back when every candidate is down.
  void submit(RequestRecord& record, ReplicaRole role);
  void start_faults();
  void schedule_failure(std::size_t instance);
  void fail_instance(std::size_t instance);
  void recover_instance(std::size_t instance);
  void resubmit(const std::vector<RequestRecord*>& records);
  void fill_faults(ServingResult& result) const;
  void on_finished(RequestRecord& record);
  void on_prefilled(RequestRecord& record);
  // Moves `tokens` of record's KV cache from the prefill instance that holds it to its decode
  // instance (record.replica), then calls `arrived` (a pull) or submits it there (a push).
  void move_kv(RequestRecord& record, std::int64_t tokens, std::function<void()> arrived = {});
  void sample();
  void fill_pools(ServingResult& result) const;
  void fill_energy(ServingResult& result) const;
  /// The groups (InstanceLayout::group ids) of the instance whose first accelerator is `first`
  /// that span more than one scale-up domain, each with its accelerators (an empty entry for the
  /// others); empty when none does.
  std::vector<std::vector<int>> fabric_groups(const InstanceLayout& layout, int first) const;

  const ServingSpec& spec_;
  const platform::Platform& platform_;
  platform::SessionOptions options_;
  std::vector<Pool> pools_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::size_t> pool_of_;          // per replica: its pool's index
  std::vector<Replica*> by_role_[3];          // per ReplicaRole: the router's candidates
  RequestGenerator generator_;
  std::deque<RequestRecord> records_;
  platform::Session* session_ = nullptr;
  std::function<void()> on_done_;
  std::int64_t finished_ = 0;
  std::int64_t local_prefills_ = 0;  // conditional disaggregation: prompts prefilled on their decode instance
  std::int64_t in_flight_ = 0;  // arrivals scheduled and KV transfers started, not yet delivered
  bool exhausted_ = false, done_ = false;
  std::size_t round_robin_ = 0;
  double first_arrival_s_ = -1, last_arrival_s_ = 0, last_finish_s_ = 0;
  std::int64_t tokens_at_last_sample_ = 0, output_tokens_ = 0;
  std::vector<ServingSample> series_;
  /// KV-cache tiers (kv_offload): the store of each scheduler of `pool` (`engines` per instance).
  /// `replica`: the scheduler's index (its instance's accelerators attach it to a memory pool).
  KvTierStore kv_tier_store(const Pool& pool, int engines, int replica);
  /// The shared store of the memory pools the instance whose first accelerator is `first` spans.
  std::shared_ptr<KvTierStore> pool_store(const Pool& pool, int first);
  /// Memory pools (cluster.memory_pool) when a KV-cache tier is `pool`; made at start().
  std::unique_ptr<platform::MemoryPoolRuntime> memory_pools_;
  std::map<std::pair<int, int>, std::shared_ptr<KvTierStore>> pool_stores_;  // by first and last pool spanned
  void fill_kv_tiers(ServingResult& result) const;
  /// A model instance under simulation.failures: its pp schedulers fail and recover together.
  struct Instance {
    std::vector<int> replicas;
    double failure_rate_per_s = 0;
    int failures = 0;
    double down_since_s = -1;  // while down
    std::vector<std::pair<double, double>> down_s;  // [from, to) intervals
    engine::EventId next;      // its next failure or recovery
  };
  std::vector<Instance> instances_;
  std::vector<RequestRecord*> parked_;  // requests that arrived (or came back) while every instance was down
  std::int64_t requeued_ = 0;
  int straggler_instances_ = 0;
};

ServingWorkload::ServingWorkload(const ServingSpec& spec, const platform::Platform& platform,
                                 const platform::Allocation& allocation, const platform::SessionOptions& options)
    : spec_(spec), platform_(platform), options_(options), generator_(spec.requests, options.seed) {
  if (spec.pools.empty()) throw ConfigError("a serving workload needs at least one pool");
  if (spec.accelerators() > allocation.count) {
    throw ConfigError(fmt::format("the pools need {} accelerators, but the workload has {}", spec.accelerators(),
                                  allocation.count));
  }
  int next = allocation.first;
  pools_.reserve(spec.pools.size());
  for (const PoolSpec& pool_spec : spec.pools) {
    Pool& pool = pools_.emplace_back();
    pool.spec = &pool_spec;
    pool.index = pools_.size() - 1;
    pool.accelerator = pool_spec.accelerator.value_or(platform.cluster().accelerator);
    const models::ComputeModel* compute = &platform.compute();
    if (pool_spec.accelerator && pool_spec.accelerator->name != platform.cluster().accelerator.name) {
      // Its own accelerator's rows of simulation.calibration, as the cluster's accelerator has.
      const models::CalibrationTable& table = platform.spec().calibration;
      const bool calibrated = std::any_of(table.rows.begin(), table.rows.end(), [&](const models::CalibrationRow& row) {
        return row.accelerator == pool.accelerator.name;
      });
      pool.own_compute = calibrated ? std::make_unique<models::ComputeModel>(pool.accelerator, table)
                                    : std::make_unique<models::ComputeModel>(pool.accelerator);
      compute = pool.own_compute.get();
    }
    pool.memory = plan_instance_memory(spec, pool_spec, pool.accelerator);
    pool.first_accelerator = next;
    InstanceLayout layout;
    layout.model = spec.model;
    layout.sharding.tp = pool_spec.tp;
    layout.sharding.ep = pool_spec.ep;
    layout.sharding.gemm_dtype = weight_format_math(spec.precision.weights);
    layout.sharding.unquantized_gemm_dtype = models::Dtype::bf16;
    layout.sharding.weight_bytes = weight_format_bytes(spec.precision.weights);
    layout.sharding.activation_dtype = spec.precision.activations;
    layout.sharding.attention_dtype =
        spec.precision.kv_cache == models::Dtype::fp8 ? models::Dtype::fp8 : spec.precision.activations;
    layout.sharding.decode_kv_per_query_head = spec.decode_kv_per_query_head;
    layout.routing = spec.moe;
    layout.pp = pool_spec.pp;
    layout.host_overhead_s = 0;  // the replica adds the scheduler's host time
    // Every instance of a pool is laid out alike: the first one's groups time the collectives.
    for (int a = 0; a < pool_spec.tp * pool_spec.pp; ++a) layout.accelerators.push_back(next + a);
    // Instances whose TP, EP or PP groups cross the scale-out fabric run those collectives
    // through the platform's runtime (Replica::set_fabric_groups); the cost lists them.
    for (int i = 0; i < pool_spec.replicas && !layout.record_traffic; ++i) {
      layout.record_traffic = !fabric_groups(layout, next + i * pool_spec.tp * pool_spec.pp).empty();
    }
    if (spec.draft_model && spec.speculative.tokens > 0) {
      InstanceLayout draft = layout;
      draft.model = *spec.draft_model;
      draft.sharding.ep = 1;
      draft.pp = 1;
      draft.accelerators.resize(static_cast<std::size_t>(pool_spec.tp));
      pool.draft = std::make_unique<IterationCostModel>(*compute, platform.collectives(), std::move(draft));
    }
    pool.cost = std::make_unique<IterationCostModel>(*compute, platform.collectives(), std::move(layout));
    next += pool_spec.accelerators();
  }
  const double host_bytes_per_s = platform.memory().has(models::MemoryLevelKind::host)
                                      ? platform.memory().level(models::MemoryLevelKind::host).bytes_per_s
                                      : 0.0;
  if (spec.scheduler.preemption == PreemptionMode::swap && !(host_bytes_per_s > 0)) {
    throw ConfigError("preemption: swap needs host memory (the accelerator's memory.host_bandwidth)");
  }
  for (Pool& pool : pools_) {
    // A pipeline-parallel instance runs pp batches at once (vLLM's virtual engines): pp
    // schedulers, each with its own sequences and a pp-th of the KV blocks, whose batches pass
    // through the stages one after another, staggered (stage contention between them is not
    // modelled). pp = 1: one scheduler per instance.
    const int engines = pool.spec->pp;
    const std::int64_t kv_blocks = std::max<std::int64_t>(1, pool.memory.kv_blocks / engines);
    SchedulerSpec scheduler = spec.scheduler;
    if (scheduler.kv_sized_sequences) {
      scheduler.max_sequences =
          sglang_max_running_requests(kv_blocks * scheduler.block_size, spec.model.max_position_embeddings);
    }
    for (int r = 0; r < pool.spec->replicas * engines; ++r) {
      pool.replicas.push_back(static_cast<int>(replicas_.size()));
      pool_of_.push_back(static_cast<std::size_t>(&pool - pools_.data()));
      replicas_.push_back(std::make_unique<Replica>(
          static_cast<int>(replicas_.size()), pool.spec->role, *pool.cost, pool.draft.get(), scheduler,
          spec.speculative, kv_blocks, pool.memory.kv_bytes_per_token,
          host_bytes_per_s, spec.exact_cost));
      replicas_.back()->set_pull_kv(spec.kv_transfer == KvTransfer::pull && pool.spec->role == ReplicaRole::decode);
      if (spec.kv_offload.on()) {
        replicas_.back()->set_kv_tiers(kv_tier_store(pool, engines, static_cast<int>(replicas_.size()) - 1),
                                       spec.kv_offload.write, spec.kv_offload.load);
      }
      if (pool.cost->layout().record_traffic) {
        replicas_.back()->set_fabric_groups(
            fabric_groups(pool.cost->layout(), pool.first_accelerator_of(static_cast<int>(replicas_.size()) - 1)));
      }
      by_role_[static_cast<std::size_t>(pool.spec->role)].push_back(replicas_.back().get());
    }
  }
}

std::vector<std::vector<int>> ServingWorkload::fabric_groups(const InstanceLayout& layout, int first) const {
  const topologies::Topology& topology = platform_.topology();
  std::vector<std::vector<int>> out(static_cast<std::size_t>(layout.groups()));
  bool any = false;
  for (int id = 0; id < layout.groups(); ++id) {
    std::vector<int> group = layout.group(id, first);
    const bool crosses = std::any_of(group.begin(), group.end(), [&](int a) {
      return topology.scale_up_domain_of(a) != topology.scale_up_domain_of(group.front());
    });
    if (!crosses) continue;
    out[static_cast<std::size_t>(id)] = std::move(group);
    any = true;
  }
  if (!any) out.clear();
  return out;
}

int Pool::first_accelerator_of(int replica) const {
  const int instance = (replica - replicas.front()) / spec->pp;
  return first_accelerator + instance * spec->tp * spec->pp;
}

void ServingWorkload::start(platform::Session& session, std::function<void()> on_done) {
  session_ = &session;
  on_done_ = std::move(on_done);
  ReplicaEvents events;
  events.finished = [this](RequestRecord& r) { on_finished(r); };
  events.prefilled = [this](RequestRecord& r) { on_prefilled(r); };
  events.pull = [this](RequestRecord& r, std::int64_t tokens, std::function<void()> arrived) {
    move_kv(r, tokens, std::move(arrived));
  };
  if (!pool_stores_.empty()) {
    memory_pools_ = std::make_unique<platform::MemoryPoolRuntime>(session.engine(), platform_.cluster().memory_pool,
                                                                    platform_.accelerator_count());
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    for (int index : pools_[p].replicas) {
      Replica& replica = *replicas_[static_cast<std::size_t>(index)];
      const int first = pools_[p].first_accelerator_of(index);
      replica.start(session, platform_.accelerator_speed(first), events, first);
      if (memory_pools_) {
        std::vector<int> accelerators;
        for (int a = 0; a < pools_[p].spec->tp * pools_[p].spec->pp; ++a) accelerators.push_back(first + a);
        replica.set_memory_pool(memory_pools_.get(), std::move(accelerators));
      }
    }
  }
  start_faults();
  if (generator_.closed_loop()) {
    for (const Request& r : generator_.initial_clients()) schedule_arrival(r);
    exhausted_ = generator_.sent() >= spec_.requests.count;
  } else {
    schedule_next_open_loop();
  }
  session.engine().schedule_after(engine::seconds_to_ps(1.0), [this](engine::Engine&) { sample(); });
  // Progress in requests, when their number is known (a trace with count 0 sends every row).
  if (session.progress() && spec_.requests.count > 0) {
    session.progress()("requests", 0, static_cast<std::size_t>(spec_.requests.count));
  }
}

void ServingWorkload::schedule_arrival(const Request& request) {
  records_.push_back(RequestRecord{request});
  const std::size_t index = records_.size() - 1;
  const engine::TimePs at = std::max(session_->engine().now(), engine::seconds_to_ps(request.arrival_s));
  ++in_flight_;
  session_->engine().schedule_at(at, [this, index](engine::Engine&) {
    --in_flight_;
    arrive(index);
  });
}

void ServingWorkload::schedule_next_open_loop() {
  if (auto next = generator_.next()) {
    schedule_arrival(*next);
  } else {
    exhausted_ = true;
  }
}

void ServingWorkload::arrive(std::size_t index) {
  RequestRecord& record = records_[index];
  record.request.arrival_s = now_s();  // the engine's time (picoseconds) from here on
  if (first_arrival_s_ < 0) first_arrival_s_ = now_s();
  last_arrival_s_ = now_s();
  const ReplicaRole role = spec_.disaggregated() ? ReplicaRole::prefill : ReplicaRole::mixed;
  if (generator_.closed_loop()) {
    submit(record, role);
    return;
  }
  // The next open-loop request is drawn when this one arrives: one pending arrival at a time.
  // Requests due at this same instant (offline: every one; a trace's equal timestamps) arrive
  // with this one, and every replica holds its next iteration until all are queued: a static
  // batch, or vLLM's LLM.generate, takes every prompt before its first step. Without the hold
  // the first request would start an iteration alone (a batch of one).
  std::vector<RequestRecord*> burst{&record};
  std::optional<Request> next = generator_.next();
  while (next && engine::seconds_to_ps(next->arrival_s) <= session_->engine().now()) {
    records_.push_back(RequestRecord{*next});  // a deque: references to earlier records stay valid
    records_.back().request.arrival_s = now_s();
    burst.push_back(&records_.back());
    next = generator_.next();
  }
  if (next) {
    schedule_arrival(*next);
  } else {
    exhausted_ = true;
  }
  if (burst.size() == 1) {
    submit(record, role);
    return;
  }
  for (auto& replica : replicas_) replica->hold();
  for (RequestRecord* r : burst) submit(*r, role);
  for (auto& replica : replicas_) replica->release();
}

void ServingWorkload::submit(RequestRecord& record, ReplicaRole role) {
  if (role == ReplicaRole::prefill && spec_.conditional.on()) {
    // Conditional disaggregation: the decode instance the decode router picks prefills a
    // prompt of which it would have to compute little (Dynamo's isl_bounding, llm-d's decider).
    Replica& decode = *route(record, ReplicaRole::decode);
    const Request& r = record.request;
    const std::int64_t cached = r.prefix_id < 0 ? 0 : std::min(decode.cached_prefix_tokens(r.prefix_id), r.prefix_tokens);
    const std::int64_t uncached = r.input_tokens - cached;
    const bool short_enough = uncached < spec_.conditional.max_uncached_tokens;
    const bool share_small = spec_.conditional.max_uncached_ratio >= 1 ||
                             static_cast<double>(uncached) < spec_.conditional.max_uncached_ratio * static_cast<double>(r.input_tokens);
    if (short_enough && share_small) {
      ++local_prefills_;
      decode.submit(record);
      return;
    }
  }
  if (Replica* replica = route(record, role)) {
    replica->submit(record);
  } else {
    parked_.push_back(&record);
  }
}

Replica* ServingWorkload::route(const RequestRecord& record, ReplicaRole role) {
  const std::vector<Replica*>& candidates = by_role_[static_cast<std::size_t>(role)];
  if (candidates.empty()) throw SimulationError(fmt::format("no {} pool to route to", replica_role_names().name(role)));
  const std::size_t n = candidates.size();
  std::size_t offset = round_robin_++ % n;
  // Instances that are down (simulation.failures) take nothing; the router starts at the next
  // one up.
  std::size_t skipped = 0;
  while (skipped < n && candidates[offset]->down()) {
    offset = (offset + 1) % n;
    ++skipped;
  }
  if (skipped == n) return nullptr;
  const auto pick = [&](auto better) {
    Replica* best = candidates[offset];
    for (std::size_t i = 1; i < n; ++i) {
      Replica* c = candidates[(offset + i) % n];
      if (!c->down() && better(*c, *best)) best = c;
    }
    return best;
  };
  const auto fewer_outstanding = [](const Replica& a, const Replica& b) { return a.outstanding() < b.outstanding(); };
  const RouterPolicy policy = role == ReplicaRole::decode ? spec_.decode_router : spec_.router;
  const std::int64_t prefix = record.request.prefix_id;
  // The prompt's tokens a candidate holds (a decode instance's are not read for kv_cost).
  const auto cached = [&](const Replica& r) {
    if (prefix < 0 || (policy == RouterPolicy::kv_cost && role == ReplicaRole::decode)) return std::int64_t{0};
    return std::min(r.cached_prefix_tokens(prefix), record.request.prefix_tokens);
  };
  switch (policy) {
    case RouterPolicy::round_robin:
      return candidates[offset];
    case RouterPolicy::least_outstanding:
      return pick(fewer_outstanding);
    case RouterPolicy::shortest_queue:
      return pick([](const Replica& a, const Replica& b) {
        return a.queued() != b.queued() ? a.queued() < b.queued() : a.outstanding() < b.outstanding();
      });
    case RouterPolicy::prefix_aware: {
      const std::int64_t id = record.request.prefix_id;
      if (id < 0) return pick(fewer_outstanding);
      Replica* best = pick([id](const Replica& a, const Replica& b) {
        const auto ca = a.cached_prefix_tokens(id), cb = b.cached_prefix_tokens(id);
        return ca != cb ? ca > cb : a.outstanding() < b.outstanding();
      });
      if (best->cached_prefix_tokens(id) > 0) return best;
      // Not cached anywhere yet: a fixed home per prefix, so its requests meet its cache.
      Replica* home = candidates[static_cast<std::size_t>(id) % n];
      return home->down() ? pick(fewer_outstanding) : home;
    }
    case RouterPolicy::kv_cost: {
      const std::int64_t block = spec_.scheduler.block_size;
      const auto cost = [&](const Replica& r) {
        return static_cast<double>(record.request.input_tokens - cached(r)) / static_cast<double>(block) +
               static_cast<double>(r.active_blocks());
      };
      return pick([&](const Replica& a, const Replica& b) { return cost(a) < cost(b); });
    }
    case RouterPolicy::prefix_queue: {
      std::int64_t most = 0, least = std::numeric_limits<std::int64_t>::max();
      for (const Replica* c : candidates) {
        if (c->down()) continue;
        most = std::max(most, c->queued());
        least = std::min(least, c->queued());
      }
      const auto score = [&](const Replica& r) {
        const double queue = most == least ? 1.0 : static_cast<double>(most - r.queued()) / static_cast<double>(most - least);
        return 2.0 * static_cast<double>(cached(r)) / static_cast<double>(record.request.input_tokens) + queue;
      };
      return pick([&](const Replica& a, const Replica& b) { return score(a) > score(b); });
    }
  }
  return candidates[offset];
}

void ServingWorkload::on_prefilled(RequestRecord& record) {
  record.prefilled_by = record.replica;
  Replica& decode = *route(record, ReplicaRole::decode);  // failures leave disaggregated pools up
  if (spec_.kv_transfer == KvTransfer::pull) {
    // The decode instance reads the cache when its scheduler admits the request (ReplicaEvents::pull).
    decode.submit_prefilled(record);
    if (record.rejected) replicas_[static_cast<std::size_t>(record.prefilled_by)]->transfer_done(record);
    return;
  }
  record.replica = decode.index();
  move_kv(record, record.request.input_tokens);
}

void ServingWorkload::move_kv(RequestRecord& record, std::int64_t tokens, std::function<void()> arrived) {
  Replica* source = replicas_[static_cast<std::size_t>(record.prefilled_by)].get();
  Replica* decode = replicas_[static_cast<std::size_t>(record.replica)].get();
  const Pool* from = &pools_[pool_of_[static_cast<std::size_t>(source->index())]];
  const Pool* to = &pools_[pool_of_[static_cast<std::size_t>(decode->index())]];
  // The prompt's KV cache, every layer and head, from each device of the prefill instance to a
  // device of the decode instance (pairs in order; the whole cache split evenly over them).
  const double bytes = models::kv_cache_bytes(spec_.model, static_cast<double>(tokens),
                                              models::dtype_bytes(spec_.precision.kv_cache), 1);
  const int n_from = from->spec->tp * from->spec->pp, n_to = to->spec->tp * to->spec->pp;
  const int first_from = from->first_accelerator_of(source->index());
  const int first_to = to->first_accelerator_of(decode->index());
  std::vector<std::vector<int>> pairs;
  for (int i = 0; i < n_from; ++i) pairs.push_back({first_from + i, first_to + i % n_to});
  RequestRecord* moving = &record;
  ++in_flight_;
  const auto deliver = [this, source, decode, moving, arrived = std::move(arrived)](engine::Engine&) {
    --in_flight_;
    source->transfer_done(*moving);  // the prefill instance keeps the blocks until the cache has left
    if (arrived) {
      arrived();
    } else {
      decode->submit_prefilled(*moving);
    }
  };
  if (pairs.front()[0] == pairs.front()[1]) {
    session_->engine().schedule_after(0, deliver);
    return;
  }
  exec::Work work = session_->comm().collective(models::CollectiveKind::send_recv, pairs, bytes / n_from);
  if (work.asynchronous()) {
    work.start(session_->engine(), deliver);
  } else {
    session_->engine().schedule_after(work.duration_ps, deliver);
  }
}

void ServingWorkload::on_finished(RequestRecord& record) {
  ++finished_;
  if (session_->progress() && spec_.requests.count > 0) {
    session_->progress()("requests", static_cast<std::size_t>(finished_), static_cast<std::size_t>(spec_.requests.count));
  }
  if (platform::TraceSink* trace = session_->trace(); trace != nullptr && record.finish_s >= 0) {
    const int accelerator =
        record.replica < 0
            ? -1
            : pools_[pool_of_[static_cast<std::size_t>(record.replica)]].first_accelerator_of(record.replica);
    platform::TraceItem item;
    item.lane = replica_trace_lane(record.replica, accelerator);
    item.id = record.request.id;
    item.name = fmt::format("request {}{}", record.request.id, record.rejected ? " rejected" : "");
    item.category = "request";
    item.start_ps = engine::seconds_to_ps(record.request.arrival_s);
    item.end_ps = engine::seconds_to_ps(record.finish_s);
    item.args = {{"input_tokens", record.request.input_tokens},
                 {"output_tokens", record.request.output_tokens},
                 {"replica", record.replica}};
    if (!record.rejected && record.scheduled_s >= 0) {
      const engine::TimePs scheduled_ps = engine::seconds_to_ps(record.scheduled_s);
      item.phases.push_back({"queued", item.start_ps, scheduled_ps});
      if (record.first_token_s >= 0) {
        const engine::TimePs first_token_ps = engine::seconds_to_ps(record.first_token_s);
        item.phases.push_back({"prefill", scheduled_ps, first_token_ps});
        item.phases.push_back({"decode", first_token_ps, item.end_ps});
      }
    }
    trace->item(item);
  }
  if (!record.rejected) {
    last_finish_s_ = std::max(last_finish_s_, record.finish_s);
    output_tokens_ += record.request.output_tokens;
  }
  if (generator_.closed_loop() && record.request.client >= 0) {
    if (auto next = generator_.next_for_client(record.request.client, now_s())) {
      schedule_arrival(*next);
    } else {
      exhausted_ = true;
    }
  }
  if (exhausted_ && finished_ == static_cast<std::int64_t>(records_.size()) && !done_) {
    done_ = true;
    for (Instance& instance : instances_) session_->engine().cancel(instance.next);
    for (auto& replica : replicas_) replica->close(now_s());
    if (on_done_) on_done_();
  }
}

void ServingWorkload::start_faults() {
  const platform::SessionOptions& options = session_->options();
  const platform::ClusterSpec& cluster = platform_.cluster();
  const platform::Stragglers& stragglers = cluster.stragglers;
  const int per_node = std::max(1, cluster.network.accelerators_per_node);
  // Slow nodes: listed, or drawn once for the run with cluster.stragglers.probability.
  std::vector<bool> slow = straggling_nodes(stragglers.probability, cluster.network.nodes, options.seed);
  for (const int node : stragglers.nodes) {
    if (node >= 0 && node < cluster.network.nodes) slow[static_cast<std::size_t>(node)] = true;
  }
  for (Pool& pool : pools_) {
    const int tp = pool.spec->tp, pp = pool.spec->pp, devices = tp * pp;
    for (std::size_t k = 0; k < pool.replicas.size(); k += static_cast<std::size_t>(pp)) {
      const int first = pool.first_accelerator_of(pool.replicas[k]);
      // Its TP collectives wait for the slowest rank: one accelerator on a slow node slows it.
      bool slow_instance = false;
      for (int a = first; a < first + devices; ++a) slow_instance = slow_instance || slow[static_cast<std::size_t>(a / per_node)];
      slow_instance = slow_instance && stragglers.compute_speed < 1;
      if (slow_instance) ++straggler_instances_;
      for (std::size_t j = k; j < k + static_cast<std::size_t>(pp); ++j) {
        const int index = pool.replicas[j];
        std::optional<IterationVariability> variability;
        if (options.variability.any()) variability.emplace(options.variability, options.seed, index, tp);
        replicas_[static_cast<std::size_t>(index)]->set_faults(std::move(variability),
                                                               slow_instance ? stragglers.compute_speed : 1.0);
      }
      if (options.failures.enabled && !spec_.disaggregated()) {
        Instance& instance = instances_.emplace_back();
        instance.replicas.assign(pool.replicas.begin() + static_cast<std::ptrdiff_t>(k),
                                 pool.replicas.begin() + static_cast<std::ptrdiff_t>(k) + pp);
        instance.failure_rate_per_s = instance_failure_rate_per_s(
            options.failures,
            instance_components(first, devices, per_node, static_cast<double>(cluster.network.scale_out.nics_per_node)));
      }
    }
  }
  for (std::size_t i = 0; i < instances_.size(); ++i) schedule_failure(i);
}

void ServingWorkload::schedule_failure(std::size_t i) {
  Instance& instance = instances_[i];
  if (done_ || !(instance.failure_rate_per_s > 0)) return;
  const double at_s = now_s() + failure_gap_s(session_->options().seed, static_cast<int>(i), instance.failures,
                                              1.0 / instance.failure_rate_per_s);
  // Past half the engine's horizon (53 days) no serving run reaches it: not scheduled.
  if (!(at_s * static_cast<double>(engine::kPsPerSecond) < engine::kHorizonPs / 2)) return;
  instance.next = session_->engine().schedule_at(engine::seconds_to_ps(at_s),
                                                 [this, i](engine::Engine&) { fail_instance(i); });
}

void ServingWorkload::fail_instance(std::size_t i) {
  Instance& instance = instances_[i];
  ++instance.failures;
  instance.down_since_s = now_s();
  std::vector<RequestRecord*> lost;
  for (const int index : instance.replicas) {
    for (RequestRecord* record : replicas_[static_cast<std::size_t>(index)]->fail()) lost.push_back(record);
  }
  // Back to the router in arrival order (the failed instance is down: others take them, or
  // they wait for an instance to come back).
  std::sort(lost.begin(), lost.end(),
            [](const RequestRecord* a, const RequestRecord* b) { return a->request.id < b->request.id; });
  requeued_ += static_cast<std::int64_t>(lost.size());
  resubmit(lost);
  instance.next = session_->engine().schedule_after(engine::seconds_to_ps(session_->options().failures.restart_s),
                                                    [this, i](engine::Engine&) { recover_instance(i); });
}

void ServingWorkload::recover_instance(std::size_t i) {
  Instance& instance = instances_[i];
  instance.down_s.emplace_back(instance.down_since_s, now_s());
  instance.down_since_s = -1;
  for (const int index : instance.replicas) replicas_[static_cast<std::size_t>(index)]->recover();
  std::vector<RequestRecord*> parked;
  parked.swap(parked_);
  resubmit(parked);
  schedule_failure(i);
}

void ServingWorkload::resubmit(const std::vector<RequestRecord*>& records) {
  if (records.empty()) return;
  // As a burst: every replica holds its next iteration until all are queued.
  for (auto& replica : replicas_) replica->hold();
  for (RequestRecord* record : records) submit(*record, ReplicaRole::mixed);
  for (auto& replica : replicas_) replica->release();
}

void ServingWorkload::sample() {
  if (done_) return;
  // Nothing running and nothing on its way: the requests left can never finish (finish()
  // reports them); stop sampling so the engine drains.
  const bool running = in_flight_ > 0 || !parked_.empty() || std::any_of(replicas_.begin(), replicas_.end(),
                                                      [](const auto& replica) { return replica->busy(); });
  if (!running) return;
  ServingSample s;
  s.time_s = now_s();
  std::int64_t used = 0, blocks = 0;
  for (const auto& replica : replicas_) {
    s.queued += replica->queued();
    used += replica->used_blocks();
    blocks += replica->kv_blocks();
  }
  s.kv_utilisation = blocks > 0 ? static_cast<double>(used) / static_cast<double>(blocks) : 0.0;
  s.output_tokens_per_s = static_cast<double>(output_tokens_ - tokens_at_last_sample_);
  tokens_at_last_sample_ = output_tokens_;
  series_.push_back(s);
  session_->engine().schedule_after(engine::seconds_to_ps(1.0), [this](engine::Engine&) { sample(); });
}

std::shared_ptr<KvTierStore> ServingWorkload::pool_store(const Pool& pool, int first) {
  const platform::MemoryPoolSpec& spec = platform_.cluster().memory_pool;
  if (!spec.on()) {
    throw ConfigError(fmt::format("pool '{}': KV-cache tier 'pool' needs cluster.memory_pool", pool.spec->name));
  }
  const int width = pool.spec->tp * pool.spec->pp;
  const std::pair<int, int> spanned{spec.pool_of(first), spec.pool_of(first + width - 1)};
  auto& store = pool_stores_[spanned];
  if (!store) {
    // Each accelerator keeps its shard in its own pool: the pool with most of the instance's
    // accelerators fills first.
    const int sharing = std::min(width, spec.accelerators);
    const double token_bytes = pool.memory.kv_bytes_per_token * sharing;
    const auto blocks = static_cast<std::int64_t>(std::floor(spec.capacity_bytes / (token_bytes * spec_.scheduler.block_size)));
    store = std::make_shared<KvTierStore>(
        std::vector<KvTier>{{kPoolTier, blocks, std::min(spec.bytes_per_s, spec.link_bytes_per_s), spec.latency_s}},
        spec_.scheduler.block_size, pool.memory.kv_bytes_per_token);
  }
  return store;
}

/// Adds one scheduler's (or one shared store's) tier figures to the result's, tokens as bytes of
/// `token_bytes` each (all of an instance's accelerators).
void add_tier_stats(KvTierResult& out, const KvTierStats& s, double token_bytes) {
  out.hits += s.hits;
  out.hit_tokens += s.loaded_tokens;
  out.stored_bytes += static_cast<double>(s.stored_tokens) * token_bytes;
  out.loaded_bytes += static_cast<double>(s.loaded_tokens) * token_bytes;
  out.evicted_bytes += static_cast<double>(s.evicted_tokens) * token_bytes;
  out.load_s += s.load_s;
  out.prefill_avoided_s += s.prefill_avoided_s;
}

KvTierStore ServingWorkload::kv_tier_store(const Pool& pool, int engines, int replica) {
  const KvOffloadSpec& offload = spec_.kv_offload;
  const double block_bytes = pool.memory.kv_bytes_per_token * spec_.scheduler.block_size;
  const std::vector<models::MemoryLevel> levels = pool.accelerator.memory_levels();
  std::vector<KvTier> tiers;
  std::shared_ptr<KvTierStore> shared;
  for (const std::string& name : offload.tiers) {
    if (name == kPoolTier) {
      shared = pool_store(pool, pool.first_accelerator_of(replica));
      continue;
    }
    const models::MemoryLevelKind kind = kv_tier_level_names().parse(name);
    const auto level = std::find_if(levels.begin(), levels.end(), [kind](const models::MemoryLevel& l) { return l.kind == kind; });
    if (level == levels.end()) {
      throw ConfigError(fmt::format("pool '{}': KV-cache tier '{}' needs {}'s memory.{}_capacity and memory.{}_bandwidth",
                                    pool.spec->name, name, pool.accelerator.name, name, name));
    }
    const double set = kind == models::MemoryLevelKind::host  ? offload.host_capacity_bytes
                       : kind == models::MemoryLevelKind::cxl ? offload.cxl_capacity_bytes
                                                              : offload.ssd_capacity_bytes;
    const double capacity = set > 0 ? set : level->capacity_bytes;
    tiers.push_back({name, static_cast<std::int64_t>(std::floor(capacity / engines / block_bytes)), level->bytes_per_s,
                     level->latency_s});
  }
  return KvTierStore(std::move(tiers), spec_.scheduler.block_size, pool.memory.kv_bytes_per_token, std::move(shared));
}

void ServingWorkload::fill_kv_tiers(ServingResult& r) const {
  if (!spec_.kv_offload.on()) return;
  std::int64_t prompts = 0, hits = 0, tier_hits = 0;
  double busy = 0, waited = 0;
  for (const std::string& name : spec_.kv_offload.tiers) r.kv_tiers.push_back({name});
  r.kv_write = spec_.kv_offload.write;
  r.kv_load = spec_.kv_offload.load;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& replica = *replicas_[i];
    prompts += replica.stats().prompt_tokens;
    hits += replica.stats().prefix_hit_tokens;
    tier_hits += replica.stats().tier_hit_tokens;
    busy += replica.stats().busy_s;
    waited += replica.stats().tier_wait_s;
    const Pool& pool = pools_[pool_of_[i]];
    // Bytes of a token over all of an instance's accelerators.
    const double token_bytes = pool.memory.kv_bytes_per_token * pool.spec->tp * pool.spec->pp;
    const KvTierStore& store = *replica.kv_tiers();
    for (std::size_t t = 0; t < store.size(); ++t) {
      if (store.shared(static_cast<int>(t))) continue;  // below, once per store
      const KvTierStats& s = store.stats(static_cast<int>(t));
      KvTierResult& out = r.kv_tiers[t];
      out.capacity_bytes = static_cast<double>(store.tier(static_cast<int>(t)).blocks) * pool.spec->pp *
                           spec_.scheduler.block_size * pool.memory.kv_bytes_per_token;
      add_tier_stats(out, s, token_bytes);
    }
  }
  if (!pool_stores_.empty()) {
    // The shared pool's figures: every store once (instances spanning the same pools share one).
    KvTierResult& out = r.kv_tiers.back();
    const Pool& first_pool = pools_.front();
    const double token_bytes = first_pool.memory.kv_bytes_per_token * first_pool.spec->tp * first_pool.spec->pp;
    out.capacity_bytes = platform_.cluster().memory_pool.capacity_bytes;
    for (const auto& [spanned, store] : pool_stores_) add_tier_stats(out, store->stats(0), token_bytes);
  }
  for (KvTierResult& t : r.kv_tiers) {
    t.hit_rate = prompts > 0 ? static_cast<double>(t.hit_tokens) / static_cast<double>(prompts) : 0.0;
  }
  r.hbm_hit_rate = prompts > 0 ? static_cast<double>(hits - tier_hits) / static_cast<double>(prompts) : 0.0;
  r.tier_wait_share = busy > 0 ? waited / busy : 0.0;
}

std::unique_ptr<platform::WorkloadResult> ServingWorkload::finish(platform::Session& /*session*/) {
  if (!done_) {
    std::int64_t waiting = 0;
    for (const auto& replica : replicas_) waiting += replica->outstanding();
    throw SimulationError(fmt::format(
        "the serving workload stopped with {} of {} requests unfinished ({} still queued or running): no replica could "
        "make progress",
        static_cast<std::int64_t>(records_.size()) - finished_, records_.size(), waiting));
  }
  auto result = std::make_unique<ServingResult>();
  ServingResult& r = *result;
  r.kind = "serving";
  r.slo = spec_.slo;
  r.duration_s = std::max(0.0, last_finish_s_ - std::max(0.0, first_arrival_s_));
  std::vector<double> ttft, tpot, e2e, queue;
  std::int64_t good = 0;
  LatencyHistogram itl;
  for (const auto& replica : replicas_) itl.merge(replica->stats().itl);
  for (const RequestRecord& record : records_) {
    ++r.requests;
    if (record.rejected) {
      ++r.rejected;
      switch (record.rejection) {
        case Rejection::token_budget: ++r.rejected_token_budget; break;
        case Rejection::queue_full: ++r.rejected_queue_full; break;
        case Rejection::kv_capacity:
        case Rejection::none: ++r.rejected_kv_capacity; break;
      }
      continue;
    }
    ++r.completed;
    r.preemptions += record.preemptions;
    const Request& q = record.request;
    r.input_tokens += q.input_tokens;
    r.output_tokens += q.output_tokens;
    const double first = record.first_token_s - q.arrival_s;
    const double tpot_one = q.output_tokens > 1 ? (record.finish_s - record.first_token_s) / static_cast<double>(q.output_tokens - 1) : 0.0;
    ttft.push_back(first);
    if (q.output_tokens > 1) tpot.push_back(tpot_one);
    e2e.push_back(record.finish_s - q.arrival_s);
    queue.push_back(std::max(0.0, record.scheduled_s - q.arrival_s));
    const bool meets = (spec_.slo.ttft_s <= 0 || first <= spec_.slo.ttft_s) && (spec_.slo.tpot_s <= 0 || tpot_one <= spec_.slo.tpot_s);
    if (meets) ++good;
  }
  r.ttft_s = summarize(ttft);
  r.tpot_s = summarize(tpot);
  r.e2e_s = summarize(e2e);
  r.queue_s = summarize(queue);
  r.itl_s = itl.summary();
  r.ttft_at_slo_percentile_s = percentile(ttft, spec_.slo.percentile);  // summarize sorted them
  r.tpot_at_slo_percentile_s = percentile(tpot, spec_.slo.percentile);
  if (spec_.slo.ttft_s > 0) r.slo_met = r.slo_met && r.ttft_at_slo_percentile_s <= spec_.slo.ttft_s;
  if (spec_.slo.tpot_s > 0) r.slo_met = r.slo_met && r.tpot_at_slo_percentile_s <= spec_.slo.tpot_s;
  if (r.rejected > 0) r.slo_met = false;
  if (r.duration_s > 0) {
    r.input_tokens_per_s = static_cast<double>(r.input_tokens) / r.duration_s;
    r.output_tokens_per_s = static_cast<double>(r.output_tokens) / r.duration_s;
    r.throughput_tokens_per_s = r.input_tokens_per_s + r.output_tokens_per_s;
    r.requests_per_s = static_cast<double>(r.completed) / r.duration_s;
    // Goodput: the rate at which requests that met every target were offered, i.e. the
    // measured arrival rate x the share that met them (DistServe's sense). Dividing by the
    // whole run would count the drain after the last arrival: 50 req/s offered with every
    // target met read 35 req/s. All at once (offline): over the run.
    const double window_s = last_arrival_s_ - std::max(0.0, first_arrival_s_);
    const double arrival_rate = window_s > 0 && r.requests > 1 ? static_cast<double>(r.requests - 1) / window_s : 0.0;
    r.goodput_requests_per_s = arrival_rate > 0 ? arrival_rate * static_cast<double>(good) / static_cast<double>(r.requests)
                                                 : static_cast<double>(good) / r.duration_s;
  }
  std::int64_t hits = 0, prompts = 0;
  for (const auto& replica : replicas_) {
    hits += replica->stats().prefix_hit_tokens;
    prompts += replica->stats().prompt_tokens;
  }
  r.prefix_hit_rate = prompts > 0 ? static_cast<double>(hits) / static_cast<double>(prompts) : 0.0;
  r.hbm_hit_rate = r.prefix_hit_rate;
  fill_kv_tiers(r);
  r.accelerators = spec_.accelerators();
  fill_pools(r);
  fill_energy(r);
  fill_faults(r);
  r.series = series_;
  r.records.assign(records_.begin(), records_.end());
  // Headline metrics for the generic report paths.
  r.metrics = {{"requests_per_s", r.requests_per_s, "1/s"},
               {"output_tokens_per_s", r.output_tokens_per_s, "1/s"},
               {"ttft_p99", r.ttft_s.p99, "s"},
               {"tpot_p99", r.tpot_s.p99, "s"}};
  r.notes.push_back(fmt::format(
      "{} requests of {}; {} pools; iteration host overhead {:.2f} ms ({} defaults); a pipeline-parallel instance "
      "runs pp schedulers' batches staggered through its stages",
      r.requests, spec_.model.name, pools_.size(), spec_.scheduler.iteration_overhead_s * 1e3,
      framework_names().name(spec_.framework)));
  if (spec_.model.attention == models::AttentionKind::mla) {
    r.notes.push_back(
        "MLA: decode steps attend absorbed over the cached latents at FlashMLA's efficiency (660 TFLOP/s and 3000 GB/s "
        "on an H800, as fractions of each part's bf16 peak and HBM bandwidth; an estimate beyond Hopper), their "
        "absorbed W_UK / W_UV GEMMs costed as the equal-FLOP key/value up-projection; prefill chunks up-project their "
        "cached context again and attend as MHA; the latent cache is replicated on every TP rank (no data-parallel "
        "attention)");
  }
  if (spec_.scheduler.kv_sized_sequences) {
    std::vector<std::string> limits;
    for (const Pool& pool : pools_) {
      const std::int64_t kv_tokens =
          std::max<std::int64_t>(1, pool.memory.kv_blocks / pool.spec->pp) * spec_.scheduler.block_size;
      limits.push_back(fmt::format("{} {} (KV {} tokens)", pool.spec->name,
                                   sglang_max_running_requests(kv_tokens, spec_.model.max_position_embeddings), kv_tokens));
    }
    r.notes.push_back(fmt::format("running requests per scheduler as {} sizes them from its KV pool "
                                  "(min(KV tokens / 2, KV tokens / context x 512 within 2,048-4,096)): {}",
                                  framework_names().name(spec_.framework), fmt::join(limits, ", ")));
  }
  if (spec_.framework == Framework::trtllm_bench) {
    r.notes.push_back(fmt::format("trtllm-bench-1.0 limits: {} sequences, {} tokens per iteration{}",
                                  spec_.scheduler.max_sequences, spec_.scheduler.max_batched_tokens,
                                  " (its calc_engine_setting from the mean lengths unless the scenario sets them)"));
  }
  if (spec_.disaggregated() && spec_.kv_transfer == KvTransfer::push) {
    r.notes.push_back("disaggregated: TTFT ends at the prefill pool's first token; the KV cache then moves to a decode "
                      "instance through the communication runtime (the prefill instance holds its blocks until it has "
                      "left)");
  }
  if (spec_.disaggregated() && spec_.conditional.on()) {
    r.notes.push_back(fmt::format("conditional disaggregation: {} of {} requests prefilled on their decode instance "
                                  "(fewer than {} prompt tokens not cached there{})",
                                  local_prefills_, records_.size(), spec_.conditional.max_uncached_tokens,
                                  spec_.conditional.max_uncached_ratio < 1
                                      ? fmt::format(", under {} of the prompt", spec_.conditional.max_uncached_ratio)
                                      : ""));
  }
  if (spec_.disaggregated() && spec_.kv_transfer == KvTransfer::pull) {
    r.notes.push_back("disaggregated, KV pulled (vLLM's NixlConnector): a decode instance reads a prompt's uncached KV "
                      "cache through the communication runtime when it admits the request, then computes the last "
                      "prompt token; TTFT ends there (the prefill instance holds its blocks until the read is done; no "
                      "orchestration time per request: none published)");
  }
  return result;
}

void ServingWorkload::fill_faults(ServingResult& r) const {
  const platform::SessionOptions& options = session_->options();
  const platform::Stragglers& stragglers = platform_.cluster().stragglers;
  const bool straggles = stragglers.probability > 0 || !stragglers.nodes.empty();
  if (!options.variability.any() && !straggles && !options.failures.enabled) return;
  ServingFaults& f = r.faults;
  f.modelled = true;
  f.straggler_instances = straggler_instances_;
  f.restart_s = options.failures.restart_s;
  for (const Pool& pool : pools_) f.instances += pool.spec->replicas;
  const double from_s = std::max(0.0, first_arrival_s_), to_s = last_finish_s_;
  double downtime_s = 0, scheduler_downtime_s = 0, rate_per_s = 0;
  for (const Instance& instance : instances_) {
    double down = 0;
    const auto clip = [&](double a, double b) { down += std::max(0.0, std::min(b, to_s) - std::max(a, from_s)); };
    for (const auto& [a, b] : instance.down_s) clip(a, b);
    if (instance.down_since_s >= 0) clip(instance.down_since_s, to_s);
    downtime_s += down;
    scheduler_downtime_s += down * static_cast<double>(instance.replicas.size());
    // Long-run failures per second of an instance that is down restart_s after each: 1 / (M + R).
    rate_per_s += 1.0 / (1.0 / instance.failure_rate_per_s + options.failures.restart_s);
    f.failures += instance.failures;
  }
  if (!instances_.empty()) f.instance_mtbf_s = 1.0 / instances_.front().failure_rate_per_s;
  f.expected_failures = rate_per_s * r.duration_s;
  f.requeued_requests = requeued_;
  double jitter = 0, host_noise = 0, straggler = 0, reprefill = 0, lost_work = 0, tokens = 0;
  for (const auto& replica : replicas_) {
    const ReplicaStats& s = replica->stats();
    jitter += s.jitter_s;
    host_noise += s.host_noise_s;
    straggler += s.straggler_s;
    reprefill += s.reprefill_s;
    lost_work += s.lost_work_s;
    f.reprefill_tokens += s.reprefill_tokens;
    tokens += static_cast<double>(s.prefill_tokens + s.decode_tokens);
  }
  f.useful_work_share = tokens > 0 ? 1.0 - static_cast<double>(f.reprefill_tokens) / tokens : 1.0;
  const double capacity_s = static_cast<double>(replicas_.size()) * r.duration_s;
  if (capacity_s > 0) {
    f.jitter_share = jitter / capacity_s;
    f.host_noise_share = host_noise / capacity_s;
    f.straggler_share = straggler / capacity_s;
    f.downtime_share = scheduler_downtime_s / capacity_s;
    f.reprefill_share = reprefill / capacity_s;
    f.lost_work_share = lost_work / capacity_s;
  }
  if (!instances_.empty() && r.duration_s > 0) {
    f.availability = 1.0 - downtime_s / (static_cast<double>(instances_.size()) * r.duration_s);
  }
  if (straggles) {
    r.notes.push_back(fmt::format("cluster.stragglers: {} of {} instances have an accelerator on a slow node (speed {:g}, "
                                  "each node slow for the whole run{}); the router still sends them work by its policy",
                                  f.straggler_instances, f.instances, stragglers.compute_speed,
                                  stragglers.probability > 0 ? fmt::format(" with probability {:g}", stragglers.probability)
                                                             : std::string()));
  }
  const auto span = [](double s) { return s < 3600 ? fmt::format("{:.3g} s", s) : fmt::format("{:.3g} h", s / 3600); };
  if (options.failures.enabled && spec_.disaggregated()) {
    r.notes.push_back("simulation.failures: not modelled for disaggregated prefill and decode pools (every instance "
                      "stays up)");
  } else if (options.failures.enabled) {
    r.notes.push_back(fmt::format(
        "simulation.failures: {} failures of {} instances in {:.1f} s, {:.3g} expected (one instance's MTBF {}, "
        "restart {:g} s); availability {:.4f}; {} requests re-queued, {} tokens prefilled again",
        f.failures, f.instances, r.duration_s, f.expected_failures, span(f.instance_mtbf_s), f.restart_s,
        f.availability, f.requeued_requests, f.reprefill_tokens));
    if (f.expected_failures < 0.1) {
      r.notes.push_back(fmt::format(
          "simulation.failures: the run ({:.1f} s) is far shorter than an instance's MTBF ({}): {:.2g} failures "
          "are expected, so a failure-free run is the likely outcome; serve more requests or lower the MTBFs to see "
          "their effect",
          r.duration_s, span(f.instance_mtbf_s), f.expected_failures));
    }
  }
}

void ServingWorkload::fill_pools(ServingResult& r) const {
  double busy_accelerator_s = 0;
  double compute = 0, memory = 0, comm = 0, host = 0, kv_peak = 0, kv_mean_num = 0, kv_mean_den = 0;
  for (const Pool& pool : pools_) {
    PoolResult p;
    p.name = pool.spec->name;
    p.role = std::string(replica_role_names().name(pool.spec->role));
    p.accelerator = pool.accelerator.name;
    p.replicas = pool.spec->replicas;
    p.tp = pool.spec->tp;
    p.pp = pool.spec->pp;
    p.ep = pool.spec->ep;
    p.memory = pool.memory;
    double busy = 0, tokens = 0;
    for (int index : pool.replicas) {
      const ReplicaStats& s = replicas_[static_cast<std::size_t>(index)]->stats();
      busy += s.busy_s / pool.spec->pp;  // a stage is busy for a pp-th of each of its schedulers' iterations
      p.iterations += s.iterations;
      tokens += static_cast<double>(s.prefill_tokens + s.decode_tokens);
      p.compute_share += s.compute_bound_s;
      p.memory_share += s.memory_bound_s;
      p.communication_share += s.communication_s;
      p.host_share += s.host_s;
      const double blocks = static_cast<double>(replicas_[static_cast<std::size_t>(index)]->kv_blocks());
      p.kv_utilisation_peak = std::max(p.kv_utilisation_peak, static_cast<double>(s.peak_blocks) / blocks);
      kv_mean_num += s.block_seconds;
      kv_mean_den += blocks * r.duration_s;
      p.kv_utilisation_mean +=
          r.duration_s > 0 ? s.block_seconds / (blocks * r.duration_s) / static_cast<double>(pool.replicas.size()) : 0.0;
    }
    compute += p.compute_share;
    memory += p.memory_share;
    comm += p.communication_share;
    host += p.host_share;
    if (busy > 0) {
      p.compute_share /= busy;
      p.memory_share /= busy;
      p.communication_share /= busy;
      p.host_share /= busy;
    }
    p.utilisation = r.duration_s > 0 ? busy / (pool.spec->replicas * r.duration_s) : 0.0;
    p.mean_batch_tokens = p.iterations > 0 ? tokens / static_cast<double>(p.iterations) : 0.0;
    busy_accelerator_s += busy * pool.spec->tp * pool.spec->pp;
    kv_peak = std::max(kv_peak, p.kv_utilisation_peak);
    r.pools.push_back(std::move(p));
  }
  r.kv_utilisation_peak = kv_peak;
  r.kv_utilisation_mean = kv_mean_den > 0 ? kv_mean_num / kv_mean_den : 0.0;
  r.gpu_utilisation = r.duration_s > 0 ? busy_accelerator_s / (r.accelerators * r.duration_s) : 0.0;
  // What bounds it: rejections (by their main cause) or preemptions (the KV cache) first, then
  // what the busy time went to.
  if (r.rejected_token_budget > 0 && r.rejected_token_budget >= r.rejected_kv_capacity &&
      r.rejected_token_budget >= r.rejected_queue_full) {
    r.limiter = fmt::format("the token budget ({} prompts over scheduler.max_batched_tokens {} rejected: chunked prefill "
                            "is off)",
                            r.rejected_token_budget, spec_.scheduler.max_batched_tokens);
  } else if (r.rejected_queue_full > 0 && r.rejected_queue_full >= r.rejected_kv_capacity) {
    r.limiter = fmt::format("the waiting queue ({} requests rejected at scheduler.max_queue {})", r.rejected_queue_full,
                            spec_.scheduler.max_queue);
  } else if (r.rejected > 0 || r.preemptions > r.completed / 20) {
    r.limiter = "KV capacity";
  } else if (r.pools.size() > 1) {
    // Several pools (disaggregated prefill and decode, or heterogeneous ones): a missed TTFT
    // that is mostly waiting is the pool that takes the arrivals (prefill, else mixed) falling
    // behind; otherwise the busiest pool, by what its own busy time went to, not the sum over
    // pools (a 112 s prefill queue beside a busy HBM-bound decode pool read "HBM bandwidth").
    const bool ttft_missed = spec_.slo.ttft_s > 0 && r.ttft_at_slo_percentile_s > spec_.slo.ttft_s;
    const auto arrivals = std::find_if(r.pools.begin(), r.pools.end(), [](const PoolResult& p) { return p.role == "prefill"; });
    const auto entry = arrivals != r.pools.end() ? arrivals : std::find_if(r.pools.begin(), r.pools.end(), [](const PoolResult& p) {
      return p.role == "mixed";
    });
    const auto busiest = std::max_element(r.pools.begin(), r.pools.end(),
                                          [](const PoolResult& a, const PoolResult& b) { return a.utilisation < b.utilisation; });
    if (ttft_missed && entry != r.pools.end() && r.queue_s.p99 > 0.5 * r.ttft_s.p99) {
      r.limiter = fmt::format("{} queue (pool {}, p99 wait {:.1f} s)", entry->role, entry->name, r.queue_s.p99);
    } else if (busiest->utilisation < 0.5) {
      r.limiter = "arrivals (every pool is busy less than half the time)";
    } else {
      const double shares[] = {busiest->compute_share, busiest->memory_share, busiest->communication_share,
                               busiest->host_share};
      const char* names[] = {"compute", "HBM bandwidth", "network", "host overhead"};
      r.limiter = fmt::format("{} (pool {}, {:.0f} % busy)",
                              names[std::max_element(std::begin(shares), std::end(shares)) - std::begin(shares)],
                              busiest->name, 100.0 * busiest->utilisation);
    }
  } else if (r.gpu_utilisation < 0.5) {
    r.limiter = "arrivals (the accelerators are busy less than half the time)";
  } else {
    const double shares[] = {compute, memory, comm, host};
    const char* names[] = {"compute", "HBM bandwidth", "network", "host overhead"};
    r.limiter = names[std::max_element(std::begin(shares), std::end(shares)) - std::begin(shares)];
  }
}

void ServingWorkload::fill_energy(ServingResult& r) const {
  if (r.duration_s <= 0 || r.output_tokens <= 0) return;
  std::vector<platform::DeviceWork> work;
  for (const Pool& pool : pools_) {
    if (!platform::has_power_data(pool.accelerator)) {  // one pool without power data: no energy report
      r.notes.push_back("power: accelerator '" + pool.accelerator.name + "' has no power.tdp; no power or energy report");
      return;
    }
    // One average device of the pool: its instance's kernels and collectives alone (each
    // instance's pp stage schedulers share its devices), the rest of the window waiting.
    double kernels = 0, communication = 0, flops = 0;
    for (int index : pool.replicas) {
      const ReplicaStats& s = replicas_[static_cast<std::size_t>(index)]->stats();
      kernels += (s.compute_bound_s + s.memory_bound_s) / pool.spec->pp;
      communication += s.communication_s / pool.spec->pp;
      flops += s.flops;
    }
    const double devices = static_cast<double>(pool.spec->accelerators());
    platform::DeviceWork group{&pool.accelerator, {}, devices, pool.spec->hour_usd};
    group.activity.period_s = r.duration_s;
    group.activity.kernel_s = std::min(kernels / pool.spec->replicas, r.duration_s);
    group.activity.communication_s = std::min(communication / pool.spec->replicas, r.duration_s - group.activity.kernel_s);
    group.activity.matrix_flops[weight_format_math(spec_.precision.weights)] = flops / devices;
    work.push_back(group);
  }
  if (work.empty()) return;
  const auto tokens = static_cast<double>(r.output_tokens);
  const platform::PeriodEnergy energy = platform::period_energy(platform_, work, tokens, 0.0);
  r.average_power_w = energy.cluster.average_power_w;
  r.devices_average_power_w = energy.cluster.devices_average_power_w;
  r.energy_per_token_j = energy.cluster.energy_per_token_j;
  r.device_energy_per_token_j = energy.cluster.device_energy_per_token_j;
  if (const auto note = platform::power_coverage_note(platform_)) r.notes.push_back(*note);
  if (const auto note = platform::optics_note(platform_)) r.notes.push_back(*note);
  if (energy.cost) r.cost_per_million_tokens = energy.cost->usd_per_million_tokens;
  // A fleet of several parts priced at one rate is said, not silently averaged.
  const bool mixed_parts = std::any_of(pools_.begin(), pools_.end(), [&](const Pool& pool) {
    return pool.accelerator.name != pools_.front().accelerator.name;
  });
  const bool one_price = std::any_of(pools_.begin(), pools_.end(), [](const Pool& pool) { return !pool.spec->hour_usd; });
  if (!energy.cost && one_price && !platform_.spec().cost.accelerator_hour_usd &&
      std::any_of(pools_.begin(), pools_.end(), [](const Pool& pool) { return pool.spec->hour_usd.has_value(); })) {
    std::vector<std::string> unpriced;
    for (const Pool& pool : pools_) {
      if (!pool.spec->hour_usd) unpriced.push_back(pool.spec->name);
    }
    r.notes.push_back(fmt::format("cost: no cost per token: pool {} has no hour_usd and cost.accelerator_hour_usd is unset",
                                  fmt::join(unpriced, ", ")));
  }
  if (energy.cost && mixed_parts && one_price) {
    r.notes.push_back("cost: pools of different accelerators are priced at cost.accelerator_hour_usd where they set no "
                      "workload.pools.NAME.hour_usd of their own");
  }
}

}  // namespace

std::unique_ptr<platform::Workload> ServingSpec::instantiate(const platform::Platform& platform,
                                                             const platform::Allocation& allocation,
                                                             const platform::SessionOptions& options) const {
  return std::make_unique<ServingWorkload>(*this, platform, allocation, options);
}

}  // namespace clustersim::serving
