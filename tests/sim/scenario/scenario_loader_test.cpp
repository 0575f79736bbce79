#include "sim/scenario/scenario_loader.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/serving/serving_workload.hpp"

namespace scenario_loader_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;
using namespace clustersim::scenario;
using namespace clustersim::config;

namespace {

const std::string kData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/scenario";
const std::string kLibrary = kData + "/library";

// Line numbers matter: the bad-input cases below assert positions in this text.
const std::string kBase = R"(schema_version: 1
name: tiny-test
accelerators:
  test-gpu:
    peak: {bf16: "300 TFLOP/s", fp16: "300 TFLOP/s"}
    vector_fp32: "20 TFLOP/s"
    memory: {hbm_capacity: "80 GiB", hbm_bandwidth: "2 TB/s"}
    compute_units: 100
    scale_up_bandwidth: "300 GB/s"
models:
  tiny:
    hidden_size: 1024
    num_hidden_layers: 8
    num_attention_heads: 16
    num_key_value_heads: 4
    intermediate_size: 4096
    vocab_size: 32000
    hidden_act: silu
cluster:
  nodes: 2
  node: {accelerator: test-gpu, per_node: 8}
  network:
    nic: {bandwidth: "200 Gb/s"}
workload:
  model: tiny
  seq_len: 2048
  global_batch: 64
  micro_batch: 2
  parallelism: {tp: 4, pp: 2, dp: 2}
simulation: {seed: 3}
)";

/// kBase with every `from` replaced by `to` (each must occur).
std::string edit(std::string text, const std::vector<std::pair<std::string, std::string>>& replacements) {
  for (const auto& [from, to] : replacements) {
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
  }
  return text;
}

Scenario load(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return load_scenario_from_string(yaml, "t.yaml", sets, kLibrary);
}

/// The diagnostics of a scenario that must fail.
std::vector<Diagnostic> problems(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    load(yaml, sets);
  } catch (const ScenarioError& e) {
    return e.diagnostics();
  }
  FAIL("expected ScenarioError");
  return {};
}

/// The single rendered diagnostic of a scenario that must fail with exactly one problem.
std::string one_problem(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  const auto diagnostics = problems(yaml, sets);
  REQUIRE(diagnostics.size() == 1);
  return diagnostics[0].render();
}

std::string file_error(const std::string& file) {
  try {
    load_scenario(file, {}, kLibrary);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  FAIL("expected ScenarioError");
  return {};
}

}  // namespace

TEST_CASE("loader: a small scenario loads with typed values") {
  const Scenario s = load(kBase);
  CHECK(s.name == "tiny-test");
  CHECK(s.source_file == "t.yaml");
  const auto& acc = s.platform.cluster.accelerator;
  CHECK(acc.name == "test-gpu");
  CHECK(acc.peak_flops_per_s.at(models::Dtype::bf16) == doctest::Approx(300e12));
  CHECK(acc.peak_flops_per_s.count(models::Dtype::fp8) == 0);
  CHECK(acc.hbm_capacity_bytes == doctest::Approx(80.0 * 1073741824.0));
  CHECK(acc.hbm_bytes_per_s == doctest::Approx(2e12));
  CHECK(acc.compute_units == 100);
  CHECK(acc.matmul_efficiency == doctest::Approx(0.8));  // schema default
  CHECK(acc.kernel_launch_s == relative_approx(4e-6));   // schema default
  const auto& net = s.platform.cluster.network;
  CHECK(net.nodes == 2);
  CHECK(net.accelerators_per_node == 8);
  CHECK(s.platform.cluster.accelerator_count() == 16);
  CHECK(net.scale_up.bytes_per_s == doctest::Approx(300e9));  // from the accelerator
  CHECK(net.scale_up.latency_s == relative_approx(1e-6));
  CHECK(net.scale_out.topology == "fat-tree");
  CHECK(net.scale_out.nics_per_node == 8);  // defaults to per_node
  CHECK(net.scale_out.nic_bytes_per_s == doctest::Approx(25e9));
  const auto& w = s.training();
  CHECK(w.model.name == "tiny");
  CHECK(w.model.hidden_act == models::Activation::swiglu);
  CHECK(w.model.num_key_value_heads == 4);
  CHECK(w.seq_len == 2048);
  CHECK(w.global_batch == 64);
  CHECK(w.micro_batch == 2);
  CHECK(w.microbatches_per_pipeline() == 16);
  CHECK(w.parallelism.tp == 4);
  CHECK(w.parallelism.pp == 2);
  CHECK(w.parallelism.dp == 2);
  CHECK(w.parallelism.schedule == training::PipelineSchedule::one_f_one_b);
  CHECK(w.precision == models::Dtype::bf16);
  CHECK(w.recompute == training::Recompute::selective);
  CHECK(w.grad_bytes_per_param == 2);
  CHECK(s.simulation.seed == 3);
  CHECK(s.simulation.fidelity == platform::Fidelity::flow);  // the default
  CHECK(s.platform.comm.tuner.simple_step_latency_s == relative_approx(12.8e-6));  // schema default
  CHECK(s.platform.comm.tuner.ll_base_latency_s == relative_approx(6e-6));
  CHECK(!s.platform.comm.algorithm.has_value());  // auto
  CHECK(net.scale_up.efficiency == doctest::Approx(0.8));
  CHECK(net.scale_out.efficiency == doctest::Approx(0.94));
  CHECK(!acc.collectives_nvls);
  CHECK(acc.collectives_ll128_max_bytes_per_s == 0);
  CHECK(s.output.dir.empty());
}

TEST_CASE("loader: dp is derived when omitted; --set overrides take effect") {
  const Scenario derived = load(edit(kBase, {{"{tp: 4, pp: 2, dp: 2}", "{tp: 2, pp: 2}"}}));
  CHECK(derived.training().parallelism.dp == 4);
  const Scenario set = load(kBase, {"workload.parallelism.tp=2", "workload.parallelism.dp=4",
                                    "workload.gradient_reduce_dtype=fp32", "simulation.comm.simple_step_latency=5 us",
                                    "simulation.comm.algorithm=tree", "cluster.node.scale_up.efficiency=0.7"});
  CHECK(set.training().parallelism.tp == 2);
  CHECK(set.training().parallelism.dp == 4);
  CHECK(set.training().grad_bytes_per_param == 4);
  CHECK(set.platform.comm.tuner.simple_step_latency_s == relative_approx(5e-6));
  CHECK(set.platform.comm.algorithm == models::Algorithm::tree);
  CHECK(set.platform.cluster.network.scale_up.efficiency == doctest::Approx(0.7));
  CHECK(load(kBase).training().train_tokens == 0);
  CHECK(load(kBase, {"workload.train_tokens=15e12"}).training().train_tokens == doctest::Approx(15e12));
  CHECK(one_problem(kBase, {"workload.train_tokens=-1"}).find("workload.train_tokens") != std::string::npos);
  // fp8_params needs fp8 GEMMs; dropout overrides the model card's.
  CHECK(one_problem(kBase, {"workload.fp8_params=true"}) ==
        "--set workload.fp8_params=true: workload.fp8_params: fp8_params keeps the weights in fp8, which needs precision: fp8 (the "
        "workload's precision is bf16)");
  CHECK(load(kBase).training().model.hidden_dropout == 0);
  const Scenario dropped = load(kBase, {"workload.dropout=0.1"});
  CHECK(dropped.training().model.hidden_dropout == doctest::Approx(0.1).epsilon(1e-12));
  CHECK(dropped.training().model.attention_dropout == doctest::Approx(0.1).epsilon(1e-12));
}

TEST_CASE("loader: library presets by name, included system, one field overridden") {
  const Scenario s = load_scenario(kData + "/uses_library.yaml", {}, kLibrary);
  const auto& acc = s.platform.cluster.accelerator;
  CHECK(acc.name == "lib-gpu");
  CHECK(acc.display_name == "Library Test GPU");
  CHECK(acc.hbm_capacity_bytes == doctest::Approx(48.0 * 1073741824.0));  // overridden
  CHECK(acc.hbm_bytes_per_s == doctest::Approx(1.5e12));                  // library
  CHECK(acc.l2_bytes == doctest::Approx(40.0 * 1048576.0));
  CHECK(acc.matmul_efficiency == doctest::Approx(0.7));
  CHECK(acc.memory_efficiency == doctest::Approx(0.85));
  CHECK(acc.tdp_w == doctest::Approx(300));
  CHECK(s.platform.cluster.network.accelerators_per_node == 4);  // from systems/lib-node.yaml
  CHECK(s.platform.cluster.network.scale_out.nics_per_node == 2);
  CHECK(s.platform.cluster.network.scale_out.nic_bytes_per_s == doctest::Approx(12.5e9));
  CHECK(s.training().model.name == "lib-llm");
  CHECK(s.training().model.intermediate_size == 2048);  // gelu: 4 x hidden
  CHECK(s.training().model.num_key_value_heads == 8);   // defaults to heads
  CHECK(s.training().parallelism.dp == 2);
}

TEST_CASE("loader: the real library (models/data): h100 system with one field overridden, llama-3-8b") {
  const std::string yaml = R"(schema_version: 1
name: real-library
include: [systems/dgx-h100.yaml]
accelerators:
  h100-sxm: {memory: {hbm_capacity: "96 GiB"}}
cluster: {nodes: 2}
workload: {model: llama-3-8b, seq_len: 8192, global_batch: 16, parallelism: {tp: 8}}
)";
  const Scenario s = load_scenario_from_string(yaml, "real.yaml", {}, CLUSTERSIM_DATA_DIR);
  CHECK(s.platform.cluster.accelerator.hbm_capacity_bytes == doctest::Approx(96.0 * 1073741824.0));
  CHECK(s.platform.cluster.accelerator.hbm_bytes_per_s == doctest::Approx(3.35e12));
  CHECK(s.platform.cluster.accelerator.peak_flops_per_s.at(models::Dtype::bf16) == doctest::Approx(989e12));
  CHECK(s.platform.cluster.network.scale_out.nic_bytes_per_s == doctest::Approx(50e9));
  CHECK(s.training().model.hidden_size == 4096);
  CHECK(s.training().model.num_key_value_heads == 8);
  CHECK(s.training().parallelism.dp == 2);

  // fp8 on an A100 (library preset by name): no fp8 peak.
  const std::string a100 = R"(schema_version: 1
