#include "sim/report/serving_report.hpp"

#include <fmt/format.h>

#include "sim/report/scenario_json.hpp"
#include "sim/report/training_report.hpp"
#include "sim/serving/frameworks.hpp"

namespace clustersim::report {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string ms(double seconds) { return fmt::format("{:.1f} ms", seconds * 1e3); }

std::string distribution_row(const char* name, const serving::Distribution& d) {
  return fmt::format("  {:<22} {:>10} {:>10} {:>10} {:>10} {:>10}\n", name, ms(d.mean), ms(d.p50), ms(d.p90), ms(d.p99),
                     ms(d.max));
}

}  // namespace

nlohmann::json distribution_json(const serving::Distribution& d) {
  return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}, {"count", d.count}};
}

nlohmann::json serving_json(const serving::ServingResult& r) {
  nlohmann::json pools = nlohmann::json::array();
  for (const serving::PoolResult& p : r.pools) {
    pools.push_back({{"name", p.name},
                     {"role", p.role},
                     {"accelerator", p.accelerator},
                     {"replicas", p.replicas},
                     {"tp", p.tp},
                     {"pp", p.pp},
                     {"ep", p.ep},
                     {"memory_bytes",
                      {{"capacity", p.memory.capacity},
                       {"weights", p.memory.weights},
                       {"activations", p.memory.activations},
                       {"kv_cache", p.memory.kv_cache}}},
                     {"kv_bytes_per_token", p.memory.kv_bytes_per_token},
                     {"kv_blocks", p.memory.kv_blocks},
                     {"utilisation", p.utilisation},
                     {"kv_cache_utilisation", {{"mean", p.kv_utilisation_mean}, {"peak", p.kv_utilisation_peak}}},
                     {"iterations", p.iterations},
                     {"mean_batch_tokens", p.mean_batch_tokens},
                     {"busy_shares",
                      {{"compute_bound", p.compute_share},
                       {"memory_bound", p.memory_share},
                       {"communication", p.communication_share},
                       {"host", p.host_share}}}});
  }
  nlohmann::json series = {{"time_s", nlohmann::json::array()},
                           {"queued", nlohmann::json::array()},
                           {"kv_cache_utilisation", nlohmann::json::array()},
                           {"output_tokens_per_s", nlohmann::json::array()}};
  for (const serving::ServingSample& s : r.series) {
    series["time_s"].push_back(s.time_s);
    series["queued"].push_back(s.queued);
    series["kv_cache_utilisation"].push_back(s.kv_utilisation);
    series["output_tokens_per_s"].push_back(s.output_tokens_per_s);
  }
  nlohmann::json out = {{"duration_s", r.duration_s},
          {"requests", r.requests},
          {"completed", r.completed},
          {"input_tokens", r.input_tokens},
          {"output_tokens", r.output_tokens},
          {"throughput_tokens_per_s", r.throughput_tokens_per_s},
          {"input_tokens_per_s", r.input_tokens_per_s},
          {"output_tokens_per_s", r.output_tokens_per_s},
          {"requests_per_s", r.requests_per_s},
          {"ttft_s", distribution_json(r.ttft_s)},
          {"tpot_s", distribution_json(r.tpot_s)},
          {"itl_s", distribution_json(r.itl_s)},
          {"e2e_s", distribution_json(r.e2e_s)},
          {"queue_s", distribution_json(r.queue_s)},
          {"goodput_requests_per_s", r.goodput_requests_per_s},
          {"rejected", r.rejected},
          {"rejected_by_cause",
           {{"kv_capacity", r.rejected_kv_capacity},
            {"token_budget", r.rejected_token_budget},
            {"queue_full", r.rejected_queue_full}}},
          {"preemptions", r.preemptions},
          {"kv_cache_utilisation", {{"mean", r.kv_utilisation_mean}, {"peak", r.kv_utilisation_peak}}},
          {"prefix_hit_rate", r.prefix_hit_rate},
          {"gpu_utilisation", r.gpu_utilisation},
          {"accelerators", r.accelerators},
          {"average_power_w", r.average_power_w},
          {"devices_average_power_w", r.devices_average_power_w},
          {"energy_per_token_j", optional_number(r.energy_per_token_j)},
          {"device_energy_per_token_j", optional_number(r.device_energy_per_token_j)},
          {"cost_per_million_tokens", optional_number(r.cost_per_million_tokens)},
          {"slo",
           {{"ttft_s", r.slo.ttft_s}, {"tpot_s", r.slo.tpot_s}, {"percentile", r.slo.percentile}, {"met", r.slo_met}}},
          {"limiter", r.limiter},
          {"pools", pools},
          {"time_series", series}};
  if (!r.kv_tiers.empty()) {  // only with kv_offload: a run without it writes what it always wrote
    nlohmann::json tiers = nlohmann::json::array();
    for (const serving::KvTierResult& t : r.kv_tiers) {
      tiers.push_back({{"tier", t.tier},
                       {"capacity_bytes", t.capacity_bytes},
                       {"hits", t.hits},
                       {"hit_tokens", t.hit_tokens},
                       {"hit_rate", t.hit_rate},
                       {"bytes", {{"stored", t.stored_bytes}, {"loaded", t.loaded_bytes}, {"evicted", t.evicted_bytes}}},
                       {"load_s", t.load_s},
                       {"prefill_avoided_s", t.prefill_avoided_s},
                       {"saved_s", t.prefill_avoided_s - t.load_s}});
    }
    out["kv_offload"] = {{"write", serving::tier_write_names().name(r.kv_write)},
                         {"load", serving::tier_load_names().name(r.kv_load)},
                         {"hbm_hit_rate", r.hbm_hit_rate},
                         {"tier_wait_share", r.tier_wait_share},
                         {"tiers", std::move(tiers)}};
  }
  if (r.faults.modelled) {  // only then: a run without fault keys writes what it always wrote
    const serving::ServingFaults& f = r.faults;
    out["faults"] = {{"instances", f.instances},
                     {"straggler_instances", f.straggler_instances},
                     {"failures", f.failures},
                     {"expected_failures", f.expected_failures},
                     {"instance_mtbf_s", f.instance_mtbf_s},
                     {"restart_s", f.restart_s},
                     {"availability", f.availability},
                     {"requeued_requests", f.requeued_requests},
                     {"reprefill_tokens", f.reprefill_tokens},
                     {"useful_work_share", f.useful_work_share},
                     {"lost_shares",
                      {{"jitter", f.jitter_share},
                       {"host_noise", f.host_noise_share},
                       {"stragglers", f.straggler_share},
                       {"downtime", f.downtime_share},
                       {"reprefill", f.reprefill_share},
                       {"lost_work", f.lost_work_share}}}};
  }
  return out;
}

