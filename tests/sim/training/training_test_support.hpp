#pragma once
// Small, hand-written cluster and models shared by the training tests.
#include <memory>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/platform/session.hpp"
#include "sim/training/step_iterations.hpp"
#include "sim/training/training_simulation.hpp"
#include "sim/training/training_step.hpp"
#include "topologies/topology.hpp"

namespace clustersim::training::testing {

/// 1 PFLOP/s bf16, 3 TB/s HBM, 132 units, fa3 attention: H100-like round numbers.
inline models::AcceleratorSpec test_accelerator() {
  models::AcceleratorSpec spec;
  spec.name = "test-gpu";
  spec.peak_flops_per_s[models::Dtype::bf16] = 1e15;
  spec.peak_flops_per_s[models::Dtype::fp8] = 2e15;
  spec.vector_flops_per_s = 60e12;
  spec.special_function_ops_per_s = 4e12;  // exp2 per second (H100: 3.9e12)
  spec.matrix_path = models::MatrixPath::wgmma;  // Hopper: fa3 runs here
  spec.attention_kernel = models::AttentionKernelFamily::fa3;
  spec.hbm_capacity_bytes = 80e9;
  spec.hbm_bytes_per_s = 3e12;
  spec.compute_units = 132;
  spec.matmul_efficiency = 0.8;
  spec.memory_efficiency = 0.85;
  spec.kernel_launch_s = 4e-6;
  spec.scale_up_bytes_per_s = 450e9;
  return spec;
}

/// `nodes` x `per_node` on a single scale-out switch; 450 GB/s NVSwitch, 400 Gb/s NICs.
/// `free_network` makes links so fast and latency-free that transfers cost ~0. Links are ideal
/// (efficiency 1, not the scenario defaults).
inline topologies::ClusterNetworkSpec test_cluster(int nodes, int per_node, bool free_network = false) {
  topologies::ClusterNetworkSpec spec;
  spec.nodes = nodes;
  spec.accelerators_per_node = per_node;
  spec.scale_up.bytes_per_s = free_network ? 1e21 : 450e9;
  spec.scale_up.latency_s = free_network ? 0.0 : 1e-6;
  spec.scale_out.topology = "switch";
  spec.scale_out.radix = 64;
  spec.scale_out.nics_per_node = per_node;
  spec.scale_out.nic_bytes_per_s = free_network ? 1e21 : 50e9;
  spec.scale_out.link_latency_s = free_network ? 0.0 : 1e-6;
  spec.scale_up.efficiency = 1.0;
  spec.scale_out.efficiency = 1.0;
  return spec;
}

/// A platform of test accelerators on `cluster` with collective settings `comm`: HBM only, no
/// power data, and no compute slowdown while communicating (overlap_sms 0), like Bench.
inline platform::PlatformSpec test_platform_spec(const topologies::ClusterNetworkSpec& cluster,
                                                 models::CommConfig comm = {}) {
  platform::PlatformSpec spec;
  spec.cluster.accelerator = test_accelerator();
  spec.cluster.network = cluster;
  spec.cluster.memory_levels = {
      {models::MemoryLevelKind::hbm, spec.cluster.accelerator.hbm_capacity_bytes, spec.cluster.accelerator.hbm_bytes_per_s}};
  spec.comm = std::move(comm);
  spec.overlap_sms = 0;
  return spec;
}

/// GPT with a 4h gelu MLP, MHA, untied embeddings.
inline models::TransformerSpec small_gpt(int layers = 4, std::int64_t hidden = 1024, std::int64_t vocab = 32768) {
  models::TransformerSpec model;
  model.name = "test-gpt";
  model.hidden_size = hidden;
  model.num_hidden_layers = layers;
  model.num_attention_heads = 16;
  model.num_key_value_heads = 16;
  model.intermediate_size = 4 * hidden;
  model.vocab_size = vocab;
  model.max_position_embeddings = 4096;
  model.hidden_act = models::Activation::gelu;
  return model;
}

/// Collective settings without any latency (with a free network: collectives cost ~0).
inline models::CommConfig latency_free_comm() {
  models::CommConfig config;
  models::TunerParams& t = config.tuner;
  t.ll_base_latency_s = t.ll128_base_latency_s = t.simple_base_latency_s = 0;
  t.ll_step_latency_s = t.ll128_step_latency_s = t.simple_step_latency_s = t.nvls_step_latency_s = 0;
  return config;
}

/// Sessions of `fidelity` on `setup`'s collective model alone (the step by itself on its
/// network), with the network's `faults` under flow (not owned; may be null).
inline SessionFactory sessions_alone(const TrainingSetup& setup,
                                     platform::Fidelity fidelity = platform::Fidelity::analytical,
                                     const topologies::NetworkFaultPlan* faults = nullptr) {
  return [&setup, fidelity, faults] {
    platform::SessionOptions options;
    options.fidelity = fidelity;
    options.mode = setup.mode;
    options.seed = setup.seed;
    auto session = std::make_unique<platform::Session>(setup.collectives, options);
    if (faults != nullptr && fidelity == platform::Fidelity::flow) session->comm().apply_link_faults(*faults);
    return session;
  };
}

/// `setup`'s step alone on a session of sessions_alone.
inline TrainingResult run_alone(const TrainingSetup& setup, platform::Fidelity fidelity = platform::Fidelity::analytical,
                                const topologies::NetworkFaultPlan* faults = nullptr) {
  return run_step(setup, *sessions_alone(setup, fidelity, faults)());
}

/// The nominal step of `setup` alone (recording its task times in symmetric mode), then its
/// iterations, every session from sessions_alone: a job alone on its network, as TrainingJob
/// runs them.
inline StepStatistics iterations_alone(const TrainingSetup& setup, IterationSettings settings,
                                       platform::Fidelity fidelity = platform::Fidelity::analytical,
                                       const topologies::NetworkFaultPlan* faults = nullptr) {
  TrainingSetup recorded = setup;
  recorded.record_task_times = setup.mode == platform::SimulationMode::symmetric;
  settings.session = sessions_alone(recorded, fidelity, faults);
  const auto session = settings.session();
  TrainingStep step(recorded);
  step.start(*session, {});
  session->engine().run();
  (void)step.result(*session);  // checks that the step completed
  return simulate_iterations(recorded, settings, step);
}

/// Owns everything a TrainingSetup refers to.
struct Bench {
  Bench(const topologies::ClusterNetworkSpec& cluster, TrainingWorkload w, bool free_network = false)
      : workload(std::move(w)),
        topology(topologies::Topology::build(cluster)),
        compute(test_accelerator()),
        collectives(topology, free_network ? latency_free_comm() : models::CommConfig{}, models::CollectiveHardware{}) {}
  Bench(const topologies::ClusterNetworkSpec& cluster, TrainingWorkload w, models::CommConfig comm)
      : workload(std::move(w)),
        topology(topologies::Topology::build(cluster)),
        compute(test_accelerator()),
        collectives(topology, std::move(comm), models::CollectiveHardware{}) {}