name: a100-fp8
cluster:
  nodes: 1
  node: {accelerator: a100-sxm-80gb}
  network: {nic: {bandwidth: "200 Gb/s"}}
workload: {model: llama-3-8b, seq_len: 4096, global_batch: 8, precision: fp8, parallelism: {tp: 8}}
)";
  try {
    load_scenario_from_string(a100, "a100.yaml", {}, CLUSTERSIM_DATA_DIR);
    FAIL("expected ScenarioError");
  } catch (const ScenarioError& e) {
    CHECK(std::string(e.what()) ==
          "a100.yaml:7:74: workload.precision: precision fp8 needs a fp8 peak, but accelerator "
          "'a100-sxm-80gb' has none (it has: tf32, bf16, fp16)");
  }
}

TEST_CASE("loader: bad input, keys and types") {
  CHECK(one_problem(kBase + "simulaton: {seed: 1}\n") ==
        "t.yaml:31:1: simulaton: unknown key 'simulaton' (valid keys: schema_version, name, description, "
        "include, base, accelerators, models, cluster, workload, jobs, simulation, power, cost, output, sweep | did you mean "
        "'simulation'?)");
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 2, tpp: 1}"}})) ==
        "t.yaml:29:38: workload.parallelism.tpp: unknown key 'tpp' (valid keys: tp, pp, dp, cp, ep, vp, "
        "sequence_parallel, schedule, zero, zero3_granularity, zero3_list_gathers, stage_layers | did you mean 'tp'?)");
  CHECK(one_problem(edit(kBase, {{"seq_len: 2048", "seq_len: eight"}})) ==
        "t.yaml:26:12: workload.seq_len: expected an integer, got \"eight\"");
  CHECK(one_problem(edit(kBase, {{"nodes: 2", "nodes: 0"}})) ==
        "t.yaml:20:10: cluster.nodes: out of range: must be between 1 and 10000000, got 0");
  CHECK(one_problem(edit(kBase, {{"simulation: {seed: 3}", "simulation: {seed: 3, fidelity: analytic}"}})) ==
        "t.yaml:30:33: simulation.fidelity: invalid value 'analytic' (valid choices: analytical, flow | "
        "did you mean 'analytical'?)");
  CHECK(one_problem(edit(kBase, {{"schema_version: 1", "schema_version: 2"}})) ==
        "t.yaml:1:17: schema_version: out of range: must be 1, got 2");
}

TEST_CASE("loader: workload.host_op_time, the framework's default unless set") {
  CHECK(load(kBase).training().host_op_time < 0);
  CHECK(load(kBase).training().host_op_time_s() == training::kFrameworkHostOpTimeS);
  const std::string set = edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  host_op_time: 20us"}});
  CHECK(load(set).training().host_op_time_s() == relative_approx(20e-6));
  CHECK(load(kBase, {"workload.host_op_time=0us"}).training().host_op_time_s() == 0);
  CHECK(one_problem(edit(set, {{"host_op_time: 20us", "host_op_time: -5us"}})) ==
        "t.yaml:29:17: workload.host_op_time: negative time \"-5us\": must be >= 0");
  CHECK(one_problem(edit(set, {{"host_op_time: 20us", "host_op_time: 2 s"}})) ==
        "t.yaml:29:17: workload.host_op_time: out of range: must be between 0 and 1 s, got \"2 s\"");
  CHECK(one_problem(edit(set, {{"host_op_time: 20us", "host_op_time: fast"}})) ==
        "t.yaml:29:17: workload.host_op_time: bad number in \"fast\": expected a time such as \"1.5 us\" or \"2 ms\"");
}

TEST_CASE("loader: TP-communication overlap needs sequence parallelism") {
  const std::string base = edit(kBase, {{"parallelism: {tp: 4, pp: 2, dp: 2}",
                                         "parallelism: {tp: 4, pp: 2, dp: 2, sequence_parallel: false}\n  "
                                         "tp_comm_overlap: true"}});
  CHECK(one_problem(base) ==
        "t.yaml:30:20: workload.tp_comm_overlap: tp_comm_overlap needs sequence parallelism "
        "(workload.parallelism.sequence_parallel: true), as in Megatron-Core");
  CHECK(load(edit(base, {{"sequence_parallel: false", "sequence_parallel: true"}})).training().tp_comm_overlap);
  // Megatron's asynchronous backward TP reduction: on unless the scenario says otherwise.
  CHECK(load(kBase).training().tp_async_backward);
  const std::string sync = edit(kBase, {{"parallelism: {tp: 4, pp: 2, dp: 2}",
                                          "parallelism: {tp: 4, pp: 2, dp: 2}\n  tp_async_backward: false"}});
  CHECK_FALSE(load(sync).training().tp_async_backward);
  CHECK(one_problem(edit(sync, {{"tp_async_backward: false", "tp_async_backward: later"}})) ==
        "t.yaml:30:22: workload.tp_async_backward: expected true or false, got \"later\"");
  CHECK(one_problem(edit(kBase, {{"simulation: {seed: 3}", "simulation: {seed: 3, comm: {overlap_sms: -1}}"}})) ==
        "t.yaml:30:43: simulation.comm.overlap_sms: out of range: must be between 0 and 1000000, got -1");
}

TEST_CASE("loader: the fp8 accumulator promotion interval is read and range-checked") {
  CHECK(load(kBase).platform.cluster.accelerator.fp8_promotion_interval == 0);  // schema default
  const std::string with = edit(kBase, {{"compute_units: 100", "compute_units: 100\n    fp8_promotion_interval: 128"}});
  CHECK(load(with).platform.cluster.accelerator.fp8_promotion_interval == 128);
  CHECK(one_problem(edit(with, {{"fp8_promotion_interval: 128", "fp8_promotion_interval: -4"}})) ==
        "t.yaml:9:29: accelerators.test-gpu.fp8_promotion_interval: out of range: must be between 0 and 1048576, "
        "got -4");
}

TEST_CASE("loader: per-stage layer counts are checked against pp and the model") {
  const std::string with = edit(kBase, {{"{tp: 4, pp: 2, dp: 2}", "{tp: 4, pp: 2, dp: 2, stage_layers: [3, 5]}"}});
  CHECK(load(with).training().parallelism.stage_layers == std::vector<int>{3, 5});
  CHECK(one_problem(edit(with, {{"[3, 5]", "[3, 3, 2]"}})) ==
        "t.yaml:29:52: workload.parallelism.stage_layers: stage_layers lists 3 counts, pp is 2");
  CHECK(one_problem(edit(with, {{"[3, 5]", "[3, 4]"}})) ==
        "t.yaml:29:52: workload.parallelism.stage_layers: stage_layers sum to 7, the model has 8 layers");
  const std::string interleaved =
      edit(kBase, {{"{tp: 4, pp: 2, dp: 2}", "{tp: 4, pp: 2, dp: 2, schedule: interleaved, vp: 2, stage_layers: "
                                             "[1, 3, 3, 1]}"}});
  CHECK(load(interleaved).training().parallelism.stage_layers == std::vector<int>{1, 3, 3, 1});
  CHECK(load(edit(interleaved, {{"[1, 3, 3, 1]", "[4, 4]"}})).training().parallelism.stage_layers ==
        std::vector<int>{4, 4});
  CHECK(one_problem(edit(interleaved, {{"[1, 3, 3, 1]", "[3, 5]"}})) ==
        "t.yaml:29:82: workload.parallelism.stage_layers: stage 0 has 3 layers, which do not split evenly over its "
        "vp = 2 chunks; give pp x vp = 4 counts, one per virtual stage, instead");
  CHECK(one_problem(edit(with, {{"[3, 5]", "[0, 8]"}})) ==
        "t.yaml:29:53: workload.parallelism.stage_layers: layers of a pipeline stage must be an integer in [1, "
        "1000000], got \"0\"");
}

