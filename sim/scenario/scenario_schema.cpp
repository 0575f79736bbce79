#include "sim/scenario/scenario_schema.hpp"

#include "sim/scenario/workload_kinds.hpp"

namespace clustersim::scenario {

using config::Dimension;
using config::Field;
using config::Schema;
using config::boolean_field;
using config::enum_field;
using config::integer_field;
using config::list_field;
using config::map_field;
using config::number_field;
using config::object_field;
using config::open_map_field;
using config::quantity_field;
using config::render_markdown;
using config::string_field;

std::vector<Field> accelerator_preset_fields() {
  auto peak = [](const char* format) {
    return quantity_field(format, Dimension::flops_per_s,
                          std::string("dense ") + format + " matrix-unit peak; omit if the chip lacks it")
        .positive();
  };
  return {
      string_field("display_name", "human-readable name, e.g. \"NVIDIA H100 SXM5 80GB\""),
      enum_field("vendor", {"nvidia", "amd", "google", "intel"}, "chip vendor"),
      string_field("source", "where the figures come from"),
      object_field("peak", {peak("fp32"), peak("tf32"), peak("bf16"), peak("fp16"), peak("fp8"), peak("fp4")},
                   "dense matrix-unit peaks per numeric format")
          .need(),
      quantity_field("vector_fp32", Dimension::flops_per_s, "non-matrix (CUDA-core) fp32 peak")
          .positive()
          .need(),
      object_field("memory",
                   {quantity_field("hbm_capacity", Dimension::bytes, "device memory capacity").positive().need(),
                    quantity_field("hbm_bandwidth", Dimension::bytes_per_s, "device memory peak bandwidth")
                        .positive()
                        .need(),
                    quantity_field("l2", Dimension::bytes, "last-level cache size").def("0 B"),
                    quantity_field("l2_bandwidth", Dimension::bytes_per_s,
                                   "L2 read bandwidth; unset: no L2 reuse (working sets read at HBM bandwidth)")
                        .positive(),
                    quantity_field("l2_latency", Dimension::seconds, "L2 load-to-use latency").def("200 ns"),
                    quantity_field("hbm_latency", Dimension::seconds, "HBM load-to-use latency").def("500 ns"),
                    quantity_field("sram", Dimension::bytes, "shared memory / SRAM, all compute units together")
                        .positive(),
                    quantity_field("sram_bandwidth", Dimension::bytes_per_s, "shared memory bandwidth, all units")
                        .positive(),
                    enum_field("host_link", {"pcie", "c2c"}, "how host DRAM is attached").def("pcie"),
                    quantity_field("host_capacity", Dimension::bytes, "host DRAM per accelerator").positive(),
                    quantity_field("host_bandwidth", Dimension::bytes_per_s,
                                   "host link bandwidth per accelerator, one direction; unset: no offload")
                        .positive(),
                    quantity_field("host_latency", Dimension::seconds, "host transfer setup latency").def("2 us"),
                    quantity_field("cxl_capacity", Dimension::bytes, "pooled CXL memory per accelerator").positive(),
                    quantity_field("cxl_bandwidth", Dimension::bytes_per_s, "CXL bandwidth per accelerator").positive(),
                    quantity_field("cxl_latency", Dimension::seconds, "CXL transfer setup latency").def("3 us"),
                    object_field("energy",
                                 {quantity_field("sram", Dimension::joules, "per byte read from SRAM").def("1 pJ"),
                                  quantity_field("l2", Dimension::joules, "per byte read from L2").def("5 pJ"),
                                  quantity_field("hbm", Dimension::joules, "per byte moved to/from HBM").def("31 pJ"),
                                  quantity_field("host", Dimension::joules, "per byte over the host link").def("120 pJ"),
                                  quantity_field("cxl", Dimension::joules, "per byte to/from CXL").def("120 pJ")},
                                 "dynamic energy per byte at each level (defaults: estimates, docs/models.md)")},
                   "memory hierarchy")
          .need(),
      integer_field("compute_units", "SMs / CUs / cores, for wave quantization").range(1, 1e6).need(),
      object_field("power",
                   {quantity_field("tdp", Dimension::watts, "thermal design power (unset: unknown)"),
                    quantity_field("idle", Dimension::watts, "idle power (unset: unknown)"),
                    object_field("energy_per_flop",
                                 {quantity_field("fp32", Dimension::joules, "per fp32 FLOP"),
                                  quantity_field("tf32", Dimension::joules, "per tf32 FLOP"),
                                  quantity_field("bf16", Dimension::joules, "per bf16 FLOP"),
                                  quantity_field("fp16", Dimension::joules, "per fp16 FLOP"),
                                  quantity_field("fp8", Dimension::joules, "per fp8 FLOP"),
                                  quantity_field("fp4", Dimension::joules, "per fp4 FLOP")},
                                 "dynamic energy per FLOP; unset: 0.8 x (tdp - idle) / (matmul efficiency x peak)")},
                   "board power"),
      object_field("efficiency",
                   {number_field("matmul", "best large-GEMM fraction of peak").positive().range(0, 1).def("0.8"),
                    number_field("matmul_fp32", "best fp32 GEMM fraction of the fp32 peak; unset: matmul")
                        .positive()
                        .range(0, 1),
                    number_field("matmul_tf32", "best tf32 GEMM fraction of the tf32 peak; unset: matmul")
                        .positive()
                        .range(0, 1),
                    number_field("matmul_bf16", "best bf16 GEMM fraction of the bf16 peak; unset: matmul")
                        .positive()
                        .range(0, 1),
                    number_field("matmul_fp16", "best fp16 GEMM fraction of the fp16 peak; unset: matmul")
                        .positive()
                        .range(0, 1),
                    number_field("matmul_fp8", "best fp8 GEMM fraction of the fp8 peak; unset: matmul")
                        .positive()
                        .range(0, 1),
                    number_field("matmul_fp4", "best fp4 GEMM fraction of the fp4 peak; unset: matmul")
                        .positive()
                        .range(0, 1),
                    number_field("memory", "STREAM fraction of HBM peak").positive().range(0, 1).def("0.85")},
                   "achievable fractions of peak (public microbenchmarks)"),
      quantity_field("kernel_launch", Dimension::seconds, "fixed cost of one kernel launch").def("4 us"),
      integer_field("fp8_promotion_interval",
                    "K elements between promotions of the fp8 MMA accumulator to fp32 on the vector cores in "
                    "precise-accumulation GEMMs; 0: full-precision fp8 accumulation")
          .range(0, 1048576)
          .def("0"),
      object_field("attention",
                   {enum_field("kernel", {"fa2", "fa3", "cudnn"},
                               "fused-attention family frameworks run here (workload.attention: flash): fa2 = "
                               "warp-level MMA, softmax not overlapped (FlashAttention-2); fa3 = full-rate MMA "
                               "overlapped with softmax (FlashAttention-3); cudnn = full-rate MMA, softmax not "
                               "hidden (cuDNN fused attention, Transformer Engine's choice on Hopper). fa3 or cudnn "
                               "here also allows the other two")
                        .def("fa2"),
                    number_field("warp_mma_fraction",
                                 "fraction of the matrix peak warp-level MMA (mma.sync, used by fa2) reaches; 1 "
                                 "where it is the full path")
                        .positive()
                        .range(0, 1)
                        .def("1"),
                    number_field("softmax_overlap",
                                 "fa3: fraction of the softmax time hidden under the matrix work (1: ideal "
                                 "overlap, time = max; 0: none, time = matmul + softmax)")
                        .range(0, 1)
                        .def("1"),
                    quantity_field("special_function", Dimension::flops_per_s,
                                   "special-function (exp2) results per second, whole chip; unset: fused "
                                   "attention cannot be costed")
                        .positive()},
                   "fused-attention physics (docs/models.md \"Fused attention\")"),
      object_field("gemm_tile",
                   {integer_field("m", "GEMM output tile rows per compute unit").range(1, 65536).def("128"),
                    integer_field("n", "GEMM output tile columns per compute unit").range(1, 65536).def("256")},
                   "GEMM tile for tile and wave quantization"),
      quantity_field("scale_up_bandwidth", Dimension::bytes_per_s,
                     "scale-up (NVLink) bandwidth per accelerator, one direction")
          .positive(),
      object_field("collectives",
                   {boolean_field("nvls", "NVLink SHARP in the NVSwitch (NCCL's nvls algorithm)").def("false"),
                    quantity_field("ll128_bandwidth", Dimension::bytes_per_s,
                                   "ceiling of NCCL's LL128 protocol payload throughput per GPU (SM-bound); "
                                   "unset: no ceiling")
                        .positive()},
                   "what the collective library can do on this chip"),
  };
}

std::vector<Field> model_fields() {
  auto positive_int = [](const char* key, const char* help) {
    return integer_field(key, help).range(1, 1e12);
  };
  return {
      string_field("display_name", "human-readable name"),
      string_field("source", "where the figures come from (e.g. the config.json)"),
      positive_int("hidden_size", "model width").need(),
      positive_int("num_hidden_layers", "transformer layers").need(),
      positive_int("num_attention_heads", "query heads").need(),
      positive_int("num_key_value_heads", "key/value heads (GQA); unset: num_attention_heads"),
      positive_int("intermediate_size", "MLP width; unset: 4 x hidden_size (gelu only)"),
      positive_int("vocab_size", "vocabulary size").need(),
      positive_int("max_position_embeddings", "longest supported sequence"),
      boolean_field("linear_bias",
                    "linear layers and norms carry biases (GPT-2, Megatron GPT); only the count of parameter "
                    "tensors depends on it (per-tensor ZeRO-3 collectives)")
          .def("false"),
      number_field("rope_theta",
                   "rotary position embedding base; set: every layer rotates queries and keys (a fused "
                   "elementwise pass each way); unset: no RoPE")
          .positive(),
      enum_field("hidden_act", {"gelu", "gelu_new", "relu2", "silu", "swiglu"},
                 "MLP activation: silu/swiglu = gated 3-matrix MLP, gelu = 2-matrix MLP, "
                 "relu2 = squared-ReLU 2-matrix MLP (Nemotron-4)")
          .def("gelu"),
      boolean_field("tie_word_embeddings", "LM head shares the embedding matrix").def("false"),
      integer_field("num_local_experts",
                    "mixture of experts: routed experts per MoE layer (Mixtral's key; DeepSeek's is "
                    "n_routed_experts); unset: a dense model")
          .range(1, 1e6),
      integer_field("n_routed_experts", "mixture of experts: routed experts per MoE layer (DeepSeek's key)")
          .range(1, 1e6),
      integer_field("num_experts_per_tok", "routed experts each token goes to (top-k); MoE models only")
          .range(1, 1e6),
      integer_field("n_shared_experts", "experts every token goes to, each moe_intermediate_size wide; MoE only")
          .range(0, 1e6)
          .def("0"),
      positive_int("moe_intermediate_size", "FFN width of one expert; unset: intermediate_size (Mixtral)"),
      integer_field("first_k_dense_replace", "dense layers before the first MoE layer (DeepSeek-V3: 3)")
          .range(0, 1e12)
          .def("0"),
      positive_int("moe_layer_freq",
                   "layer l is MoE when l >= first_k_dense_replace and l % moe_layer_freq == 0 (Hugging Face)")
          .def("1"),
      integer_field("q_lora_rank", "multi-head latent attention (MLA): query latent width; unset or 0: queries "
                                   "not compressed")
          .range(0, 1e12),
      positive_int("kv_lora_rank", "MLA key/value latent width (what the KV cache stores); setting the MLA keys "
                                   "makes the attention MLA"),
      integer_field("qk_nope_head_dim", "MLA per-head query/key width without RoPE").range(0, 1e12),
      integer_field("qk_rope_head_dim", "MLA per-head RoPE width (one RoPE key shared by all heads)").range(0, 1e12),
      positive_int("v_head_dim", "MLA per-head value width"),
  };
}

Field workload_field(const WorkloadKinds& kinds, const WorkloadKind& kind, std::string key, std::string help,
                     bool job) {
  std::vector<std::string> names;
  for (const WorkloadKind& k : kinds.all()) {
    if (job ? k.can_be_job : k.can_be_primary) names.push_back(k.name);
  }
  std::vector<Field> fields;
  Field kind_field = enum_field("kind", names, "workload kind");
  if (!job) kind_field.default_text = kinds.all().front().name;
  fields.push_back(std::move(kind_field));
  fields.insert(fields.end(), kind.fields.begin(), kind.fields.end());
  return object_field(std::move(key), std::move(fields), std::move(help));
}

Schema scenario_schema(const WorkloadKinds& kinds, std::string_view primary_kind) {
  const WorkloadKind* primary = kinds.find(primary_kind);
  if (primary == nullptr) primary = &kinds.all().front();
  std::vector<Field> node_fields{
      string_field("accelerator", "accelerator name: the scenario's `accelerators:` map, then the library")
          .need(),
      integer_field("per_node", "accelerators per node").range(1, 1e6).def("8"),
      object_field("scale_up",
                   {enum_field("fabric", {"nvswitch"}, "scale-up fabric").def("nvswitch"),
                    quantity_field("bandwidth", Dimension::bytes_per_s,
                                   "per accelerator, one direction; unset: the accelerator's "
                                   "scale_up_bandwidth")
                        .positive(),
                    quantity_field("latency", Dimension::seconds, "accelerator to accelerator").def("1 us"),
                    number_field("efficiency",
                                 "achievable payload fraction of the bandwidth (protocol overhead, SM-driven "
                                 "copies)")
                        .positive()
                        .range(0, 1)
                        .def("0.8"),
                    integer_field("domain_size",
                                  "accelerators per NVLink domain: a multiple of per_node that divides "
                                  "the cluster, e.g. 72 for NVL72 over 18 nodes of 4; accelerators of "
                                  "one domain talk over its NVLink switch, not a NIC; unset: per_node "
                                  "(not for torus/custom)")
                        .range(1, 1e7)},
                   "scale-up domain: one node, or several nodes on one NVLink switch"),
  };
  std::vector<Field> network_fields{
      enum_field("topology", {"custom", "dragonfly", "fat-tree", "rail-optimized", "switch", "torus"},
                 "scale-out topology (`clustersim describe NAME` lists each one's parameters); torus "
                 "and custom describe the whole network: no NVSwitch, no NICs")
          .def("fat-tree"),
      enum_field("routing", {"d-mod-k", "ecmp"},
                 "equal-cost route choice: ecmp = hash of each flow (Ethernet/RoCE); d-mod-k = by the "
                 "destination alone (InfiniBand): in fat-tree, rail-optimized and switch fabrics the destination "
                 "NIC's index modulo the candidates at each hop; the DGX presets set it")
          .def("ecmp"),
      integer_field("tiers", "fat-tree tiers (rail-optimized: 2)").range(1, 3).def("2"),
      integer_field("radix", "switch ports (fat-tree, rail-optimized)").range(2, 1e6).def("64"),
      number_field("oversubscription", "leaf (rail-optimized: rail leaf) downlink:uplink port ratio")
          .range(1, 1e6)
          .def("1"),
      number_field("aggregation_oversubscription",
                   "3-tier fat-tree: aggregation downlink:uplink port ratio")
          .range(1, 1e6)
          .def("1"),
      list_field("dims", "torus: size of each dimension, 1 to 3 integers >= 1 (e.g. [4, 4, 4]) whose "
                         "product is the accelerator count; accelerator a sits at x0 = a mod d0, "
                         "x1 = (a / d0) mod d1, ..."),
      integer_field("groups", "dragonfly: number of groups").range(1, 1e6),
      integer_field("routers_per_group", "dragonfly: routers per group (all-to-all local links)")
          .range(1, 1e6),
      integer_field("terminals_per_router", "dragonfly: NIC ports per router").range(1, 1e6),
      integer_field("global_links_per_router",
                    "dragonfly: inter-group ports per router; routers_per_group x this >= groups - 1")
          .range(0, 1e6),
      string_field("file", "custom: edge-list file, relative to the file that sets it; lines "
                           "`a,b,bytes_per_s,latency_s` over vertices gpu0..gpuN-1 and named switches"),
      object_field("nic",
                   {integer_field("per_node", "NICs per node; unset: cluster.node.per_node").range(1, 1e6),
                    quantity_field("bandwidth", Dimension::bytes_per_s, "per NIC, one direction")
                        .positive()
                        .need(),
                    number_field("efficiency",
                                 "achievable payload fraction of every scale-out link (NIC, switch, torus "
                                 "and custom links)")
                        .positive()
                        .range(0, 1)
                        .def("0.94")},
                   "network interfaces; required with more than one node, except for torus (where "
                   "nic.bandwidth is the link default) and custom"),
      object_field("link",
                   {quantity_field("latency", Dimension::seconds, "per hop").def("1 us"),
                    quantity_field("bandwidth", Dimension::bytes_per_s,
                                   "switch-to-switch link (torus: chip-to-chip ICI link), one direction; "
                                   "unset: nic.bandwidth")
                        .positive()},
                   "scale-out links"),
  };
  std::vector<Field> simulation_fields{
      enum_field("fidelity", {"analytical", "flow"}, "network model fidelity").def("analytical"),
      enum_field("mode", {"symmetric", "full"}, "which ranks are simulated").def("symmetric"),
      integer_field("seed", "random seed").range(0, 9.0e18).def("1"),
      object_field("comm",
                   {enum_field("algorithm",
                               {"auto", "ring", "tree", "halving-doubling", "hierarchical", "nvls", "sharp",
                                "torus-rings", "pairwise"},
                               "collective algorithm where it applies (elsewhere auto); auto: the fastest, as "
                               "NCCL's tuner picks")
                        .def("auto"),
                    quantity_field("ll_base_latency", Dimension::seconds,
                                   "launch + completion sync per collective, LL protocol")
                        .def("6 us"),
                    quantity_field("ll128_base_latency", Dimension::seconds,
                                   "launch + completion sync per collective, LL128 protocol")
                        .def("7 us"),
                    quantity_field("simple_base_latency", Dimension::seconds,
                                   "launch + completion sync per collective, Simple protocol (also NVLS, SHARP)")
                        .def("16 us"),
                    quantity_field("ll_step_latency", Dimension::seconds, "per algorithm step, LL protocol")
                        .def("0.6 us"),
                    quantity_field("ll128_step_latency", Dimension::seconds, "per algorithm step, LL128 protocol")
                        .def("0.9 us"),
                    quantity_field("simple_step_latency", Dimension::seconds,
                                   "per algorithm step, Simple protocol")
                        .def("12.8 us"),
                    quantity_field("nvls_step_latency", Dimension::seconds, "per NVLS step (reduce, multicast)")
                        .def("27 us"),
                    number_field("nvls_efficiency", "NVLS fraction of the achievable NVLink payload rate")
                        .positive()
                        .range(0, 1)
                        .def("0.73"),
                    boolean_field("scale_out_sharp", "SHARP in-network reduction in the scale-out switches")
                        .def("false"),
                    integer_field("overlap_sms",
                                  "SMs (compute units) a communication kernel occupies while it overlaps compute "
                                  "(NCCL: one per channel); compute kernels then run at 1 - overlap_sms / "
                                  "compute_units of full speed; 0: no slowdown")
                        .range(0, 1e6)
                        .def("16")},
                   "collective-library tunables (defaults: calibrated on nccl-tests, docs/validation.md)"),
  };
  Schema schema;
  schema.title = "Scenario reference";
  schema.fields = {
      integer_field("schema_version", "scenario format version").range(1, 1).need(),
      string_field("name", "scenario name").need(),
      string_field("description", "free text"),
      list_field("include", "files merged underneath this one (relative to this file, then the library)"),
      map_field("accelerators", accelerator_preset_fields(),
                "accelerator presets by name; an entry named like a library preset overrides its fields"),
      map_field("models", model_fields(),
                "model presets by name; an entry named like a library preset overrides its fields"),
      object_field("cluster",
                   {integer_field("nodes", "number of nodes").range(1, 1e7).need(),
                    object_field("node", node_fields, "one node").need(),
                    object_field("network", network_fields, "scale-out fabric between nodes").need(),
                    enum_field("placement", {"packed", "scattered"},
                               "rank to accelerator mapping: packed = rank r on accelerator r; scattered = "
                               "round-robin over nodes, rank r on node (r mod nodes), slot floor(r / nodes)")
                        .def("packed"),
                    object_field("stragglers",
                                 {list_field("nodes", "node indices whose accelerators are slow").need(),
                                  number_field("compute_speed",
                                               "their compute speed as a fraction of nominal (0.9: 10 % slower)")
                                      .positive()
                                      .range(0, 1)
                                      .need()},
                                 "slow nodes (needs simulation.mode: full)")},
                   "the hardware")
          .need(),
      workload_field(kinds, *primary, "workload", "what runs on the cluster: its keys are those of its kind", false)
          .need(),
      open_map_field("jobs",
                     "other jobs sharing the platform with the workload, by name; each has a `kind` and that "
                     "kind's keys (checked against them), and is pinned to its accelerators"),
      object_field("simulation", simulation_fields, "simulation options"),
      object_field("power",
                   {boolean_field("apply_throttling",
                                  "slow compute by the TDP throttle factor (default: report it only)")
                        .def("false"),
                    quantity_field("nic", Dimension::watts, "one NIC with its transceiver").def("25 W"),
                    quantity_field("switch", Dimension::watts, "one scale-out switch with its transceivers")
                        .def("1500 W"),
                    quantity_field("scale_up_energy_per_bit", Dimension::joules, "NVLink-class links").def("1.3 pJ"),
                    quantity_field("scale_out_energy_per_bit", Dimension::joules, "NIC-to-switch links").def("5 pJ")},
                   "power of the network gear and per-bit link energies (defaults: estimates, docs/models.md)"),
      object_field("cost",
                   {number_field("accelerator_hour_usd", "rental price, $ per accelerator-hour").range(0, 1e9),
                    number_field("capex_usd_per_accelerator", "purchase price per accelerator incl. its share of "
                                                              "servers and network, $")
                        .range(0, 1e12),
                    number_field("amortization_years", "straight-line lifetime of the capex").positive().def("4"),
                    number_field("electricity_usd_per_kwh", "electricity price, $ per kWh").range(0, 1e6).def("0"),
                    number_field("pue", "facility power / IT power").range(1, 10).def("1.2")},
                   "prices for the cost report (unset: no cost)"),
      object_field("output", {string_field("dir", "output folder; unset: print only")}, "outputs"),
  };
  return schema;
}

std::string scenario_reference_markdown(const WorkloadKinds& kinds) {
  std::string out = render_markdown(scenario_schema(kinds, kinds.all().front().name));
  for (const WorkloadKind& kind : kinds.all()) {
    if (&kind == &kinds.all().front()) continue;
    Schema schema;
    schema.title = "";
    const std::string where = kind.can_be_primary ? "workload" : "jobs.<name>";
    schema.fields = {workload_field(kinds, kind, where, kind.help, !kind.can_be_primary)};
    std::string section = render_markdown(schema);
    section = section.substr(section.find("## "));
    const std::string heading = "## `" + where + "`";
    section.replace(0, heading.size(), heading + " with `kind: " + kind.name + "`");
    out += section;
  }
  return out;
}

}  // namespace clustersim::scenario
