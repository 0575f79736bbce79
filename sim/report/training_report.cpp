#include "sim/report/training_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <array>
#include <utility>

#include "sim/report/scenario_json.hpp"


namespace clustersim::report {
namespace {

/// Seconds printed with the unit that keeps 3-4 significant digits readable.
std::string format_seconds(double seconds) {
  if (seconds >= 1.0) return fmt::format("{:.3f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.3f} us", seconds * 1e6);
}

std::string format_percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:5.1f} %", 100.0 * part / whole) : std::string("    -");
}

std::vector<std::pair<std::string, double>> breakdown_rows(const training::StepBreakdown& b) {
  return {{"compute", b.compute_s},
          {"exposed TP communication", b.exposed_tp_s},
          {"exposed CP communication", b.exposed_cp_s},
          {"exposed EP communication", b.exposed_ep_s},
          {"exposed PP communication", b.exposed_pp_s},
          {"exposed DP communication", b.exposed_dp_s},
          {"pipeline bubble", b.bubble_s},
          {"optimizer", b.optimizer_s},
          {"offload (host link)", b.offload_s},
          {"exposed host dispatch", b.exposed_host_s}};
}

// Tier names of topologies::Link::tier (fat-tree wording; dragonfly and torus reuse the numbers).
std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

/// Watts with a readable prefix.
std::string format_watts(double watts) {
  if (watts >= 1e6) return fmt::format("{:.3f} MW", watts / 1e6);
  if (watts >= 1e3) return fmt::format("{:.2f} kW", watts / 1e3);
  return fmt::format("{:.0f} W", watts);
}

std::string format_joules(double joules) {
  if (joules >= 1e9) return fmt::format("{:.3f} GJ", joules / 1e9);
  if (joules >= 1e6) return fmt::format("{:.3f} MJ", joules / 1e6);
  if (joules >= 1e3) return fmt::format("{:.3f} kJ", joules / 1e3);
  return fmt::format("{:.3f} J", joules);
}

}  // namespace

std::string_view network_tier_name(int tier) {
  switch (tier) {
    case 0: return "scale-up";
    case 1: return "endpoint-leaf";
    case 2: return "leaf-spine";
    case 3: return "spine-core";
  }
  return "other";
}

std::string fingerprint_hex(std::uint64_t fingerprint) { return fmt::format("{:016x}", fingerprint); }

