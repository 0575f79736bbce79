#include "sim/training/data_parallel.hpp"

namespace clustersim::training {

std::vector<DataParallelPart> data_parallel_parts(const TrainingWorkload& workload, const StageProgram& program,
                                                  const RankLayout& layout) {
  const auto& par = workload.parallelism;
  std::vector<DataParallelPart> parts;
  DataParallelPart dense;
  dense.group = layout.gradient_group(program.stage);
  dense.sharding = models::dense_sharding(par.zero, par.dp, par.cp);
  dense.units = parameter_units_forward(program);
  // Layers' weights in fp8 with FP8 primary weights; embedding and head in the working precision.
  const double working_bytes = models::stored_element_bytes(workload.precision);
  const double layer_bytes = workload.fp8_params && workload.precision == models::Dtype::fp8 ? 1.0 : working_bytes;
  const std::size_t first_layer = program.embedding_forward.empty() ? 0 : 1;
  dense.unit_gather_bytes.assign(dense.units.size(), working_bytes);
  for (int l = 0; l < program.local_layers(); ++l) {
    dense.unit_gather_bytes[first_layer + static_cast<std::size_t>(l)] = layer_bytes;
  }
  dense.unit_shares = parameter_unit_tensor_shares(program);
  dense.stage_parameters = program.stage_parameters;
  const std::size_t unit_count = dense.units.size();
  if (dense.group.size() >= 2) parts.push_back(std::move(dense));
  if (program.stage_expert_parameters > 0) {
    DataParallelPart experts;
    experts.experts = true;
    experts.group = layout.expert_gradient_group(program.stage);
    experts.sharding = models::expert_sharding(par.zero, par.dp, par.cp, par.ep);
    experts.units.assign(unit_count, 0.0);
    experts.unit_gather_bytes.assign(unit_count, layer_bytes);  // expert weights sit only in layer units
    const std::size_t base = program.embedding_forward.empty() ? 0 : 1;
    for (int l = 0; l < program.local_layers(); ++l) {
      experts.units[base + static_cast<std::size_t>(l)] = program.layer(l).expert_parameters;
    }
    experts.stage_parameters = program.stage_expert_parameters;
    if (experts.group.size() >= 2) parts.push_back(std::move(experts));
  }
  return parts;
}

}  // namespace clustersim::training
