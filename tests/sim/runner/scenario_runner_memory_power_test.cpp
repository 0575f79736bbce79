// The runner's memory check (before simulating), offload cost and power report (issue 4).
#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/llm/memory_footprint.hpp"
#include "sim/engine/error.hpp"
#include "sim/report/training_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/training/analytical_step.hpp"
#include "sim/training/training_job.hpp"

namespace scenario_runner_memory_power_test {

using ::clustersim::tolerance::relative_approx;

using namespace clustersim;

namespace {

/// `workload_extra`: more workload keys, one "  key: value" line each.
scenario::Scenario gpt_on_a100(const std::string& model, const std::string& parallelism,
                               const std::string& workload_extra = "") {
  return scenario::load_scenario_from_string(R"(schema_version: 1
name: memory-power-test
include: [systems/dgx-a100.yaml]
cluster: {nodes: 2}
workload:
  kind: training
  model: )" + model + R"(
  seq_len: 2048
  global_batch: 32
  parallelism: )" + parallelism + "\n" + workload_extra + R"(
cost: {accelerator_hour_usd: 2}
)",
                                             "memory-power-test.yaml");
}

}  // namespace

TEST_CASE("a scenario that does not fit is an error before anything is simulated") {
  const auto scenario = gpt_on_a100("megatron-gpt-1t", "{tp: 8, pp: 2, dp: 1}");
  CHECK_THROWS_AS(runner::run_training(scenario), models::DoesNotFitError);
  try {
    runner::run_training(scenario);
  } catch (const SimulationError& e) {
    const std::string message = e.what();
    // At the setting that chose the layout, as a load error would be (line 10, column 16).
    CHECK(message.rfind("memory-power-test.yaml:10:16: workload.parallelism: does not fit: needs ", 0) == 0);
    CHECK(message.find(" of 80.0 GiB on pipeline stage 0 (optimizer ") != std::string::npos);
    CHECK(message.find("weights ") != std::string::npos);
    // Nothing of 16 A100s holds a 1T model's state: the message says so instead of a remedy.
    CHECK(message.find("; no other split of these 16 accelerators, ZeRO stage or full recompute fits") !=
          std::string::npos);
  }
}

TEST_CASE("a workload that does not enforce the fit is simulated and reports the excess") {
  auto scenario = gpt_on_a100("megatron-gpt-1t", "{tp: 8, pp: 2, dp: 1}", "  enforce_memory_fit: false\n");
  auto timed = scenario.training();
  const auto result = runner::run_training(scenario);
  CHECK(result.step_time_s > 0);
  REQUIRE(result.memory.computed);
  CHECK(result.memory.total_bytes > result.memory.capacity_bytes);
  timed.enforce_memory_fit = true;
  scenario.set_training(timed);
  CHECK_THROWS_AS(runner::run_training(scenario), models::DoesNotFitError);
}

TEST_CASE("the result carries the memory footprint and the power report") {
  const auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  const auto result = runner::run_training(scenario);
  const auto& m = result.memory;
  REQUIRE(m.computed);
  CHECK(m.capacity_bytes == doctest::Approx(81920.0 * 1024 * 1024));  // the A100 80GB's nvidia-smi total
  CHECK(m.total_bytes == doctest::Approx(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes +
                                         m.activations_bytes + m.embedding_logits_bytes + m.recompute_buffer_bytes +
                                         m.workspace_bytes + m.fragmentation_bytes));
  CHECK(m.total_bytes < m.capacity_bytes);
  const auto& p = result.power;
  REQUIRE(p.computed);
  CHECK(p.energy_per_step_j == doctest::Approx(p.static_j + p.wait_j + p.memory_j + p.compute_j + p.communication_j +
                                               p.nodes_j + p.network_j + p.psu_loss_j));
  CHECK(p.devices_j == doctest::Approx(p.static_j + p.wait_j + p.memory_j + p.compute_j + p.communication_j));
  CHECK(p.devices_average_w == doctest::Approx(p.devices_j / result.step_time_s));
  CHECK(p.static_j == doctest::Approx(16 * 50.0 * result.step_time_s));  // A100 idle 50 W
  CHECK(p.cluster_average_w == doctest::Approx(p.energy_per_step_j / result.step_time_s));
  CHECK(p.energy_per_token_j == doctest::Approx(p.energy_per_step_j / (32.0 * 2048)));
  CHECK(p.device_peak_w <= 400.0);
  REQUIRE(p.cost_computed);
  CHECK(p.cost_per_step_usd == doctest::Approx(16 * 2.0 * result.step_time_s / 3600));
  // Every pipeline stage's memory, the peak one matching the headline figures.
  REQUIRE(m.stages.size() == 2);
  CHECK(m.stages[1].stage == 1);
  CHECK(m.stages[static_cast<std::size_t>(m.peak_stage)].total_bytes == doctest::Approx(m.total_bytes));
  for (const auto& s : m.stages) CHECK(s.total_bytes <= m.total_bytes);
  CHECK(m.stages[0].activations_bytes >= m.stages[1].activations_bytes);  // 1F1B: stage 0 holds more in flight
  CHECK_FALSE(result.run.computed);
}

