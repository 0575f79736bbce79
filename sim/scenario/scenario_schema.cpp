#include "sim/scenario/scenario_schema.hpp"

namespace clustersim::scenario {

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
                    quantity_field("l2", Dimension::bytes, "last-level cache size").def("0 B")},
                   "memory hierarchy")
          .need(),
      integer_field("compute_units", "SMs / CUs / cores, for wave quantization").range(1, 1e6).need(),
      object_field("power",
                   {quantity_field("tdp", Dimension::watts, "thermal design power (unset: unknown)"),
                    quantity_field("idle", Dimension::watts, "idle power (unset: unknown)")},
                   "board power"),
      object_field("efficiency",
                   {number_field("matmul", "best large-GEMM fraction of peak").positive().range(0, 1).def("0.8"),
                    number_field("memory", "STREAM fraction of HBM peak").positive().range(0, 1).def("0.85")},
                   "achievable fractions of peak (public microbenchmarks)"),
      quantity_field("kernel_launch", Dimension::seconds, "fixed cost of one kernel launch").def("4 us"),
      object_field("gemm_tile",
                   {integer_field("m", "GEMM output tile rows per compute unit").range(1, 65536).def("128"),
                    integer_field("n", "GEMM output tile columns per compute unit").range(1, 65536).def("256")},
                   "GEMM tile for tile and wave quantization"),
      quantity_field("scale_up_bandwidth", Dimension::bytes_per_s,
                     "scale-up (NVLink) bandwidth per accelerator, one direction")
          .positive(),
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
      enum_field("hidden_act", {"gelu", "gelu_new", "silu", "swiglu"},
                 "MLP activation: silu/swiglu = gated 3-matrix MLP, gelu = 2-matrix MLP")
          .def("gelu"),
      boolean_field("tie_word_embeddings", "LM head shares the embedding matrix").def("false"),
  };
}

Schema scenario_schema() {
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
                    quantity_field("latency", Dimension::seconds, "accelerator to accelerator").def("1 us")},
                   "scale-up domain inside a node"),
  };
  std::vector<Field> network_fields{
      enum_field("topology", {"fat-tree", "switch"}, "scale-out topology").def("fat-tree"),
      integer_field("tiers", "fat-tree tiers").range(1, 3).def("2"),
      integer_field("radix", "switch ports").range(2, 1e6).def("64"),
      number_field("oversubscription", "leaf downlink:uplink bandwidth ratio").range(1, 1e6).def("1"),
      object_field("nic",
                   {integer_field("per_node", "NICs per node; unset: cluster.node.per_node").range(1, 1e6),
                    quantity_field("bandwidth", Dimension::bytes_per_s, "per NIC, one direction")
                        .positive()
                        .need()},
                   "network interfaces")
          .need(),
      object_field("link", {quantity_field("latency", Dimension::seconds, "per hop").def("1 us")},
                   "scale-out links"),
  };
  std::vector<Field> parallelism_fields{
      integer_field("tp", "tensor parallel degree").range(1, 1e6).def("1"),
      integer_field("pp", "pipeline parallel stages").range(1, 1e6).def("1"),
      integer_field("dp", "data parallel replicas; unset: accelerators / (tp x pp x cp)").range(1, 1e9),
      integer_field("cp", "context parallel degree").range(1, 1e6).def("1"),
      integer_field("ep", "expert parallel degree").range(1, 1e6).def("1"),
      integer_field("vp", "virtual pipeline chunks per stage (interleaved schedule)").range(1, 1e6).def("1"),
      boolean_field("sequence_parallel", "Megatron sequence parallelism").def("true"),
      enum_field("schedule", {"1f1b", "gpipe", "interleaved"}, "pipeline schedule").def("1f1b"),
      integer_field("zero", "ZeRO stage").range(0, 3).def("1"),
  };
  std::vector<Field> workload_fields{
      enum_field("kind", {"training", "serving"}, "workload kind").def("training"),
      string_or_object_field("model", model_fields(),
                             "model name (the scenario's `models:` map, then the library) or inline "
                             "Hugging Face fields")
          .need(),
      integer_field("seq_len", "tokens per sequence").range(1, 1e9).need(),
      integer_field("global_batch", "sequences per optimizer step").range(1, 1e12).need(),
      integer_field("micro_batch", "sequences per micro-batch").range(1, 1e9).def("1"),
      enum_field("precision", {"fp32", "tf32", "bf16", "fp16", "fp8"}, "math precision").def("bf16"),
      object_field("parallelism", parallelism_fields, "parallel split"),
      enum_field("recompute", {"none", "selective", "full"}, "activation recomputation").def("selective"),
      enum_field("attention", {"flash", "unfused"}, "attention kernel").def("flash"),
      boolean_field("overlap_grad_reduce", "DP gradient reduction overlaps backward").def("true"),
      enum_field("gradient_reduce_dtype", {"bf16", "fp32"}, "gradient element type in the DP reduction")
          .def("bf16"),
  };
  std::vector<Field> simulation_fields{
      enum_field("fidelity", {"analytical", "flow"}, "network model fidelity").def("analytical"),
      enum_field("mode", {"symmetric", "full"}, "which ranks are simulated").def("symmetric"),
      integer_field("seed", "random seed").range(0, 9.0e18).def("1"),
      object_field("comm",
                   {quantity_field("step_latency", Dimension::seconds, "per ring step software latency")
                        .def("2 us"),
                    number_field("bandwidth_efficiency", "achieved fraction of link bandwidth")
                        .positive()
                        .range(0, 1)
                        .def("0.85")},
                   "collective-library tunables"),
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
                    object_field("network", network_fields, "scale-out fabric between nodes").need()},
                   "the hardware")
          .need(),
      object_field("workload", workload_fields, "what runs on the cluster").need(),
      object_field("simulation", simulation_fields, "simulation options"),
      object_field("output", {string_field("dir", "output folder; unset: print only")}, "outputs"),
  };
  return schema;
}

std::string scenario_reference_markdown() { return render_markdown(scenario_schema()); }

}  // namespace clustersim::scenario