TEST_CASE("loader: ZeRO-3 granularity and the model's biases") {
  const Scenario plain = load(kBase);
  CHECK(plain.training().parallelism.zero3_granularity == training::Zero3Granularity::layer);
  CHECK_FALSE(plain.training().model.linear_bias);
  const Scenario s = load(edit(kBase, {{"{tp: 4, pp: 2, dp: 2}", "{tp: 4, pp: 2, dp: 2, zero: 3, zero3_granularity: tensor}"},
                                       {"model: tiny", "model: {hidden_size: 1024, num_hidden_layers: 8, "
                                                       "num_attention_heads: 16, vocab_size: 32000, linear_bias: true}"}}));
  CHECK(s.training().parallelism.zero3_granularity == training::Zero3Granularity::tensor);
  CHECK(s.training().model.linear_bias);
  CHECK(one_problem(edit(kBase, {{"{tp: 4, pp: 2, dp: 2}", "{tp: 4, pp: 2, dp: 2, zero3_granularity: param}"}}))
            .find("workload.parallelism.zero3_granularity: invalid value 'param' (valid choices: layer, tensor") !=
        std::string::npos);
  CHECK(one_problem(edit(kBase, {{"{tp: 4, pp: 2, dp: 2}", "{tp: 4, pp: 2, dp: 2, zero3_granularity: param}"}})) == 
        "t.yaml:29:57: workload.parallelism.zero3_granularity: invalid value 'param' (valid choices: layer, tensor)");
  CHECK(one_problem(edit(kBase, {{"vocab_size: 32000", "vocab_size: 32000\n    linear_bias: maybe"}})) == 
        "t.yaml:18:18: models.tiny.linear_bias: expected true or false, got \"maybe\"");
  CHECK(one_problem(edit(kBase, {{"vocab_size: 32000", "vocab_size: 32000\n    rope_theta: -1"}})) == 
        "t.yaml:18:17: models.tiny.rope_theta: out of range: must be > 0, got -1");
  CHECK(one_problem(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    attention: {softmax_overlap: -0.1}"}})) == 
        "t.yaml:9:34: accelerators.test-gpu.attention.softmax_overlap: out of range: must be between 0 and 1, got "
        "-0.1");
}

TEST_CASE("loader: bad input, quantities") {
  CHECK(one_problem(edit(kBase, {{"\"200 Gb/s\"", "200"}})) ==
        "t.yaml:23:22: cluster.network.nic.bandwidth: missing unit: expected a bandwidth such as \"400 Gb/s\" "
        "or \"3.35 TB/s\"");
  CHECK(one_problem(edit(kBase, {{"\"200 Gb/s\"", "\"200 GiB\""}})) ==
        "t.yaml:23:22: cluster.network.nic.bandwidth: \"200 GiB\" is a size, expected a bandwidth such as "
        "\"400 Gb/s\" or \"3.35 TB/s\"");
  CHECK(one_problem(edit(kBase, {{"\"200 Gb/s\"", "\"-200 Gb/s\""}})) ==
        "t.yaml:23:22: cluster.network.nic.bandwidth: negative bandwidth \"-200 Gb/s\": must be >= 0");
  CHECK(one_problem(edit(kBase, {{"\"200 Gb/s\"", "\"200 Gbs\""}})) ==
        "t.yaml:23:22: cluster.network.nic.bandwidth: unknown unit \"Gbs\" in \"200 Gbs\": expected a bandwidth "
        "such as \"400 Gb/s\" or \"3.35 TB/s\" (did you mean 'Gb/s'?)");
}

TEST_CASE("loader: bad input, names of presets") {
  CHECK(one_problem(edit(kBase, {{"accelerator: test-gpu", "accelerator: test-gpx"}})) ==
        "t.yaml:21:23: cluster.node.accelerator: unknown accelerator 'test-gpx' (valid choices: lib-gpu, test-gpu "
        "| did you mean 'test-gpu'?)");
  CHECK(one_problem(edit(kBase, {{"model: tiny", "model: tinny"}})) ==
        "t.yaml:25:10: workload.model: unknown model 'tinny' (valid choices: lib-llm, tiny | did you mean 'tiny'?)");
}

TEST_CASE("loader: bad input, cross-field rules") {
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 4}"}})) ==
        "t.yaml:29:35: workload.parallelism.dp: tp x pp x dp x cp = 4 x 2 x 4 x 1 = 32, but the cluster has 16 "
        "accelerators (2 nodes x 8)");
  CHECK(one_problem(edit(kBase, {{"hidden_size: 1024", "hidden_size: 1536"}, {"num_attention_heads: 16", "num_attention_heads: 6"}})) ==
        "t.yaml:29:21: workload.parallelism.tp: num_attention_heads 6 is not divisible by tp 4");
  CHECK(one_problem(edit(kBase, {{"num_key_value_heads: 4", "num_key_value_heads: 6"}})) ==
        "t.yaml:29:21: workload.parallelism.tp: num_key_value_heads 6 and tp 4 must divide one another");
  CHECK(one_problem(edit(kBase, {{"num_hidden_layers: 8", "num_hidden_layers: 9"}})) ==
        "t.yaml:29:28: workload.parallelism.pp: 9 layers do not divide evenly over pp x vp = 2 x 1 virtual stages; give stage_layers for an uneven split");
  CHECK(one_problem(edit(kBase, {{"global_batch: 64", "global_batch: 30"}})) ==
        "t.yaml:27:17: workload.global_batch: global_batch 30 is not divisible by dp x micro_batch = 2 x 2");
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 2, vp: 2}"}})) ==
        "t.yaml:29:42: workload.parallelism.vp: vp = 2 needs schedule 'interleaved', got '1f1b'");
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 2, schedule: interleaved}"}})) ==
        "t.yaml:29:48: workload.parallelism.schedule: schedule 'interleaved' needs vp > 1 (virtual pipeline "
        "chunks per stage)");
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  precision: fp8"}})) ==
        "t.yaml:29:14: workload.precision: precision fp8 needs a fp8 peak, but accelerator 'test-gpu' has none "
        "(it has: bf16, fp16)");
  CHECK(one_problem(edit(kBase, {{"hidden_size: 1024", "hidden_size: 1000"}})) ==
        "t.yaml:12:18: models.tiny.hidden_size: hidden_size 1000 is not divisible by num_attention_heads 16");
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 1, cp: 2}"}, {"seq_len: 2048", "seq_len: 2046"}})) ==
        "t.yaml:26:12: workload.seq_len: seq_len 2046 is not divisible by 2 x cp = 4 (context parallelism splits "
        "each sequence into 2 x cp chunks)");
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 2, ep: 2}"}})) ==
        "t.yaml:29:42: workload.parallelism.ep: expert parallelism needs a mixture-of-experts model (ep = 2; model "
        "'tiny' sets no num_local_experts / n_routed_experts)");
  CHECK(one_problem(edit(kBase, {{"nic: {bandwidth", "nic: {per_node: 3, bandwidth"}})) ==
        "t.yaml:23:21: cluster.network.nic.per_node: per_node 8 accelerators is not divisible by nic.per_node 3");
  CHECK(one_problem(edit(kBase, {{"    intermediate_size: 4096\n", ""}})) ==
        "t.yaml:12:5: models.tiny.intermediate_size: intermediate_size is required for hidden_act 'silu' (only "
        "gelu defaults to 4 x hidden_size)");
  CHECK(one_problem(edit(kBase, {{"    scale_up_bandwidth: \"300 GB/s\"\n", ""}})) ==
        "t.yaml:20:9: cluster.node.scale_up.bandwidth: missing scale-up bandwidth: accelerator 'test-gpu' has no "
        "scale_up_bandwidth, so set cluster.node.scale_up.bandwidth");
}

TEST_CASE("loader: hidden_act relu2 is Nemotron-4's squared-ReLU 2-matrix MLP") {
  const Scenario s = load(edit(kBase, {{"hidden_act: silu", "hidden_act: relu2"}}));
  CHECK(s.training().model.hidden_act == models::Activation::relu2);
  CHECK(s.training().model.intermediate_size == 4096);
  CHECK(s.training().model.dense_mlp_parameters() == 2.0 * 1024 * 4096);
  CHECK(one_problem(edit(kBase, {{"hidden_act: silu", "hidden_act: relu2"}, {"    intermediate_size: 4096\n", ""}})) ==
        "t.yaml:12:5: models.tiny.intermediate_size: intermediate_size is required for hidden_act 'relu2' (only "
        "gelu defaults to 4 x hidden_size)");
}

TEST_CASE("loader: preset names may contain dots") {
  const Scenario s = load(edit(kBase, {{"  tiny:", "  tiny-1.5b:"}, {"model: tiny", "model: tiny-1.5b"}}));
  CHECK(s.training().model.name == "tiny-1.5b");
  CHECK(s.training().model.num_hidden_layers == 8);
}

TEST_CASE("loader: topology parameter errors from Topology::build point at cluster.network") {
  const auto diagnostics = problems(edit(kBase, {{"  network:\n", "  network:\n    radix: 7\n"}}));
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].key_path == "cluster.network");
  CHECK(diagnostics[0].line == 23);
  CHECK(diagnostics[0].column == 5);
  CHECK(diagnostics[0].message.find("radix") != std::string::npos);
}

TEST_CASE("loader: ZeRO-3 list-form gathers") {
  CHECK_FALSE(load(kBase).training().parallelism.zero3_list_gathers);
  CHECK(load(kBase, {"workload.parallelism.zero3_list_gathers=true"}).training().parallelism.zero3_list_gathers);
  CHECK(one_problem(kBase, {"workload.parallelism.zero3_list_gathers=maybe"}).find(
            "workload.parallelism.zero3_list_gathers") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"dp: 2}", "dp: 2, zero3_list_gathers: maybe}"}})) ==
        "t.yaml:29:58: workload.parallelism.zero3_list_gathers: expected true or false, got \"maybe\"");
}

TEST_CASE("loader: network routing, its choices and where it applies") {
  CHECK(load(kBase).platform.cluster.network.scale_out.routing == "ecmp");
  CHECK(load(kBase, {"cluster.network.routing=d-mod-k"}).platform.cluster.network.scale_out.routing == "d-mod-k");
  CHECK(one_problem(kBase, {"cluster.network.routing=adaptive"})
            .find("cluster.network.routing: invalid value 'adaptive' (valid choices: d-mod-k, ecmp") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"  network:\n", "  network:\n    routing: adaptive\n"}})) ==
        "t.yaml:23:14: cluster.network.routing: invalid value 'adaptive' (valid choices: d-mod-k, ecmp, spray)");
  // A preset's d-mod-k stays valid when a scenario switches to a topology with its own routing.
  const Scenario torus = load(
      edit(kBase, {{"  network:\n", "  network:\n    topology: torus\n    dims: [16]\n    routing: d-mod-k\n"}}));
  CHECK(torus.platform.cluster.network.scale_out.routing == "d-mod-k");
}

TEST_CASE("loader: bad input, unsupported features") {
  CHECK(one_problem(edit(kBase, {{"model: tiny", "kind: inference\n  model: tiny"}})) ==
        "t.yaml:25:9: workload.kind: invalid value 'inference' (valid choices: training, serving, trace)");
  // The flow fidelity and the placement key are accepted (issue 3).
  CHECK(load(edit(kBase, {{"{seed: 3}", "{seed: 3, fidelity: flow}"}})).simulation.fidelity == platform::Fidelity::flow);
  CHECK(load(kBase).platform.cluster.placement == platform::Placement::packed);
  CHECK(load(kBase, {"cluster.placement=scattered"}).platform.cluster.placement == platform::Placement::scattered);
  CHECK(one_problem(kBase, {"cluster.placement=spread"}).find(
            "cluster.placement: invalid value 'spread' (valid choices: packed, scattered") != std::string::npos);
  CHECK(load(edit(kBase, {{"{seed: 3}", "{seed: 3, mode: full}"}})).simulation.mode == platform::SimulationMode::full);
}

