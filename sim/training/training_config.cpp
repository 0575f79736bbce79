#include "sim/training/training_config.hpp"

namespace clustersim::training {

const config::NameTable<Recompute>& recompute_names() {
  static const config::NameTable<Recompute> names(
      "recompute policy",
      {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}, {"op", Recompute::op}});
  return names;
}

const config::NameTable<OffloadTarget>& offload_target_names() {
  static const config::NameTable<OffloadTarget> names("offload target",
                                                      {{"host", OffloadTarget::host}, {"pool", OffloadTarget::pool}});
  return names;
}

const config::NameTable<PipelineSchedule>& pipeline_schedule_names() {
  static const config::NameTable<PipelineSchedule> names("pipeline schedule",
                                                         {{"1f1b", PipelineSchedule::one_f_one_b},
                                                          {"gpipe", PipelineSchedule::gpipe},
                                                          {"interleaved", PipelineSchedule::interleaved}});
  return names;
}

const config::NameTable<AttentionKernel>& attention_kernel_names() {
  static const config::NameTable<AttentionKernel> names("attention kernel", {{"flash", AttentionKernel::flash},
                                                                             {"fa2", AttentionKernel::fa2},
                                                                             {"fa3", AttentionKernel::fa3},
                                                                             {"cudnn", AttentionKernel::cudnn},
                                                                             {"fa4", AttentionKernel::fa4},
                                                                             {"fused_sdpa", AttentionKernel::fused_sdpa},
                                                                             {"pallas", AttentionKernel::pallas},
                                                                             {"unfused", AttentionKernel::unfused}});
  return names;
}

std::optional<models::AttentionKernelFamily> explicit_family(AttentionKernel attention) {
  using F = models::AttentionKernelFamily;
  switch (attention) {
    case AttentionKernel::fa2: return F::fa2;
    case AttentionKernel::fa3: return F::fa3;
    case AttentionKernel::cudnn: return F::cudnn;
    case AttentionKernel::fa4: return F::fa4;
    case AttentionKernel::fused_sdpa: return F::fused_sdpa;
    case AttentionKernel::pallas: return F::pallas;
    case AttentionKernel::flash:
    case AttentionKernel::unfused: break;
  }
  return std::nullopt;
}

const config::NameTable<Zero3Granularity>& zero3_granularity_names() {
  static const config::NameTable<Zero3Granularity> names(
      "ZeRO-3 granularity", {{"layer", Zero3Granularity::layer}, {"tensor", Zero3Granularity::tensor}});
  return names;
}

const config::NameTable<CrossEntropy>& cross_entropy_names() {
  static const config::NameTable<CrossEntropy> names("cross-entropy kernel", {{"auto", CrossEntropy::automatic},
                                                                              {"fused", CrossEntropy::fused},
                                                                              {"eager", CrossEntropy::eager},
                                                                              {"compiled", CrossEntropy::compiled}});
  return names;
}

models::LossKernel loss_kernel(CrossEntropy choice, TrainingFramework framework) {
  switch (choice) {
    case CrossEntropy::fused: return models::LossKernel::fused;
    case CrossEntropy::eager: return models::LossKernel::eager;
    case CrossEntropy::compiled: return models::LossKernel::compiled;
    case CrossEntropy::automatic: break;
  }
  return framework == TrainingFramework::torchtitan ? models::LossKernel::eager : models::LossKernel::fused;
}

const config::NameTable<TrainingFramework>& training_framework_names() {
  static const config::NameTable<TrainingFramework> names(
      "training framework", {{"megatron", TrainingFramework::megatron}, {"torchtitan", TrainingFramework::torchtitan}});
  return names;
}

}  // namespace clustersim::training
