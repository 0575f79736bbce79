#include "sim/validate/training_validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace clustersim::validate {
namespace {

constexpr int kAcceleratorsPerNode = 8;  // every system preset used here is an 8-GPU node

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_integer(const std::string& text) {
  const auto value = parse_number(text);
  if (!value || *value != std::floor(*value)) return std::nullopt;
  return static_cast<std::int64_t>(*value);
}

/// The FLOP-counting conventions the published tables use (GPT, MHA, 4h GeLU MLP):
/// Megatron model FLOPs 72*B*s*L*h^2*(1 + s/6h + V/12Lh), plus recomputed FLOPs.
struct FlopCounts {
  double model = 0;
  double hardware = 0;
};

FlopCounts published_flops(double batch, double seq, double layers, double hidden, double vocab,
                           const std::string& recompute) {
  FlopCounts counts;
  counts.model = 72.0 * batch * seq * layers * hidden * hidden *
                 (1.0 + seq / (6.0 * hidden) + vocab / (12.0 * layers * hidden));
  double recomputed = 0;
  if (recompute == "full") {
    recomputed = 24.0 * batch * seq * layers * hidden * hidden * (1.0 + seq / (6.0 * hidden));
  } else if (recompute == "selective") {
    recomputed = 4.0 * batch * seq * seq * layers * hidden;  // QK^T and attention x V again
  }
  counts.hardware = counts.model + recomputed;
  return counts;
}

const std::vector<std::string>& supported_metrics() {
  static const std::vector<std::string> metrics = {
      "tflops_per_gpu", "model_tflops_per_gpu", "mfu", "hfu", "pct_of_peak", "aggregate_pflops",
      "tokens_per_s_per_gpu", "throughput_tokens_per_s", "iteration_time_s", "step_time_s"};
  return metrics;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace

const std::vector<SourceConventions>& source_conventions() {
  static const std::vector<SourceConventions> conventions = {
      {"meg21_t1",
       "Megatron-LM SC21 (Narayanan et al. 2021), Table 1: GPT, vocabulary 51,200, full activation "
       "recompute, no FlashAttention (fused softmax over s x s scores), no sequence parallelism or "
       "distributed optimizer (both 2022), gradient all-reduce after the pipeline flush, "
       "micro-batch 1, 1F1B schedule, fp16 mixed precision",
       "dgx-a100", 51200, 1, "full", "unfused", false, false, 0, "fp16", "hardware"},
      {"korth_",
       "Korthikanti et al. 2022 (Megatron-LM): GPT, vocabulary 51,200, sequence parallelism with "
       "selective recompute, no FlashAttention, micro-batch 1, fp16 mixed precision",
       "dgx-a100", 51200, 1, "selective", "unfused", true, false, 0, "fp16", "hardware"},
      {"mcore_h100",
       "Megatron-Core r0.8 weak scaling (NVIDIA/Megatron-LM README, 2024): GPT, vocabulary 131,072, "
       "FlashAttention (Transformer Engine), sequence parallelism, distributed optimizer, "
       "--overlap-grad-reduce/--overlap-param-gather/--tp-comm-overlap (the rows' notes), no recompute, "
       "micro-batch 1, bf16; TFLOP/s are model FLOPs",
       "dgx-h100", 131072, 1, "none", "flash", true, true, 1, "bf16", "model", true},
  };
  return conventions;
}

RowMapping map_training_row(const CsvRow& row) {
  RowMapping mapping;
  const std::string& id = row.get("id");
  for (const auto& c : source_conventions()) {
    if (id.rfind(c.id_prefix, 0) == 0) {
      mapping.conventions = &c;
      break;
    }
  }
  if (!mapping.conventions) {
    mapping.skip_reason = fmt::format("no documented framework defaults for source '{}' yet",
                                      id.substr(0, id.find('_')));
    return mapping;
  }
  const auto& conv = *mapping.conventions;
  const std::string& metric = row.get("metric");
  if (std::find(supported_metrics().begin(), supported_metrics().end(), metric) ==
      supported_metrics().end()) {
    mapping.skip_reason = fmt::format("metric '{}' is not supported", metric);
    return mapping;
  }
  const auto layers = parse_integer(row.get("layers"));
  const auto hidden = parse_integer(row.get("hidden"));
  const auto heads = parse_integer(row.get("heads"));
  const auto seq = parse_integer(row.get("seq_len"));
  const auto batch = parse_integer(row.get("global_batch"));
  const auto gpus = parse_integer(row.get("gpus"));
  const auto tp = parse_integer(row.get("tp"));
  const auto pp = parse_integer(row.get("pp"));
  const auto dp = parse_integer(row.get("dp"));
  std::vector<std::string> missing;
  auto need = [&missing](const auto& value, const char* name) {
    if (!value) missing.emplace_back(name);
  };
  need(layers, "layers");
  need(hidden, "hidden");
  need(heads, "heads");
  need(seq, "seq_len");
  need(batch, "global_batch");
  need(gpus, "gpus");
  need(tp, "tp");
  need(pp, "pp");
  need(dp, "dp");
  if (!missing.empty()) {
    mapping.skip_reason = fmt::format("row does not state {}", fmt::join(missing, ", "));
    return mapping;
  }
  const auto vp = parse_integer(row.get("vp")).value_or(1);
  const auto cp = parse_integer(row.get("cp")).value_or(1);
  if (vp > 1) {
    mapping.skip_reason = fmt::format("interleaved pipeline schedule (vp={}) is not implemented yet", vp);
    return mapping;
  }
  if (*gpus % kAcceleratorsPerNode != 0) {
    mapping.skip_reason = fmt::format("{} GPUs is not a whole number of 8-GPU nodes", *gpus);
    return mapping;
  }
  mapping.scenario_yaml = fmt::format(
      R"(schema_version: 1
name: {id}
description: "built by clustersim validate from dataset row {id}"
include: [systems/{system}.yaml]
models:
  {id}-model:
    source: "dataset row {id}"
    hidden_size: {h}
    num_hidden_layers: {L}
    num_attention_heads: {a}
    intermediate_size: {ffn}
    vocab_size: {V}
    max_position_embeddings: {s}
    hidden_act: gelu
    tie_word_embeddings: true
cluster:
  nodes: {nodes}
workload:
  kind: training
  model: {id}-model
  seq_len: {s}
  global_batch: {B}
  micro_batch: {mb}
  precision: {precision}
  parallelism: {{tp: {tp}, pp: {pp}, dp: {dp}, cp: {cp}, sequence_parallel: {sp}, schedule: 1f1b, zero: {zero}}}
  recompute: {recompute}
  attention: {attention}
  overlap_grad_reduce: {overlap}
  tp_comm_overlap: {tp_overlap}
)",
      fmt::arg("id", id), fmt::arg("system", conv.system), fmt::arg("h", *hidden),
      fmt::arg("L", *layers), fmt::arg("a", *heads), fmt::arg("ffn", 4 * *hidden),
      fmt::arg("V", conv.vocab_size), fmt::arg("s", *seq), fmt::arg("nodes", *gpus / kAcceleratorsPerNode),
      fmt::arg("B", *batch), fmt::arg("mb", conv.micro_batch), fmt::arg("precision", conv.precision),
      fmt::arg("tp", *tp), fmt::arg("pp", *pp), fmt::arg("dp", *dp), fmt::arg("cp", cp),
      fmt::arg("sp", conv.sequence_parallel), fmt::arg("zero", conv.zero),
      fmt::arg("recompute", conv.recompute), fmt::arg("attention", conv.attention),
      fmt::arg("overlap", conv.overlap_grad_reduce), fmt::arg("tp_overlap", conv.tp_comm_overlap && *tp > 1));
  return mapping;
}

ValidationReport validate_training_dataset(const std::filesystem::path& dataset) {
  ValidationReport report;
  report.dataset = dataset.string();
  const auto rows = read_csv_file(dataset);
  // Rows of one configuration (TFLOP/s, % of peak, PF/s) share one simulation.
  struct Simulated {
    double step_time_s = 0;
    double peak_flops_per_s = 0;
    std::string error;
  };
  std::map<std::string, Simulated> simulated;
  std::vector<const SourceConventions*> used;
  std::vector<double> abs_errors;

  for (const auto& row : rows) {
    const std::string& id = row.get("id");
    const auto mapping = map_training_row(row);
    if (!mapping.scenario_yaml) {
      report.skipped.push_back({id, mapping.skip_reason});
      continue;
    }
    const auto measured = parse_number(row.get("value"));
    if (!measured || *measured <= 0) {
      report.skipped.push_back({id, fmt::format("measured value '{}' is not a positive number", row.get("value"))});
      continue;
    }
    auto [it, inserted] = simulated.try_emplace(*mapping.scenario_yaml);
    if (inserted) {
      try {
        const auto scenario = scenario::load_scenario_from_string(
            *mapping.scenario_yaml, fmt::format("{}#{}", dataset.filename().string(), id), {});
        const auto result = runner::run_training(scenario);
        it->second.step_time_s = result.step_time_s;
        it->second.peak_flops_per_s = scenario.cluster.accelerator.peak_for(scenario.training.precision);
      } catch (const Error& e) {
        it->second.error = e.what();
      }
    }
    const auto& sim = it->second;
    if (!sim.error.empty()) {
      report.skipped.push_back({id, fmt::format("simulation failed: {}", sim.error)});
      continue;
    }
    const auto& conv = *mapping.conventions;
    const double batch = *parse_number(row.get("global_batch"));
    const double seq = *parse_number(row.get("seq_len"));
    const double gpus = *parse_number(row.get("gpus"));
    const auto flops = published_flops(batch, seq, *parse_number(row.get("layers")),
                                       *parse_number(row.get("hidden")),
                                       static_cast<double>(conv.vocab_size), conv.recompute);
    const double t = sim.step_time_s;
    const double per_gpu_time = t * gpus;
    const double counted = conv.tflops_counting == "hardware" ? flops.hardware : flops.model;
    const std::string& metric = row.get("metric");
    const bool percent = row.get("unit") == "%";
    double predicted = 0;
    if (metric == "tflops_per_gpu") predicted = counted / per_gpu_time / 1e12;
    else if (metric == "model_tflops_per_gpu") predicted = flops.model / per_gpu_time / 1e12;
    else if (metric == "aggregate_pflops") predicted = counted / t / 1e15;
    else if (metric == "pct_of_peak") predicted = 100.0 * counted / per_gpu_time / sim.peak_flops_per_s;
    else if (metric == "mfu") predicted = (percent ? 100.0 : 1.0) * flops.model / per_gpu_time / sim.peak_flops_per_s;
    else if (metric == "hfu") predicted = (percent ? 100.0 : 1.0) * flops.hardware / per_gpu_time / sim.peak_flops_per_s;
    else if (metric == "tokens_per_s_per_gpu") predicted = batch * seq / per_gpu_time;
    else if (metric == "throughput_tokens_per_s") predicted = batch * seq / t;
    else predicted = t;  // iteration_time_s, step_time_s

    ValidationRow out;
    out.id = id;
    out.metric = metric;
    out.unit = row.get("unit");
    out.measured = *measured;
    out.predicted = predicted;
    out.error_pct = 100.0 * (predicted - *measured) / *measured;
    out.step_time_s = t;
    out.conventions = conv.id_prefix;
    abs_errors.push_back(std::abs(out.error_pct));
    if (std::find(used.begin(), used.end(), &conv) == used.end()) used.push_back(&conv);
    report.rows.push_back(std::move(out));
  }

  auto& s = report.summary;
  s.rows = static_cast<int>(report.rows.size());
  if (!abs_errors.empty()) {
    double sum = 0;
    for (double e : abs_errors) sum += e;
    s.mape_pct = sum / static_cast<double>(abs_errors.size());
    s.median_pct = median(abs_errors);
    const auto worst = std::max_element(abs_errors.begin(), abs_errors.end());
    s.max_pct = *worst;
    s.worst_id = report.rows[static_cast<std::size_t>(worst - abs_errors.begin())].id;
  }
  for (const auto* conv : used) {
    report.assumptions.push_back(fmt::format("{}: {}", conv->id_prefix, conv->description));
  }
  return report;
}

std::string render_validation_table(const ValidationReport& report) {
  std::string out = fmt::format("dataset {}\n", report.dataset);
  out += fmt::format("{:<22} {:<22} {:>12} {:>12} {:>9}  {}\n", "id", "metric", "measured",
                     "predicted", "error", "step time");
  for (const auto& r : report.rows) {
    out += fmt::format("{:<22} {:<22} {:>12.4g} {:>12.4g} {:>+8.1f}%  {:.3f} s\n", r.id, r.metric,
                       r.measured, r.predicted, r.error_pct, r.step_time_s);
  }
  if (!report.skipped.empty()) {
    out += fmt::format("skipped {} rows:\n", report.skipped.size());
    for (const auto& s : report.skipped) out += fmt::format("  {:<24} {}\n", s.id, s.reason);
  }
  if (!report.assumptions.empty()) {
    out += "assumed (documented framework defaults; never chosen per row):\n";
    for (const auto& a : report.assumptions) out += fmt::format("  {}\n", a);
  }
  const auto& s = report.summary;
  if (s.rows == 0) {
    out += "no row could be compared\n";
  } else {
    out += fmt::format("rows {}  MAPE {:.2f} %  median {:.2f} %  worst {:.2f} % ({})\n", s.rows,
                       s.mape_pct, s.median_pct, s.max_pct, s.worst_id);
  }
  return out;
}

nlohmann::json validation_json(const ValidationReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : report.rows) {
    rows.push_back({{"id", r.id}, {"metric", r.metric}, {"unit", r.unit}, {"measured", r.measured},
                    {"predicted", r.predicted}, {"error_pct", r.error_pct},
                    {"step_time_s", r.step_time_s}, {"conventions", r.conventions}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : report.skipped) skipped.push_back({{"id", s.id}, {"reason", s.reason}});
  const auto& s = report.summary;
  return {{"schema_version", 1},
          {"dataset", report.dataset},
          {"summary", {{"mape_pct", s.mape_pct}, {"median_pct", s.median_pct}, {"max_pct", s.max_pct},
                       {"worst_id", s.worst_id}, {"rows", s.rows}}},
          {"rows", rows},
          {"skipped", skipped},
          {"assumptions", report.assumptions}};
}

}  // namespace clustersim::validate
