#include "sim/training/training_config.hpp"

namespace clustersim::training {

const config::NameTable<Recompute> &recompute_names() {
  static const config::NameTable<Recompute> names(
      "recompute policy", {{"none", Recompute::none},
                           {"selective", Recompute::selective},
                           {"full", Recompute::full},
                           {"op", Recompute::op}});
  return names;
}

const config::NameTable<PipelineSchedule> &pipeline_schedule_names() {
  static const config::NameTable<PipelineSchedule> names(
      "pipeline schedule", {{"1f1b", PipelineSchedule::one_f_one_b},
                            {"gpipe", PipelineSchedule::gpipe},
                            {"interleaved", PipelineSchedule::interleaved}});
  return names;
}

const config::NameTable<AttentionKernel> &attention_kernel_names() {
  static const config::NameTable<AttentionKernel> names(
      "attention kernel", {{"flash", AttentionKernel::flash},
                           {"fa2", AttentionKernel::fa2},
                           {"fa3", AttentionKernel::fa3},
                           {"cudnn", AttentionKernel::cudnn},
                           {"unfused", AttentionKernel::unfused}});
  return names;
}

const config::NameTable<Zero3Granularity> &zero3_granularity_names() {
  static const config::NameTable<Zero3Granularity> names(
      "ZeRO-3 granularity", {{"layer", Zero3Granularity::layer},
                             {"tensor", Zero3Granularity::tensor}});
  return names;
}

const config::NameTable<TrainingFramework> &training_framework_names() {
  static const config::NameTable<TrainingFramework> names(
      "training framework", {{"megatron", TrainingFramework::megatron},
                             {"torchtitan", TrainingFramework::torchtitan}});
  return names;
}

} // namespace clustersim::training
