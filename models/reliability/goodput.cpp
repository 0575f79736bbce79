#include "models/reliability/goodput.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {

double daly_goodput(double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  // expm1 keeps the small-exponent case exact: e^x - 1 for x = (tau + C) / M << 1.
  return interval_s / (mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s));
}

double young_interval(double checkpoint_s, double mtbf_s) { return std::sqrt(2.0 * checkpoint_s * mtbf_s); }

double daly_interval(double checkpoint_s, double mtbf_s) {
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double ratio = checkpoint_s / (2.0 * mtbf_s);
  return young_interval(checkpoint_s, mtbf_s) * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_s;
}

double optimal_interval(double checkpoint_s, double restart_s, double mtbf_s) {
  // goodput(tau) is unimodal in tau (it rises as tau / (tau + C) and falls as the rework
  // grows): golden-section search over log(tau), bracketed far around Young's interval.
  const double young = std::max(young_interval(checkpoint_s, mtbf_s), 1e-9 * mtbf_s);
  double lo = std::log(young * 1e-3), hi = std::log(std::max(young * 1e3, 10.0 * mtbf_s));
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  const auto value = [&](double log_tau) { return daly_goodput(std::exp(log_tau), checkpoint_s, restart_s, mtbf_s); };
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = value(a), fb = value(b);
  while (hi - lo > 1e-10) {
    if (fa < fb) {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = value(b);
    } else {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = value(a);
    }
  }
  return std::exp(0.5 * (lo + hi));
}

GoodputReport goodput_report(const FailureSpec& spec, const JobComponents& components, double checkpoint_bytes,
                             double bytes_per_node) {
  for (const auto& [name, value] : {std::pair{"gpu_mtbf", spec.gpu_mtbf_s}, {"host_mtbf", spec.host_mtbf_s},
                                    {"nic_mtbf", spec.nic_mtbf_s}, {"network_mtbf", spec.network_mtbf_s},
                                    {"software_mtbf", spec.software_mtbf_s},
                                    {"storage_bandwidth", spec.storage_bytes_per_s}}) {
    if (!(value > 0) || !std::isfinite(value)) {
      throw ConfigError(fmt::format("simulation.failures.{} must be positive and finite, got {}", name, value));
    }
  }
  if (!(components.gpus > 0)) throw ConfigError("goodput: the job has no GPUs");
  if (!(spec.restart_s >= 0) || !(spec.checkpoint_interval_s >= 0) || !(spec.node_storage_bytes_per_s >= 0)) {
    throw ConfigError("simulation.failures: restart_time, checkpoint_interval and node_bandwidth must be >= 0");
  }
  GoodputReport report;
  report.causes = {{"gpu", components.gpus / spec.gpu_mtbf_s, 0},
                   {"host", components.hosts / spec.host_mtbf_s, 0},
                   {"nic", components.nics / spec.nic_mtbf_s, 0},
                   {"network", components.gpus / spec.network_mtbf_s, 0},
                   {"software", components.gpus / spec.software_mtbf_s, 0}};
  double rate = 0;
  for (const FailureCause& cause : report.causes) rate += cause.rate_per_s;
  report.job_mtbf_s = 1.0 / rate;
  report.checkpoint_bytes = checkpoint_bytes;
  // Every rank writes its shard at once: the storage's aggregate bandwidth, or one node's link.
  report.checkpoint_s = checkpoint_bytes / spec.storage_bytes_per_s;
  if (spec.node_storage_bytes_per_s > 0) {
    report.checkpoint_s = std::max(report.checkpoint_s, bytes_per_node / spec.node_storage_bytes_per_s);
  }
  // A restart reads the checkpoint back at the same bandwidth.
  report.restart_s = spec.restart_s + report.checkpoint_s;
  const double m = report.job_mtbf_s, c = report.checkpoint_s, r = report.restart_s;
  report.young_interval_s = young_interval(c, m);
  report.daly_interval_s = daly_interval(c, m);
  report.optimal_interval_s = optimal_interval(c, r, m);
  report.optimal_goodput = daly_goodput(report.optimal_interval_s, c, r, m);
  report.interval_s = spec.checkpoint_interval_s > 0 ? spec.checkpoint_interval_s : report.optimal_interval_s;
  report.goodput = daly_goodput(report.interval_s, c, r, m);
  // Of the wall time: progress is `goodput`; checkpoints take C per tau of progress when no
  // failure strikes them (to first order); failures take the rest (restarts and rework), split
  // between causes by their rates.
  report.checkpoint_lost_share = std::min(1.0 - report.goodput, report.goodput * c / report.interval_s);
  report.failure_lost_share = std::max(0.0, 1.0 - report.goodput - report.checkpoint_lost_share);
  for (FailureCause& cause : report.causes) cause.lost_share = report.failure_lost_share * cause.rate_per_s / rate;
  std::stable_sort(report.causes.begin(), report.causes.end(),
                   [](const FailureCause& a, const FailureCause& b) { return a.rate_per_s > b.rate_per_s; });
  return report;
}

}  // namespace clustersim::models
