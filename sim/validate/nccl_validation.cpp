#include "sim/validate/nccl_validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "models/comm/collective_tuner.hpp"
#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/error_summary.hpp"
#include "sim/validate/importers.hpp"
#include "sim/platform/platform.hpp"

namespace clustersim::validate {
namespace {

/// GPU-type prefix of the CSV -> system preset with that scale-up domain, and the nodes of
/// 8 GPUs the domain spans (an NVL72 rack: 9).
struct SystemMapping {
  const char* gpu_prefix;
  const char* system;
  int nodes = 1;
};
constexpr SystemMapping kSystems[] = {{"A100", "dgx-a100"},
                                      {"H100", "dgx-h100"},
                                      {"H200", "dgx-h200"},
                                      {"GB200", "gb200-nvl72", 9},
                                      {"AMD Instinct MI300X", "mi300x-x8"}};

/// One scale-up domain of `system` (`nodes` nodes of 8).
scenario::Scenario domain_scenario(const std::string& system, int nodes) {
  const std::string yaml = fmt::format(R"(schema_version: 1
name: nccl-{0}
description: "one {0} scale-up domain for the nccl-tests comparison"
include: [systems/{0}.yaml]
cluster:
  nodes: {1}
)", system, nodes);
  return scenario::load_platform(scenario::ScenarioSource::text(yaml, "nccl-" + system + ".yaml"));
}

}  // namespace

double nccl_size_label_bytes(const std::string& label) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(label, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = used > 0 ? label.substr(used) : "";
  const double scale = suffix.empty() ? 1 : suffix == "K" ? 1e3 : suffix == "M" ? 1e6 : suffix == "G" ? 1e9 : 0;
  if (used == 0 || scale == 0 || !(value > 0)) {
    throw ConfigError(fmt::format("message size '{}' is not a number with an optional K, M or G", label));
  }
  return std::exp2(std::round(std::log2(value * scale)));
}

NcclComparison compare_nccl_dataset(const std::filesystem::path& dataset) {
  NcclComparison comparison;
  comparison.dataset = dataset.string();
  const auto rows = read_dataset_rows(dataset);  // a CSV, or nccl-tests' own output
  std::map<std::string, std::vector<const CsvRow*>> by_gpu;  // ordered: deterministic output
  std::vector<std::string> order;
  for (const CsvRow& row : rows) {
    if (row.get("kernel").rfind("all-reduce", 0) != 0 || row.get("metric") != "busbw") continue;
    const std::string& gpu = row.get("gpu_type");
    if (!by_gpu.contains(gpu)) order.push_back(gpu);
    by_gpu[gpu].push_back(&row);
  }
  std::vector<double> all_errors;
  for (const std::string& gpu : order) {
    const SystemMapping* mapping = nullptr;
    for (const auto& m : kSystems) {
      if (gpu.rfind(m.gpu_prefix, 0) == 0) mapping = &m;
    }
    if (mapping == nullptr) {
      comparison.skipped.push_back(fmt::format("{}: no system preset with this GPU's scale-up fabric", gpu));
      continue;
    }
    const auto& first = *by_gpu[gpu].front();
    if (first.get("num_gpus").empty()) {
      // A rack-scale domain (GB200: 4 GPUs per VM, 72 per NVLink domain) cannot be guessed.
      comparison.skipped.push_back(fmt::format("{}: the dataset does not state the GPU count", gpu));
      continue;
    }
    const int ranks = std::stoi(first.get("num_gpus"));
    const auto scenario = domain_scenario(mapping->system, mapping->nodes);
    const platform::Platform platform(scenario.platform);
    if (ranks > platform.accelerator_count()) {
      comparison.skipped.push_back(
          fmt::format("{}: {} GPUs do not fit one {} scale-up domain", gpu, ranks, mapping->system));
      continue;
    }
    const models::CollectiveTuner& tuner = platform.collectives().tuner();
    std::vector<int> group(static_cast<std::size_t>(ranks));
    std::iota(group.begin(), group.end(), 0);
    const double factor = models::bus_bandwidth_factor(models::CollectiveKind::all_reduce, ranks);
    NcclGpuComparison result;
    result.gpu_type = gpu;
    result.system = mapping->system;
    result.ranks = ranks;
    std::vector<double> errors;
    for (const CsvRow* row : by_gpu[gpu]) {
      NcclPoint point;
      point.id = row->get("id");
      point.bytes = nccl_size_label_bytes(row->get("message_bytes"));
      point.measured_busbw_bytes_per_s = std::stod(row->get("value")) * 1e9;  // unit GB/s
      const auto tuned = tuner.choose(models::CollectiveKind::all_reduce, std::nullopt, group, point.bytes);
      point.predicted_busbw_bytes_per_s = point.bytes / tuned.analytical_time_s * factor;
      point.error_pct = (point.predicted_busbw_bytes_per_s / point.measured_busbw_bytes_per_s - 1) * 100;
      point.algorithm = fmt::format("{}/{}", models::algorithm_name(tuned.plan.algorithm),
                                    models::protocol_name(tuned.plan.protocol));
      if (point.bytes >= (1 << 20)) errors.push_back(std::fabs(point.error_pct));
      result.points.push_back(point);
    }
    result.median_abs_error_pct_from_1mib = median(errors);
    result.max_abs_error_pct_from_1mib = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
    all_errors.insert(all_errors.end(), errors.begin(), errors.end());
    comparison.gpus.push_back(std::move(result));
  }
  comparison.median_abs_error_pct_from_1mib = median(all_errors);
  comparison.max_abs_error_pct_from_1mib =
      all_errors.empty() ? 0 : *std::max_element(all_errors.begin(), all_errors.end());
  return comparison;
}

std::string nccl_comparison_table(const NcclComparison& comparison) {
  std::string text = fmt::format("# all-reduce busbw: nccl-tests / rccl-tests ({}) vs clustersim auto, analytical\n",
                                 comparison.dataset);
  for (const auto& gpu : comparison.gpus) {
    text += fmt::format("\n## {} ({} x {}, system {})\n", gpu.gpu_type, gpu.ranks, "GPU", gpu.system);
    text += fmt::format("{:>12} {:>14} {:>15} {:>9}  {}\n", "size (B)", "measured GB/s", "predicted GB/s",
                        "error %", "algorithm");
    for (const auto& p : gpu.points) {
      text += fmt::format("{:>12.0f} {:>14.2f} {:>15.2f} {:>+9.1f}  {}\n", p.bytes, p.measured_busbw_bytes_per_s / 1e9,
                          p.predicted_busbw_bytes_per_s / 1e9, p.error_pct, p.algorithm);
    }
    text += fmt::format("from 1 MiB: median |error| {:.1f}%, worst {:.1f}%\n", gpu.median_abs_error_pct_from_1mib,
                        gpu.max_abs_error_pct_from_1mib);
  }
  for (const auto& s : comparison.skipped) text += fmt::format("skipped {}\n", s);
  text += fmt::format("\nall GPU types from 1 MiB: median |error| {:.1f}%, worst {:.1f}% (target: median <= 5%, worst <= 10%)\n",
                      comparison.median_abs_error_pct_from_1mib, comparison.max_abs_error_pct_from_1mib);
  return text;
}

nlohmann::json nccl_comparison_json(const NcclComparison& comparison) {
  nlohmann::json doc = {{"dataset", comparison.dataset},
                        {"median_abs_error_pct_from_1mib", comparison.median_abs_error_pct_from_1mib},
                        {"max_abs_error_pct_from_1mib", comparison.max_abs_error_pct_from_1mib},
                        {"skipped", comparison.skipped},
                        {"gpus", nlohmann::json::array()}};
  for (const auto& gpu : comparison.gpus) {
    nlohmann::json g = {{"gpu_type", gpu.gpu_type},
                        {"system", gpu.system},
                        {"ranks", gpu.ranks},
                        {"median_abs_error_pct_from_1mib", gpu.median_abs_error_pct_from_1mib},
                        {"max_abs_error_pct_from_1mib", gpu.max_abs_error_pct_from_1mib},
                        {"points", nlohmann::json::array()}};
    for (const auto& p : gpu.points) {
      g["points"].push_back({{"id", p.id},
                             {"bytes", p.bytes},
                             {"measured_busbw_gb_per_s", p.measured_busbw_bytes_per_s / 1e9},
                             {"predicted_busbw_gb_per_s", p.predicted_busbw_bytes_per_s / 1e9},
                             {"error_pct", p.error_pct},
                             {"algorithm", p.algorithm}});
    }
    doc["gpus"].push_back(std::move(g));
  }
  return doc;
}

}  // namespace clustersim::validate