TEST_CASE("workload.train_tokens: steps, days, GPU-hours, energy and cost of a whole run") {
  auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  auto tokens = scenario.training();
  tokens.train_tokens = 1e9;
  scenario.set_training(tokens);  // 1e9 / (32 x 2048 tokens per step) = 15258.8 -> 15259 steps
  const auto result = runner::run_training(scenario);
  const auto& run = result.run;
  REQUIRE(run.computed);
  CHECK(run.steps == 15259);
  CHECK(run.time_s == doctest::Approx(15259 * result.step_time_s));
  CHECK(run.gpu_hours == doctest::Approx(run.time_s * 16 / 3600));
  CHECK(run.energy_j == doctest::Approx(15259 * result.power.energy_per_step_j));
  REQUIRE(run.cost_computed);
  CHECK(run.cost_usd == doctest::Approx(run.gpu_hours * 2.0));  // $2 per accelerator-hour, no electricity price
}

TEST_CASE("throttling is reported by default and applied in the timeline on request") {
  auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  scenario.platform.cluster.power.accelerator_limit_w = 150;  // an A100 held far below its 400 W TDP
  const auto reported = runner::run_training(scenario);
  const double factor = reported.power.throttle_factor;
  CHECK(factor < 1.0);
  CHECK_FALSE(reported.power.throttling_applied);
  scenario.platform.apply_throttling = true;
  const auto applied = runner::run_training(scenario);
  CHECK(applied.power.throttling_applied);
  // The clock is found from the step at full clock, so it is the factor the report gives.
  CHECK(applied.power.throttle_factor == doctest::Approx(factor).epsilon(1e-12));
  // Every kernel runs at that clock. The optimizer step alone stretches by exactly 1 / factor;
  // the forward and backward kernels by a little less, since the time they lost sharing the GPU
  // with communication does not stretch. The pipeline bubble waits on the other stage's
  // compute, so it grows too: the step grows by more than the compute alone (the old
  // after-the-fact rescaling added compute x (1 / factor - 1) only), and by less than if
  // everything, communication included, ran 1 / factor as long.
  CHECK(applied.breakdown.optimizer_s == doctest::Approx(reported.breakdown.optimizer_s / factor).epsilon(1e-6));
  CHECK(applied.breakdown.compute_s <= reported.breakdown.compute_s / factor * (1 + 1e-9));
  CHECK(applied.breakdown.compute_s >= 0.9 * reported.breakdown.compute_s / factor);
  const double compute_growth = applied.breakdown.compute_s - reported.breakdown.compute_s;
  CHECK(applied.step_time_s > reported.step_time_s + compute_growth);
  CHECK(applied.step_time_s < reported.step_time_s / factor);
  CHECK(applied.tokens_per_s == doctest::Approx(32.0 * 2048 / applied.step_time_s));
  // At that clock the busy phase draws no more than the limit.
  CHECK(applied.power.device_peak_w <= 150.0 + 1e-6);
}

