// Every scenario key is declared once: the defaults a loaded scenario gets are the structs'
// defaults, `describe` prints keys the loader accepts, enum names go through their one table,
// each cross-field rule says the same thing wherever it is checked, and --set suggestions come
// from every declared key.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/accelerator/accelerator_keys.hpp"
#include "models/llm/transformer_keys.hpp"
#include "models/llm/memory_footprint.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/scenario/training_kind.hpp"
#include "sim/training/training_job.hpp"
#include "topologies/topology_keys.hpp"

namespace scenario_keys_test {

using namespace clustersim;
using namespace clustersim::scenario;

namespace {

// Only the required keys: everything else takes its declared default.
const std::string kMinimal = R"(schema_version: 1
name: minimal
accelerators:
  bare-gpu:
    peak: {bf16: "100 TFLOP/s"}
    vector_fp32: "10 TFLOP/s"
    memory: {hbm_capacity: "80 GiB", hbm_bandwidth: "2 TB/s"}
    compute_units: 100
models:
  bare:
    hidden_size: 1024
    num_hidden_layers: 4
    num_attention_heads: 16
    vocab_size: 32000
cluster:
  nodes: 1
  node: {accelerator: bare-gpu, scale_up: {bandwidth: "100 GB/s"}}
  network: {}
workload:
  model: bare
  seq_len: 1024
  global_batch: 8
)";

const std::string kLibrary = CLUSTERSIM_DATA_DIR;

Scenario load(const std::string& yaml, const std::vector<std::string>& sets = {},
              const std::string& data_dir = kLibrary) {
  return load_scenario_from_string(yaml, "t.yaml", sets, data_dir);
}

std::vector<config::Diagnostic> problems(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    load(yaml, sets);
  } catch (const config::ScenarioError& e) {
    return e.diagnostics();
  }
  FAIL("expected ScenarioError");
  return {};
}

/// `--set PATH=DEFAULT` for every key under `fields` that has a default.
void default_overrides(const std::vector<config::Field>& fields, const std::string& prefix,
                       std::vector<std::string>& sets) {
  for (const config::Field& field : fields) {
    const std::string path = prefix.empty() ? field.key : prefix + "." + field.key;
    if (field.kind == config::FieldKind::map_of_objects) continue;  // preset maps, jobs: by name
    if (field.kind == config::FieldKind::object) default_overrides(field.fields, path, sets);
    if (!field.default_text.empty() && !field.required) sets.push_back(path + "=" + field.default_text);
  }
}

/// "a, b, c" (for messages).
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

