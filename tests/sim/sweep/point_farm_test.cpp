// The sweep's task farm (sim/sweep/point_farm): its protocol with threads as ranks. The same
// farm over MPI ranks is tested end to end in tests/sim/mpi (built with -DCLUSTERSIM_WITH_MPI=ON).
#include <doctest/doctest.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "sim/engine/error.hpp"
#include "sim/sweep/point_farm.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "temp_folders.hpp"

namespace point_farm_test {

using namespace clustersim;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/sweep/";

/// Ranks as threads of one process: one message queue per rank.
class LocalFarm {
 public:
  explicit LocalFarm(int ranks) : queues_(static_cast<std::size_t>(ranks)) {
    for (int rank = 0; rank < ranks; ++rank) channels_.emplace_back(*this, rank);
  }
  sweep::FarmChannel& channel(int rank) { return channels_[static_cast<std::size_t>(rank)]; }
  /// Messages of each tag rank 0 sent, to check what the workers were told.
  int sent_by_master(sweep::FarmTag tag) {
    const std::lock_guard lock(mutex_);
    return master_sent_[tag];
  }

 private:
  class Channel final : public sweep::FarmChannel {
   public:
    Channel(LocalFarm& farm, int rank) : farm_(farm), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(farm_.queues_.size()); }
    void send(int to, sweep::FarmTag tag, const std::vector<std::uint8_t>& bytes) override {
      const std::lock_guard lock(farm_.mutex_);
      farm_.queues_.at(static_cast<std::size_t>(to)).push_back({rank_, tag, bytes});
      if (rank_ == 0) ++farm_.master_sent_[tag];
      farm_.arrived_.notify_all();
    }
    sweep::FarmMessage receive() override {
      std::unique_lock lock(farm_.mutex_);
      auto& queue = farm_.queues_[static_cast<std::size_t>(rank_)];
      farm_.arrived_.wait(lock, [&] { return !queue.empty(); });
      sweep::FarmMessage message = std::move(queue.front());
      queue.pop_front();
      return message;
    }

   private:
    LocalFarm& farm_;
    int rank_;
  };

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::deque<sweep::FarmMessage>> queues_;
  std::deque<Channel> channels_;
  std::map<sweep::FarmTag, int> master_sent_;
};

/// Worker threads serving `plans[rank - 1]` (null: `error`), joined when it goes out of scope.
struct Workers {
  Workers(LocalFarm& farm, const std::vector<const sweep::SweepPlan*>& plans, const std::string& error = "") {
    for (std::size_t i = 0; i < plans.size(); ++i) {
      threads.emplace_back([&farm, plan = plans[i], error, rank = static_cast<int>(i) + 1] {
        sweep::serve_points(farm.channel(rank), plan, error);
      });
    }
  }
  ~Workers() {
    for (std::thread& thread : threads) thread.join();  // a worker never stopped hangs the test here
  }
  std::vector<std::thread> threads;
};

const clustersim::testing::TempFolders folders("clustersim-farm-test");
fs::path fresh_dir(const std::string& name) { return folders.fresh(name); }
using clustersim::testing::read_text;

/// The sweep run by a farm of `ranks` ranks (every worker with `plan`) into `dir`.
sweep::SweepOutcome farm_sweep(const sweep::SweepPlan& plan, int ranks, const fs::path& dir,
                               sweep::Shard shard = {}) {
  LocalFarm farm(ranks);
  sweep::FarmMaster master(farm.channel(0), dir / "farm-running.json");
  const Workers workers(farm, std::vector<const sweep::SweepPlan*>(static_cast<std::size_t>(ranks - 1), &plan));
  sweep::SweepOptions options;
  options.out_dir = dir;
  options.shard = shard;
  options.runner = master.runner();
  options.notes = master.notes();
  return sweep::run_sweep(plan, options);
}

}  // namespace

TEST_CASE("a farm of 3 ranks and a farm of 1 write the same rows as -j 1, the failing point included") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  sweep::SweepOptions threads;
  threads.threads = 1;
  threads.out_dir = fresh_dir("j1");
  sweep::run_sweep(plan, threads);
  const std::string csv = read_text(threads.out_dir / "sweep.csv");
  REQUIRE(csv.find(",failed,") != std::string::npos);  // tp 3 x dp 1 does not load

  for (const int ranks : {3, 1}) {
    CAPTURE(ranks);
    const fs::path dir = fresh_dir("farm" + std::to_string(ranks));
    const auto outcome = farm_sweep(plan, ranks, dir);
    CHECK(outcome.ran == 6);
    CHECK(outcome.rows.size() == 6);
    CHECK(read_text(dir / "sweep.csv") == csv);
    CHECK(read_text(dir / "sweep.json") == read_text(threads.out_dir / "sweep.json"));
    for (const auto& row : outcome.rows) {
      CHECK(read_text(dir / "points" / (row.id + ".json")) == read_text(threads.out_dir / "points" / (row.id + ".json")));
    }
    CHECK_FALSE(fs::exists(dir / "farm-running.json"));  // nothing left running
  }
}