TEST_CASE("loader: stragglers need full mode and name nodes of the cluster") {
  const std::string full = edit(kBase, {{"{seed: 3}", "{seed: 3, mode: full}"}});
  const auto scenario = load(edit(full, {{"  nodes: 2\n", "  nodes: 2\n  stragglers: {nodes: [1], compute_speed: 0.9}\n"}}));
  CHECK(scenario.platform.cluster.stragglers.nodes == std::vector<int>{1});
  CHECK(scenario.platform.cluster.stragglers.compute_speed == doctest::Approx(0.9));
  CHECK(one_problem(edit(kBase, {{"  nodes: 2\n", "  nodes: 2\n  stragglers: {nodes: [1], compute_speed: 0.9}\n"}})) ==
        "t.yaml:21:15: cluster.stragglers: stragglers need simulation.mode: full (symmetric mode simulates one "
        "representative rank per stage, which cannot be slower than its replicas)");
  CHECK(one_problem(edit(full, {{"  nodes: 2\n", "  nodes: 2\n  stragglers: {nodes: [0, 2], compute_speed: 0.9}\n"}})) ==
        "t.yaml:21:27: cluster.stragglers.nodes: straggler node must be an integer in [0, 1], got \"2\"");
  CHECK(one_problem(edit(full, {{"  nodes: 2\n", "  nodes: 2\n  stragglers: {nodes: [0], compute_speed: 1.5}\n"}}))
            .find("cluster.stragglers.compute_speed") != std::string::npos);
}

TEST_CASE("loader: variability, random stragglers and failures; ineffective settings are warnings") {
  const auto scenario = load(edit(kBase, {{"{seed: 3}", "{seed: 3, iterations: 50, variability: {gemm_cv: 0.03, "
                                                                     "device_cv: 0.02, host_noise_rate: 10, "
                                                                     "host_noise_delay: 2 ms}, failures: {enabled: true, "
                                                                     "gpu_mtbf: 50000 h, restart_time: 5 min}}"},
                                          {"  nodes: 2\n", "  nodes: 2\n  stragglers: {probability: 0.01, "
                                                          "compute_speed: 0.8}\n"}}));
  CHECK(scenario.simulation.iterations == 50);
  CHECK(scenario.simulation.variability.gemm_cv == doctest::Approx(0.03).scale(0).epsilon(1e-12));
  CHECK(scenario.simulation.variability.host_noise_delay_s == doctest::Approx(2e-3).scale(0).epsilon(1e-12));
  CHECK(scenario.simulation.failures.enabled);
  CHECK(scenario.simulation.failures.gpu_mtbf_s == doctest::Approx(50000.0 * 3600).scale(0).epsilon(1e-12));
  CHECK(scenario.simulation.failures.restart_s == doctest::Approx(300).scale(0).epsilon(1e-12));
  CHECK(scenario.platform.cluster.stragglers.probability == doctest::Approx(0.01).scale(0).epsilon(1e-12));
  CHECK(scenario.platform.cluster.stragglers.nodes.empty());
  CHECK(scenario.warnings.empty());
  // Defaults: nothing drawn, one step, no goodput.
  const auto plain = load(kBase);
  CHECK(plain.simulation.iterations == 1);
  CHECK_FALSE(plain.simulation.variability.any());
  CHECK_FALSE(plain.simulation.failures.enabled);
  // Out of range and wrong units name the key and position.
  CHECK(one_problem(edit(kBase, {{"{seed: 3}", "{seed: 3, variability: {gemm_cv: -0.1}}"}})).find(
            "simulation.variability.gemm_cv") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"{seed: 3}", "{seed: 3, iterations: 0}"}})).find("simulation.iterations") !=
        std::string::npos);
  CHECK(one_problem(edit(kBase, {{"{seed: 3}", "{seed: 3, failures: {gpu_mtbf: 5 GB}}"}})).find(
            "simulation.failures.gpu_mtbf") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"  nodes: 2\n", "  nodes: 2\n  stragglers: {probability: 2, compute_speed: 0.8}\n"}}))
            .find("cluster.stragglers.probability") != std::string::npos);
  // Settings without effect: iterations with nothing drawn, failure keys with failures off,
  // a host-noise rate without a delay.
  const auto idle = load(edit(kBase, {{"{seed: 3}", "{seed: 3, iterations: 5, failures: {restart_time: 60 s}, "
                                                    "variability: {host_noise_rate: 5}}"}}));
  REQUIRE(idle.warnings.size() == 3);
  std::string all;
  for (const auto& warning : idle.warnings) all += warning.render() + "\n";
  CHECK(all.find("simulation.iterations: 5 has no effect: nothing is drawn") != std::string::npos);
  CHECK(all.find("simulation.failures.restart_time: 60 s has no effect: simulation.failures.enabled is false") !=
        std::string::npos);
  CHECK(all.find("simulation.variability.host_noise_rate: 5 has no effect: simulation.variability.host_noise_delay "
                 "is 0") != std::string::npos);
}

TEST_CASE("loader: bad input, missing keys, files, includes, syntax") {
  CHECK(one_problem(edit(kBase, {{"  nodes: 2\n", ""}})) ==
        "t.yaml:20:3: cluster.nodes: missing required key 'nodes'");
  CHECK(one_problem(edit(kBase, {{"  seq_len: 2048", "  seq_len: [2048"}})) ==
        "t.yaml:27:15: YAML syntax error: end of sequence flow not found");

  const std::string missing = file_error(kData + "/bad_include.yaml");
  CHECK(missing == kData + "/bad_include.yaml:5:5: include: include file 'systems/no-such-node.yaml' not found "
                           "(looked for '" + kData + "/systems/no-such-node.yaml' and '" + kLibrary +
                           "/systems/no-such-node.yaml')");

  // Only the cycle: not the keys that are missing because cycle_a.yaml could not be merged.
  CHECK(file_error(kData + "/cycle_scenario.yaml") ==
        kData + "/cycle_b.yaml:2:11: include: include cycle: " + kData + "/cycle_a.yaml -> " + kData +
            "/cycle_b.yaml -> " + kData + "/cycle_a.yaml");

  CHECK(file_error(kData + "/no-such-scenario.yaml") == kData + "/no-such-scenario.yaml: cannot read scenario file '" +
                                                            kData + "/no-such-scenario.yaml' (no such file)");
  CHECK(file_error(kData) == kData + ": '" + kData + "' is a folder, not a scenario file");
  CHECK(one_problem("") == "t.yaml:1:1: the scenario is empty");
}

TEST_CASE("loader: bad input, --set") {
  CHECK(one_problem(kBase, {"workload.paralelism.tp=4"}) ==
        "<command line>: workload.paralelism: unknown key 'paralelism' in --set workload.paralelism.tp=4 (valid "
        "keys: kind, model, seq_len, global_batch, micro_batch, precision, parallelism, recompute, framework, cross_entropy, attention, "
        "overlap_grad_reduce, tp_comm_overlap, tp_async_backward, train_tokens, gradient_reduce_dtype, moe, "
        "fp8_params, dropout, host_op_time, enforce_memory_fit, optimizer, offload, "
        "memory | did you mean 'parallelism'?)");
  CHECK(one_problem(kBase, {"workload.parallelism.tp=four"}) ==
        "--set workload.parallelism.tp=four: workload.parallelism.tp: expected an integer, got \"four\"");
  // A schema key absent from the file may be set; an unknown one may not.
  CHECK(load(kBase, {"workload.recompute=full"}).training().recompute == training::Recompute::full);
}

TEST_CASE("loader: several problems are reported together, sorted by position") {
  const std::string yaml = edit(kBase, {{"nodes: 2", "nodes: two"},
                                        {"{tp: 4, pp: 2, dp: 2}", "{tp: 4, pp: 2, dp: 2, schedule: zigzag}"},
                                        {"name: tiny-test", "name: tiny-test\ncolour: blue"},
                                        {"\"80 GiB\"", "\"80 GiB/s\""}});
  const auto diagnostics = problems(yaml);
  REQUIRE(diagnostics.size() == 4);
  CHECK(diagnostics[0].render() == "t.yaml:3:1: colour: unknown key 'colour' (valid keys: schema_version, name, "
                                   "description, include, base, accelerators, models, cluster, workload, jobs, "
                                   "simulation, power, cost, output, sweep)");
  CHECK(diagnostics[1].render() == "t.yaml:8:28: accelerators.test-gpu.memory.hbm_capacity: \"80 GiB/s\" is a "
                                   "bandwidth, expected a size such as \"80 GiB\" or \"50 MB\"");
  CHECK(diagnostics[2].render() == "t.yaml:21:10: cluster.nodes: expected an integer, got \"two\"");
  CHECK(diagnostics[3].key_path == "workload.parallelism.schedule");
  CHECK(diagnostics[3].line == 30);
}

TEST_CASE("loader: catalog lists and describes library presets") {
  CHECK(library_names(LibraryKind::accelerators, kLibrary) == std::vector<std::string>{"lib-gpu"});
  CHECK(library_names(LibraryKind::models, kLibrary) == std::vector<std::string>{"lib-llm"});
  CHECK(library_names(LibraryKind::systems, kLibrary) == std::vector<std::string>{"lib-node"});
  CHECK(library_names(LibraryKind::systems, "/nonexistent").empty());
  const std::string gpu = describe_library_entry("lib-gpu", kLibrary);
  CHECK(gpu.rfind("accelerator lib-gpu (" + kLibrary + "/accelerators/lib-gpu.yaml)\n", 0) == 0);
  CHECK(gpu.find("\n  memory.hbm_capacity          40 GiB\n") != std::string::npos);
  CHECK(gpu.find("\n  efficiency.memory            0.85 (default)\n") != std::string::npos);
  CHECK(gpu.find("\n  kernel_launch                4 us (default)\n") != std::string::npos);
  CHECK(gpu.find("\n  power.idle                   (unset) [W]\n") != std::string::npos);
  CHECK(gpu.find("\n  peak.bf16                    200 TFLOP/s\n") != std::string::npos);
  const std::string llm = describe_library_entry("lib-llm", kLibrary);
  CHECK(llm.find("\n  hidden_size              512\n") != std::string::npos);
  CHECK(llm.find("\n  tie_word_embeddings      false (default)\n") != std::string::npos);
  const std::string node = describe_library_entry("lib-node", kLibrary);
  CHECK(node.find("\n  cluster.node.per_node                         4\n") != std::string::npos);
  CHECK(node.find("\n  cluster.network.nic.bandwidth                 100 Gb/s (12.5 GB/s)\n") != std::string::npos);
  try {
    describe_library_entry("lib-gpv", kLibrary);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "unknown library entry 'lib-gpv' (valid choices: lib-gpu, lib-llm, lib-node | did you mean 'lib-gpu'?)");
  }
}