TEST_CASE("the throttle calibration runs the step on the platform's network, its link faults included") {
  // gpu0's NIC at 0.2 % of its bandwidth: the pipeline sends crossing it stretch the step, so at
  // full clock the device waits longer and draws less on average. The clock is calibrated on
  // that step (the one the scenario runs), not on the step of an intact network.
  auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  scenario.platform.cluster.power.accelerator_limit_w = 150;
  const double intact_factor = runner::run_training(scenario).power.throttle_factor;
  scenario = scenario::load_scenario_from_string(R"(schema_version: 1
name: throttle-faults
include: [systems/dgx-a100.yaml]
cluster:
  nodes: 2
  network:
    faults:
      slow: {link: gpu0-leaf0, at: 0 s, bandwidth_fraction: 0.002}
workload:
  kind: training
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 32
  parallelism: {tp: 8, pp: 2, dp: 1}
power: {accelerator_limit: 150 W}
)",
                                                  "throttle-faults.yaml");
  const auto reported = runner::run_training(scenario);
  REQUIRE(reported.link_faults.computed);
  CHECK(reported.link_faults.lost_share > 0.3);
  const double faulty_factor = reported.power.throttle_factor;
  CHECK(std::abs(faulty_factor - intact_factor) > 1e-4);
  scenario.platform.apply_throttling = true;
  const auto applied = runner::run_training(scenario);
  CHECK(applied.power.throttling_applied);
  CHECK(applied.power.throttle_factor == doctest::Approx(faulty_factor).epsilon(1e-12));
}

TEST_CASE("optimizer offload adds the host-link transfer of the optimizer shard") {
  auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  const auto base = runner::run_training(scenario);
  auto offload = scenario.training();
  offload.memory.offload_optimizer = true;
  scenario.set_training(offload);
  const auto offloaded = runner::run_training(scenario);
  CHECK(offloaded.memory.optimizer_bytes == 0);
  auto inputs = training::footprint_inputs(scenario.training());
  inputs.offload_optimizer = false;
  // The breakdown's stage is stage 0 (embedding and its layers): its shard, not the last stage's
  // (which adds the final norm's 2304 x 12 B, 0.86 us at 32 GB/s: hidden by the absolute tolerance).
  const double shard = models::stage_footprint(inputs, 0).optimizer_bytes;
  CHECK(offloaded.breakdown.offload_s == relative_approx(2e-6 + shard / 32e9));
  // The host's gradient-norm sync before the optimizer (one issue) runs while the state moves.
  CHECK(offloaded.step_time_s == doctest::Approx(base.step_time_s - scenario.training().host_op_time_s() +
                                                 offloaded.breakdown.offload_s));
}

TEST_CASE("optimizer offload to a shared memory pool: each accelerator its link or its share of the pool's port") {
  // 16 A100s on 2 nodes, tp 8 pp 2; a pool per node (8 accelerators). With a 640 GB/s port
  // and 64 GB/s links, 8 accelerators at once get their link each; with a 128 GB/s port they
  // share it, 16 GB/s each.
  auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  auto offload = scenario.training();
  offload.memory.offload_optimizer = true;
  offload.memory.offload_target = training::OffloadTarget::pool;
  scenario.set_training(offload);
  scenario.platform.cluster.memory_pool = {8, 2e12, 640e9, 64e9, 1e-6};
  auto inputs = training::footprint_inputs(scenario.training());
  inputs.offload_optimizer = false;
  const double shard = models::stage_footprint(inputs, 0).optimizer_bytes;
  CHECK(runner::run_training(scenario).breakdown.offload_s == relative_approx(1e-6 + shard / 64e9));
  scenario.platform.cluster.memory_pool.bytes_per_s = 128e9;
  CHECK(runner::run_training(scenario).breakdown.offload_s == relative_approx(1e-6 + shard / 16e9));
  // The pool must hold the state of all 8: a pool smaller than that does not fit.
  scenario.platform.cluster.memory_pool.capacity_bytes = 4 * shard;
  CHECK_THROWS_WITH_AS(runner::run_training(scenario), doctest::Contains("does not fit: 8 accelerators x"),
                       models::DoesNotFitError);
}

