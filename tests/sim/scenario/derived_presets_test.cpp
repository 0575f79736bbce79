// Derived presets (`base:`) for feasibility studies.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_keys.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/training/training_result.hpp"

namespace derived_presets_test {

using namespace clustersim;
using namespace clustersim::scenario;

namespace {

const std::string kLibrary = CLUSTERSIM_DATA_DIR;
const std::string kDerived = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/derived";

// An 8 x H100 node of the real library; the accelerator is whatever `ACCELERATOR` names.
const std::string kH100 = R"(schema_version: 1
name: derived-h100
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1, node: {accelerator: ACCELERATOR}}
workload: {model: llama-3-8b, seq_len: 4096, global_batch: 16, micro_batch: 1, parallelism: {tp: 8}}
)";

std::string with_accelerator(const std::string& name, const std::string& accelerators = "") {
  std::string yaml = kH100;
  yaml.replace(yaml.find("ACCELERATOR"), 11, name);
  return yaml + accelerators;
}

/// The diagnostic at `key_path` (the first one), or a failed check.
config::Diagnostic at(const std::vector<config::Diagnostic>& diagnostics, const std::string& key_path) {
  for (const config::Diagnostic& d : diagnostics) {
    if (d.key_path == key_path) return d;
  }
  FAIL("no diagnostic at " << key_path);
  return {};
}

std::vector<config::Diagnostic> problems(const std::string& yaml, const std::string& data_dir = kLibrary) {
  try {
    load_scenario_from_string(yaml, "t.yaml", {}, data_dir);
  } catch (const config::ScenarioError& e) {
    return e.diagnostics();
  }
  FAIL("expected ScenarioError");
  return {};
}

}  // namespace

TEST_CASE("derived accelerator: the base's every field but the one it changes, and a run that differs only there") {
  const std::string twice_hbm = "accelerators: {h100-2xhbm: {base: h100-sxm, memory: {hbm_bandwidth: \"6.7 TB/s\"}}}\n";
  const Scenario base = load_scenario_from_string(with_accelerator("h100-sxm"), "t.yaml", {}, kLibrary);
  const Scenario derived = load_scenario_from_string(with_accelerator("h100-2xhbm", twice_hbm), "t.yaml", {}, kLibrary);
  const models::AcceleratorSpec& original = base.platform.cluster.accelerator;
  const models::AcceleratorSpec& got = derived.platform.cluster.accelerator;
  CHECK(got.name == "h100-2xhbm");  // a derived preset has its own name
  CHECK(got.display_name == original.display_name);
  CHECK(got.hbm_bytes_per_s == 6.7e12);
  // Every declared key but memory.hbm_bandwidth holds the base's value: efficiencies, attention
  // physics and collective settings included.
  std::vector<std::string> differing;
  std::function<void(const std::vector<config::Key<models::AcceleratorSpec>>&, const std::string&)> walk =
      [&](const auto& keys, const std::string& prefix) {
        for (const auto& key : keys) {
          const std::string path = prefix.empty() ? key.field.key : prefix + "." + key.field.key;
          walk(key.children, path);
          if (key.same && !key.same(got, original)) differing.push_back(path);
        }
      };
  walk(models::accelerator_keys().keys(), "");
  CHECK(differing == std::vector<std::string>{"memory.hbm_bandwidth"});
  CHECK(got.matmul_efficiency_by_dtype == original.matmul_efficiency_by_dtype);
  CHECK(got.attention_softmax_overlap == original.attention_softmax_overlap);
  CHECK(got.collectives_ll128_max_bytes_per_s == original.collectives_ll128_max_bytes_per_s);
  // The run: the HBM-bound parts get faster, the step time drops; the network is the same.
  const runner::RunResult base_run = runner::run_scenario(base);
  const runner::RunResult derived_run = runner::run_scenario(derived);
  const auto& base_step = dynamic_cast<const training::TrainingResult&>(*base_run.primary);
  const auto& derived_step = dynamic_cast<const training::TrainingResult&>(*derived_run.primary);
  CHECK(derived_step.step_time_s < base_step.step_time_s);
  CHECK(derived_step.model_flops_per_step == base_step.model_flops_per_step);
  CHECK(derived.platform.cluster.network.scale_up.bytes_per_s == base.platform.cluster.network.scale_up.bytes_per_s);
  CHECK(derived.platform.cluster.memory_levels.front().bytes_per_s == 6.7e12);
  CHECK(derived.warnings.empty());
}