std::string training_summary_table(const scenario::Scenario& scenario,
                                   const training::TrainingResult& result) {
  const auto& w = scenario.training();
  const auto& p = w.parallelism;
  std::string out;
  auto line = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("  {:<28} {}\n", key, value);
  };
  out += fmt::format("scenario {}\n", scenario.name);
  line("model", fmt::format("{} ({:.1f} B parameters)", w.model.name, w.model.total_parameters() / 1e9));
  line("cluster", fmt::format("{} x {} ({} nodes x {}), {}", result.gpus, scenario.platform.cluster.accelerator.name,
                              scenario.platform.cluster.network.nodes, scenario.platform.cluster.network.accelerators_per_node,
                              scenario.platform.cluster.network.scale_out.topology));
  line("parallelism", fmt::format("tp {} pp {} dp {} cp {}, micro-batch {}, {} micro-batches/pipeline",
                                  p.tp, p.pp, p.dp, p.cp, w.micro_batch, result.microbatches));
  out += "training step\n";
  line("step time", format_seconds(result.step_time_s));
  line("throughput", fmt::format("{:.0f} tokens/s ({:.1f} tokens/s/GPU)", result.tokens_per_s,
                                 result.tokens_per_s / result.gpus));
  line("model TFLOP/s per GPU", fmt::format("{:.1f} TFLOP/s", result.model_tflops_per_gpu));
  line("hardware TFLOP/s per GPU", fmt::format("{:.1f} TFLOP/s", result.hardware_tflops_per_gpu));
  line("MFU", fmt::format("{:.1f} % of {:.0f} TFLOP/s", 100.0 * result.mfu, result.peak_tflops_per_gpu));
  line("HFU", fmt::format("{:.1f} %", 100.0 * result.hfu));
  out += "breakdown (critical pipeline stage)\n";
  for (const auto& [name, seconds] : breakdown_rows(result.breakdown)) {
    out += fmt::format("  {:<28} {:>12}  {}\n", name, format_seconds(seconds),
                       format_percent(seconds, result.step_time_s));
  }
  if (const auto& m = result.memory; m.computed) {
    out += fmt::format("memory per device (pipeline stage {})\n", m.peak_stage);
    line("total", fmt::format("{} of {} ({:.1f} %)", gib(m.total_bytes), gib(m.capacity_bytes),
                              100.0 * m.total_bytes / m.capacity_bytes));
    line("weights / gradients", fmt::format("{} / {}", gib(m.weights_bytes), gib(m.gradients_bytes)));
    line("optimizer state", gib(m.optimizer_bytes));
    line("activations", fmt::format("{} (+ {} embedding/logits, {} recompute buffer)", gib(m.activations_bytes),
                                    gib(m.embedding_logits_bytes), gib(m.recompute_buffer_bytes)));
    if (m.moe_dispatch_bytes > 0) line("MoE dispatch buffers", gib(m.moe_dispatch_bytes));
    if (m.zero3_gathered_bytes > 0) line("ZeRO-3 gathered units", gib(m.zero3_gathered_bytes));
    if (m.fp8_weight_cache_bytes > 0) line("FP8 weight cache", gib(m.fp8_weight_cache_bytes));
    line("workspace / fragmentation", fmt::format("{} / {}", gib(m.workspace_bytes), gib(m.fragmentation_bytes)));
    if (m.stages.size() > 1) {
      out += "memory per pipeline stage (per device)\n";
      out += fmt::format("  {:<7} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "stage", "total", "weights", "gradients",
                         "optimizer", "activations");
      for (const auto& s : m.stages) {
        out += fmt::format("  {:<7} {:>11} {:>11} {:>11} {:>11} {:>11}\n", s.stage, gib(s.total_bytes),
                           gib(s.weights_bytes), gib(s.gradients_bytes), gib(s.optimizer_bytes),
                           gib(s.activations_bytes));
      }
    }
  }
  if (const auto& pw = result.power; pw.computed) {
    out += "power and energy\n";
    line("device power avg / peak", fmt::format("{} / {} (throttle factor {:.3f}{})", format_watts(pw.device_average_w),
                                                format_watts(pw.device_peak_w), pw.throttle_factor,
                                                pw.throttling_applied ? ", applied" : ""));
    line("all devices avg", fmt::format("{} (board power only)", format_watts(pw.devices_average_w)));
    line("cluster power avg / peak",
         fmt::format("{} / {} (incl. nodes, NICs, switches, power supplies)", format_watts(pw.cluster_average_w),
                     format_watts(pw.cluster_peak_w)));
    line("energy per step", fmt::format("{} ({} in the devices)", format_joules(pw.energy_per_step_j),
                                        format_joules(pw.devices_j)));
    line("energy per token", fmt::format("{:.4f} J ({:.1f} tokens/J; devices alone {:.4f} J)", pw.energy_per_token_j,
                                         pw.tokens_per_j, pw.device_energy_per_token_j));
    line("performance per watt", fmt::format("{:.1f} GFLOP/s per W (model FLOPs)", pw.model_flops_per_j / 1e9));
    if (pw.cost_computed) {
      line("cost", fmt::format("${:.2f} per step, ${:.4f} per million tokens", pw.cost_per_step_usd,
                               pw.usd_per_million_tokens));
    }
  }
  if (const auto& run = result.run; run.computed) {
    out += fmt::format("training run of {:.4g} tokens (every step as simulated; no restarts or checkpoints)\n",
                       run.tokens);
    line("steps", fmt::format("{}", run.steps));
    line("time", fmt::format("{:.2f} days ({:.1f} h)", run.time_s / 86400.0, run.time_s / 3600.0));
    line("GPU-hours", fmt::format("{:.4g}", run.gpu_hours));
    if (run.energy_j > 0) line("energy", fmt::format("{:.4g} MWh (cluster IT energy)", run.energy_j / 3.6e9));
    if (run.cost_computed) line("cost", fmt::format("${:.4g}", run.cost_usd));
  }
  if (const auto& it = result.iterations; it.computed) {
    out += fmt::format("step time over {} iterations ({})\n", it.iterations, it.method);
    line("nominal", fmt::format("{:.4f} s (no draws)", it.nominal_s));
    line("mean / p50", fmt::format("{:.4f} s / {:.4f} s", it.step_s.mean, it.step_s.p50));
    line("p99 / max", fmt::format("{:.4f} s / {:.4f} s", it.step_s.p99, it.step_s.max));
    for (const auto& cause : it.causes) {
      line(fmt::format("  lost to {}", cause.cause),
           fmt::format("{:.4f} s per step ({:.2f} % of the mean step; alone: mean {:.4f} s)", cause.lost_s,
                       100.0 * cause.lost_share, cause.mean_step_s));
    }
  }
  if (const auto& f = result.link_faults; f.computed) {
    out += "link faults (cluster.network.faults; docs/reliability.md, Degraded and failed links)\n";
    for (const std::string& fault : f.faults) line("  fault", fault);
    line("step without them", fmt::format("{:.6g} s", f.step_time_without_s));
    line("  lost to link faults", fmt::format("{:.6g} s per step ({:.2f} % of the step)", f.lost_s,
                                              100.0 * f.lost_share));
  }
  if (result.goodput_computed) {
    const auto& g = result.goodput;
    out += "goodput under failures (Daly's model, docs/reliability.md, Faults)\n";
    line("job MTBF", fmt::format("{:.2f} h", g.job_mtbf_s / 3600.0));
    line("checkpoint", fmt::format("{:.4g} TB, {:.1f} s to write; restart {:.1f} s", g.checkpoint_bytes / 1e12,
                                   g.checkpoint_s, g.restart_s));
    line("checkpoint interval", fmt::format("{:.1f} min (optimum {:.1f} min; Young {:.1f}, Daly {:.1f})",
                                            g.interval_s / 60.0, g.optimal_interval_s / 60.0,
                                            g.young_interval_s / 60.0, g.daly_interval_s / 60.0));
    line("goodput", fmt::format("{:.2f} % of wall time makes progress (at the optimum {:.2f} %)", 100.0 * g.goodput,
                                100.0 * g.optimal_goodput));
    line("  lost to checkpoints", fmt::format("{:.2f} %", 100.0 * g.checkpoint_lost_share));
    for (const auto& cause : g.causes) {
      line(fmt::format("  lost to {} failures", cause.name),
           fmt::format("{:.2f} % ({:.3f} per day)", 100.0 * cause.lost_share, cause.rate_per_s * 86400.0));
    }
  }
  if (!result.network_tiers.empty()) {
    out += fmt::format("network link utilisation ({} fidelity; bytes / (capacity x step time), per directed link)\n",
                       result.fidelity);
    for (const auto& t : result.network_tiers) {
      line(fmt::format("  tier {} ({})", t.tier, network_tier_name(t.tier)),
           fmt::format("mean {:.1f} %, max {:.1f} % over {} links, peak {:.1f} % (tier) {:.1f} % (link), {:.3f} GB "
                       "carried",
                       100.0 * t.mean_utilisation, 100.0 * t.max_utilisation, t.links, 100.0 * t.peak_utilisation,
                       100.0 * t.peak_link_utilisation, t.bytes / 1e9));
    }
  }
  for (const auto& note : result.notes) out += fmt::format("note: {}\n", note);
  out += fmt::format("fingerprint {} ({} events)\n", fingerprint_hex(result.fingerprint), result.events);
  return out;
}