TEST_CASE("the footprint of an MoE scenario gets its expert parallelism and routing") {
  auto scenario = scenario::load_scenario_from_string(R"(schema_version: 1
name: mixtral-memory
include: [systems/dgx-h100.yaml]
cluster: {nodes: 2}
workload:
  model: mixtral-8x7b
  seq_len: 4096
  global_batch: 32
  parallelism: {tp: 2, dp: 8, ep: 8, zero: 0}
  moe: {imbalance: 1.25}
)",
                                                      "mixtral-memory.yaml");
  const models::FootprintInputs inputs = training::footprint_inputs(scenario.training());
  CHECK(inputs.ep == 8);
  CHECK(inputs.moe.imbalance == 1.25);
  // One expert of each of the 32 layers per device (8 experts / ep 8), halved by tp 2; the
  // rest (attention, norms, embedding, LM head) halved by tp, the router whole.
  const auto& m = inputs.model;
  const double experts = 32 * m.routed_expert_parameters() / 16;
  const double dense = (32 * (m.moe_layer_parameters() - m.routed_expert_parameters() - m.router_parameters()) +
                        2 * 32000.0 * 4096) / 2 + 32 * m.router_parameters() + 4096;
  CHECK(models::stage_footprint(inputs, 0).weights_bytes == doctest::Approx(2 * (dense + experts)));
}

TEST_CASE("the footprint's gradient buffer follows gradient_reduce_dtype; fp8 turns on TE's terms") {
  const std::string yaml = R"(schema_version: 1
name: grad-dtype
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload:
  model: llama-2-7b
  seq_len: 4096
  global_batch: 8
  parallelism: {tp: 8}
)";
  // Megatron-Core's grad buffer is fp32 only when the reduction is (grad_reduce_in_fp32).
  auto scenario = scenario::load_scenario_from_string(yaml, "grad-dtype.yaml");
  models::FootprintInputs inputs = training::footprint_inputs(scenario.training());
  CHECK(inputs.gradient_bytes_per_param == 2);
  CHECK_FALSE(inputs.fp8);
  scenario = scenario::load_scenario_from_string(yaml, "grad-dtype.yaml", {"workload.gradient_reduce_dtype=fp32"});
  inputs = training::footprint_inputs(scenario.training());
  CHECK(inputs.gradient_bytes_per_param == 4);
  // tf32 training (fp32 parameters) keeps fp32 gradients even with a bf16 reduction: the
  // buffer takes the parameter dtype.
  scenario = scenario::load_scenario_from_string(yaml, "grad-dtype.yaml", {"workload.precision=tf32"});
  CHECK(training::footprint_inputs(scenario.training()).gradient_bytes_per_param == 4);
  scenario = scenario::load_scenario_from_string(yaml, "grad-dtype.yaml", {"workload.precision=fp8"});
  inputs = training::footprint_inputs(scenario.training());
  CHECK(inputs.fp8);
  CHECK(models::stage_footprint(inputs, 0).fp8_weight_cache_bytes > 0);
}