TEST_CASE("derived accelerator: an unknown base names the closest preset; a cycle of bases is an error") {
  // (Its other problems are the keys the base would have given: as with a missing include.)
  const auto unknown = at(problems(with_accelerator("fast", "accelerators: {fast: {base: h100-sxn}}\n")),
                          "accelerators.fast.base");
  CHECK(unknown.message == "unknown base 'h100-sxn'");
  CHECK(unknown.hint.find("did you mean 'h100-sxm'?") != std::string::npos);
  const auto cycle = at(problems(with_accelerator("a", "accelerators: {a: {base: b}, b: {base: a}}\n")),
                        "accelerators.b.base");
  CHECK(cycle.message == "base cycle: a -> b -> a");
  const auto self = at(problems(with_accelerator("h100-sxm", "accelerators: {h100-sxm: {base: h100-sxm}}\n")),
                       "accelerators.h100-sxm.base");
  CHECK(self.message == "base cycle: h100-sxm -> h100-sxm");
}

TEST_CASE("derived system: `base:` in a system file keeps the base system and changes what it sets") {
  const std::string yaml = R"(schema_version: 1
name: derived-node
include: [systems/SYSTEM.yaml]
cluster: {nodes: 2}
workload:
  model: {hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 16, vocab_size: 32000}
  seq_len: 1024
  global_batch: 8
  parallelism: {tp: 4}
)";
  auto with_system = [&](const std::string& system) {
    std::string text = yaml;
    text.replace(text.find("SYSTEM"), 6, system);
    return text;
  };
  const Scenario base = load_scenario_from_string(with_system("test-node"), "t.yaml", {}, kDerived);
  const Scenario fast = load_scenario_from_string(with_system("test-node-fast-nic"), "t.yaml", {}, kDerived);
  CHECK(fast.platform.cluster.network.scale_out.nic_bytes_per_s == 2 * base.platform.cluster.network.scale_out.nic_bytes_per_s);
  CHECK(fast.platform.cluster.network.scale_up.efficiency == 0.9);  // the base's
  CHECK(fast.platform.cluster.network.scale_out.topology == "switch");
  CHECK(fast.platform.cluster.network.accelerators_per_node == 4);
  // A scenario may build on a system directly, too.
  const std::string direct = std::string(R"(schema_version: 1
name: direct
base: test-node
cluster: {nodes: 2}
)") + yaml.substr(yaml.find("workload:"));
  CHECK(load_scenario_from_string(direct, "t.yaml", {}, kDerived).platform.cluster.network.scale_up.efficiency == 0.9);
  const auto cycle = problems(with_system("loop-a"), kDerived);
  REQUIRE(!cycle.empty());
  CHECK(cycle[0].key_path == "base");
  CHECK(cycle[0].message.find("base cycle: ") == 0);
  std::string unknown = direct;
  unknown.replace(unknown.find("base: test-node"), 15, "base: test-nod");
  const auto typo = problems(unknown, kDerived);
  REQUIRE(!typo.empty());
  CHECK(typo[0].render() ==
        "t.yaml:3:7: base: unknown system 'test-nod' (valid choices: loop-a, loop-b, test-node, test-node-fast-nic | "
        "did you mean 'test-node'?)");
}

}  // namespace derived_presets_test

