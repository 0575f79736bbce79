#pragma once
/// One model instance serving requests: a vLLM-style continuous-batching scheduler over a
/// paged KV cache, driving iterations whose time comes from the IterationCostModel.
///
/// Each iteration the scheduler builds a batch within max_sequences sequences and
/// max_batched_tokens query tokens:
///   * decode_first (vLLM's scheduler with chunked prefill, Sarathi-Serve): every running
///     sequence's decode step first, then the chunks of prompts being prefilled, then new
///     prompts from the waiting queue (FCFS), each chunk as large as the token budget left;
///   * prefill_first (vLLM's scheduler without chunked prefill, Orca): waiting prompts first,
///     whole, as many as fit while fewer than max_sequences are running; when none is admitted,
///     a decode step of every running sequence;
///   * static_batch (TensorRT-LLM's gptSessionBenchmark): a batch of up to max_sequences
///     prompts is prefilled together and decoded until its last request ends; only then is
///     the next batch admitted.
/// Without chunked prefill a prompt runs whole in one iteration (a prompt above
/// max_batched_tokens is rejected).
/// KV cache: blocks of block_size tokens; a sequence holds ceil(kv / block_size) blocks. When a
/// decode step finds no free block, the most recently arrived running sequence is preempted
/// (vLLM): recompute frees its blocks and sends it back to the queue's head to prefill its
/// prompt and generated tokens again; swap copies its blocks to host memory over the host link
/// (the copy's time is added to the iteration) and brings them back before it runs again.
/// Prefix caching: the full blocks of a shared prefix stay cached after their request ends
/// (referenced while used, evicted least recently used when blocks run out); a later request
/// with the same prefix skips the cached tokens' prefill. KV-cache tiers below HBM
/// (kv_tiers.hpp, set_kv_tiers) keep prefixes HBM let go; a request finding more of its prefix
/// in a tier than in HBM loads the rest over the tier's link instead of prefilling it.
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/config/name_table.hpp"
#include "sim/platform/memory_pool.hpp"
#include "sim/platform/session.hpp"
#include "topologies/flow_network.hpp"
#include "sim/serving/faults.hpp"
#include "sim/serving/iteration_cost.hpp"
#include "sim/serving/kv_tiers.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/requests.hpp"

