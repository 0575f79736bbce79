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

}  // namespace clustersim::report