TEST_CASE("a farm resumes a folder: finished points are skipped, the rest are farmed out") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  const fs::path dir = fresh_dir("resume");
  const auto half = farm_sweep(plan, 3, dir, {1, 2});
  CHECK(half.ran == 3);
  CHECK(half.missing == 3);
  const auto rest = farm_sweep(plan, 3, dir);
  CHECK(rest.ran == 3);
  CHECK(rest.skipped == 3);
  CHECK(rest.missing == 0);
  const auto nothing = farm_sweep(plan, 2, dir);  // everything finished: the worker is stopped
  CHECK(nothing.ran == 0);
}

TEST_CASE("a farm that died is named by the next run: the points it left running") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  const fs::path dir = fresh_dir("died");
  fs::create_directories(dir);
  std::ofstream(dir / "farm-running.json") << R"({"running": [{"rank": 2, "id": ")" << plan.points[4].id
                                           << "\"}]}\n";
  const auto outcome = farm_sweep(plan, 2, dir);
  CHECK(outcome.ran == 6);
  REQUIRE_FALSE(outcome.notes.empty());
  CHECK(outcome.notes[0] == "the previous --mpi run in this folder ended while these points ran: " +
                                plan.points[4].id +
                                " (rank 2); if a rank crashed, it was on one of them (they run again now)");
  CHECK(read_text(dir / "sweep.json").find("if a rank crashed") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "farm-running.json"));
}

TEST_CASE("a worker with another sweep or none gets no work; every worker stops and rank 0 says why") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  const auto other = sweep::plan_sweep(kData + "tiny_sweep.yaml", {"workload.seq_len=128"});
  REQUIRE(other.fingerprint != plan.fingerprint);
  SUBCASE("another scenario on one rank") {
    LocalFarm farm(3);
    sweep::FarmMaster master(farm.channel(0), fresh_dir("other") / "farm-running.json");
    std::string error;
    {
      const Workers workers(farm, {&plan, &other});
      try {
        master.runner()(plan, {&plan.points[0], &plan.points[1]}, [](sweep::SweepRow) {});
      } catch (const Error& e) {
        error = e.what();
      }
    }  // both workers joined: both were stopped
    CHECK(error == "rank 2 read another sweep (fingerprint " + other.fingerprint + ", rank 0's " +
                       plan.fingerprint +
                       "): every rank must see the same scenario file, included files and --set overrides");
    CHECK(farm.sent_by_master(sweep::FarmTag::stop) == 2);
  }
  SUBCASE("no scenario on the workers") {
    LocalFarm farm(2);
    sweep::FarmMaster master(farm.channel(0), fresh_dir("none") / "farm-running.json");
    std::string error;
    {
      const Workers workers(farm, {nullptr}, "cannot open tiny_sweep.yaml");
      try {
        master.runner()(plan, {&plan.points[0]}, [](sweep::SweepRow) {});
      } catch (const Error& e) {
        error = e.what();
      }
    }
    CHECK(error == "rank 1 could not read the sweep: cannot open tiny_sweep.yaml");
    CHECK(farm.sent_by_master(sweep::FarmTag::work) == 0);
  }
}

TEST_CASE("after an error on rank 0 before any work, dismiss stops every worker") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  const auto other = sweep::plan_sweep(kData + "tiny_sweep.yaml", {"workload.seq_len=128"});
  const fs::path dir = fresh_dir("dismiss");
  sweep::SweepOptions first;
  first.threads = 1;
  first.out_dir = dir;
  first.shard = {1, 6};
  sweep::run_sweep(other, first);  // the folder now holds another sweep
  LocalFarm farm(3);
  sweep::FarmMaster master(farm.channel(0), dir / "farm-running.json");
  {
    const Workers workers(farm, {&plan, &plan});
    sweep::SweepOptions options;
    options.out_dir = dir;
    options.runner = master.runner();
    CHECK_THROWS_WITH_AS(sweep::run_sweep(plan, options), doctest::Contains("holds the points of another sweep"),
                         ConfigError);
    master.dismiss();
  }
  CHECK(farm.sent_by_master(sweep::FarmTag::stop) == 2);
  CHECK(farm.sent_by_master(sweep::FarmTag::work) == 0);
}

}  // namespace point_farm_test