nlohmann::json serving_scenario_json(const scenario::Scenario& scenario) {
  nlohmann::json out = scenario_identity_json(scenario);
  const auto* spec = dynamic_cast<const serving::ServingSpec*>(scenario.workload.get());
  if (spec == nullptr) return out;
  nlohmann::json pools = nlohmann::json::array();
  for (const serving::PoolSpec& pool : spec->pools) {
    pools.push_back({{"name", pool.name},
                     {"role", serving::replica_role_names().name(pool.role)},
                     {"accelerator", pool.accelerator_name.empty() ? scenario.platform.cluster.accelerator.name
                                                                   : pool.accelerator_name},
                     {"replicas", pool.replicas},
                     {"tp", pool.tp},
                     {"pp", pool.pp},
                     {"ep", pool.ep}});
  }
  out.update({{"model", spec->model.name},
              {"framework", serving::framework_names().name(spec->framework)},
              {"precision",
               {{"weights", serving::weight_format_names().name(spec->precision.weights)},
                {"activations", std::string(models::dtype_name(spec->precision.activations))},
                {"kv_cache", std::string(models::dtype_name(spec->precision.kv_cache))}}},
              {"pools", std::move(pools)}});
  return out;
}

nlohmann::json serving_result_json(const scenario::Scenario& scenario, const serving::ServingResult& result,
                                   const runner::RunResult& run) {
  return {{"schema_version", kResultSchemaVersion},
          {"scenario", serving_scenario_json(scenario)},
          {"serving", serving_json(result)},
          {"notes", result.notes},
          {"events", run.events},
          {"fingerprint", fingerprint_hex(run.fingerprint)}};
}