TEST_CASE("loader: torus keys (dims, link bandwidth) with positions") {
  const std::string torus = edit(kBase, {{"    nic: {bandwidth: \"200 Gb/s\"}\n",
                                          "    topology: torus\n    dims: [4, 4]\n    link: {bandwidth: \"100 GB/s\"}\n"}});
  const Scenario s = load(torus);
  CHECK(s.platform.cluster.network.scale_out.topology == "torus");
  CHECK(s.platform.cluster.network.scale_out.torus_dims == std::vector<int>{4, 4});
  CHECK(s.platform.cluster.network.scale_out.link_bytes_per_s == doctest::Approx(100e9));
  CHECK(one_problem(edit(torus, {{"[4, 4]", "[4, x]"}})) ==
        "t.yaml:24:15: cluster.network.dims: torus dimension size must be an integer in [1, 1000000], got \"x\"");
  CHECK(one_problem(edit(torus, {{"    dims: [4, 4]\n", ""}})) ==
        "t.yaml:23:15: cluster.network.dims: topology torus needs cluster.network.dims");
  const auto mismatch = problems(edit(torus, {{"[4, 4]", "[4, 8]"}}));
  REQUIRE(mismatch.size() == 1);
  CHECK(mismatch[0].key_path == "cluster.network");
  CHECK(mismatch[0].line == 23);
  CHECK(mismatch[0].message.find("torus dims [4, 8] hold 32 accelerators, but the cluster has 16") !=
        std::string::npos);
}

TEST_CASE("loader: dragonfly, rail-optimized and per-tier fat-tree keys") {
  const Scenario dragonfly = load(edit(
      kBase, {{"  network:\n", "  network:\n    topology: dragonfly\n    groups: 3\n    routers_per_group: 2\n"
                               "    terminals_per_router: 4\n    global_links_per_router: 1\n"}}));
  const auto& out = dragonfly.platform.cluster.network.scale_out;
  CHECK(out.dragonfly_groups == 3);
  CHECK(out.dragonfly_routers_per_group == 2);
  CHECK(out.dragonfly_terminals_per_router == 4);
  CHECK(out.dragonfly_global_links_per_router == 1);
  const auto missing = problems(edit(kBase, {{"  network:\n", "  network:\n    topology: dragonfly\n    groups: 3\n"}}));
  REQUIRE(missing.size() == 3);
  CHECK(missing[0].render() ==
        "t.yaml:23:15: cluster.network.routers_per_group: topology dragonfly needs cluster.network.routers_per_group");
  CHECK(missing[2].key_path == "cluster.network.global_links_per_router");

  const Scenario tree = load(edit(kBase, {{"  network:\n", "  network:\n    tiers: 3\n    radix: 8\n"
                                                           "    aggregation_oversubscription: 3\n"}}));
  CHECK(tree.platform.cluster.network.scale_out.aggregation_oversubscription == doctest::Approx(3.0));
  CHECK(tree.platform.cluster.network.scale_out.link_bytes_per_s == 0.0);  // unset: the NIC bandwidth
  CHECK(one_problem(edit(kBase, {{"  network:\n", "  network:\n    aggregation_oversubscription: 0.5\n"}})) ==
        "t.yaml:23:35: cluster.network.aggregation_oversubscription: out of range: must be between 1 and 1000000, "
        "got 0.5");
  const Scenario rails = load(edit(kBase, {{"  network:\n", "  network:\n    topology: rail-optimized\n    radix: 16\n"}}));
  CHECK(rails.platform.cluster.network.scale_out.topology == "rail-optimized");
  // Without a NIC section a multi-node fat-tree has no scale-out bandwidth.
  CHECK(one_problem(edit(kBase, {{"    nic: {bandwidth: \"200 Gb/s\"}\n", "    radix: 16\n"}})) ==
        "t.yaml:23:5: cluster.network.nic.bandwidth: missing required key 'bandwidth': NIC bandwidth is "
        "needed with more than one node (except for topology torus or custom)");
}

TEST_CASE("loader: scale_up.domain_size (multi-node NVLink domains)") {
  const Scenario s = load(edit(kBase, {{"per_node: 8}", "per_node: 8, scale_up: {domain_size: 16}}"}}));
  CHECK(s.platform.cluster.network.scale_up.domain_size == 16);
  CHECK(one_problem(edit(kBase, {{"per_node: 8}", "per_node: 8, scale_up: {domain_size: 12}}"}})) ==
        "t.yaml:21:70: cluster.node.scale_up.domain_size: domain_size 12 must be a multiple of per_node 8 "
        "that divides the 16 accelerators (whole nodes per domain)");
}

TEST_CASE("loader: a custom topology file is found relative to the scenario file") {
  const auto folder = std::filesystem::temp_directory_path() / "clustersim_loader_custom";
  std::filesystem::create_directories(folder);
  std::string csv;
  for (int gpu = 0; gpu < 16; ++gpu) csv += "gpu" + std::to_string(gpu) + ",sw" + std::to_string(gpu / 8) + ",50e9,1e-6\n";
  csv += "sw0,sw1,400e9,1e-6\n";
  std::ofstream(folder / "net.csv") << csv;
  const std::string scenario =
      edit(kBase, {{"    nic: {bandwidth: \"200 Gb/s\"}\n", "    topology: custom\n    file: net.csv\n"}});
  std::ofstream(folder / "custom.yaml") << scenario;
  const Scenario s = load_scenario(folder / "custom.yaml", {}, kLibrary);
  CHECK(s.platform.cluster.network.scale_out.custom_file == (folder / "net.csv").string());

  std::ofstream(folder / "net.csv") << "gpu0,sw0,50e9\n";
  try {
    (void)load_scenario(folder / "custom.yaml", {}, kLibrary);
    FAIL("expected ScenarioError");
  } catch (const ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].key_path == "cluster.network.file");
    CHECK(e.diagnostics()[0].line == 24);
    CHECK(e.diagnostics()[0].message.find("net.csv:1: expected 4 comma-separated fields") != std::string::npos);
  }
}

TEST_CASE("loader: memory hierarchy, power and cost keys (issue 4)") {
  // No tdp, no L2 bandwidth, no host memory: HBM only, no power figures.
  Scenario plain = load(kBase);
  REQUIRE(plain.platform.cluster.memory_levels.size() == 1);
  CHECK(plain.platform.cluster.memory_levels[0].kind == models::MemoryLevelKind::hbm);
  CHECK(plain.platform.cluster.memory_levels[0].latency_s == relative_approx(500e-9));
  CHECK(plain.platform.cluster.accelerator.tdp_w == 0);
  CHECK(plain.training().memory.workspace_bytes == 1024.0 * 1024 * 1024);
  CHECK(plain.training().memory.fragmentation == doctest::Approx(1.1));
  CHECK_FALSE(plain.platform.cost.any());
  CHECK(plain.platform.cluster.power.nic_w == 25);
  CHECK(plain.platform.cluster.power.switch_w == 1500);

  const std::string rich = edit(
      kBase, {{R"(memory: {hbm_capacity: "80 GiB", hbm_bandwidth: "2 TB/s"})",
               R"(memory: {hbm_capacity: "80 GiB", hbm_bandwidth: "2 TB/s", l2: "40 MiB", l2_bandwidth: "6 TB/s",
              host_capacity: "256 GB", host_bandwidth: "64 GB/s", host_link: c2c}
    power: {tdp: "500 W", idle: "100 W", memory: "350 W"}
    efficiency: {matmul: 0.8, matmul_fp16: 0.7})"},
              {"simulation: {seed: 3}", "simulation: {seed: 3}\ncost: {accelerator_hour_usd: 2.5}\n"
                                        "power: {apply_throttling: true, nic: \"30 W\"}"},
              {"micro_batch: 2", "micro_batch: 2\n  offload: {optimizer: true}\n  memory: {fragmentation: 1.2}"}});
  const Scenario s = load(rich);
  REQUIRE(s.platform.cluster.memory_levels.size() == 3);
  CHECK(s.platform.cluster.host_link == models::HostLink::c2c);
  const models::MemoryHierarchy memory(s.platform.cluster.memory_levels, s.platform.cluster.host_link);
  CHECK(memory.level(models::MemoryLevelKind::l2).bytes_per_s == doctest::Approx(6e12));
  // The compute model sees the L2 bandwidth (reuse rule) and the per-format efficiency.
  CHECK(s.platform.cluster.accelerator.l2_bytes_per_s == doctest::Approx(6e12));
  CHECK(s.platform.cluster.accelerator.matmul_efficiency_for(models::Dtype::fp16) == doctest::Approx(0.7));
  CHECK(s.platform.cluster.accelerator.matmul_efficiency_for(models::Dtype::bf16) == doctest::Approx(0.8));
  CHECK(memory.level(models::MemoryLevelKind::host).bytes_per_s == doctest::Approx(64e9));
  CHECK(s.platform.cluster.accelerator.tdp_w == 500);
  CHECK(s.platform.cluster.accelerator.memory_power_w == 350);
  // Unset compute level: idle + (tdp - idle) / 0.85, the measured fraction.
  const auto levels = models::activity_power(s.platform.cluster.accelerator, 0);
  REQUIRE(levels.has_value());
  CHECK(levels->compute_w == relative_approx(100 + 400 / 0.85));
  CHECK(levels->memory_w == 350);
  CHECK(s.platform.cluster.power.nic_w == 30);
  CHECK(s.platform.apply_throttling);
  REQUIRE(s.platform.cost.accelerator_hour_usd.has_value());
  CHECK(*s.platform.cost.accelerator_hour_usd == 2.5);
  CHECK(s.training().memory.offload_optimizer);
  CHECK_FALSE(s.training().memory.offload_activations);
  CHECK(s.training().memory.fragmentation == doctest::Approx(1.2));
}

