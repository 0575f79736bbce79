#pragma once
/// The rules between a training job's parallel split, its batch and its model, each one
/// function: the scenario loader reports a broken rule at the key it names (with the key's
/// position), the simulation and the memory model throw its message, the parallelism search
/// skips the candidates that break it. Keys are relative to the workload ("parallelism.ep").
#include <cstdint>
#include <optional>
#include <string_view>

#include "models/llm/transformer_spec.hpp"
#include "sim/config/problems.hpp"

namespace clustersim::models {

/// Expert parallelism (ep > 1): the model has experts, ep divides them and dp x cp (the
/// expert-parallel group is carved out of the data-parallel ranks, as in Megatron-Core).
/// Key: parallelism.ep.
std::optional<config::RuleProblem> expert_parallel_problem(const TransformerSpec& model, int ep, int dp, int cp);

/// Tensor parallelism: tp divides the attention heads, and the key/value heads and tp divide
/// one another (K/V heads shard evenly, or are replicated when tp is a multiple of them).
/// Key: parallelism.tp.
std::optional<config::RuleProblem> tensor_parallel_problem(const TransformerSpec& model, int tp);

/// Context parallelism (cp > 1) splits each sequence into 2 x cp chunks (load-balanced ring
/// attention): seq_len is a multiple of 2 x cp. Key: seq_len.
std::optional<config::RuleProblem> context_parallel_problem(std::int64_t seq_len, int cp);

/// Every data-parallel replica runs whole micro-batches: global_batch is a multiple of
/// dp x micro_batch. Key: global_batch.
std::optional<config::RuleProblem> batch_split_problem(std::int64_t global_batch, int dp, std::int64_t micro_batch);

/// Virtual pipeline chunks and the interleaved schedule go together: vp > 1 needs it (key
/// parallelism.vp), and it needs vp > 1 (key parallelism.schedule). `schedule` is the
/// schedule's name, `interleaved` whether it is the interleaved one.
std::optional<config::RuleProblem> virtual_pipeline_problem(int vp, std::string_view schedule, bool interleaved);

}  // namespace clustersim::models