namespace clustersim::serving {

enum class SchedulePolicy : std::uint8_t { decode_first, prefill_first, static_batch };
const config::NameTable<SchedulePolicy>& schedule_policy_names();
enum class PreemptionMode : std::uint8_t { recompute, swap };
const config::NameTable<PreemptionMode>& preemption_mode_names();

/// The scheduler's limits (`workload.scheduler`).
struct SchedulerSpec {
  int max_sequences = 256;                 ///< vLLM max_num_seqs
  std::int64_t max_batched_tokens = 8192;  ///< vLLM max_num_batched_tokens
  bool chunked_prefill = true;
  SchedulePolicy policy = SchedulePolicy::decode_first;
  int block_size = 16;                     ///< tokens per KV block
  double memory_utilisation = 0.9;         ///< fraction of HBM for weights, activations and the KV cache
  PreemptionMode preemption = PreemptionMode::recompute;
  int max_queue = 0;                       ///< waiting requests a replica accepts; 0: unbounded
  bool prefix_caching = false;
  double iteration_overhead_s = 0;         ///< host time per iteration (scheduling, sampling, launches)
  double iteration_overhead_per_sequence_s = 0;  ///< more host time per sequence in the batch
  /// The host work of the next iteration runs while the GPU runs this one (SGLang's overlap
  /// scheduler): only max(0, host - GPU) is exposed.
  bool overlap_host = false;
  /// Admission reserves the blocks of the whole output (TensorRT-LLM's GUARANTEED_NO_EVICT):
  /// nothing is ever preempted.
  bool reserve_output = false;
  /// The KV cache is memory_utilisation of the memory left after weights and activations
  /// (TensorRT-LLM's free_gpu_memory_fraction), not of all memory (vLLM).
  bool kv_of_free_memory = false;
  /// max_sequences is SGLang's running-request limit, sized from the instance's KV tokens and
  /// the model's context when the instance is built (sglang_max_running_requests).
  bool kv_sized_sequences = false;
  /// SGLang's --scheduler-recv-interval: while the instance decodes, it takes in new requests
  /// only once this many decode-only iterations have passed since it last did; an iteration with
  /// prefill work, or an idle instance, takes them in at once (SchedulerRecvSkipper). 1: every
  /// iteration (every other framework).
  int recv_interval = 1;
};

/// Speculative decoding (`workload.speculative`): each decode step proposes `tokens` draft
/// tokens and the target model verifies them in one pass (1 + tokens query tokens); each is
/// accepted with probability `acceptance` until the first rejection, plus the verifier's own
/// token: 1 to tokens + 1 tokens per step.
struct SpeculativeSpec {
  int tokens = 0;                 ///< 0: off
  double acceptance = 0.7;
  /// Without a draft model: the draft cost per proposed token, as a fraction of one target
  /// iteration of the same batch (an MTP head: one layer of the target, ~1 / layers).
  double draft_cost_fraction = 0.1;
  /// A draft model (a library or `models:` name): each proposed token is one decode step of it
  /// over the decoding sequences, costed like the target's on the same instance; its weights and
  /// KV cache share the instance's memory. Empty: draft_cost_fraction.
  std::string draft_model;
};

/// Why a replica turned a request away.
enum class Rejection : std::uint8_t {
  none,
  kv_capacity,   ///< its prompt and output need more KV blocks than the replica has
  token_budget,  ///< its prompt exceeds max_batched_tokens with chunked prefill off
  queue_full,    ///< the replica's waiting queue was at max_queue
};

/// What happened to one request.
struct RequestRecord {
  Request request;
  double scheduled_s = -1;    ///< first admitted into a batch
  double first_token_s = -1;
  double finish_s = -1;
  std::int64_t prefix_hit_tokens = 0;
  int preemptions = 0;
  bool rejected = false;
  Rejection rejection = Rejection::none;  ///< why, when rejected
  int replica = -1;           ///< where it was (its decode replica when disaggregated)
  int prefilled_by = -1;      ///< disaggregated: the prefill replica that holds its KV cache until it has left
  /// Times an instance failed under it (simulation.failures): each time it went back to the
  /// router without its KV cache.
  int restarts = 0;
  std::int64_t resume_generated = 0;  ///< output tokens it had when its instance last failed
  std::int64_t redo_tokens = 0;       ///< tokens whose KV cache that failure lost (prefilled again)
  double last_token_s = -1;           ///< its last token before that failure
};

/// What a replica hands its owner when an iteration ends.
struct ReplicaEvents {
  /// A request's last token was produced (or it was rejected).
  std::function<void(RequestRecord&)> finished;
  /// Disaggregated prefill: a request's prompt is done and its first token produced; the
  /// owner moves its KV cache to a decode replica, then calls transfer_done.
  std::function<void(RequestRecord&)> prefilled;
  /// Disaggregated decode with pulled KV caches (set_pull_kv): the scheduler has admitted the
  /// request and taken its blocks; the owner reads its `tokens` of KV cache not cached here from
  /// the prefill instance, then calls `arrived`.
  std::function<void(RequestRecord&, std::int64_t tokens, std::function<void()> arrived)> pull;
};

/// Running totals of a replica, for the metrics and time series.
struct ReplicaStats {
  std::int64_t iterations = 0;
  double busy_s = 0;
  double compute_bound_s = 0, memory_bound_s = 0, communication_s = 0, host_s = 0, swap_s = 0;
  double tier_wait_s = 0;  ///< blocking tier loads: time added to iterations
  double flops = 0, hbm_bytes = 0;
  std::int64_t prefill_tokens = 0, decode_tokens = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefix_hit_tokens = 0, prompt_tokens = 0;
  std::int64_t tier_hit_tokens = 0;  ///< of the prefix hits, those loaded from a KV-cache tier
  std::int64_t peak_blocks = 0;
  double block_seconds = 0;  ///< integral of used blocks over time
  // Faults (faults.hpp): what each cause added to the iterations, seconds.
  double jitter_s = 0;        ///< kernel and network jitter (net: may be < 0)
  double host_noise_s = 0;    ///< host/OS interruptions
  double straggler_s = 0;     ///< a slow accelerator's extra time
  double reprefill_s = 0;     ///< iteration time spent prefilling KV cache a failure lost (token share)
  std::int64_t reprefill_tokens = 0;  ///< tokens prefilled again after a failure
  double lost_work_s = 0;     ///< iteration time thrown away by failures (the iteration running then)
  LatencyHistogram itl;  ///< inter-token gaps, one per token after the first
};

enum class ReplicaRole : std::uint8_t { mixed, prefill, decode };
const config::NameTable<ReplicaRole>& replica_role_names();

/// The trace row of replica `replica`'s iterations and requests, on its first accelerator.
platform::TraceLane replica_trace_lane(int replica, int accelerator);

class Replica {
 public:
  /// `kv_blocks` blocks of the KV cache (> 0); `host_bytes_per_s` the host link for swaps.
  /// `draft` costs a draft model's decode steps (nullptr: speculative.draft_cost_fraction).
  Replica(int index, ReplicaRole role, IterationCostModel& cost, IterationCostModel* draft, const SchedulerSpec& scheduler,
          const SpeculativeSpec& speculative, std::int64_t kv_blocks, double kv_bytes_per_token,
          double host_bytes_per_s, bool exact_cost);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  /// Binds to the session and its engine; `speed` is the first accelerator's speed profile (an
  /// iteration runs at the speed of its start: iterations last milliseconds). Each iteration is
  /// one engine event at its end, tagged with the replica, so the fingerprint follows the
  /// schedule; iterations are not executor tasks (a run of 100,000 requests has millions).
  /// `first_accelerator` places the replica in a trace (the session's TraceSink, if any).
  void start(platform::Session& session, const engine::Profile& speed, ReplicaEvents events,
             int first_accelerator = -1);
  /// A request arrives (routed here); it is queued (or rejected when the queue is full).
  void submit(RequestRecord& record);
  /// Faults of this scheduler: its variability draws (empty: none) and its speed as a
  /// straggler (1: not one; the lower of it and the speed profile applies).
  void set_faults(std::optional<IterationVariability> variability, double straggler_speed);
  /// The instance's groups (InstanceLayout::group ids) that cross the scale-out fabric, each
  /// with its accelerators; an empty entry stays closed-form. An iteration's collectives on such
  /// a group (the cost model's traffic, summed per kind) run through the session's CommRuntime
  /// after the rest of the iteration, so under the flow fidelity they contend with every other
  /// communication on the platform; the closed form's per-op latency beyond one aggregated
  /// collective stays in the iteration's own time.
  void set_fabric_groups(std::vector<std::vector<int>> groups) { fabric_groups_ = std::move(groups); }
  /// KV-cache tiers below HBM (needs prefix caching): `write` when a prefix is copied to the
  /// first tier, `load` how a hit comes back (kv_tiers.hpp).
  void set_kv_tiers(KvTierStore tiers, TierWrite write, TierLoad load);
  /// The memory pools its `pool` tier lives in, and the instance's accelerators (each moves its
  /// shard of a load or a copy as a flow on its link and its pool's port).
  void set_memory_pool(platform::MemoryPoolRuntime* pools, std::vector<int> accelerators);
  /// The tiers (nullptr: none).
  const KvTierStore* kv_tiers() const { return tiers_ ? &*tiers_ : nullptr; }
  /// Its instance fails: the running iteration is lost and every request queued or running
  /// here loses its KV cache (and the prefix cache is gone). Returns those requests, each
  /// marked to prefill its prompt and the tokens it had generated again, for the router.
  /// Throws SimulationError while a KV cache is in transfer from here (disaggregated pools).
  std::vector<RequestRecord*> fail();
  /// Back after the restart: it takes requests again.
  void recover();
  bool down() const { return down_; }
  /// Disaggregated decode: a request whose KV cache arrived; it joins the running set when its
  /// blocks fit (else it waits in the queue's order). With set_pull_kv, a request whose prompt
  /// another instance has prefilled and whose KV cache is still there: it waits in the queue's
  /// order for its blocks, the scheduler then asks for its uncached KV (ReplicaEvents::pull),
  /// and once it has arrived its last prompt token is computed here, which gives its first
  /// token (vLLM's NixlConnector: docs/serving-frameworks.md section 2.6).
  void submit_prefilled(RequestRecord& record);
  /// Decode replicas pull KV caches (workload.kv_transfer: pull) rather than receive them;
  /// start() then needs ReplicaEvents::pull.
  void set_pull_kv(bool pull) { pull_kv_ = pull; }
  /// While held, submitted requests are queued but no iteration starts; release() starts one if
  /// there is work. The workload holds its replicas while it submits requests that arrive at the
  /// same instant, so that they form one batch.
  void hold() { held_ = true; }
  void release();

