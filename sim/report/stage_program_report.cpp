#include "sim/report/stage_program_report.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/engine/time.hpp"

namespace clustersim::report {
namespace {

std::string overlap_name(const training::StageOp& op) {
  const char* engine = op.engine == training::CommEngine::copy_engine    ? " (copy engine)"
                       : op.engine == training::CommEngine::reserved_sms ? " (reserved SMs)"
                                                                          : "";
  switch (op.overlap) {
    case training::Overlap::with_previous: return std::string("beside previous") + engine;
    case training::Overlap::with_next: return std::string("beside next") + engine;
    case training::Overlap::none: break;
  }
  return "";
}

using Section = std::pair<const char*, const std::vector<training::StageOp>*>;

std::vector<Section> sections(const training::StageProgram& program) {
  return {{"embedding forward", &program.embedding_forward}, {"dense layer forward", &program.dense.forward},
          {"MoE layer forward", &program.moe.forward},         {"head forward", &program.head_forward},
          {"head backward", &program.head_backward},           {"dense layer backward", &program.dense.backward},
          {"MoE layer backward", &program.moe.backward},       {"embedding backward", &program.embedding_backward}};
}

double seconds_of(const std::vector<training::StageOp>& ops) {
  double total = 0;
  for (const auto& op : ops) total += engine::ps_to_seconds(op.duration_ps);
  return total;
}

}  // namespace

std::string stage_program_table(const training::StageProgram& program) {
  std::string out = fmt::format(
      "pipeline stage {} of {}: {} layer(s) in {} chunk(s) ({}); times per micro-batch\n"
      "GFLOP: model FLOPs (Megatron convention: attention counted non-causal); TFLOP/s: the FLOPs the kernel "
      "executes (causal attention about half) over its time\n",
      program.stage, program.stages, program.local_layers(), program.chunks, fmt::join(program.chunk_layers, " + "));
  for (const auto& [name, ops] : sections(program)) {
    if (ops->empty()) continue;
    out += fmt::format("{}\n  {:<34} {:<10} {:>12} {:>12} {:>10}  {:<16} {}\n", name, "op", "kind", "time (us)",
                       "GFLOP", "TFLOP/s", "estimator", "overlap");
    const double total_s = seconds_of(*ops);
    for (const auto& op : *ops) {
      const double s = engine::ps_to_seconds(op.duration_ps);
      out += fmt::format("  {:<34} {:<10} {:>12.2f} {:>12.3f} {:>10}  {:<16} {}\n", op.name,
                         training::op_kind_name(op.kind), s * 1e6, op.flops / 1e9,
                         s > 0 && op.kernel_flops > 0 ? fmt::format("{:.1f}", op.kernel_flops / s / 1e12) : "",
                         models::provenance_name(op.provenance), overlap_name(op));
    }
    out += fmt::format("  {:<34} {:<10} {:>12.2f}  (overlapped ops counted in full)\n", "total", "", total_s * 1e6);
  }
  double micro_batch_s = seconds_of(program.embedding_forward) + seconds_of(program.embedding_backward) +
                         seconds_of(program.head_forward) + seconds_of(program.head_backward);
  for (int l = 0; l < program.local_layers(); ++l) {
    micro_batch_s += seconds_of(program.layer(l).forward) + seconds_of(program.layer(l).backward);
  }
  out += fmt::format("one micro-batch through the stage: {:.3f} ms (sum of op times); pipeline send {:.2f} us, "
                     "optimizer {:.2f} us per step\n",
                     micro_batch_s * 1e3, engine::ps_to_seconds(program.p2p_forward_ps) * 1e6,
                     engine::ps_to_seconds(program.optimizer_ps) * 1e6);
  return out;
}

nlohmann::json stage_program_json(const training::StageProgram& program) {
  nlohmann::json out{{"schema_version", 1},
                     {"stage", program.stage},
                     {"stages", program.stages},
                     {"chunk_layers", program.chunk_layers},
                     {"chunk_first_layer", program.chunk_first_layer},
                     {"chunks", program.chunks},
                     {"p2p_forward_s", engine::ps_to_seconds(program.p2p_forward_ps)},
                     {"optimizer_s", engine::ps_to_seconds(program.optimizer_ps)},
                     {"optimizer_provenance", models::provenance_name(program.optimizer_provenance)}};
  nlohmann::json sections_json = nlohmann::json::object();
  for (const auto& [name, ops] : sections(program)) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& op : *ops) {
      list.push_back({{"name", op.name},
                      {"kind", training::op_kind_name(op.kind)},
                      {"time_s", engine::ps_to_seconds(op.duration_ps)},
                      {"flops", op.flops},
                      {"kernel_flops", op.kernel_flops},
                      {"provenance", models::provenance_name(op.provenance)},
                      {"overlap", overlap_name(op)}});
    }
    sections_json[name] = std::move(list);
  }
  out["sections"] = std::move(sections_json);
  return out;
}

}  // namespace clustersim::report