TEST_CASE("loader: the optimizer state's layout (workload.optimizer)") {
  CHECK(load(kBase).training().optimizer.bytes_per_param() == 12);  // fp32 master + fp32 m, v
  const Scenario remainders =
      load(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  optimizer: {master_weights: remainders}"}}));
  CHECK(remainders.training().optimizer.bytes_per_param() == 10);
  const Scenario bf16 =
      load(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  optimizer: {master_weights: none, moments: bf16}"}}));
  CHECK(bf16.training().optimizer.bytes_per_param() == 4);
  const std::string bad =
      one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  optimizer: {moments: fp8}"}}));
  CHECK(bad.find("workload.optimizer.moments") != std::string::npos);
  CHECK(bad.find("fp32, bf16") != std::string::npos);
  CHECK(bad == "t.yaml:29:24: workload.optimizer.moments: invalid value 'fp8' (valid choices: fp32, bf16 | did you "
               "mean 'fp32'?)");
}

TEST_CASE("loader: bad memory, power and cost keys are reported") {
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  offload: {activations: true}"}})) ==
        "t.yaml:29:26: workload.offload.activations: offloading needs host memory, but accelerator 'test-gpu' "
        "sets no memory.host_capacity and memory.host_bandwidth");
  CHECK(one_problem(edit(kBase, {{"simulation: {seed: 3}",
                                  "simulation: {seed: 3}\ncost: {accelerator_hour_usd: 2, capex_usd_per_accelerator: 1}"}}))
            .find("cost.capex_usd_per_accelerator: set either cost.accelerator_hour_usd or "
                  "cost.capex_usd_per_accelerator, not both") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  memory: {fragmentation: 0.5}"}}))
            .find("workload.memory.fragmentation") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"simulation: {seed: 3}", "simulation: {seed: 3}\npower: {nic: \"25 Gb/s\"}"}}))
            .find("power.nic") != std::string::npos);
}

namespace {

// Line numbers matter: the MoE bad-input cases assert positions in this text.
const std::string kMoe = R"(schema_version: 1
name: moe-test
accelerators:
  test-gpu:
    peak: {bf16: "300 TFLOP/s"}
    vector_fp32: "20 TFLOP/s"
    memory: {hbm_capacity: "80 GiB", hbm_bandwidth: "2 TB/s"}
    compute_units: 100
    scale_up_bandwidth: "300 GB/s"
models:
  tiny-moe:
    hidden_size: 1024
    num_hidden_layers: 8
    num_attention_heads: 16
    num_key_value_heads: 16
    intermediate_size: 4096
    vocab_size: 32000
    hidden_act: silu
    n_routed_experts: 8
    num_experts_per_tok: 2
    n_shared_experts: 1
    moe_intermediate_size: 512
    first_k_dense_replace: 1
    kv_lora_rank: 256
    q_lora_rank: 384
    qk_nope_head_dim: 64
    qk_rope_head_dim: 32
    v_head_dim: 64
cluster:
  nodes: 2
  node: {accelerator: test-gpu, per_node: 8}
  network:
    nic: {bandwidth: "200 Gb/s"}
workload:
  model: tiny-moe
  seq_len: 2048
  global_batch: 64
  micro_batch: 2
  parallelism: {tp: 4, pp: 2, dp: 2, ep: 2}
  moe: {capacity_factor: 1.25, imbalance: 1.5}
)";

}  // namespace

TEST_CASE("loader: a mixture-of-experts model with MLA and its routing settings") {
  const Scenario s = load(kMoe);
  const models::TransformerSpec& m = s.training().model;
  CHECK(m.is_moe());
  CHECK(m.moe.num_experts == 8);
  CHECK(m.moe.num_experts_per_tok == 2);
  CHECK(m.moe.n_shared_experts == 1);
  CHECK(m.moe.moe_intermediate_size == 512);
  CHECK(m.moe.first_k_dense_replace == 1);
  CHECK(m.moe.moe_layer_freq == 1);  // schema default
  CHECK(m.attention == models::AttentionKind::mla);
  CHECK(m.mla.q_lora_rank == 384);
  CHECK(m.mla.kv_lora_rank == 256);
  CHECK(m.mla.qk_head_dim() == 96);
  CHECK(m.mla.v_head_dim == 64);
  CHECK(s.training().parallelism.ep == 2);
  CHECK(s.training().moe.capacity_factor == doctest::Approx(1.25));
  CHECK(s.training().moe.imbalance == doctest::Approx(1.5));
  // Mixtral's key, and no moe_intermediate_size: the experts are intermediate_size wide;
  // without workload.moe the routing is balanced and dropless; no MLA key: MHA.
  const Scenario mixtral = load(edit(kMoe, {{"n_routed_experts", "num_local_experts"},
                                            {"    moe_intermediate_size: 512\n", ""},
                                            {"    kv_lora_rank: 256\n    q_lora_rank: 384\n    qk_nope_head_dim: 64\n"
                                             "    qk_rope_head_dim: 32\n    v_head_dim: 64\n",
                                             ""},
                                            {"  moe: {capacity_factor: 1.25, imbalance: 1.5}\n", ""}}));
  CHECK(mixtral.training().model.moe.num_experts == 8);
  CHECK(mixtral.training().model.moe.moe_intermediate_size == 4096);
  CHECK(mixtral.training().model.attention == models::AttentionKind::mha);
  CHECK(mixtral.training().moe.capacity_factor == 0.0);
  CHECK(mixtral.training().moe.imbalance == 1.0);
  // A dense model's routing defaults.
  CHECK(load(kBase).training().moe.imbalance == 1.0);
}

TEST_CASE("loader: bad input, mixture-of-experts and MLA keys") {
  CHECK(one_problem(edit(kMoe, {{"num_experts_per_tok: 2", "num_experts_per_tok: 9"}})) ==
        "t.yaml:20:26: models.tiny-moe.num_experts_per_tok: num_experts_per_tok 9 exceeds the 8 experts "
        "(n_routed_experts)");
  CHECK(one_problem(edit(kMoe, {{"    num_experts_per_tok: 2\n", ""}})) ==
        "t.yaml:19:23: models.tiny-moe.n_routed_experts: n_routed_experts needs num_experts_per_tok (routed experts "
        "per token, top-k)");
  CHECK(one_problem(edit(kMoe, {{"n_routed_experts: 8", "n_routed_experts: 8\n    num_local_experts: 8"}})) ==
        "t.yaml:19:23: models.tiny-moe.n_routed_experts: set num_local_experts (Mixtral's key) or n_routed_experts "
        "(DeepSeek's), not both");
  CHECK(one_problem(edit(kMoe, {{"first_k_dense_replace: 1", "first_k_dense_replace: 8"}})) ==
        "t.yaml:23:28: models.tiny-moe.first_k_dense_replace: first_k_dense_replace 8 and moe_layer_freq 1 leave no "
        "MoE layer among the 8 layers");
  CHECK(one_problem(edit(kMoe, {{"    v_head_dim: 64\n", ""}})) ==
        "t.yaml:12:5: models.tiny-moe.v_head_dim: multi-head latent attention needs v_head_dim (an MLA model sets "
        "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim; q_lora_rank is optional)");
  CHECK(one_problem(edit(kMoe, {{"qk_nope_head_dim: 64", "qk_nope_head_dim: 0"}, {"qk_rope_head_dim: 32", "qk_rope_head_dim: 0"}})) ==
        "t.yaml:26:23: models.tiny-moe.qk_nope_head_dim: qk_nope_head_dim + qk_rope_head_dim must be positive (the "
        "query/key width per head)");
  // Expert keys on a dense model name the key.
  CHECK(one_problem(edit(kBase, {{"hidden_act: silu", "hidden_act: silu\n    num_experts_per_tok: 2"}})) ==
        "t.yaml:19:26: models.tiny.num_experts_per_tok: num_experts_per_tok needs num_local_experts or "
        "n_routed_experts (model 'tiny' has no experts)");
  CHECK(one_problem(edit(kBase, {{"hidden_act: silu", "hidden_act: silu\n    moe_intermediate_size: 512"}})) ==
        "t.yaml:19:28: models.tiny.moe_intermediate_size: moe_intermediate_size needs num_local_experts or "
        "n_routed_experts (model 'tiny' has no experts)");
}

TEST_CASE("loader: bad input, expert parallelism and workload.moe") {
  CHECK(one_problem(edit(kMoe, {{"dp: 2, ep: 2}", "dp: 2, ep: 3}"}})) ==
        "t.yaml:39:42: workload.parallelism.ep: ep 3 does not divide the 8 experts of model 'tiny-moe'");
  CHECK(one_problem(edit(kMoe, {{"dp: 2, ep: 2}", "dp: 2, ep: 4}"}})) ==
        "t.yaml:39:42: workload.parallelism.ep: ep 4 does not divide dp x cp = 2 x 1 (the expert-parallel group is "
        "carved out of the data-parallel ranks, as in Megatron-Core)");
  CHECK(one_problem(edit(kMoe, {{"imbalance: 1.5", "imbalance: 0.5"}})) ==
        "t.yaml:40:43: workload.moe.imbalance: out of range: must be between 1 and 1000000, got 0.5");
  CHECK(one_problem(edit(kMoe, {{"capacity_factor: 1.25", "capacity_factor: -1"}})) ==
        "t.yaml:40:26: workload.moe.capacity_factor: out of range: must be between 0 and 1000000, got -1");
  CHECK(one_problem(edit(kMoe, {{"imbalance: 1.5", "imbalance: 5"}})) ==
        "t.yaml:40:43: workload.moe.imbalance: moe imbalance 5 exceeds num_experts / num_experts_per_tok = 8 / 2 = 4 "
        "(an expert receives each token at most once)");
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  moe: {imbalance: 1.2}"}})) ==
        "t.yaml:29:8: workload.moe: workload.moe applies only to mixture-of-experts models; model 'tiny' has no "
        "experts");
}