  /// Prefill pool: `record`'s KV cache has reached its decode instance; its blocks are freed.
  /// Throws SimulationError for a request not in transfer here.
  void transfer_done(RequestRecord& record);

  int index() const { return index_; }
  ReplicaRole role() const { return role_; }
  /// Requests queued or running here (the router's load).
  std::int64_t outstanding() const { return outstanding_; }
  std::int64_t queued() const { return static_cast<std::int64_t>(waiting_.size() + inbox_.size()); }
  /// The prompt blocks of the requests queued or running here (a KV-aware router's own count of
  /// a worker's active blocks: added when routed, removed when finished).
  std::int64_t active_blocks() const { return active_blocks_; }
  /// Is an iteration running?
  bool busy() const { return busy_; }
  /// Tokens of `prefix_id` cached here, in HBM or a tier (prefix-aware routing).
  std::int64_t cached_prefix_tokens(std::int64_t prefix_id) const;
  std::int64_t kv_blocks() const { return kv_blocks_; }
  std::int64_t used_blocks() const { return used_blocks_; }
  const ReplicaStats& stats() const { return stats_; }
  /// Closes the block-seconds integral at `now_s`.
  void close(double now_s);

 private:
  struct Sequence;
  struct CachedPrefix {
    std::int64_t tokens = 0;  // cached, a whole number of blocks
    int users = 0;            // running sequences reading it
    std::list<std::int64_t>::iterator lru;
  };

