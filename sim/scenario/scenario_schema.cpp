#include "sim/scenario/scenario_schema.hpp"

#include "models/accelerator/accelerator_keys.hpp"
#include "models/comm/comm_keys.hpp"
#include "models/llm/transformer_keys.hpp"
#include "models/power/power_keys.hpp"
#include "sim/scenario/workload_kinds.hpp"
#include "topologies/topology_keys.hpp"

namespace clustersim::scenario {
namespace {

using config::Declarations;
using config::Dimension;
using config::Field;
using config::member;
using platform::ClusterSpec;
using platform::PlatformSpec;

/// `base`: what a derived preset (an accelerator, a model) builds on.
Field base_field(const char* section) {
  return config::string_field("base", std::string("a preset this one derives from (the scenario's `") + section +
                                          ":` map, then the library): every key not set here keeps the base's value");
}

Declarations<platform::Stragglers> straggler_keys() {
  Declarations<platform::Stragglers> keys;
  keys.integer_list("nodes", &platform::Stragglers::nodes, "straggler node", 0, 1e7,
                    "node indices whose accelerators are slow in every step (needs simulation.mode: full)");
  keys.number("compute_speed", &platform::Stragglers::compute_speed,
              "their compute speed as a fraction of nominal (0.9: 10 % slower)")
      .positive()
      .range(0, 1);
  keys.number("probability", &platform::Stragglers::probability,
              "per node and step: the chance that the node is slow for that step, drawn afresh each of "
              "simulation.iterations (both modes); serving: the chance that a node is slow for the whole run "
              "(docs/reliability.md, Faults)")
      .range(0, 1);
  return keys;
}

Declarations<platform::MemoryPoolSpec> memory_pool_keys() {
  using M = platform::MemoryPoolSpec;
  Declarations<M> keys;
  keys.integer("accelerators", &M::accelerators,
               "accelerators sharing one pool, consecutive (node-major): one pool per this many; within a node it "
               "divides per_node, across nodes it is a multiple of it; 0: no pool (capacity, bandwidth and "
               "link_bandwidth are then needed)")
      .range(0, 1e7);
  keys.quantity("capacity", &M::capacity_bytes, Dimension::bytes, "memory of one pool").positive().optional();
  keys.quantity("bandwidth", &M::bytes_per_s, Dimension::bytes_per_s,
                "the pool's port, each direction: its memory or its links together, shared by its accelerators")
      .positive()
      .optional();
  keys.quantity("link_bandwidth", &M::link_bytes_per_s, Dimension::bytes_per_s,
                "one accelerator's link to the pool, each direction")
      .positive()
      .optional();
  keys.quantity("latency", &M::latency_s, Dimension::seconds, "setup of one transfer");
  return keys;
}

Declarations<platform::VariabilitySpec> variability_keys() {
  using V = platform::VariabilitySpec;
  Declarations<V> keys;
  const std::string lognormal = ": coefficient of variation (std / mean) of a lognormal factor of mean 1; 0: none";
  keys.number("gemm_cv", &V::gemm_cv, "GEMM kernel time" + lognormal).range(0, 10);
  keys.number("attention_cv", &V::attention_cv, "attention kernel time" + lognormal).range(0, 10);
  keys.number("elementwise_cv", &V::elementwise_cv,
              "every other kernel's time (norms, activations, optimizer)" + lognormal)
      .range(0, 10);
  keys.number("device_cv", &V::device_cv,
              "a rank's speed over one step (one factor on all its kernels: a slower part, a clock held down by "
              "the power limit)" + lognormal)
      .range(0, 10);
  keys.number("network_cv", &V::network_cv,
              "each collective's or pipeline transfer's time, communication kernels included (one draw per "
              "collective)" + lognormal)
      .range(0, 10);
  keys.number("host_noise_rate", &V::host_noise_rate_per_s,
              "host/OS interruptions per second of a rank's compute (Poisson, 1/s); 0: none")
      .range(0, 1e9);
  keys.quantity("host_noise_delay", &V::host_noise_delay_s, Dimension::seconds,
                "how long one host/OS interruption delays the kernel it hits");
  return keys;
}

Declarations<models::FailureSpec> failure_keys() {
  using F = models::FailureSpec;
  Declarations<F> keys;
  keys.boolean("enabled", &F::enabled,
               "training: report the goodput of a long run under failures, checkpoints and restarts; serving: "
               "instances fail at these rates, are down for restart_time and their requests are prefilled again "
               "(docs/reliability.md, Faults)");
  const std::string source = " (default: Llama 3, Meta 2024, Table 5: 16,384 H100s, 54 days)";
  keys.quantity("gpu_mtbf", &F::gpu_mtbf_s, Dimension::seconds,
                "mean time between interruptions caused by one GPU (faulty GPU, HBM, SRAM, GSP, SDC, thermal)" +
                    source);
  keys.quantity("host_mtbf", &F::host_mtbf_s, Dimension::seconds,
                "... by one host (maintenance, SSD, power supply, chassis, IO board, CPU, DRAM)" + source);
  keys.quantity("nic_mtbf", &F::nic_mtbf_s, Dimension::seconds, "... by one scale-out NIC" + source);
  keys.quantity("network_mtbf", &F::network_mtbf_s, Dimension::seconds,
                "... by the switches and cables, per GPU attached" + source);
  keys.quantity("software_mtbf", &F::software_mtbf_s, Dimension::seconds,
                "... by software (bugs, NCCL watchdog timeouts, dependencies), per GPU" + source);
  keys.quantity("checkpoint_interval", &F::checkpoint_interval_s, Dimension::seconds,
                "progress between checkpoints; unset: the interval that maximises goodput")
      .optional();
  keys.quantity("storage_bandwidth", &F::storage_bytes_per_s, Dimension::bytes_per_s,
                "aggregate checkpoint write/read bandwidth of the storage (default: Llama 3's 2 TB/s, Sec. 3.3.1)");
  keys.quantity("node_bandwidth", &F::node_storage_bytes_per_s, Dimension::bytes_per_s,
                "per node checkpoint write/read bandwidth; unset: not a limit")
      .optional();
  keys.quantity("restart_time", &F::restart_s, Dimension::seconds,
                "from a failure to the job running again, before reading its checkpoint (detection, "
                "rescheduling, process start, NCCL init; a serving instance: down this long); an assumption, no "
                "published figure");
  return keys;
}

Declarations<ClusterSpec> node_keys() {
  Declarations<ClusterSpec> keys;
  keys.declare(config::string_field("accelerator",
                                    "accelerator name: the scenario's `accelerators:` map, then the library"))
      .need();
  keys.integer("per_node", member(&ClusterSpec::network, &topologies::ClusterNetworkSpec::accelerators_per_node),
               "accelerators per node")
      .range(1, 1e6);
  keys.object("scale_up", member(&ClusterSpec::network, &topologies::ClusterNetworkSpec::scale_up),
              topologies::scale_up_keys(), "scale-up domain: one node, or several nodes on one NVLink switch");
  return keys;
}

Declarations<PlatformSpec> comm_and_overlap_keys() {
  Declarations<PlatformSpec> keys;
  keys.splice(&PlatformSpec::comm, models::comm_keys());
  keys.integer("overlap_sms", &PlatformSpec::overlap_sms,
               "SMs (compute units) a communication kernel occupies while it overlaps compute (NCCL: one per "
               "channel); compute kernels then run at 1 - overlap_sms / compute_units of full speed; 0: no slowdown")
      .range(0, 1e6);
  return keys;
}

Declarations<platform::ResourceLimits> limits_keys() {
  Declarations<platform::ResourceLimits> keys;
  keys.quantity("memory", &platform::ResourceLimits::memory_bytes, Dimension::bytes,
                "memory the run may use: a cluster whose network would need more (estimated from its nodes and "
                "links before anything is built) is refused with the estimate and the nodes that fit; unset: 80 % "
                "of this machine's physical memory")
      .range(0, 1e18)
      .optional();
  keys.integer("events", &platform::ResourceLimits::events,
               "events one run may fire: past it the run stops with the simulated time it reached; a training step "
               "whose tasks alone need more (each ends in an event) is refused before it runs, with the estimate")
      .range(1, 9.0e18);
  return keys;
}

Declarations<Scenario> simulation_keys() {
  Declarations<Scenario> keys;
  keys.enumeration("fidelity", member(&Scenario::simulation, &platform::SessionOptions::fidelity),
                   platform::fidelity_names(), "network model fidelity");
  keys.enumeration("mode", member(&Scenario::simulation, &platform::SessionOptions::mode),
                   platform::simulation_mode_names(), "which ranks are simulated");
  keys.integer("seed", member(&Scenario::simulation, &platform::SessionOptions::seed), "random seed").range(0, 9.0e18);
  keys.integer("iterations", member(&Scenario::simulation, &platform::SessionOptions::iterations),
               "training steps to simulate with fresh draws of simulation.variability and of the stragglers' "
               "probability: step time p50, p99, max and the share lost to each cause")
      .range(1, 1e6);
  keys.object("variability", member(&Scenario::simulation, &platform::SessionOptions::variability),
              variability_keys(), "kernel, host and network timing variability (training; none by default)");
  keys.object("failures", member(&Scenario::simulation, &platform::SessionOptions::failures), failure_keys(),
              "component failures, checkpoints and restarts: the goodput of a training run");
  keys.object("limits", member(&Scenario::simulation, &platform::SessionOptions::limits), limits_keys(),
              "what a run may use: it stops early, with an estimate and a suggestion, rather than swap or be killed");
  keys.object("comm", &Scenario::platform, comm_and_overlap_keys(),
              "collective-library tunables (defaults: calibrated on nccl-tests, docs/validation.md)");
  keys.string("kernel_stack", member(&Scenario::platform, &PlatformSpec::kernel_stack),
              "software stack and release whose measured kernel efficiencies replace the accelerator presets' "
              "(models/data/stacks, `clustersim list stacks`; docs/models.md \"Kernel stacks\"): e.g. cublaslt-13.0, "
              "hipblaslt-rocm-6.3; an accelerator the stack does not cover keeps its preset's (a warning); preset = "
              "each preset's best-shape burst (MAMF), the default for every framework");
  keys.file("calibration", member(&Scenario::platform, &PlatformSpec::calibration_path),
            "kernel measurements of the scenario's accelerator, and of a serving pool's own (a calibration-format CSV, "
            "docs/calibration-format.md, "
            "or a folder of them, e.g. what validation/kernels/run.sh wrote), relative to this file: the compute "
            "model costs GEMMs, attention and bandwidth-bound ops from them (measured table, then a fit, then the "
            "roofline) for every workload; attention rows are taken as the family the workload runs; unset: the "
            "roofline");
  return keys;
}

Declarations<PlatformSpec> power_keys() {
  Declarations<PlatformSpec> keys;
  keys.boolean("apply_throttling", &PlatformSpec::apply_throttling,
               "slow compute by the TDP throttle factor (default: report it only)");
  keys.splice(member(&PlatformSpec::cluster, &ClusterSpec::power), models::platform_power_keys());
  return keys;
}

Declarations<OutputConfig> output_keys() {
  Declarations<OutputConfig> keys;
  keys.string("dir", &OutputConfig::dir,
              "folder for result.json and manifest.json (relative to the working directory), as `run --out`, "
              "which wins over it; unset: print only");
  return keys;
}

}  // namespace

std::vector<Field> accelerator_preset_fields() {
  std::vector<Field> fields{base_field("accelerators")};
  for (Field& field : models::accelerator_keys().fields()) fields.push_back(std::move(field));
  return fields;
}

std::vector<Field> model_fields() {
  std::vector<Field> fields{base_field("models")};
  for (Field& field : models::transformer_keys().fields()) fields.push_back(std::move(field));
  return fields;
}

const Declarations<ClusterSpec>& cluster_keys() {
  static const Declarations<ClusterSpec> keys = [] {
    Declarations<ClusterSpec> k;
    k.integer("nodes", member(&ClusterSpec::network, &topologies::ClusterNetworkSpec::nodes), "number of nodes")
        .range(1, 1e7)
        .need();
    k.object("node", node_keys(), "one node").need();
    k.object("network", member(&ClusterSpec::network, &topologies::ClusterNetworkSpec::scale_out),
             topologies::scale_out_keys(), "scale-out fabric between nodes")
        .need();
    k.enumeration("placement", &ClusterSpec::placement, platform::placement_names(),
                  "rank to accelerator mapping: packed = rank r on accelerator r; scattered = round-robin over "
                  "nodes, rank r on node (r mod nodes), slot floor(r / nodes)");
    k.object("memory_pool", &ClusterSpec::memory_pool, memory_pool_keys(),
             "memory pools shared by groups of accelerators (a CXL memory box, a Grace CPU's LPDDR): KV-cache tier "
             "`pool` of a serving workload, `memory.offload_target: pool` of training");
    k.object("stragglers", &ClusterSpec::stragglers, straggler_keys(),
             "slow nodes: listed ones (training: needs simulation.mode: full) or random ones per step (serving: per "
             "run) with probability");
    return k;
  }();
  return keys;
}

Field workload_field(const WorkloadKinds& kinds, const WorkloadKind& kind, std::string key, std::string help,
                     bool job) {
  std::vector<std::string> names;
  for (const WorkloadKind& k : kinds.all()) {
    if (job ? k.can_be_job : k.can_be_primary) names.push_back(k.name);
  }
  std::vector<Field> fields;
  Field kind_field = config::enum_field("kind", names, "workload kind");
  if (!job) kind_field.default_text = kinds.all().front().name;
  fields.push_back(std::move(kind_field));
  fields.insert(fields.end(), kind.fields.begin(), kind.fields.end());
  return config::object_field(std::move(key), std::move(fields), std::move(help));
}

Declarations<Scenario> scenario_keys(const WorkloadKinds& kinds, std::string_view primary_kind) {
  const WorkloadKind* primary = kinds.find(primary_kind);
  if (primary == nullptr) primary = &kinds.all().front();
  Declarations<Scenario> keys;
  keys.integer("schema_version", &Scenario::schema_version, "scenario format version").range(1, 1).need();
  keys.string("name", &Scenario::name, "scenario name").need();
  keys.string("description", &Scenario::description, "free text");
  keys.declare(config::list_field("include",
                                  "files merged underneath this one (relative to this file, then the library)"));
  keys.declare(config::string_field("base", "a system preset (models/data/systems) this file builds on: merged "
                                            "underneath it, before its includes (a system file may say it too)"));
  keys.declare(config::map_field("accelerators", accelerator_preset_fields(),
                                 "accelerator presets by name; an entry named like a library preset overrides its "
                                 "fields, an entry with `base` derives from another preset"));
  keys.declare(config::map_field("models", model_fields(),
                                 "model presets by name; an entry named like a library preset overrides its fields, "
                                 "an entry with `base` derives from another preset"));
  keys.object("cluster", member(&Scenario::platform, &PlatformSpec::cluster), cluster_keys(), "the hardware").need();
  keys.declare(workload_field(kinds, *primary, "workload", "what runs on the cluster: its keys are those of its kind",
                              false))
      .need();
  keys.declare(config::open_map_field("jobs",
                                      "other jobs sharing the platform with the workload, by name; each has a `kind` "
                                      "and that kind's keys (checked against them), and is pinned to its accelerators"));
  keys.object("simulation", simulation_keys(), "simulation options");
  keys.object("power", &Scenario::platform, power_keys(),
              "the accelerators' power limit, and the power of the NICs, switches and nodes beyond the "
              "accelerators (defaults: estimates, docs/models.md)");
  keys.object("cost", member(&Scenario::platform, &PlatformSpec::cost), models::cost_keys(),
              "prices for the cost report (unset: no cost)");
  keys.object("output", &Scenario::output, output_keys(), "outputs");
  Field sweep = config::object_field(
      "sweep", {},
      "points to run with `clustersim sweep` (docs/sweeps.md): `grid` (key path -> list of values, their Cartesian "
      "product), `zip` (groups of key path -> equally long lists, varied together), `sample` (run N points drawn "
      "from the product), `seed` (the sample's draw; default simulation.seed), `pareto` (`maximize` and `minimize` "
      "result columns); `clustersim run` ignores the block with a warning");
  sweep.open = true;
  keys.declare(std::move(sweep));
  return keys;
}

config::Schema scenario_schema(const WorkloadKinds& kinds, std::string_view primary_kind) {
  config::Schema schema;
  schema.title = "Scenario reference";
  schema.fields = scenario_keys(kinds, primary_kind).fields();
  return schema;
}

std::string scenario_reference_markdown(const WorkloadKinds& kinds) {
  std::string out = config::render_markdown(scenario_schema(kinds, kinds.all().front().name));
  for (const WorkloadKind& kind : kinds.all()) {
    if (&kind == &kinds.all().front()) continue;
    config::Schema schema;
    schema.title = "";
    const std::string where = kind.can_be_primary ? "workload" : "jobs.<name>";
    schema.fields = {workload_field(kinds, kind, where, kind.help, !kind.can_be_primary)};
    std::string section = config::render_markdown(schema);
    section = section.substr(section.find("## "));
    const std::string heading = "## `" + where + "`";
    section.replace(0, heading.size(), heading + " with `kind: " + kind.name + "`");
    out += section;
  }
  return out;
}

}  // namespace clustersim::scenario