std::string serving_summary_table(const scenario::Scenario& scenario, const serving::ServingResult& r,
                                  const runner::RunResult& run) {
  std::string out = fmt::format("{} (serving)\n", scenario.name);
  out += fmt::format("  requests                {} completed, {} rejected, {} preemptions, over {:.2f} s\n", r.completed,
                     r.rejected, r.preemptions, r.duration_s);
  out += fmt::format("  throughput              {:.1f} req/s, {:.0f} output tok/s, {:.0f} input tok/s, {:.0f} tok/s\n",
                     r.requests_per_s, r.output_tokens_per_s, r.input_tokens_per_s, r.throughput_tokens_per_s);
  out += fmt::format("  {:<22} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "latency", "mean", "p50", "p90", "p99", "max");
  out += distribution_row("TTFT", r.ttft_s);
  out += distribution_row("TPOT", r.tpot_s);
  out += distribution_row("ITL", r.itl_s);
  out += distribution_row("end to end", r.e2e_s);
  out += distribution_row("queue", r.queue_s);
  if (r.slo.ttft_s > 0 || r.slo.tpot_s > 0) {
    out += fmt::format("  SLO (p{:g})               TTFT <= {}, TPOT <= {}: {}; goodput {:.2f} req/s\n", r.slo.percentile,
                       r.slo.ttft_s > 0 ? ms(r.slo.ttft_s) : "-", r.slo.tpot_s > 0 ? ms(r.slo.tpot_s) : "-",
                       r.slo_met ? "met" : "missed", r.goodput_requests_per_s);
  }
  out += fmt::format("  KV cache                {:.1f} % mean, {:.1f} % peak; prefix hit rate {:.1f} %\n",
                     r.kv_utilisation_mean * 100, r.kv_utilisation_peak * 100, r.prefix_hit_rate * 100);
  for (const serving::KvTierResult& t : r.kv_tiers) {
    out += fmt::format("  KV tier {:<15} hit rate {:.1f} % ({} requests), {:.1f} GiB stored, {:.1f} GiB loaded in {:.3f} s; "
                       "prefill avoided ~{:.3f} s\n",
                       t.tier, t.hit_rate * 100, t.hits, t.stored_bytes / (1024.0 * 1024 * 1024),
                       t.loaded_bytes / (1024.0 * 1024 * 1024), t.load_s, t.prefill_avoided_s);
  }
  out += fmt::format("  accelerators            {} busy {:.1f} % of the time; limited by {}\n", r.accelerators,
                     r.gpu_utilisation * 100, r.limiter);
  if (r.energy_per_token_j) {
    out += fmt::format("  power                   {:.1f} kW average ({:.1f} kW in the accelerators), {:.3f} J per output "
                       "token",
                       r.average_power_w / 1e3, r.devices_average_power_w / 1e3, *r.energy_per_token_j);
    out += r.cost_per_million_tokens ? fmt::format(", ${:.3f} per million output tokens\n", *r.cost_per_million_tokens)
                                     : "\n";
  }
  if (r.faults.modelled) {
    const serving::ServingFaults& f = r.faults;
    out += fmt::format("  faults                  {} of {} instances straggle; {} failures ({:.3g} expected), availability "
                       "{:.4f}; {} requests re-queued, {} tokens prefilled again\n",
                       f.straggler_instances, f.instances, f.failures, f.expected_failures, f.availability,
                       f.requeued_requests, f.reprefill_tokens);
    out += fmt::format("  time lost (share)       jitter {:.2f} %, host noise {:.2f} %, stragglers {:.2f} %, downtime "
                       "{:.2f} %, re-prefill {:.2f} %, lost iterations {:.2f} %\n",
                       f.jitter_share * 100, f.host_noise_share * 100, f.straggler_share * 100, f.downtime_share * 100,
                       f.reprefill_share * 100, f.lost_work_share * 100);
  }
  for (const serving::PoolResult& p : r.pools) {
    out += fmt::format(
        "  pool {:<18} {} x {} (tp {} pp {} ep {}), {}: busy {:.1f} %, {:.0f} tokens per iteration; per device "
        "{:.1f} GiB weights, {:.1f} GiB KV cache ({} blocks, {:.0f} KiB per token)\n",
        p.name, p.replicas, p.accelerator, p.tp, p.pp, p.ep, p.role, p.utilisation * 100, p.mean_batch_tokens,
        p.memory.weights / (1024.0 * 1024 * 1024), p.memory.kv_cache / (1024.0 * 1024 * 1024), p.memory.kv_blocks,
        p.memory.kv_bytes_per_token / 1024.0);
  }
  for (const std::string& note : r.notes) out += fmt::format("  note: {}\n", note);
  out += fmt::format("fingerprint {} ({} events)\n", fingerprint_hex(run.fingerprint), run.events);
  return out;
}

void serving_columns(const serving::ServingResult& r, std::vector<MetricColumn>& out) {
  out.push_back({"requests_per_s", r.requests_per_s});
  out.push_back({"goodput_requests_per_s", r.goodput_requests_per_s});
  out.push_back({"output_tokens_per_s", r.output_tokens_per_s});
  out.push_back({"throughput_tokens_per_s", r.throughput_tokens_per_s});
  out.push_back({"completed_requests", static_cast<double>(r.completed)});
  out.push_back({"rejected_requests", static_cast<double>(r.rejected)});
  out.push_back({"ttft_p50_s", r.ttft_s.p50});
  out.push_back({"ttft_p99_s", r.ttft_s.p99});
  out.push_back({"tpot_p50_s", r.tpot_s.p50});
  out.push_back({"tpot_p99_s", r.tpot_s.p99});
  out.push_back({"e2e_p99_s", r.e2e_s.p99});
  out.push_back({"slo_met_bool", r.slo_met ? 1.0 : 0.0});
  out.push_back({"kv_utilisation_peak_fraction", r.kv_utilisation_peak});
  out.push_back({"gpu_utilisation_fraction", r.gpu_utilisation});
  out.push_back({"cluster_power_average_W", r.average_power_w});
  if (r.energy_per_token_j) out.push_back({"energy_per_token_J", *r.energy_per_token_j});
  if (r.cost_per_million_tokens) out.push_back({"cost_per_million_tokens_USD", *r.cost_per_million_tokens});
  if (r.faults.modelled) {
    out.push_back({"availability_fraction", r.faults.availability});
    out.push_back({"instance_failures", static_cast<double>(r.faults.failures)});
    out.push_back({"requeued_requests", static_cast<double>(r.faults.requeued_requests)});
  }
}

}  // namespace clustersim::report