TEST_CASE("loader: the MoE library presets load with their published parameter counts") {
  const auto load_model = [](const std::string& model, const std::string& parallelism) {
    return load_scenario_from_string(R"(schema_version: 1
name: moe-library
include: [systems/dgx-h100.yaml]
cluster: {nodes: 8}
workload: {model: )" + model + R"(, seq_len: 4096, global_batch: 64, parallelism: )" + parallelism + R"(}
)",
                                     "moe.yaml", {}, CLUSTERSIM_DATA_DIR);
  };
  const Scenario mixtral = load_model("mixtral-8x7b", "{tp: 2, dp: 32, ep: 8}");
  CHECK(mixtral.training().model.moe.moe_intermediate_size == 14336);  // intermediate_size, as HF Mixtral
  CHECK(mixtral.training().model.total_parameters() == 46702792704.0);
  CHECK(mixtral.training().model.active_parameters() == 12879925248.0);
  CHECK(mixtral.training().parallelism.ep == 8);
  const Scenario deepseek = load_model("deepseek-v3", "{dp: 64, ep: 64}");
  CHECK(deepseek.training().model.attention == models::AttentionKind::mla);
  CHECK(deepseek.training().model.moe_layer_count() == 58);
  CHECK(deepseek.training().model.total_parameters() == 671026404352.0);
  CHECK(deepseek.training().model.active_parameters() == 37552282624.0);
}

TEST_CASE("loader: fused-attention keys of the accelerator and the workload's kernel family") {
  const Scenario s = load(edit(kBase, {{"compute_units: 100",
                                        "compute_units: 100\n    matrix_path: wgmma\n    attention: {kernel: fa3, warp_mma_fraction: 0.5, "
                                        "softmax_overlap: 0.25, special_function: \"3.9 TFLOP/s\"}"},
                                       {"micro_batch: 2", "micro_batch: 2\n  attention: fa2"}}));
  CHECK(s.platform.cluster.accelerator.attention_kernel == models::AttentionKernelFamily::fa3);
  CHECK(s.platform.cluster.accelerator.warp_mma_fraction == doctest::Approx(0.5));
  CHECK(s.platform.cluster.accelerator.attention_softmax_overlap == doctest::Approx(0.25));
  CHECK(s.platform.cluster.accelerator.special_function_ops_per_s == doctest::Approx(3.9e12));
  CHECK(s.training().attention == training::AttentionKernel::fa2);
  // Unset: fa2, the full warp-MMA path, no special-function rate (fused attention then throws
  // when costed, naming the key).
  const Scenario plain = load(kBase);
  CHECK(plain.platform.cluster.accelerator.attention_kernel == models::AttentionKernelFamily::fa2);
  CHECK(plain.platform.cluster.accelerator.warp_mma_fraction == doctest::Approx(1.0));
  CHECK(plain.platform.cluster.accelerator.attention_softmax_overlap == doctest::Approx(1.0));
  CHECK(plain.platform.cluster.accelerator.special_function_ops_per_s == 0);
  CHECK(plain.training().attention == training::AttentionKernel::flash);
  const Scenario cudnn = load(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    attention: {kernel: cudnn}"},
                                           {"micro_batch: 2", "micro_batch: 2\n  attention: cudnn"}}));
  CHECK(cudnn.platform.cluster.accelerator.attention_kernel == models::AttentionKernelFamily::cudnn);
  CHECK(cudnn.training().attention == training::AttentionKernel::cudnn);
}

TEST_CASE("loader: bad input, fused-attention keys") {
  CHECK(one_problem(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    attention: {kernel: fa5}"}}))
            .find("accelerators.test-gpu.attention.kernel: invalid value 'fa5' (valid choices: fa2, fa3, cudnn, fa4, "
                  "fused_sdpa, pallas") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    attention: {warp_mma_fraction: 1.5}"}}))
            .find("accelerators.test-gpu.attention.warp_mma_fraction: out of range") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    attention: {softmax_overlap: -0.1}"}}))
            .find("accelerators.test-gpu.attention.softmax_overlap: out of range") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"compute_units: 100",
                                  "compute_units: 100\n    attention: {special_function: \"3 GB/s\"}"}}))
            .find("accelerators.test-gpu.attention.special_function") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  attention: fa5"}}))
            .find("workload.attention: invalid value 'fa5' (valid choices: flash, fa2, fa3, cudnn, fa4, fused_sdpa, "
                  "pallas, unfused") != std::string::npos);
}

/// Loads `yaml` against the real preset library (models/data), for the library's accelerators.
Scenario load_with_library(const std::string& yaml) {
  return load_scenario_from_string(yaml, "t.yaml", {}, config::library_data_dir());
}

/// The single problem of `yaml` loaded against the real preset library.
std::string library_problem(const std::string& yaml) {
  try {
    load_with_library(yaml);
  } catch (const ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    return e.diagnostics()[0].render();
  }
  FAIL("expected ScenarioError");
  return {};
}

TEST_CASE("loader: a workload attention family the accelerator cannot run is an error naming both") {
  CHECK(one_problem(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    matrix_path: tcgen05"},
                                 {"micro_batch: 2", "micro_batch: 2\n  attention: fa3"}}))
            .find("workload.attention: attention kernel family fa3 does not run on accelerator 'test-gpu' (matrix "
                  "path tcgen05); families that run there: fa2, cudnn, fa4") != std::string::npos);
  CHECK(one_problem(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    matrix_path: mfma"},
                                 {"micro_batch: 2", "micro_batch: 2\n  attention: cudnn"}}))
            .find("families that run there: fa2") != std::string::npos);
  // The library's Blackwell preset refuses fa3 (a Hopper kernel) and runs fa4.
  const std::string b200 = edit(kBase, {{"node: {accelerator: test-gpu", "node: {accelerator: b200"}});
  CHECK(library_problem(edit(b200, {{"micro_batch: 2", "micro_batch: 2\n  attention: fa3"}}))
            .find("accelerator 'b200' (matrix path tcgen05); families that run there: fa2, cudnn, fa4") !=
        std::string::npos);
  CHECK(load_with_library(edit(b200, {{"micro_batch: 2", "micro_batch: 2\n  attention: fa4"}})).training().attention ==
        training::AttentionKernel::fa4);
  // A preset whose own kernel does not run on its path is refused when the platform is built.
  const std::string bad_preset =
      edit(kBase, {{"compute_units: 100", "compute_units: 100\n    matrix_path: mfma\n    attention: {kernel: fa3}"}});
  CHECK_THROWS_WITH_AS(runner::build_platform(load(bad_preset)),
                       doctest::Contains("attention kernel fa3 does not run on its matrix path mfma (families that "
                                         "run there: fa2)"),
                       ConfigError);
}