  TrainingResult run(std::uint64_t seed = 1) const {
    return run_alone(TrainingSetup{workload, compute, collectives, topology, seed});
  }

  TrainingWorkload workload;
  topologies::Topology topology;
  models::ComputeModel compute;
  models::CollectiveModel collectives;
};

/// small_gpt with 8 routed experts (top-2, one shared expert) in every layer but the first.
inline models::TransformerSpec small_moe() {
  auto model = small_gpt(4, 1024, 32768);
  model.name = "test-moe";
  model.moe.num_experts = 8;
  model.moe.num_experts_per_tok = 2;
  model.moe.n_shared_experts = 1;
  model.moe.moe_intermediate_size = 1024;
  model.moe.first_k_dense_replace = 1;
  return model;
}

inline TrainingWorkload workload(models::TransformerSpec model, int tp, int pp, int dp,
                                 std::int64_t global_batch, std::int64_t seq_len = 2048) {
  TrainingWorkload w;
  w.model = std::move(model);
  w.seq_len = seq_len;
  w.global_batch = global_batch;
  w.micro_batch = 1;
  w.parallelism.tp = tp;
  w.parallelism.pp = pp;
  w.parallelism.dp = dp;
  w.recompute = Recompute::none;
  // The host never gates these fixtures' tiny kernels: tests of other mechanisms see only them
  // (the host dispatch tests set it).
  w.host_op_time = 0;
  return w;
}

}  // namespace clustersim::training::testing