  /// `record` arrives here: a new sequence for it, or (rejected) nullptr after reporting it.
  std::unique_ptr<Sequence> accept(RequestRecord& record, Rejection rejection);
  void maybe_schedule();
  void run_iteration();
  /// Adds this iteration's drawn variability to `cost` and stretches it by a slow
  /// accelerator's speed at `now` (s), counting what each cause added; returns its wall time.
  double apply_faults(IterationCost& cost, const DrawnIteration& drawn, double now);
  void finish_iteration();
  bool admit(Sequence& s, std::int64_t budget, std::vector<BatchEntry>& batch);
  /// New sequences join while fewer than max_sequences are running, whether or not the running
  /// ones are in this iteration's batch (vLLM's SchedulingBudget counts the running sequences,
  /// V1 its running requests): under prefill_first the decoding sequences are not in a batch of
  /// prompts, and counting only the batch admitted every waiting prompt at once. FCFS: the first
  /// that does not fit ends the admissions, except one waiting for an async tier load, which is
  /// passed over (vLLM V1 skips a request whose KV is still arriving).
  void admit_waiting(std::int64_t& budget);
  /// A new sequence's prefix in a tier beyond what HBM gave it: loaded now (blocking: its time
  /// joins this iteration) or started (async: it waits for the copy). False when the blocks
  /// for it are not free (the lookup is undone by the caller).
  bool load_from_tier(Sequence& s);
  /// Adds an estimate of the prefill time `tokens` loaded from `tier` avoided.
  void count_prefill_avoided(int tier, std::int64_t tokens);
  /// Undoes a new sequence's cache lookup (HBM hit and tier load): it found no room.
  void undo_lookup(Sequence& s);
  // A prefix of its prompt cached here (prefix caching): its blocks are shared, its tokens computed.
  void lookup_prefix(Sequence& s);
  // A pulled KV cache (set_pull_kv): takes the prompt's blocks and asks for what is not cached
  // here; nothing taken (ready_ps stays -1) when the blocks do not fit.
  void start_pull(Sequence& s);
  bool grow(Sequence& s, std::int64_t kv_after);
  /// Preempts the most recently admitted running sequence (vLLM's victim).
  void preempt_last();
  void release(Sequence& s, bool keep_prefix);
  std::int64_t blocks_for(std::int64_t tokens) const;
  bool take_blocks(std::int64_t blocks);
  bool evict_prefix(std::int64_t needed);
  double now_s() const;