TEST_CASE("loader: op classes without a kernel measurement on the accelerator get a roofline notice") {
  // test-gpu has no calibration table: both of its op classes are roofline estimates.
  const Scenario plain = load(kBase);
  REQUIRE(plain.notices.size() == 2);
  CHECK(plain.notices[0] ==
        "accelerator 'test-gpu': gemm bf16 time is a roofline estimate (datasheet peak x efficiencies measured "
        "elsewhere): no gemm bf16 kernel measurement of test-gpu in the library (calibration/test-gpu.csv) or in "
        "simulation.calibration");
  CHECK(plain.notices[1].find("accelerator 'test-gpu': attention bf16 (fa2) time is a roofline estimate") == 0);
  // h100-sxm has bf16 GEMM (MAMF) and bf16 attention (Azure FlashAttention-2) measurements: no notice.
  const std::string h100 = edit(kBase, {{"node: {accelerator: test-gpu", "node: {accelerator: h100-sxm"}});
  CHECK(load_with_library(h100).notices.empty());
  // Unfused attention has no attention kernel to measure; its GEMMs are the gemm class.
  const Scenario unfused = load(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  attention: unfused"}}));
  CHECK(unfused.notices.size() == 1);
  // gb300 (Blackwell Ultra) has no public kernel measurement at all; b200 has GEMMs but no attention.
  const Scenario gb300 = load_with_library(edit(kBase, {{"node: {accelerator: test-gpu", "node: {accelerator: gb300"}}));
  CHECK(gb300.notices.size() == 2);
  const Scenario b200 = load_with_library(edit(kBase, {{"node: {accelerator: test-gpu", "node: {accelerator: b200"}}));
  REQUIRE(b200.notices.size() == 1);
  CHECK(b200.notices[0].find("accelerator 'b200': attention bf16 (cudnn) time is a roofline estimate") == 0);
  // The run carries them in its notes (test-gpu has no exp rate for fused attention: unfused).
  const auto result = runner::run_scenario(unfused);
  const auto& notes = result.primary->notes;
  CHECK(std::count_if(notes.begin(), notes.end(),
                      [](const std::string& note) { return note.rfind("notice: accelerator 'test-gpu'", 0) == 0; }) ==
        1);
}

TEST_CASE("loader: attention keys no family on the matrix path reads are warnings, not silently ignored") {
  // mma_sync runs fa2 and cudnn, both serial: softmax_overlap has no effect.
  const Scenario serial =
      load(edit(kBase, {{"compute_units: 100", "compute_units: 100\n    attention: {softmax_overlap: 0.5}"}}));
  REQUIRE(serial.warnings.size() == 1);
  CHECK(serial.warnings[0].render().find("accelerators.test-gpu.attention.softmax_overlap: has no effect: no family "
                                         "overlaps its softmax on matrix path mma_sync (families: fa2, cudnn)") !=
        std::string::npos);
  // On tcgen05 (cudnn and fa4 overlap) it is read.
  CHECK(load(edit(kBase, {{"compute_units: 100",
                           "compute_units: 100\n    matrix_path: tcgen05\n    attention: {softmax_overlap: 0.5}"}}))
            .warnings.empty());
  // warp_mma_fraction is fa2's, which does not run on Gaudi's MMEs.
  const Scenario gaudi = load(edit(kBase, {{"compute_units: 100",
                                            "compute_units: 100\n    matrix_path: mme\n    attention: {kernel: "
                                            "fused_sdpa, warp_mma_fraction: 0.5}"}}));
  REQUIRE(gaudi.warnings.size() == 1);
  CHECK(gaudi.warnings[0].render().find("attention.warp_mma_fraction: has no effect: fa2, the warp-MMA family, does "
                                        "not run on matrix path mme (families: fused_sdpa)") != std::string::npos);
}

TEST_CASE("loader: values far beyond any shipping part are warnings with the bound and its basis") {
  CHECK(load(kBase).warnings.empty());
  // 1e30 FLOP/s and a 1,000 s hop: the typos the warnings are for, at their positions.
  const Scenario absurd = load(edit(kBase, {{"bf16: \"300 TFLOP/s\"", "bf16: \"1e30 FLOP/s\""},
                                            {"nic: {bandwidth: \"200 Gb/s\"}",
                                             "nic: {bandwidth: \"200 Gb/s\"}\n    link: {latency: \"1000 s\"}"}}));
  REQUIRE(absurd.warnings.size() == 2);
  std::string all;
  for (const auto& warning : absurd.warnings) all += warning.render() + "\n";
  CHECK(all.find(":5:") != std::string::npos);  // the peak's line
  CHECK(all.find("accelerators.test-gpu.peak.bf16:") != std::string::npos);
  CHECK(all.find("is implausible: above 100 PFLOP/s, about 7x the densest shipping matrix peak") != std::string::npos);
  CHECK(all.find("cluster.network.link.latency: 1000 s is implausible: above 1 ms") != std::string::npos);
  CHECK(all.find("check the unit and the exponent") != std::string::npos);
  // At the bound, nothing is said.
  CHECK(load(edit(kBase, {{"bf16: \"300 TFLOP/s\"", "bf16: \"100 PFLOP/s\""}})).warnings.empty());
}

TEST_CASE("loader: simulation.calibration costs the compute model from the user's kernel measurements") {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim-calibration-test";
  std::filesystem::create_directories(dir);
  const std::string header =
      "accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,backward,bytes,time_s,spread_s,"
      "repeats,source\n";
  {
    std::ofstream(dir / "gemm.csv") << header << "test-gpu,gemm,bf16,4096,4096,4096,1,,,,,,,,,0.002,0,5,bench\n";
    std::ofstream(dir / "other.csv") << header << "h200-sxm,gemm,bf16,4096,4096,4096,1,,,,,,,,,0.001,0,5,bench\n";
  }
  const auto with = [&](const std::string& path) {
    return edit(kBase, {{"simulation: {seed: 3}", "simulation: {seed: 3, calibration: \"" + path + "\"}"}});
  };
  // A folder: its CSV files merged, every accelerator's rows kept (a serving pool on another
  // accelerator uses its own); the compute model takes this accelerator's.
  const Scenario calibrated = load(with(dir.string()));
  REQUIRE(calibrated.platform.calibration.rows.size() == 2);
  // The measured shape costs what was measured; the gemm class has a measurement: one notice left.
  const auto platform = runner::build_platform(calibrated);
  const models::OpEstimate measured = platform->compute().gemm({4096, 4096, 4096});
  CHECK(measured.time_s == doctest::Approx(0.002).epsilon(1e-9).scale(0));
  CHECK(measured.provenance == models::Provenance::measured_table);
  const models::OpEstimate roofline = runner::build_platform(load(kBase))->compute().gemm({4096, 4096, 4096});
  CHECK(roofline.provenance == models::Provenance::roofline);
  CHECK(roofline.time_s < 0.0015);
  REQUIRE(calibrated.notices.size() == 1);
  CHECK(calibrated.notices[0].find("attention bf16 (fa2) time is a roofline estimate") != std::string::npos);
  // A table without this accelerator, a missing path: errors at the key.
  CHECK(one_problem(with((dir / "other.csv").string())) ==
        "t.yaml:30:36: simulation.calibration: no rows for accelerator 'test-gpu' in '" + (dir / "other.csv").string() +
            "' (its rows are for: h200-sxm)");
  CHECK(one_problem(with((dir / "missing").string())).find("simulation.calibration: calibration file or folder '") !=
        std::string::npos);
  // Every accelerator the table has, by whole name (one may begin with another's name).
  std::ofstream(dir / "two.csv") << header << "h100-sxm-96gb,gemm,bf16,4096,4096,4096,1,,,,,,,,,0.001,0,5,bench\n"
                                 << "h100-sxm,gemm,bf16,4096,4096,4096,1,,,,,,,,,0.001,0,5,bench\n";
  CHECK(one_problem(with((dir / "two.csv").string())).find("(its rows are for: h100-sxm-96gb, h100-sxm)") !=
        std::string::npos);
  // Given with --set, a relative path is relative to the working directory.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const Scenario set = load(kBase, {"simulation.calibration=gemm.csv"});
  std::filesystem::current_path(cwd);
  CHECK(set.platform.calibration_path == "gemm.csv");
  CHECK(set.platform.calibration.rows.size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("loader: bad input, the framework, loss-kernel and per-op recompute keys") {
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  framework: titan"}})) ==
        "t.yaml:29:14: workload.framework: invalid value 'titan' (valid choices: megatron, torchtitan)");
  CHECK(one_problem(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  cross_entropy: fast"}}))
            .find("t.yaml:29:18: workload.cross_entropy: invalid value 'fast' (valid choices: auto, fused, eager, "
                  "compiled") == 0);
  // torchtitan's per-op policy is modelled for dense MHA/GQA layers: the MoE/MLA model is refused
  // at the key, with the reason.
  CHECK(one_problem(edit(kMoe, {{"micro_batch: 2", "micro_batch: 2\n  recompute: op"}})) ==
        "t.yaml:39:14: workload.recompute: recompute op (torchtitan's per-op checkpointing) is modelled for dense "
        "MHA/GQA models only; model 'tiny-moe' has experts");
  CHECK(load(edit(kBase, {{"micro_batch: 2", "micro_batch: 2\n  recompute: op\n  framework: torchtitan"}}))
            .training()
            .recompute == training::Recompute::op);
}

TEST_CASE("loader: power keys' bad input, each at its position (issue 28 part 4)") {
  const std::string with_power = edit(kBase, {{R"(    scale_up_bandwidth: "300 GB/s")", R"(    scale_up_bandwidth: "300 GB/s"
    power: {tdp: "500 W", idle: "100 W", memory: "600 W"})"}});
  // A memory-bound level above the (derived) compute level: the levels must be in order.
  CHECK(one_problem(with_power) ==
        "t.yaml:10:12: accelerators.test-gpu.power: power model: compute power 570.588 W must not be below "
        "memory-bound 600 W");
  const std::string sane = edit(with_power, {{R"(memory: "600 W")", R"(memory: "350 W")"}});
  // A power limit at or below idle.
  CHECK(one_problem(sane, {"power.accelerator_limit=80W"}) ==
        "--set power.accelerator_limit=80W: power.accelerator_limit: limit 80 W must be above accelerator "
        "'test-gpu''s idle power 100 W (its TDP: 500 W)");
  // Out of range: the power supplies' efficiency, a negative node power.
  CHECK(one_problem(sane, {"power.psu_efficiency=1.5"}).find("power.psu_efficiency") != std::string::npos);
  CHECK(one_problem(sane, {"power.node=-5W"}).find("power.node") != std::string::npos);
  // A limit without power data has no effect, and says so.
  const Scenario quiet = load(kBase, {"power.accelerator_limit=300W"});
  REQUIRE(quiet.warnings.size() == 1);
  CHECK(quiet.warnings[0].render() ==
        "--set power.accelerator_limit=300W: power.accelerator_limit: has no effect: accelerator 'test-gpu' has no "
        "power.tdp, so there is no power report to limit");
  // Set well, the limit reaches the platform.
  CHECK(load(sane, {"power.accelerator_limit=300W"}).platform.cluster.power.accelerator_limit_w == 300);
}

TEST_CASE("a job's model and pool accelerators come from the library as the primary's do") {
  // Until 2026-12-07 only the primary workload's presets were merged: a serving job naming
  // another model failed with "unknown model 'mixtral-8x7b' ... did you mean 'mixtral-8x7b'?".
  const std::string yaml = R"(schema_version: 1
name: two-models
include: [systems/dgx-h100.yaml]
cluster: {nodes: 2}
workload:
  kind: training
  model: llama-3-8b
  seq_len: 2048
  global_batch: 8
  parallelism: {tp: 8, pp: 1}
jobs:
  moe:
    kind: serving
    model: mixtral-8x7b
    accelerators: {first: 8, count: 8}
    pools:
      main: {replicas: 1, tp: 4, ep: 4}
      other: {replicas: 1, tp: 4, accelerator: h200-sxm}
    requests: {count: 10, arrival: {process: offline}}
)";
  const Scenario s = load_scenario_from_string(yaml, "two.yaml");
  REQUIRE(s.jobs.size() == 1);
  const auto& job = dynamic_cast<const serving::ServingSpec&>(*s.jobs.front().spec);
  CHECK(job.model.moe.num_experts == 8);
  REQUIRE(job.pools.size() == 2);
  REQUIRE(job.pools[1].accelerator.has_value());
  CHECK(job.pools[1].accelerator->name == "h200-sxm");
}

}  // namespace scenario_loader_test

namespace scenario_loader_test {

TEST_CASE("load_platform: the hardware without a workload; a written workload is not read, and said so") {
  const std::string platform_only = R"(schema_version: 1
name: two-nodes
include: [systems/dgx-h100.yaml]
cluster: {nodes: 2}
)";
  const Scenario platform = load_platform(ScenarioSource::text(platform_only, "p.yaml"));
  CHECK(platform.workload == nullptr);
  CHECK(platform.platform.cluster.network.nodes == 2);
  CHECK(platform.platform.cluster.accelerator.name == "h100-sxm");
  CHECK(platform.notices.empty());
  // load_scenario still needs the workload.
  try {
    (void)load_scenario_from_string(platform_only, "p.yaml");
    FAIL("expected ScenarioError");
  } catch (const ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].render().find("missing required key 'workload'") != std::string::npos);
  }
  // A workload (even one with a mistake) is not read: only the platform is used.
  const Scenario ignored = load_platform(
      ScenarioSource::text(platform_only + "workload: {kind: training, model: no-such-model}\n", "p.yaml"),
      {"cluster.nodes=4"});
  CHECK(ignored.platform.cluster.network.nodes == 4);
  REQUIRE(ignored.notices.size() == 1);
  CHECK(ignored.notices[0] ==
        "workload: not read: only the platform (cluster, power, cost, simulation) is used here");
  // The platform's own mistakes are reported as load_scenario reports them.
  try {
    (void)load_platform(ScenarioSource::text(platform_only + "simulation: {fidelty: flow}\n", "p.yaml"));
    FAIL("expected ScenarioError");
  } catch (const ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].render().rfind("p.yaml:5:14: simulation.fidelty: unknown key 'fidelty'", 0) == 0);
  }
}

}  // namespace scenario_loader_test
