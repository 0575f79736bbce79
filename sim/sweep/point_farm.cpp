#include "sim/sweep/point_farm.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/engine/error.hpp"

namespace clustersim::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// CBOR keeps every double bit for bit (a non-finite metric too, which JSON text cannot carry),
// so a row from a worker equals the row rank 0 would have computed.
std::vector<std::uint8_t> encode(const json& document) { return json::to_cbor(document); }

json decode(const FarmMessage& message) {
  try {
    return json::from_cbor(message.bytes);
  } catch (const json::exception& e) {
    throw Error(fmt::format("sweep farm: rank {} sent an unreadable message ({})", message.source, e.what()));
  }
}

}  // namespace

FarmMaster::FarmMaster(FarmChannel& channel, fs::path running_file)
    : channel_(channel), running_file_(std::move(running_file)) {
  workers_.assign(static_cast<std::size_t>(channel_.size()), WorkerState::unheard);
  workers_[0] = WorkerState::stopped;  // the master itself
  std::ifstream file(running_file_);
  if (!file) return;
  try {
    const json left = json::parse(file);
    std::vector<std::string> points;
    for (const json& entry : left.at("running")) {
      points.push_back(fmt::format("{} (rank {})", entry.at("id").get<std::string>(), entry.at("rank").get<int>()));
    }
    if (!points.empty()) {
      notes_.push_back(fmt::format(
          "the previous --mpi run in this folder ended while these points ran: {}; if a rank crashed, it was on "
          "one of them (they run again now)",
          fmt::join(points, ", ")));
    }
  } catch (const json::exception&) {
    // A file cut short by the job's end: nothing to say about which points ran.
  }
}

PointRunner FarmMaster::runner() {
  return [this](const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
                const std::function<void(SweepRow)>& finished) { run(plan, points, finished); };
}

void FarmMaster::hello(const FarmMessage& message, const std::string& fingerprint) {
  const json said = decode(message);
  const std::string theirs = said.value("fingerprint", "");
  const std::string error = said.value("error", "");
  std::string problem;
  if (!error.empty()) {
    problem = fmt::format("rank {} could not read the sweep: {}", message.source, error);
  } else if (theirs != fingerprint) {
    problem = fmt::format(
        "rank {} read another sweep (fingerprint {}, rank 0's {}): every rank must see the same scenario file, "
        "included files and --set overrides",
        message.source, theirs, fingerprint);
  }
  if (problem.empty()) return;
  if (problem_.empty()) problem_ = problem;
  channel_.send(message.source, FarmTag::stop, {});
  workers_[static_cast<std::size_t>(message.source)] = WorkerState::stopped;
}

void FarmMaster::write_running() const {
  json running = json::array();
  for (const auto& [rank, point] : running_) running.push_back({{"rank", rank}, {"id", point->id}});
  // Aside, then renamed: a job killed while this is written leaves the previous complete file.
  const fs::path aside = running_file_.string() + ".tmp" + std::to_string(getpid());
  fs::create_directories(running_file_.parent_path());
  {
    std::ofstream file(aside);
    file << json{{"running", running}}.dump() << '\n';
    if (!file) throw Error(fmt::format("cannot write {}", aside.string()));
  }
  fs::rename(aside, running_file_);
}

void FarmMaster::run(const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
                     const std::function<void(SweepRow)>& finished) {
  if (channel_.size() == 1) {  // no workers: rank 0 runs the points itself
    for (const SweepPoint* point : points) finished(run_point(plan, *point));
    return;
  }
  try {
    farm_out(plan, points, finished);
  } catch (...) {
    dismiss();  // a worker waiting for work would wait for ever
    throw;
  }
  dismiss();
  std::error_code ignored;
  fs::remove(running_file_, ignored);  // every point handed out came back
  if (!problem_.empty()) throw Error(problem_);
}

void FarmMaster::farm_out(const SweepPlan& plan, const std::vector<const SweepPoint*>& points,
                          const std::function<void(SweepRow)>& finished) {
  std::size_t next = 0;
  while ((problem_.empty() && next < points.size()) || !running_.empty()) {
    const FarmMessage message = channel_.receive();
    const auto source = static_cast<std::size_t>(message.source);
    if (message.source <= 0 || source >= workers_.size()) {
      throw Error(fmt::format("sweep farm: a message from rank {} of {}", message.source, workers_.size()));
    }
    if (message.tag == FarmTag::hello && workers_[source] == WorkerState::unheard) {
      hello(message, plan.fingerprint);
      if (workers_[source] == WorkerState::stopped) continue;
    } else if (message.tag == FarmTag::result && workers_[source] == WorkerState::busy) {
      SweepRow row = row_from_json(decode(message));
      const SweepPoint* point = running_.at(message.source);
      if (row.id != point->id) {
        throw Error(fmt::format("sweep farm: rank {} returned point {} for {}", message.source, row.id, point->id));
      }
      row.values = point->values;  // the sweep's key order (JSON objects sort their keys)
      running_.erase(message.source);
      finished(std::move(row));
    } else {
      throw Error(fmt::format("sweep farm: unexpected message {} from rank {}", static_cast<int>(message.tag),
                              message.source));
    }
    workers_[source] = WorkerState::idle;
    if (problem_.empty() && next < points.size()) {
      const SweepPoint* point = points[next++];
      running_[message.source] = point;
      workers_[source] = WorkerState::busy;
      channel_.send(message.source, FarmTag::work, encode({{"index", point->index}}));
    }
    write_running();
  }
}

void FarmMaster::dismiss() {
  for (std::size_t rank = 1; rank < workers_.size(); ++rank) {
    if (workers_[rank] == WorkerState::idle) {
      channel_.send(static_cast<int>(rank), FarmTag::stop, {});
      workers_[rank] = WorkerState::stopped;
    }
  }
  // Every other worker still owes one message (its hello, or the result of the point it runs).
  const auto waiting = [&] {
    return std::any_of(workers_.begin(), workers_.end(), [](WorkerState s) { return s != WorkerState::stopped; });
  };
  while (waiting()) {
    const FarmMessage message = channel_.receive();
    if (message.source <= 0 || static_cast<std::size_t>(message.source) >= workers_.size()) continue;
    channel_.send(message.source, FarmTag::stop, {});
    workers_[static_cast<std::size_t>(message.source)] = WorkerState::stopped;
  }
  running_.clear();
}

void serve_points(FarmChannel& channel, const SweepPlan* plan, const std::string& plan_error) {
  json hello = plan != nullptr ? json{{"fingerprint", plan->fingerprint}}
                               : json{{"error", plan_error.empty() ? "no plan" : plan_error}};
  channel.send(0, FarmTag::hello, encode(hello));
  while (true) {
    const FarmMessage message = channel.receive();
    if (message.tag == FarmTag::stop) return;
    if (message.tag != FarmTag::work || plan == nullptr) {
      throw Error(fmt::format("sweep farm: rank {} got an unexpected message {} from rank {}", channel.rank(),
                              static_cast<int>(message.tag), message.source));
    }
    const auto index = decode(message).at("index").get<std::size_t>();
    if (index >= plan->points.size()) {
      throw Error(fmt::format("sweep farm: point index {} of {} points", index, plan->points.size()));
    }
    channel.send(0, FarmTag::result, encode(row_json(run_point(*plan, plan->points[index]))));
  }
}

}  // namespace clustersim::sweep