nlohmann::json breakdown_json(const training::StepBreakdown& b) {
  return {{"compute_s", b.compute_s},       {"exposed_tp_s", b.exposed_tp_s}, {"exposed_cp_s", b.exposed_cp_s},
          {"exposed_ep_s", b.exposed_ep_s},
          {"exposed_pp_s", b.exposed_pp_s}, {"exposed_dp_s", b.exposed_dp_s}, {"bubble_s", b.bubble_s},
          {"optimizer_s", b.optimizer_s},   {"offload_s", b.offload_s},       {"exposed_host_s", b.exposed_host_s}};
}

nlohmann::json memory_json(const training::MemoryReport& m) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : m.stages) {
    stages.push_back({{"stage", s.stage},
                      {"total_bytes", s.total_bytes},
                      {"weights_bytes", s.weights_bytes},
                      {"gradients_bytes", s.gradients_bytes},
                      {"optimizer_bytes", s.optimizer_bytes},
                      {"activations_bytes", s.activations_bytes}});
  }
  return {{"peak_stage", m.peak_stage},
          {"capacity_bytes", m.capacity_bytes},
          {"over_capacity_bytes", std::max(0.0, m.total_bytes - m.capacity_bytes)},
          {"total_bytes", m.total_bytes},
          {"weights_bytes", m.weights_bytes},
          {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"activations_bytes", m.activations_bytes},
          {"embedding_logits_bytes", m.embedding_logits_bytes},
          {"recompute_buffer_bytes", m.recompute_buffer_bytes},
          {"workspace_bytes", m.workspace_bytes},
          {"fragmentation_bytes", m.fragmentation_bytes},
          {"moe_dispatch_bytes", m.moe_dispatch_bytes},
          {"zero3_gathered_bytes", m.zero3_gathered_bytes},
          {"fp8_weight_cache_bytes", m.fp8_weight_cache_bytes},
          {"stages", stages}};
}