namespace derived_presets_test {

TEST_CASE("a projected part (models/data/projected): its statements, the base's calibration, and a notice") {
  const std::string example = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/feasibility/rubin-70b-training.yaml";
  const Scenario rubin = load_scenario(example);
  const models::AcceleratorSpec& chip = rubin.platform.cluster.accelerator;
  const Scenario gb300 = load_scenario(example, {"cluster.node.accelerator=gb300", "cluster.node.scale_up.bandwidth=900 GB/s"});
  const models::AcceleratorSpec& base = gb300.platform.cluster.accelerator;
  // What NVIDIA stated, per package ...
  CHECK(chip.peak_flops_per_s.at(models::Dtype::fp4) == doctest::Approx(50e15).epsilon(1e-12));
  CHECK(chip.peak_flops_per_s.at(models::Dtype::fp8) == doctest::Approx(16.667e15).epsilon(1e-12));
  CHECK(chip.hbm_capacity_bytes == doctest::Approx(288e9).epsilon(1e-12));
  CHECK(chip.hbm_bytes_per_s == doctest::Approx(13e12).epsilon(1e-12));
  CHECK(rubin.platform.cluster.network.scale_up.bytes_per_s == doctest::Approx(1800e9).epsilon(1e-12));
  // ... and GB300's figures for the rest.
  CHECK(chip.matmul_efficiency == base.matmul_efficiency);
  CHECK(chip.memory_efficiency == base.memory_efficiency);
  CHECK(chip.compute_units == base.compute_units);
  CHECK(chip.tdp_w == base.tdp_w);
  CHECK(chip.vector_flops_per_s == base.vector_flops_per_s);
  // Said once, as a notice with the preset's own statement; nothing warned.
  CHECK(base.projected.empty());
  REQUIRE_FALSE(chip.projected.empty());
  int said = 0;
  for (const std::string& notice : rubin.notices) {
    said += notice.rfind("cluster.node.accelerator: 'rubin-projected' is a projected part, not a shipping one: "
                         "NVIDIA's GTC 2025",
                         0) == 0
                ? 1
                : 0;
  }
  CHECK(said == 1);
  for (const config::Diagnostic& warning : rubin.warnings) CHECK_MESSAGE(false, warning.render());
  for (const std::string& notice : gb300.notices) CHECK(notice.find("projected") == std::string::npos);
  // A part derived from a projected one stays projected; `projected` must be text.
  std::string derived = with_accelerator(
      "rubin-22tb", "accelerators: {rubin-22tb: {base: rubin-projected, memory: {hbm_bandwidth: \"22 TB/s\"}}}\n");
  derived.replace(derived.find("include: [systems/dgx-h100.yaml]"), 32,
                  "include: [systems/dgx-h100.yaml, projected/rubin.yaml]");
  CHECK(load_scenario_from_string(derived, "t.yaml").platform.cluster.accelerator.projected == chip.projected);
  const auto bad = problems(with_accelerator("h100-x", "accelerators: {h100-x: {base: h100-sxm, projected: [a, b]}}\n"));
  CHECK(at(bad, "accelerators.h100-x.projected").render().rfind("t.yaml:6:52: accelerators.h100-x.projected: expected a string, got a list", 0) == 0);
}

}  // namespace derived_presets_test