TEST_CASE("ZeRO-3 working-set keys reach the footprint, DeepSpeed's defaults when unset") {
  const std::string yaml = R"(schema_version: 1
name: zero3-caps
include: [systems/dgx-a100.yaml]
cluster: {nodes: 1}
workload:
  model: gpt3-175b
  seq_len: 2048
  global_batch: 8
  parallelism: {dp: 8, zero: 3}
  recompute: full
)";
  auto scenario = scenario::load_scenario_from_string(yaml, "zero3-caps.yaml");
  models::FootprintInputs inputs = training::footprint_inputs(scenario.training());
  CHECK(inputs.zero3_max_live_parameters == 1e9);
  CHECK(inputs.zero3_prefetch_bucket_parameters == 5e8);
  CHECK(inputs.zero3_reduce_bucket_parameters == 5e8);
  scenario = scenario::load_scenario_from_string(
      yaml, "zero3-caps.yaml",
      {"workload.memory.zero3_max_live_parameters=3e9", "workload.memory.zero3_prefetch_bucket_parameters=2e9",
       "workload.memory.zero3_reduce_bucket_parameters=1e8"});
  inputs = training::footprint_inputs(scenario.training());
  CHECK(inputs.zero3_max_live_parameters == 3e9);
  CHECK(inputs.zero3_prefetch_bucket_parameters == 2e9);
  CHECK(inputs.zero3_reduce_bucket_parameters == 1e8);
  CHECK_THROWS_WITH(scenario::load_scenario_from_string(yaml, "zero3-caps.yaml",
                                                         {"workload.memory.zero3_reduce_bucket_parameters=-1"}),
                    doctest::Contains("zero3_reduce_bucket_parameters"));
}

TEST_CASE("activation offload copies run beside compute on the host link; only what compute does not hide shows") {
  auto scenario = gpt_on_a100("megatron-gpt-1.7b", "{tp: 8, pp: 2, dp: 1}");
  const auto base = runner::run_training(scenario);
  auto offload = scenario.training();
  offload.memory.offload_activations = true;
  scenario.set_training(offload);
  // At the A100's 32 GB/s host link the copies hide behind the compute they overlap.
  const auto hidden = runner::run_training(scenario);
  CHECK(hidden.step_time_s == doctest::Approx(base.step_time_s).epsilon(0.02));
  // A 100x slower link cannot keep up: the backward passes wait for their activations.
  scenario.platform.cluster.memory_levels.back().bytes_per_s /= 100;
  REQUIRE(scenario.platform.cluster.memory_levels.back().kind == models::MemoryLevelKind::host);
  const auto slow = runner::run_training(scenario);
  CHECK(slow.breakdown.offload_s > 0.1 * slow.step_time_s);
  CHECK(slow.step_time_s > base.step_time_s + 0.5 * slow.breakdown.offload_s);
  // The closed form of the search charges the copies' excess over compute the same way.
  const auto platform = runner::build_platform(scenario);
  const training::TrainingSetup setup = training::training_setup(scenario.training(), *platform,
                                                                 scenario.primary_allocation(), scenario.simulation);
  const auto estimate = training::estimate_training_step(setup);
  CHECK(estimate.step_time_s == doctest::Approx(slow.step_time_s).epsilon(0.1));
  CHECK(estimate.breakdown.offload_s > 0);
}

TEST_CASE("enforce_memory_fit: false simulates a footprint over capacity and reports the overflow") {
  const std::string yaml = R"(schema_version: 1
name: over
include: [systems/dgx-a100.yaml]
cluster:
  nodes: 2
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: training
  model: megatron-gpt-1t
  seq_len: 2048
  global_batch: 16
  parallelism: {tp: 8, pp: 2, dp: 1}
  enforce_memory_fit: false
)";
  const auto scenario = scenario::load_scenario_from_string(yaml, "over.yaml");
  const auto result = runner::run_training(scenario);
  CHECK(result.step_time_s > 0);
  CHECK(result.memory.total_bytes > result.memory.capacity_bytes);
  const auto note = std::find_if(result.notes.begin(), result.notes.end(),
                                 [](const std::string& n) { return n.find("GiB over capacity; simulated anyway") != std::string::npos; });
  CHECK(note != result.notes.end());
  const auto json = report::training_result_json(scenario, result);
  CHECK(json["memory"]["over_capacity_bytes"].get<double>() > 0);
  CHECK_THROWS_AS(runner::run_training(scenario::load_scenario_from_string(
                      yaml.substr(0, yaml.find("  enforce_memory_fit")), "fits.yaml")),
                  models::DoesNotFitError);
}

namespace {

/// The peak stage's footprint of a scenario's training workload, and its device capacity.
std::pair<double, double> peak_and_capacity(const std::string& yaml) {
  const auto scenario = scenario::load_scenario_from_string("name: published-layout\n" + yaml, "published-layout.yaml");
  const auto footprint = models::training_footprint(training::footprint_inputs(scenario.training()));
  return {footprint.peak().total_bytes, scenario.platform.cluster.accelerator.hbm_capacity_bytes};
}

}  // namespace