nlohmann::json provenance_json(const training::TrainingResult& result) {
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t stage_index = 0; stage_index < result.stage_provenance.size(); ++stage_index) {
    const training::ProvenanceSeconds& seconds = result.stage_provenance[stage_index];
    nlohmann::json stage{{"stage", stage_index}};
    for (int k = 0; k < models::kProvenanceCount; ++k) {
      const auto provenance = static_cast<models::Provenance>(k);
      stage[std::string(models::provenance_name(provenance)) + "_s"] = seconds[provenance];
    }
    stage["total_s"] = seconds.total_s();
    stages.push_back(std::move(stage));
  }
  return {{"basis",
           "seconds per step of each pipeline stage's costed ops (op time x layers x micro-batches, plus the optimizer "
           "step) by the estimator of their time; uncontended, overlapped communication in full; pipeline sends and "
           "data-parallel collectives not included"},
          {"critical_stage", result.critical_stage},
          {"stages", std::move(stages)}};
}

nlohmann::json training_result_json(const scenario::Scenario& scenario,
                                    const training::TrainingResult& result) {
  const auto& w = scenario.training();
  const auto& p = w.parallelism;
  const nlohmann::json breakdown = breakdown_json(result.breakdown);
  const nlohmann::json memory = result.memory.computed ? memory_json(result.memory) : nlohmann::json(nullptr);
  nlohmann::json power = nullptr;
  if (const auto& pw = result.power; pw.computed) {
    power = {{"device_average_w", pw.device_average_w},
             {"device_peak_w", pw.device_peak_w},
             {"throttle_factor", pw.throttle_factor},
             {"throttling_applied", pw.throttling_applied},
             {"devices_average_w", pw.devices_average_w},
             {"cluster_average_w", pw.cluster_average_w},
             {"cluster_peak_w", pw.cluster_peak_w},
             {"energy_per_step_j", pw.energy_per_step_j},
             {"devices_energy_per_step_j", pw.devices_j},
             {"energy_parts_j",
              {{"static", pw.static_j},
               {"wait", pw.wait_j},
               {"memory", pw.memory_j},
               {"compute", pw.compute_j},
               {"communication", pw.communication_j},
               {"nodes", pw.nodes_j},
               {"network_devices", pw.network_j},
               {"power_supplies", pw.psu_loss_j}}},
             {"energy_per_token_j", pw.energy_per_token_j},
             {"device_energy_per_token_j", pw.device_energy_per_token_j},
             {"tokens_per_j", pw.tokens_per_j},
             {"model_flops_per_j", pw.model_flops_per_j}};
    if (pw.cost_computed) {
      power["cost"] = {{"per_step_usd", pw.cost_per_step_usd}, {"per_million_tokens_usd", pw.usd_per_million_tokens}};
    }
  }
  nlohmann::json run = nullptr;
  if (const auto& r = result.run; r.computed) {
    run = {{"tokens", r.tokens}, {"steps", r.steps}, {"time_s", r.time_s}, {"gpu_hours", r.gpu_hours},
           {"energy_j", r.energy_j}, {"cost_usd", r.cost_computed ? nlohmann::json(r.cost_usd) : nlohmann::json(nullptr)}};
  }
  nlohmann::json iterations = nullptr;
  if (const auto& it = result.iterations; it.computed) {
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& c : it.causes) {
      causes.push_back({{"cause", c.cause}, {"mean_step_s", c.mean_step_s}, {"lost_s", c.lost_s},
                        {"lost_share", c.lost_share}});
    }
    iterations = {{"iterations", it.iterations}, {"method", it.method},      {"nominal_s", it.nominal_s},
                  {"mean_s", it.step_s.mean},    {"p50_s", it.step_s.p50},   {"p90_s", it.step_s.p90},
                  {"p99_s", it.step_s.p99},      {"max_s", it.step_s.max},   {"causes", causes},
                  {"step_times_s", it.step_times_s}, {"simulated_steps", it.simulated_steps}};
  }
  nlohmann::json goodput = nullptr;
  if (result.goodput_computed) {
    const auto& g = result.goodput;
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& c : g.causes) {
      causes.push_back({{"cause", c.name}, {"failures_per_s", c.rate_per_s}, {"lost_share", c.lost_share}});
    }
    goodput = {{"job_mtbf_s", g.job_mtbf_s},
               {"checkpoint_bytes", g.checkpoint_bytes},
               {"checkpoint_s", g.checkpoint_s},
               {"restart_s", g.restart_s},
               {"interval_s", g.interval_s},
               {"goodput", g.goodput},
               {"optimal_interval_s", g.optimal_interval_s},
               {"optimal_goodput", g.optimal_goodput},
               {"young_interval_s", g.young_interval_s},
               {"daly_interval_s", g.daly_interval_s},
               {"checkpoint_lost_share", g.checkpoint_lost_share},
               {"failure_lost_share", g.failure_lost_share},
               {"causes", causes}};
  }
  nlohmann::json link_faults = nullptr;
  if (const auto& f = result.link_faults; f.computed) {
    link_faults = {{"faults", f.faults},
                   {"step_time_without_s", f.step_time_without_s},
                   {"lost_s", f.lost_s},
                   {"lost_share", f.lost_share}};
  }
  nlohmann::json tiers = nlohmann::json::array();
  nlohmann::json by_tier = nlohmann::json::object();  // the same as scalars: CSV columns, compare
  for (const auto& t : result.network_tiers) {
    tiers.push_back({{"tier", t.tier},
                     {"name", network_tier_name(t.tier)},
                     {"links", t.links},
                     {"bytes", t.bytes},
                     {"capacity_bytes_per_s", t.capacity_bytes_per_s},
                     {"mean_utilisation", t.mean_utilisation},
                     {"max_utilisation", t.max_utilisation},
                     {"peak_utilisation", t.peak_utilisation},
                     {"peak_link_utilisation", t.peak_link_utilisation}});
    by_tier[fmt::format("tier_{}", t.tier)] = {{"mean_utilisation", t.mean_utilisation},
                                               {"max_utilisation", t.max_utilisation},
                                               {"peak_utilisation", t.peak_utilisation},
                                               {"peak_link_utilisation", t.peak_link_utilisation}};
  }
  const nlohmann::json network = {{"fidelity", result.fidelity}, {"tiers", tiers}, {"utilisation", by_tier}};
  nlohmann::json scenario_json = scenario_identity_json(scenario);
  scenario_json.update({{"model", w.model.name},
                        {"accelerator", scenario.platform.cluster.accelerator.name},
                        {"gpus", result.gpus},
                        {"parallelism",
                         {{"tp", p.tp},
                          {"pp", p.pp},
                          {"dp", p.dp},
                          {"cp", p.cp},
                          {"ep", p.ep},
                          {"vp", p.vp},
                          {"sequence_parallel", p.sequence_parallel},
                          {"zero", p.zero},
                          {"schedule", training::pipeline_schedule_names().name(p.schedule)}}},
                        {"precision", std::string(models::dtype_name(w.precision))},
                        {"micro_batch", w.micro_batch},
                        {"global_batch", w.global_batch},
                        {"seq_len", w.seq_len}});
  nlohmann::json document = {
      {"schema_version", kResultSchemaVersion},
      {"scenario", std::move(scenario_json)},
      {"training",
       {{"step_time_s", result.step_time_s},
        {"tokens_per_s", result.tokens_per_s},
        {"model_tflops_per_gpu", result.model_tflops_per_gpu},
        {"hardware_tflops_per_gpu", result.hardware_tflops_per_gpu},
        {"mfu", result.mfu},
        {"hfu", result.hfu},
        {"peak_tflops_per_gpu", result.peak_tflops_per_gpu},
        {"microbatches_per_pipeline", result.microbatches},
        {"model_flops_per_step", result.model_flops_per_step},
        {"hardware_flops_per_step", result.hardware_flops_per_step}}},
      {"breakdown", breakdown},
      {"memory", memory},
      {"power", power},
      {"training_run", run},
      {"iterations", iterations},
      {"goodput", goodput},
      {"network", network},
      {"provenance", provenance_json(result)},
      {"notes", result.notes},
      {"events", result.events},
      {"fingerprint", fingerprint_hex(result.fingerprint)},
  };
  // Only runs with cluster.network.faults have the section (docs/metrics.md, "Link faults").
  if (!link_faults.is_null()) document["link_faults"] = std::move(link_faults);
  return document;
}