/// Does any diagnostic say a key is unknown?
bool any_unknown_key(const std::vector<config::Diagnostic>& diagnostics) {
  for (const config::Diagnostic& d : diagnostics) {
    if (d.message.find("unknown key") != std::string::npos || d.message.find("cannot set") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::vector<config::Diagnostic> diagnostics_of(const std::string& yaml, const std::vector<std::string>& sets) {
  try {
    load(yaml, sets);
  } catch (const config::ScenarioError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace

TEST_CASE("keys: a minimal scenario gets the default-constructed structs' value for every declared default") {
  const Scenario s = load(kMinimal);
  CHECK(scenario_keys(builtin_workload_kinds(), "training").defaults_differing(s).empty());
  CHECK(training_keys().defaults_differing(s.training()).empty());
  CHECK(models::accelerator_keys().defaults_differing(s.platform.cluster.accelerator).empty());
  CHECK(models::transformer_keys().defaults_differing(s.training().model).empty());
  // The three numbers that used to disagree between the schema and the C++ structs.
  CHECK(s.platform.cluster.network.scale_up.efficiency == topologies::ScaleUpSpec{}.efficiency);
  CHECK(s.platform.cluster.network.scale_up.efficiency == 0.8);
  CHECK(s.platform.cluster.network.scale_out.efficiency == topologies::ScaleOutSpec{}.efficiency);
  CHECK(s.platform.cluster.network.scale_out.efficiency == 0.94);
  CHECK(s.training().memory.fragmentation == models::kDefaultFragmentation);
  CHECK(s.training().memory.fragmentation == models::FootprintInputs{}.fragmentation);
  CHECK(s.training().memory.workspace_bytes == models::FootprintInputs{}.workspace_bytes);
  // A value that differs is found.
  Scenario changed = s;
  changed.platform.cluster.network.scale_up.efficiency = 1.0;
  CHECK(scenario_keys(builtin_workload_kinds(), "training").defaults_differing(changed) ==
        std::vector<std::string>{"cluster.node.scale_up.efficiency"});
}

TEST_CASE("keys: writing every documented default changes nothing, bit for bit") {
  std::vector<std::string> sets;
  default_overrides(scenario_schema(builtin_workload_kinds(), "training").fields, "", sets);
  default_overrides(accelerator_preset_fields(), "accelerators.bare-gpu", sets);
  default_overrides(model_fields(), "models.bare", sets);
  // Mixture-of-experts keys on a dense model are an error even at their default (a rule).
  std::erase_if(sets, [](const std::string& set) {
    return set.find("models.bare.n_shared_experts") == 0 || set.find("models.bare.first_k_dense_replace") == 0 ||
           set.find("models.bare.moe_layer_freq") == 0 || set.find("workload.moe.") == 0;
  });
  REQUIRE(sets.size() > 80);
  const Scenario s = load(kMinimal, sets);
  CHECK(joined(scenario_keys(builtin_workload_kinds(), "training").defaults_differing(s)) == "");
  CHECK(joined(training_keys().defaults_differing(s.training())) == "");
  CHECK(joined(models::accelerator_keys().defaults_differing(s.platform.cluster.accelerator)) == "");
  CHECK(joined(models::transformer_keys().defaults_differing(s.training().model)) == "");
}

TEST_CASE("keys: every key `describe` prints is accepted by the loader") {
  const std::string base = R"(schema_version: 1
name: describe-keys
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload: {model: llama-3-8b, seq_len: 1024, global_batch: 8}
)";
  // Topologies print YAML keys (not C++ field names) under cluster.network.
  for (const auto& kind : topologies::topology_kinds()) {
    const Description d = describe(kind.name);
    CHECK(d.prefix == "cluster.network");
    std::vector<std::string> sets;
    for (const DescribedKey& row : d.keys) sets.push_back(d.prefix + "." + row.key + "=1");
    CHECK_MESSAGE(!any_unknown_key(diagnostics_of(base, sets)), kind.name);
  }
  CHECK(render_description(describe("dragonfly")).find("\n  groups ") != std::string::npos);
  CHECK(render_description(describe("dragonfly")).find("dragonfly_groups") == std::string::npos);
  CHECK(render_description(describe("fat-tree")).find("\n  nic.bandwidth ") != std::string::npos);
  CHECK(render_description(describe("torus")).find("\n  link.latency ") != std::string::npos);
  for (const std::string& name : library_names(LibraryKind::systems)) {
    const Description d = describe(name);
    std::vector<std::string> sets;
    for (const DescribedKey& row : d.keys) sets.push_back(row.key + "=1");
    CHECK_MESSAGE(!any_unknown_key(diagnostics_of(base, sets)), name);
  }
  for (const std::string& name : library_names(LibraryKind::accelerators)) {
    const Description d = describe(name);
    REQUIRE(d.prefix == "accelerators." + name);
    std::vector<std::string> sets;
    for (const DescribedKey& row : d.keys) sets.push_back(d.prefix + "." + row.key + "=1");
    CHECK_MESSAGE(!any_unknown_key(diagnostics_of(base, sets)), name);
  }
  for (const std::string& name : library_names(LibraryKind::models)) {
    // Model names may hold dots (llama-3.1-405b): the keys go in as YAML, not --set.
    const Description d = describe(name);
    std::string yaml = base + "models:\n  \"" + name + "\":\n";
    for (const DescribedKey& row : d.keys) yaml += "    " + row.key + ": 1\n";
    CHECK_MESSAGE(!any_unknown_key(diagnostics_of(yaml, {})), name);
  }
}

TEST_CASE("keys: an unknown enum name is an error listing the valid names, never a silent default") {
  const auto precision = problems(kMinimal + "  precision: bf17\n");
  REQUIRE(precision.size() == 1);
  CHECK(precision[0].render() ==
        "t.yaml:23:14: workload.precision: invalid value 'bf17' (valid choices: fp32, tf32, bf16, fp16, fp8 | did "
        "you mean 'bf16'?)");
  const auto gradient = problems(kMinimal + "  gradient_reduce_dtype: fp16\n");
  REQUIRE(gradient.size() == 1);
  CHECK(gradient[0].hint == "valid choices: bf16, fp32 | did you mean 'fp32'?");
  CHECK_THROWS_WITH_AS(models::parse_dtype("bf17"), "unknown dtype 'bf17'; valid: fp32, tf32, bf16, fp16, fp8, fp4",
                       ConfigError);
  // The reader alone (no validation) leaves the member as it is rather than guessing.
  std::vector<config::Diagnostic> diagnostics;
  config::Problems none(diagnostics);
  const config::ConfigNode mapping = config::parse_config("precision: bf17\nrecompute: most\n", "w.yaml", diagnostics);
  training::TrainingWorkload w;
  w.precision = models::Dtype::fp8;
  training_keys().read(mapping, "workload", w, none);
  CHECK(w.precision == models::Dtype::fp8);
  CHECK(w.recompute == training::Recompute::selective);
}

TEST_CASE("keys: a cross-field rule says the same thing in the loader, the simulation and the memory model") {
  const Scenario valid = load(kMinimal);
  struct Case {
    std::vector<std::pair<std::string, std::string>> edits;
    void (*mutate)(training::TrainingWorkload&);
  };
  const std::string batch = "  global_batch: 8\n";
  const std::vector<Case> cases = {
      {{{batch, batch + "  parallelism: {ep: 2}\n"}}, [](training::TrainingWorkload& w) { w.parallelism.ep = 2; }},
      {{{"hidden_size: 1024", "hidden_size: 1032"},
        {"num_attention_heads: 16", "num_attention_heads: 12"},
        {batch, batch + "  parallelism: {tp: 8}\n"}},
       [](training::TrainingWorkload& w) {
         w.model.hidden_size = 1032;
         w.model.num_attention_heads = w.model.num_key_value_heads = 12;
         w.parallelism.tp = 8;
         w.parallelism.dp = 1;
       }},
      {{{batch, "  global_batch: 7\n"}}, [](training::TrainingWorkload& w) { w.global_batch = 7; }},
      {{{"seq_len: 1024", "seq_len: 1026"}, {batch, batch + "  parallelism: {cp: 2}\n"}},
       [](training::TrainingWorkload& w) {
         w.seq_len = 1026;
         w.parallelism.cp = 2;
         w.parallelism.dp = 4;
       }},
      {{{batch, batch + "  parallelism: {vp: 2}\n"}}, [](training::TrainingWorkload& w) { w.parallelism.vp = 2; }},
  };
  for (const Case& c : cases) {
    std::string yaml = kMinimal;
    for (const auto& [from, to] : c.edits) yaml.replace(yaml.find(from), from.size(), to);
    const auto loader = problems(yaml);
    REQUIRE(loader.size() == 1);
    const std::string message = loader[0].message;
    training::TrainingWorkload w = valid.training();
    c.mutate(w);
    Scenario mutated = valid;
    mutated.set_training(w);
    CHECK_THROWS_WITH_AS(runner::stage_programs(mutated), message.c_str(), ConfigError);
    if (message.find("seq_len") == 0 || message.find("ep") == 0 || message.find("expert") == 0) {
      CHECK_THROWS_WITH_AS(models::training_footprint(training::footprint_inputs(w)),
                           ("memory footprint: " + message).c_str(), ConfigError);
    }
  }
}

TEST_CASE("keys: --set suggestions come from every declared key, not only the file's") {
  const auto vpp = problems(kMinimal, {"workload.parallelism.vpp=2"});
  REQUIRE(vpp.size() == 1);
  CHECK(vpp[0].render() ==
        "<command line>: workload.parallelism.vpp: unknown key 'vpp' in --set workload.parallelism.vpp=2 (valid "
        "keys: tp, pp, dp, cp, ep, vp, sequence_parallel, schedule, zero, zero3_granularity, zero3_list_gathers, "
        "stage_layers | did you mean 'vp'?)");
  const auto nic = problems(kMinimal, {"cluster.network.nic.bandwith=1"});
  REQUIRE(nic.size() == 1);
  CHECK(nic[0].hint == "valid keys: per_node, bandwidth, efficiency | did you mean 'bandwidth'?");
  CHECK(load(kMinimal, {"workload.parallelism.ep=1"}).training().parallelism.ep == 1);
}

}  // namespace scenario_keys_test