TEST_CASE("layouts that published production runs used fit in device memory") {
  // MLPerf Training v4.0, NVIDIA GPT-3 175B on 64 DGX H100 (mlcommons/training_results_v4.0
  // NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_64x8x128x4x8_mbs2.sh: TP4 PP8
  // interleaved 4, micro-batch 2, MINIBS 128 -> 64 micro-batches per pipeline, FP8, no activation
  // checkpointing, dropout 0 (conf/custom.yaml), distributed Adam with bf16 gradient sync, FP8
  // parameters (FP8_PARAMS=True in the round's config_common.sh)).
  const auto [gpt3, h100] = peak_and_capacity(R"(schema_version: 1
include: [systems/dgx-h100.yaml]
cluster: {nodes: 64}
workload:
  kind: training
  model: gpt3-175b
  seq_len: 2048
  global_batch: 2048
  micro_batch: 2
  precision: fp8
  fp8_params: true
  dropout: 0
  gradient_reduce_dtype: bf16
  parallelism: {tp: 4, pp: 8, dp: 16, vp: 4, schedule: interleaved, sequence_parallel: true, zero: 1}
  recompute: none
  tp_comm_overlap: true
)");
  CHECK(h100 == doctest::Approx(81559.0 * 1024 * 1024).epsilon(1e-12));  // nvidia-smi's total
  CHECK(gpt3 < h100);
  CHECK(gpt3 > 0.8 * h100);  // a layout tuned to fill the device, not a loose bound
  // Llama 3 (arXiv:2407.21783, Sec. 3.3): 405B at 8K tokens on 16K H100s, TP8 PP16, 16
  // micro-batches per pipeline, one layer fewer on the first and last stage, no activation
  // checkpointing, FSDP sharding gradients and optimizer state (ZeRO 2 here), fp32 gradients.
  const auto [llama3, h100b] = peak_and_capacity(R"(schema_version: 1
include: [systems/dgx-h100.yaml]
cluster: {nodes: 2048, network: {topology: fat-tree, tiers: 3, radix: 64}}
workload:
  kind: training
  model: llama-3.1-405b
  seq_len: 8192
  global_batch: 2048
  precision: bf16
  gradient_reduce_dtype: fp32
  parallelism: {tp: 8, pp: 16, dp: 128, sequence_parallel: true, zero: 2, stage_layers: [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]}
  recompute: none
)");
  CHECK(llama3 < h100b);
  CHECK(llama3 > 0.8 * h100b);
  // Llama-3.1-405B on 64 DGX B200 (mlcommons/training_results_v5.1 NVIDIA llama31_405b
  // config_DGXB200_64x8x144xtp4pp8cp2_cg.sh; the Megatron-Bridge recipe's split): TP4 PP8 CP2
  // interleaved 8 with the embedding and the loss in virtual stages of their own
  // (ASYM_PP_EMBED/ASYM_PP_LOSS: one layer in the first and the last of 64), FP8.
  std::string layers = "[1";
  for (int i = 0; i < 62; ++i) layers += ", 2";
  layers += ", 1]";
  const auto [b200_run, b200] = peak_and_capacity(R"(schema_version: 1
include: [systems/dgx-b200.yaml]
cluster: {nodes: 64}
workload:
  kind: training
  model: llama-3.1-405b
  seq_len: 8192
  global_batch: 1152
  precision: fp8
  parallelism: {tp: 4, pp: 8, cp: 2, dp: 8, vp: 8, schedule: interleaved, sequence_parallel: true, zero: 1, stage_layers: )" +
                                                   layers + R"(}
  recompute: none
)");
  CHECK(b200 == doctest::Approx(183359.0 * 1024 * 1024).epsilon(1e-12));
  CHECK(b200_run < b200);
}

}  // namespace scenario_runner_memory_power_test