namespace derived_presets_test {

TEST_CASE("a projected rack: Rubin Ultra NVL576's 144-package NVLink domain, beyond every shipping bound, said once") {
  std::string yaml = with_accelerator("gb300");
  yaml.replace(yaml.find("include: [systems/dgx-h100.yaml]"), 32,
               "include: [systems/gb300-nvl72.yaml, projected/rubin-ultra-nvl576.yaml]");
  yaml.replace(yaml.find("node: {accelerator: gb300}"), 26, "node: {accelerator: rubin-ultra-projected}");
  const Scenario ultra = load_scenario_from_string(yaml, "t.yaml", {"cluster.nodes=18", "workload.global_batch=18"});
  const models::AcceleratorSpec& chip = ultra.platform.cluster.accelerator;
  CHECK(chip.name == "rubin-ultra-projected");
  CHECK(chip.peak_flops_per_s.at(models::Dtype::fp4) == doctest::Approx(104.167e15).epsilon(1e-12));
  CHECK(chip.hbm_capacity_bytes == doctest::Approx(1e12).epsilon(1e-12));
  CHECK(ultra.platform.cluster.network.scale_up.domain_size == 144);
  CHECK(ultra.platform.cluster.network.scale_up.bytes_per_s == doctest::Approx(5.2e12).epsilon(1e-12));
  // 104 PFLOP/s is above the 100 PFLOP/s plausibility bound of shipping parts: a projected part
  // is not warned about it, its notice says what is projected.
  for (const config::Diagnostic& warning : ultra.warnings) CHECK_MESSAGE(false, warning.render());
  REQUIRE(ultra.notices.size() >= 1);
  CHECK(ultra.notices[0].rfind("cluster.node.accelerator: 'rubin-ultra-projected' is a projected part", 0) == 0);
  // The same peak on a part not marked projected is warned about.
  const Scenario unmarked = load_scenario_from_string(
      with_accelerator("h100-fast", "accelerators: {h100-fast: {base: h100-sxm, peak: {fp8: \"104167 TFLOP/s\"}}}\n"),
      "t.yaml");
  REQUIRE(unmarked.warnings.size() == 1);
  CHECK(unmarked.warnings[0].render().find("is implausible: above 100 PFLOP/s") != std::string::npos);
}

}  // namespace derived_presets_test

namespace derived_presets_test {

TEST_CASE("a projected AMD rack on UALink: the ualink fabric, its 72-GPU domain, and a part held to it") {
  const std::string example = std::string(CLUSTERSIM_SOURCE_DIR) + "/examples/feasibility/helios-70b-training.yaml";
  const Scenario helios = load_scenario(example);
  const auto& network = helios.platform.cluster.network;
  CHECK(helios.platform.cluster.accelerator.name == "mi455x-projected");
  CHECK(helios.platform.cluster.accelerator.peak_flops_per_s.at(models::Dtype::fp4) == doctest::Approx(40e15).epsilon(1e-12));
  CHECK(helios.platform.cluster.accelerator.hbm_bytes_per_s == doctest::Approx(19.6e12).epsilon(1e-12));
  CHECK(network.scale_up.fabric == "ualink");
  CHECK(network.scale_up.domain_size == 72);
  CHECK(network.scale_out.nic_bytes_per_s == doctest::Approx(300e9).epsilon(1e-12));
  for (const config::Diagnostic& warning : helios.warnings) CHECK_MESSAGE(false, warning.render());
  // A switch per domain, named as the fabric is (ualinkN), 72 GPUs on each: a TP group of 8 and
  // a ring over 72 stay inside it; no NVLS (no in-switch reduction on UALink).
  const auto platform = runner::build_platform(helios);
  const topologies::Topology& topology = platform->topology();
  CHECK(topology.path(0, 71).links.size() == 2);  // gpu -> ualink switch -> gpu
  CHECK(topology.path(0, 72).links.size() > 2);   // the next domain: over the NICs
  CHECK(topology.find_vertex("ualink0").has_value());
  CHECK_FALSE(topology.find_vertex("nvswitch0").has_value());
  // The part is built into UALink: another fabric is refused at its key.
  const auto refused = problems(std::string("schema_version: 1\nname: h\ninclude: [projected/helios-mi455x.yaml]\n") +
                                "cluster: {nodes: 18, node: {scale_up: {fabric: nvswitch}}}\n" +
                                "workload: {model: llama-3-8b, seq_len: 4096, global_batch: 72, micro_batch: 1, "
                                "parallelism: {tp: 1, dp: 72}}\n");
  CHECK(at(refused, "cluster.node.scale_up.fabric").render().find("UALink switch") != std::string::npos);
}

}  // namespace derived_presets_test