void training_columns(const training::TrainingResult& r, std::vector<MetricColumn>& out) {
  out.push_back({"step_time_s", r.step_time_s});
  out.push_back({"tokens_per_s", r.tokens_per_s});
  out.push_back({"mfu_fraction", r.mfu});
  out.push_back({"hfu_fraction", r.hfu});
  out.push_back({"model_tflops_per_gpu_TFLOP_per_s", r.model_tflops_per_gpu});
  out.push_back({"microbatches_per_pipeline", static_cast<double>(r.microbatches)});
  out.push_back({"compute_time_s", r.breakdown.compute_s});
  const auto& b = r.breakdown;
  out.push_back({"exposed_comm_time_s", b.exposed_tp_s + b.exposed_cp_s + b.exposed_ep_s + b.exposed_pp_s +
                                            b.exposed_dp_s});
  out.push_back({"pipeline_bubble_time_s", r.breakdown.bubble_s});
  if (r.memory.computed) {
    out.push_back({"memory_per_gpu_B", r.memory.total_bytes});
    out.push_back({"memory_capacity_per_gpu_B", r.memory.capacity_bytes});
  }
  if (const auto& p = r.power; p.computed) {
    out.push_back({"device_power_average_W", p.device_average_w});
    out.push_back({"cluster_power_average_W", p.cluster_average_w});
    out.push_back({"cluster_power_peak_W", p.cluster_peak_w});
    out.push_back({"energy_per_step_J", p.energy_per_step_j});
    out.push_back({"energy_per_token_J", p.energy_per_token_j});
    if (p.cost_computed) {
      out.push_back({"cost_per_step_USD", p.cost_per_step_usd});
      out.push_back({"cost_per_million_tokens_USD", p.usd_per_million_tokens});
    }
  }
  if (const auto& run = r.run; run.computed) {
    out.push_back({"train_time_s", run.time_s});
    out.push_back({"train_steps", static_cast<double>(run.steps)});
    out.push_back({"train_gpu_hours_h", run.gpu_hours});
    out.push_back({"train_energy_J", run.energy_j});
    if (run.cost_computed) out.push_back({"train_cost_USD", run.cost_usd});
  }
}

}  // namespace clustersim::report
