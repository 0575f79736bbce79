#include "sim/report/collective_report.hpp"

#include <fmt/format.h>

namespace clustersim::report {

std::string collective_sweep_table(const SweepHeader& header, const std::vector<models::SweepPoint>& points) {
  std::string text = fmt::format("# {} on {} ranks of {}, algorithm {}, fidelity {}\n", header.op, header.ranks,
                                 header.scenario, header.algorithm, header.fidelity);
  text += fmt::format("{:>14} {:>12} {:>12} {:>12}  {}\n", "size (B)", "time (us)", "algbw (GB/s)",
                      "busbw (GB/s)", "algorithm");
  for (const auto& p : points) {
    text += fmt::format("{:>14.0f} {:>12.2f} {:>12.2f} {:>12.2f}  {}/{}\n", p.bytes, p.time_s * 1e6,
                        p.algbw_bytes_per_s / 1e9, p.busbw_bytes_per_s / 1e9, models::algorithm_name(p.algorithm),
                        models::protocol_name(p.protocol));
  }
  return text;
}

nlohmann::json collective_sweep_json(const SweepHeader& header, const std::vector<models::SweepPoint>& points) {
  nlohmann::json doc = {{"scenario", header.scenario}, {"op", header.op},       {"algorithm", header.algorithm},
                        {"fidelity", header.fidelity}, {"ranks", header.ranks}, {"points", nlohmann::json::array()}};
  for (const auto& p : points) {
    doc["points"].push_back({{"bytes", p.bytes},
                             {"time_us", p.time_s * 1e6},
                             {"algbw_gb_per_s", p.algbw_bytes_per_s / 1e9},
                             {"busbw_gb_per_s", p.busbw_bytes_per_s / 1e9},
                             {"algorithm", models::algorithm_name(p.algorithm)},
                             {"protocol", models::protocol_name(p.protocol)}});
  }
  return doc;
}

std::string nccl_comparison_table(const validate::NcclComparison& comparison) {
  std::string text = fmt::format("# all-reduce busbw: nccl-tests ({}) vs clustersim auto, analytical\n",
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

nlohmann::json nccl_comparison_json(const validate::NcclComparison& comparison) {
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

}  // namespace clustersim::report
