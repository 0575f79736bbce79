#pragma once
/// Failures, checkpoints and goodput of a long training run: component failures as Poisson
/// processes (exponential times between failures, one mean per component kind), a blocking
/// checkpoint every `interval` of progress, a restart from the last checkpoint after each
/// failure. Closed forms (docs/reliability.md, "Faults"):
///
///  * job failure rate  lambda = sum_k n_k / MTBF_k, M = 1 / lambda (the job's MTBF);
///  * wall time per unit of progress (Daly 2006, eq. 13, exact for exponential failures that
///    may also strike during checkpoints and restarts):
///      T_wall / T_progress = M e^(R/M) (e^((tau + C)/M) - 1) / tau,
///    so goodput(tau) = tau / (M e^(R/M) (e^((tau + C)/M) - 1));
///  * its maximiser, found numerically, against Young (1974) tau = sqrt(2 C M) and Daly's
///    higher-order estimate tau = sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + C / 18M) - C (C < 2M;
///    tau = M otherwise).
///
/// The default mean times between failures are Llama 3's (Meta 2024, arXiv:2407.21783,
/// Table 5: 419 unexpected interruptions in 54 days on 16,384 H100s;
/// validation/data/llama3_interruptions.csv): every cause assigned to one component kind.
#include <string>
#include <vector>

namespace clustersim::models {

/// Component failure rates and the checkpoint / restart costs (`simulation.failures`).
struct FailureSpec {
  bool enabled = false;  ///< report goodput (the model below) for training runs
  /// Mean time between unexpected interruptions caused by one component, seconds.
  /// GPU: faulty GPU, HBM3, SRAM, GPU system processor, silent data corruption, thermal
  /// (268 of 419 over 16,384 GPUs x 1,296 h).
  double gpu_mtbf_s = 16384.0 * 1296.0 / 268.0 * 3600.0;
  /// Host: unplanned host maintenance, SSD, power supply, chassis, IO board, CPU, DRAM (46 over
  /// 2,048 hosts).
  double host_mtbf_s = 2048.0 * 1296.0 / 46.0 * 3600.0;
  /// NIC (7 over 16,384 NICs: one per GPU).
  double nic_mtbf_s = 16384.0 * 1296.0 / 7.0 * 3600.0;
  /// Network switches and cables, per accelerator attached (35 over 16,384 GPUs): the fabric
  /// grows with the GPUs it connects; the paper does not give its switch count.
  double network_mtbf_s = 16384.0 * 1296.0 / 35.0 * 3600.0;
  /// Software: software bugs, NCCL watchdog timeouts, dependencies, per GPU (63 over 16,384).
  double software_mtbf_s = 16384.0 * 1296.0 / 63.0 * 3600.0;
  /// Progress between checkpoints, seconds; 0: the interval that maximises goodput.
  double checkpoint_interval_s = 0;
  /// Aggregate write and read bandwidth of the checkpoint storage, bytes/s (Llama 3, Sec.
  /// 3.3.1: Tectonic sustains 2 TB/s).
  double storage_bytes_per_s = 2e12;
  /// Per node write and read bandwidth to storage, bytes/s; 0: not a limit.
  double node_storage_bytes_per_s = 0;
  /// Time from a failure to the job running again, before it reads its checkpoint: detection,
  /// rescheduling onto spare nodes, process start, NCCL initialisation (seconds).
  double restart_s = 600;
};

/// The job's components (what the failure rates multiply).
struct JobComponents {
  double gpus = 0;
  double hosts = 0;
  double nics = 0;  ///< scale-out NICs
};

/// One component kind's share of the job's failures.
struct FailureCause {
  std::string name;        ///< "gpu", "host", "nic", "network", "software"
  double rate_per_s = 0;   ///< failures per second of the whole job
  double lost_share = 0;   ///< of wall time lost to restarts and rework after these failures
};

/// What a long training run achieves under failures.
struct GoodputReport {
  double job_mtbf_s = 0;               ///< M = 1 / (failures per second of the job)
  double checkpoint_bytes = 0;         ///< the whole job's checkpoint (weights + optimizer state)
  double checkpoint_s = 0;             ///< C: one blocking checkpoint write
  double restart_s = 0;                ///< R: the restart plus reading the checkpoint back
  double interval_s = 0;               ///< tau used (the setting, or the optimum)
  double goodput = 0;                  ///< progress / wall time at interval_s
  double optimal_interval_s = 0;       ///< tau maximising goodput (numerically)
  double optimal_goodput = 0;
  double young_interval_s = 0;         ///< sqrt(2 C M)
  double daly_interval_s = 0;          ///< Daly's higher-order estimate
  double checkpoint_lost_share = 0;    ///< of wall time spent writing checkpoints
  double failure_lost_share = 0;       ///< of wall time lost to restarts and rework
  std::vector<FailureCause> causes;    ///< failure_lost_share split by cause, in rate order
};

/// Goodput at interval tau: tau / (M e^(R/M) (e^((tau + C)/M) - 1)), in (0, 1).
double daly_goodput(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);
/// Young's interval sqrt(2 C M).
double young_interval(double checkpoint_s, double mtbf_s);
/// Daly's higher-order interval (2006, eq. 37): sqrt(2CM)(1 + sqrt(C/2M)/3 + C/18M) - C for
/// C < 2M, else M.
double daly_interval(double checkpoint_s, double mtbf_s);
/// The interval maximising daly_goodput (golden-section search on a log scale; relative
/// precision 1e-9).
double optimal_interval(double checkpoint_s, double restart_s, double mtbf_s);

/// The goodput report of a job with `components` whose checkpoint is `checkpoint_bytes` in
/// all, `bytes_per_node` on the busiest of its `nodes` nodes. Throws ConfigError for
/// non-positive MTBFs or bandwidths, or a job without GPUs.
GoodputReport goodput_report(const FailureSpec& spec, const JobComponents& components, double checkpoint_bytes,
                             double bytes_per_node);

}  // namespace clustersim::models