  int index_;
  ReplicaRole role_;
  IterationCostModel* cost_;
  IterationCostModel* draft_;
  std::vector<BatchEntry> draft_batch_;
  SchedulerSpec scheduler_;
  SpeculativeSpec speculative_;
  std::int64_t kv_blocks_;
  double kv_bytes_per_token_;
  double host_bytes_per_s_;
  bool exact_cost_;

  platform::Session* session_ = nullptr;
  ReplicaEvents events_;
  // Tracing (session_->trace() set): the running iteration's start and batch.
  int first_accelerator_ = -1;
  engine::TimePs iteration_start_ps_ = 0;
  std::int64_t iteration_prefill_ = 0, iteration_decode_ = 0;
  int iteration_sequences_ = 0;
  void trace_kv_cache() const;
  engine::Profile speed_;
  bool constant_speed_ = true;
  std::optional<IterationVariability> variability_;
  double straggler_speed_ = 1;
  bool down_ = false;
  engine::EventId iteration_end_;
  engine::TimePs iteration_end_ps_ = 0;  // planned: the closed-form end
  double iteration_duration_s_ = 0;
  // Collectives on the scale-out fabric (set_fabric_groups): those of the running iteration,
  // the next to start, and a generation that a failure advances (late completions are dropped).
  std::vector<std::vector<int>> fabric_groups_;
  std::vector<GroupTraffic> traffic_;  // the iteration's collectives (scratch for the cost model)
  std::vector<GroupTraffic> fabric_;
  std::size_t fabric_next_ = 0;
  std::uint64_t iteration_generation_ = 0;
  void run_fabric(std::uint64_t generation);
  bool busy_ = false;
  bool held_ = false;
  bool pull_kv_ = false;
  std::int64_t active_blocks_ = 0;

  std::deque<std::unique_ptr<Sequence>> waiting_;   // FCFS; preempted ones go to the front
  // Requests submitted while the instance decodes that its scheduler has not taken in yet
  // (SchedulerSpec::recv_interval), and the weight of the iterations since it last did.
  std::deque<std::unique_ptr<Sequence>> inbox_;
  int since_receive_ = 0;
  void receive();
  void enqueue(std::unique_ptr<Sequence> s);
  std::vector<std::unique_ptr<Sequence>> running_;  // admitted (prefilling or decoding), arrival order
  std::unordered_map<RequestRecord*, std::unique_ptr<Sequence>> transferring_;  // prefill pool: KV being sent
  std::vector<BatchEntry> batch_;
  std::vector<Sequence*> batch_sequences_;
  double iteration_swap_s_ = 0;
  double iteration_load_s_ = 0;  // blocking tier loads of this iteration
  std::optional<KvTierStore> tiers_;
  TierWrite tier_write_ = TierWrite::write_through;
  TierLoad tier_load_ = TierLoad::async;
  // async: a flow network of one link per tier (the accelerator's own), bound at start()
  std::unique_ptr<topologies::FlowNetwork> tier_links_;
  platform::MemoryPoolRuntime* memory_pools_ = nullptr;
  std::vector<int> pool_accelerators_;
  std::uint64_t load_generation_ = 0;  // a failure advances it: loads still arriving are dropped
  /// Loads `tokens` of `s`'s prefix from the shared pool tier `tier`: flows, `s` ready when all
  /// have arrived.
  void load_from_pool(Sequence& s, int tier, std::int64_t tokens);
  std::int64_t used_blocks_ = 0, cached_blocks_ = 0, outstanding_ = 0;
  double last_change_s_ = 0;
  std::unordered_map<std::int64_t, CachedPrefix> prefixes_;
  std::list<std::int64_t> prefix_lru_;  // front: least recently used
  std::mt19937_64 acceptance_rng_;
  // Inter-token gaps of this iteration, run-length encoded (most decodes share one gap).
  double pending_gap_ = -1, pending_count_ = 0;
  ReplicaStats stats_;
};

}  // namespace clustersim::serving
