#pragma once
/// A task farm over a sweep's points (`clustersim sweep --mpi`, docs/sweeps.md): rank 0 (the
/// master) hands one point at a time, by its index in the plan, to whichever worker rank is
/// idle, collects the row it sends back and writes it through run_sweep as the TBB runner does;
/// the output folder, resume, shards and the rows are therefore the same as `-j 1`'s. A point
/// that fails comes back as a failed row with its reason (run_point), so it never loses the
/// others. With one rank, the master runs the points itself.
///
/// The farm speaks through a FarmChannel, so its protocol is tested with threads as ranks
/// (tests/sim/sweep/point_farm_test.cpp) and MPI is one implementation (sim/mpi/mpi_channel).
/// Protocol: a worker sends `hello` (its plan's fingerprint, or why it has no plan), then gets
/// `work` (a point index) and answers `result` (the row), until it gets `stop`. A worker whose
/// plan differs from the master's (another scenario file or --set on that node) gets no work:
/// the master stops every worker and throws, naming the rank. A worker that dies (a crash)
/// takes the MPI job with it: the rows finished so far are in the folder, a rerun resumes, and
/// the points that were running are named by the next run (see FarmMaster).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/sweep/sweep_runner.hpp"

namespace clustersim::sweep {

/// What a farm message says.
enum class FarmTag : int { hello = 1, work = 2, result = 3, stop = 4 };

struct FarmMessage {
  int source = 0;  ///< the sending rank
  FarmTag tag = FarmTag::stop;
  std::vector<std::uint8_t> bytes;  ///< CBOR (nlohmann::json::to_cbor), empty for stop
};

/// Point-to-point messages between the ranks of a farm. Messages from one sender to one
/// receiver arrive in the order sent.
class FarmChannel {
 public:
  virtual ~FarmChannel() = default;
  virtual int rank() const = 0;  ///< this rank, 0 the master
  virtual int size() const = 0;  ///< ranks in the farm (>= 1)
  virtual void send(int to, FarmTag tag, const std::vector<std::uint8_t>& bytes) = 0;
  /// Blocks until a message for this rank arrives, from any rank.
  virtual FarmMessage receive() = 0;
};

/// Rank 0's side of the farm.
class FarmMaster {
 public:
  /// `running_file` (OUT/farm-running.json) records the points handed out and not yet back, so
  /// that a job that died (a worker crashed, the allocation ended) is explained by the next run.
  FarmMaster(FarmChannel& channel, std::filesystem::path running_file);

  /// A PointRunner for run_sweep: hands `points` to the workers (or runs them itself when it is
  /// the only rank) and, when they are done, stops every worker. Throws clustersim::Error when a
  /// worker has another plan or none, or the protocol breaks; every worker is stopped first.
  PointRunner runner();

  /// Notes for the output: the points a previous farm in this folder left running (it died
  /// while they ran; one of them may crash a rank). Read when the FarmMaster is made.
  const std::vector<std::string>& notes() const { return notes_; }

  /// Stops every worker that is not stopped yet: after an error on rank 0 (a bad scenario, an
  /// output folder holding another sweep), so that no worker waits for work for ever.
  void dismiss();

 private:
  enum class WorkerState { unheard, idle, busy, stopped };
  void run(const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
           const std::function<void(SweepRow)>& finished);
  /// Hands out points until every one is back (or a worker's problem stops the handing out).
  void farm_out(const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
                const std::function<void(SweepRow)>& finished);
  void hello(const FarmMessage& message, const std::string& fingerprint);
  void write_running() const;

  FarmChannel& channel_;
  std::filesystem::path running_file_;
  std::vector<WorkerState> workers_;        ///< by rank; [0] is the master
  std::map<int, const SweepPoint*> running_;  ///< busy rank -> its point
  std::string problem_;                     ///< why the farm stops early (a worker's plan)
  std::vector<std::string> notes_;
};

/// A worker rank's side: says hello to rank 0 with `plan`'s fingerprint (or `plan_error` when
/// `plan` is null: its scenario did not load here), then runs the points it is handed until it
/// is stopped.
void serve_points(FarmChannel& channel, const SweepPlan* plan, const std::string& plan_error);

}  // namespace clustersim::sweep
